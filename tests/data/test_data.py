"""Image datasets and the common split structure (App. D.1): digits, tiny generated CIFAR-100 pickles."""

import numpy as np
import pandas as pd
import pytest

from unlearn_audit.data import (
    DATASETS,
    AuditData,
    DatasetError,
    DatasetNotFoundError,
    load_audit_data,
    load_dataset,
    prepare_audit_data,
    save_audit_data,
    split_indices_frame,
)
from unlearn_audit.data.cifar100 import cifar100_folder, write_cifar100_pickles


def _digits(tmp_path, **kw):
    params = dict(batch_size=1, m=144, seed=7, resources_dir=tmp_path)
    params.update(kw)
    return prepare_audit_data("digits", **params)


def _assert_partition(data: AuditData, total: int | None = None):
    ids = np.concatenate([data.retain_id, data.forget_id, data.val_id, data.test_id])
    assert len(np.unique(ids)) == len(ids), "parts overlap"
    if total is not None:
        assert len(ids) == total
    assert np.array_equal(data.forget_batch, np.repeat(np.arange(data.m), data.batch_size))
    assert len(data.forget_x) == data.m * data.batch_size


def test_registry_lists_the_three_datasets():
    assert {"digits", "cifar100", "shakespeare"} <= set(DATASETS)
    assert DATASETS["shakespeare"].kind == "text" and DATASETS["digits"].kind == "image"


def test_digits_split_sizes_and_disjointness(tmp_path):
    d = _digits(tmp_path)
    assert d.name == "digits" and d.kind == "image" and d.num_classes == 10
    sizes = d.sizes()
    assert sizes["test"] == round(0.2 * 1797)
    assert sizes["val"] == round(0.1 * (1797 - sizes["test"]))
    assert sizes["forget"] == 144 and d.m == 144 and d.batch_size == 1
    assert sum(sizes.values()) == 1797
    _assert_partition(d, 1797)
    assert d.retain_x.dtype == np.float32 and d.retain_x.shape[1:] == (1, 8, 8)
    assert d.retain_y.dtype == np.int64 and d.forget_batch.dtype == np.int64
    # normalised with training-portion statistics: zero mean, unit std on retain+forget
    train = np.concatenate([d.retain_x, d.forget_x])
    assert abs(train.mean()) < 1e-4 and abs(train.std() - 1) < 1e-3
    # the arrays are the images of their global ids
    from sklearn.datasets import load_digits

    raw = load_digits().images.astype(np.float64)
    mean, std = d.meta["normalisation"]["mean"][0], d.meta["normalisation"]["std"][0]
    np.testing.assert_allclose(d.forget_x[:, 0], (raw[d.forget_id] - mean) / std, rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(d.test_y, load_digits().target[d.test_id])


def test_batches_are_contiguous_blocks(tmp_path):
    d = _digits(tmp_path, batch_size=8, m=20)
    assert d.sizes()["forget"] == 160
    for j in (0, 7, 19):
        rows = d.batch_rows(j)
        assert np.all(d.forget_batch[rows] == j) and rows.stop - rows.start == 8
    signs = np.where(np.arange(20) % 2 == 0, 1, -1)
    rows = d.forget_rows(signs)
    assert len(rows) == 80 and np.all(d.forget_batch[rows] % 2 == 0)


def test_forget_fraction_sets_m(tmp_path):
    d = _digits(tmp_path, batch_size=10, m=None, forget_fraction=0.1)
    n_train = d.sizes()["retain"] + d.sizes()["forget"]
    assert d.m == int(0.1 * n_train / 10)


def test_adversarial_split_overlaps_in_at_most_one_class(tmp_path):
    for seed in range(4):
        d = _digits(tmp_path, split="adversarial", batch_size=5, m=60, seed=seed)
        fc, rc = set(d.forget_y.tolist()), set(d.retain_y.tolist())
        assert len(fc & rc) <= 1
        assert d.meta["overlap_classes"] == sorted(fc & rc)
        assert len(fc) <= 4  # 300 forget images come from few whole classes
        _assert_partition(d, 1797)
        # the forget pool is shuffled: the batches mix the forget classes
        assert len(set(d.forget_y[:60].tolist())) > 1


def test_uniform_split_classes_roughly_proportional(tmp_path):
    d = _digits(tmp_path, batch_size=1, m=400, seed=3)
    train_y = np.concatenate([d.retain_y, d.forget_y])
    p_train = np.bincount(train_y, minlength=10) / len(train_y)
    p_forget = np.bincount(d.forget_y, minlength=10) / len(d.forget_y)
    assert np.abs(p_forget - p_train).max() < 0.05
    assert set(d.forget_y.tolist()) == set(range(10))


def test_determinism(tmp_path):
    a, b = _digits(tmp_path), _digits(tmp_path)
    for name in ("retain_x", "retain_y", "forget_x", "forget_id", "val_id", "test_id", "retain_id"):
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name))
    c = _digits(tmp_path, seed=8)
    assert not np.array_equal(a.forget_id, c.forget_id)
    # uniform and adversarial splits of one seed share validation and test sets
    adv = _digits(tmp_path, split="adversarial")
    np.testing.assert_array_equal(a.val_id, adv.val_id)
    np.testing.assert_array_equal(a.test_id, adv.test_id)


