"""CIFAR-100 in torchvision's on-disk format (App. D.1).

Files are expected under ``<resources_dir>/cifar-100-python/`` as the three pickles
``train`` (50,000 images), ``test`` (10,000) and ``meta`` of the python version of CIFAR-100
(``cifar-100-python.tar.gz`` from https://www.cs.toronto.edu/~kriz/cifar.html, unpacked in
``<resources_dir>``), i.e. what ``torchvision.datasets.CIFAR100(resources_dir, download=True)``
leaves there.  They are read directly (no integrity check against the archive's MD5 sums,
so small files in the same format work in tests; the SHA-256 of each file is recorded in
``meta["checksums"]``).  Downloading happens only when asked (``download=True``).

Split (App. D.1): 90% of the training images form the training portion (45,000) and 10% the
validation set (5,000); 10% of the training portion is the candidate forget pool (4,500),
uniformly at random or from a few whole classes (adversarial); the official test set is the test set.
Global example ids: training images keep their index 0..49,999; test images are 50,000 + index.
"""

from __future__ import annotations

import hashlib
import os
import pickle
from pathlib import Path

import numpy as np

from .splits import DatasetNotFoundError, ImageSource

__all__ = [
    "CIFAR100_DIRNAME",
    "CIFAR100_URL",
    "CIFAR100_PAGE",
    "cifar100_root",
    "cifar100_folder",
    "load_cifar100_source",
    "download_cifar100",
    "write_cifar100_pickles",
]

CIFAR100_DIRNAME = "cifar-100-python"
CIFAR100_URL = "https://www.cs.toronto.edu/~kriz/cifar-100-python.tar.gz"
CIFAR100_PAGE = "https://www.cs.toronto.edu/~kriz/cifar.html"
_FILES = ("train", "test", "meta")


def cifar100_root(resources_dir: str | os.PathLike) -> Path:
    """The torchvision ``root`` used for CIFAR-100: ``<resources_dir>`` itself."""
    return Path(resources_dir)


def cifar100_folder(resources_dir: str | os.PathLike) -> Path:
    """The one folder CIFAR-100 is read from: ``<resources_dir>/cifar-100-python``."""
    return cifar100_root(resources_dir) / CIFAR100_DIRNAME


def _missing_message(root: Path, missing: list[str]) -> str:
    folder = root / CIFAR100_DIRNAME
    return (
        f"CIFAR-100 not found: missing {', '.join(str(folder / f) for f in missing)}.\n"
        f"Put the files train, test and meta of the python version of CIFAR-100 in {folder}/ . To get them, either\n"
        f"  download the python version (cifar-100-python.tar.gz, {CIFAR100_URL}) from {CIFAR100_PAGE}\n"
        f"  and unpack it in {root}/ (tar xzf cifar-100-python.tar.gz -C {root}), which creates {folder}/,\n"
        f"or, where the internet is reachable, set dataset_params: {{download: true}} in the cifar100 design of the config."
    )


def download_cifar100(resources_dir: str | os.PathLike) -> Path:
    """Download CIFAR-100 with torchvision (verifies the archive's MD5) and unpack it in
    ``<resources_dir>``, so the files land in ``<resources_dir>/cifar-100-python``."""
    from torchvision.datasets import CIFAR100

    root = cifar100_root(resources_dir)
    root.mkdir(parents=True, exist_ok=True)
    try:
        CIFAR100(str(root), train=True, download=True)
    except Exception as exc:  # network errors come in many types
        raise DatasetNotFoundError(_missing_message(root, list(_FILES)) + f"\n(download failed: {exc})") from exc
    return cifar100_folder(resources_dir)