def test_save_load_round_trip(tmp_path):
    d = _digits(tmp_path, split="adversarial", batch_size=4, m=10)
    path = tmp_path / "out" / "digits.npz"
    save_audit_data(d, path)
    assert path.exists() and not list(path.parent.glob(".*tmp"))
    e = load_audit_data(path)
    assert (e.name, e.kind, e.num_classes, e.m, e.batch_size) == (d.name, d.kind, d.num_classes, d.m, d.batch_size)
    assert e.meta == d.meta
    for name in ("retain_x", "retain_y", "forget_x", "forget_y", "forget_batch", "val_x", "val_y", "test_x", "test_y",
                 "retain_id", "forget_id", "val_id", "test_id"):
        np.testing.assert_array_equal(getattr(e, name), getattr(d, name))
        assert getattr(e, name).dtype == getattr(d, name).dtype


def test_split_indices_frame(tmp_path):
    d = _digits(tmp_path, batch_size=2, m=30)
    df = split_indices_frame(d)
    assert list(df.columns) == ["example", "part", "batch", "label"]
    assert len(df) == 1797 and df["example"].is_unique
    assert df.groupby("part").size().to_dict() == d.sizes()
    f = df[df["part"] == "forget"]
    assert f["batch"].tolist() == d.forget_batch.tolist()
    assert (df.loc[df["part"] != "forget", "batch"] == -1).all()
    assert f["label"].tolist() == d.forget_y.tolist()
    pd.testing.assert_frame_equal(df, split_indices_frame(d))


def test_max_retain_keeps_a_random_subset_of_the_retain_set_and_nothing_else_moves(tmp_path):
    full, small = _digits(tmp_path), _digits(tmp_path, max_retain=200)
    assert len(small.retain_x) == 200 and len(full.retain_x) > 1000
    # the pool, validation and test sets are the same images; the retain set is the first 200 of the shuffled one
    for part in ("forget", "val", "test"):
        np.testing.assert_array_equal(getattr(small, f"{part}_id"), getattr(full, f"{part}_id"))
    np.testing.assert_array_equal(small.retain_id, full.retain_id[:200])
    np.testing.assert_array_equal(small.retain_x, full.retain_x[:200])  # normalised with the same training-portion statistics
    assert small.meta["max_retain"] == 200 and "max_retain" not in full.meta
    # a random subset: every class is there, roughly in proportion
    counts = np.bincount(small.retain_y, minlength=10)
    assert counts.min() >= 10 and counts.max() <= 35
    # more than the retain set holds keeps all of it
    np.testing.assert_array_equal(_digits(tmp_path, max_retain=10_000).retain_id, full.retain_id)
    with pytest.raises(DatasetError, match="max_retain must be a positive integer"):
        _digits(tmp_path, max_retain=0)
    from unlearn_audit.data import dataset_params_problems

    assert dataset_params_problems("digits", {"max_retain": 0}) == ["max_retain must be an integer >= 1, got 0"]
    assert dataset_params_problems("digits", {"max_retain": 200}) == []


def test_bad_parameters_are_reported(tmp_path):
    with pytest.raises(DatasetError, match="unknown dataset"):
        prepare_audit_data("mnist", batch_size=1, m=2, seed=0, resources_dir=tmp_path)
    with pytest.raises(DatasetError, match="window"):
        prepare_audit_data("digits", batch_size=1, m=2, seed=0, resources_dir=tmp_path, window=3)
    with pytest.raises(DatasetError, match="split"):
        _digits(tmp_path, split="sideways")
    with pytest.raises(DatasetError, match="retain"):
        _digits(tmp_path, batch_size=100, m=20)


# --------------------------------------------------------------------------- CIFAR-100


def _tiny_cifar(resources, n_train=1000, n_test=200, classes=20, seed=0):
    rng = np.random.default_rng(seed)
    folder = resources / "cifar-100-python"  # the one place CIFAR-100 is read from
    train_y = np.arange(n_train) % classes
    test_y = np.arange(n_test) % classes
    train_x = rng.integers(0, 256, size=(n_train, 3, 32, 32), dtype=np.uint8)
    test_x = rng.integers(0, 256, size=(n_test, 3, 32, 32), dtype=np.uint8)
    write_cifar100_pickles(folder, train_x, train_y, test_x, test_y)
    return train_x, train_y, test_x, test_y


def test_tiny_cifar100_loads_and_splits_90_10(tmp_path):
    train_x, train_y, test_x, test_y = _tiny_cifar(tmp_path)
    src = load_dataset("cifar100", resources_dir=tmp_path)
    np.testing.assert_array_equal(src.x, train_x)
    np.testing.assert_array_equal(src.y, train_y)
    assert src.num_classes == 100 and set(src.meta["checksums"]) == {"train", "test", "meta"}

    d = prepare_audit_data("cifar100", batch_size=1, forget_fraction=0.1, seed=0, resources_dir=tmp_path)
    sizes = d.sizes()
    # 50,000 -> 45,000 training portion / 5,000 validation; 10% of 45,000 = 4,500 forget
    assert sizes["val"] == 100 and sizes["retain"] + sizes["forget"] == 900
    assert sizes["forget"] == 90 and d.m == 90 and sizes["test"] == 200
    assert d.retain_x.shape[1:] == (3, 32, 32) and d.retain_x.dtype == np.float32
    _assert_partition(d, 1200)
    assert d.test_id.min() == 1000  # test images are offset by the training-set size
    mean = np.asarray(d.meta["normalisation"]["mean"])
    std = np.asarray(d.meta["normalisation"]["std"])
    expected = (train_x[d.forget_id].astype(np.float64) - mean[None, :, None, None]) / std[None, :, None, None]
    np.testing.assert_allclose(d.forget_x, expected, rtol=1e-5, atol=1e-4)
    np.testing.assert_array_equal(d.test_y, test_y)

    big = prepare_audit_data("cifar100", batch_size=10, forget_fraction=0.1, seed=0, resources_dir=tmp_path)
    assert big.m == 9 and big.sizes()["forget"] == 90

    adv = prepare_audit_data("cifar100", split="adversarial", batch_size=1, forget_fraction=0.1, seed=0, resources_dir=tmp_path)
    fc, rc = set(adv.forget_y.tolist()), set(adv.retain_y.tolist())
    assert len(fc & rc) <= 1 and len(fc) <= 3  # 90 images from classes of about 45


def test_cifar100_is_read_from_resources_dir_cifar_100_python(tmp_path):
    assert cifar100_folder(tmp_path) == tmp_path / "cifar-100-python"
    _tiny_cifar(tmp_path, n_train=40, n_test=10)
    src = load_dataset("cifar100", resources_dir=tmp_path)
    assert src.meta["source"] == str(tmp_path / "cifar-100-python")


def test_missing_cifar100_names_the_directory(tmp_path):
    with pytest.raises(DatasetNotFoundError) as info:
        prepare_audit_data("cifar100", batch_size=1, forget_fraction=0.1, seed=0, resources_dir=tmp_path)
    msg = str(info.value)
    folder = tmp_path / "cifar-100-python"
    assert f"{folder}/ " in msg  # the exact folder: <resources_dir>/cifar-100-python
    assert str(folder / "train") in msg and str(folder / "meta") in msg
    assert str(tmp_path / "cifar100") not in msg  # no second, stale location
    # how to get the files: the python version from the CIFAR site, unpacked in resources_dir ...
    assert "cifar-100-python.tar.gz" in msg and "https://www.cs.toronto.edu/~kriz/cifar.html" in msg
    assert f"tar xzf cifar-100-python.tar.gz -C {tmp_path}" in msg
    # ... or the config's download switch where the internet is reachable
    assert "dataset_params: {download: true}" in msg
    assert isinstance(info.value, FileNotFoundError)


def test_missing_cifar100_names_the_directory_under_a_relative_resources_dir(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(DatasetNotFoundError, match=r"resources/cifar-100-python/ "):
        load_dataset("cifar100", resources_dir="resources")


def test_corrupt_cifar100_is_reported(tmp_path):
    _tiny_cifar(tmp_path, n_train=40, n_test=10)
    (tmp_path / "cifar-100-python" / "train").write_bytes(b"not a pickle")
    with pytest.raises(DatasetNotFoundError, match="unreadable"):
        load_dataset("cifar100", resources_dir=tmp_path)