def _load_pickle(path: Path) -> dict:
    with open(path, "rb") as fh:
        obj = pickle.load(fh, encoding="latin1")
    return {k.decode() if isinstance(k, bytes) else k: v for k, v in obj.items()}


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def load_cifar100_source(resources_dir: str | os.PathLike, *, download: bool = False, label: str = "fine") -> ImageSource:
    """Read CIFAR-100 from ``<resources_dir>/cifar-100-python``.

    Parameters
    ----------
    resources_dir
        The workflow's ``resources/`` directory.
    download
        Download the dataset if it is missing; otherwise a missing file raises
        :class:`DatasetNotFoundError` saying where to put the files and how to get them.
    label
        ``"fine"`` (100 classes, the paper's setting) or ``"coarse"`` (20 superclasses).

    Returns
    -------
    ImageSource
        uint8 images ``(50000, 3, 32, 32)`` with the official test set attached.
    """
    if label not in ("fine", "coarse"):
        raise ValueError(f"label must be 'fine' or 'coarse', got {label!r}")
    root = cifar100_root(resources_dir)
    folder = cifar100_folder(resources_dir)
    missing = [f for f in _FILES if not (folder / f).is_file()]
    if missing and download:
        download_cifar100(resources_dir)
        missing = [f for f in _FILES if not (folder / f).is_file()]
    if missing:
        raise DatasetNotFoundError(_missing_message(root, missing))
    try:
        train = _load_pickle(folder / "train")
        test = _load_pickle(folder / "test")
        meta = _load_pickle(folder / "meta")
        key = f"{label}_labels"
        names = tuple(meta[f"{label}_label_names"])
        x = np.asarray(train["data"], dtype=np.uint8).reshape(-1, 3, 32, 32)
        y = np.asarray(train[key], dtype=np.int64)
        tx = np.asarray(test["data"], dtype=np.uint8).reshape(-1, 3, 32, 32)
        ty = np.asarray(test[key], dtype=np.int64)
    except (pickle.UnpicklingError, EOFError, KeyError, ValueError) as exc:
        raise DatasetNotFoundError(
            f"CIFAR-100 files in {folder} are unreadable ({type(exc).__name__}: {exc}); delete them and fetch them again.\n"
            + _missing_message(root, list(_FILES))
        ) from exc
    if len(x) != len(y) or len(tx) != len(ty):
        raise DatasetNotFoundError(f"CIFAR-100 files in {folder} are inconsistent: images and labels differ in number")
    return ImageSource(
        name="cifar100",
        x=x,
        y=y,
        ids=np.arange(len(y), dtype=np.int64),
        num_classes=len(names),
        test_x=tx,
        test_y=ty,
        test_ids=len(y) + np.arange(len(ty), dtype=np.int64),
        class_names=names,
        meta={"source": str(folder), "label": label, "checksums": {f: _sha256(folder / f) for f in _FILES}},
    )


def write_cifar100_pickles(
    folder: str | os.PathLike, train_x: np.ndarray, train_y: np.ndarray, test_x: np.ndarray, test_y: np.ndarray, num_classes: int = 100
) -> Path:
    """Write images in the ``cifar-100-python`` pickle format (for tests and small fixtures).

    ``*_x`` are uint8 ``(N, 3, 32, 32)``; coarse labels are ``fine // 5``.
    """
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    for name, xs, ys in (("train", train_x, train_y), ("test", test_x, test_y)):
        obj = {
            b"filenames": [f"img_{i}.png".encode() for i in range(len(ys))],
            b"batch_label": f"{name} batch".encode(),
            b"fine_labels": [int(v) for v in ys],
            b"coarse_labels": [int(v) // 5 for v in ys],
            b"data": np.asarray(xs, dtype=np.uint8).reshape(len(ys), -1),
        }
        with open(folder / name, "wb") as fh:
            pickle.dump(obj, fh, protocol=2)
    meta = {
        b"fine_label_names": [f"class_{i}" for i in range(num_classes)],
        b"coarse_label_names": [f"superclass_{i}" for i in range(max(1, num_classes // 5))],
    }
    with open(folder / "meta", "wb") as fh:
        pickle.dump(meta, fh, protocol=2)
    return folder
