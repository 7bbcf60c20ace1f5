"""The common split structure of every dataset and the image splits of App. D.1.

Every dataset is cut into a retain set D_r, a candidate forget pool D_f of ``m`` batches of
``B`` examples (batch j is the contiguous block of rows ``j*B:(j+1)*B`` of ``forget_x``), a
validation set and a test set (Section 6, App. D).  The sign vector S of an audit run selects
which candidate batches are trained on (S_j = +1) and then unlearned.

Image splits (App. D.1): the training portion is divided into D_f and D_r either *uniformly* at
random, or *adversarially* -- D_f and D_r drawn from largely disjoint label classes, sharing at most
one class.  Retain and forget sets are then shuffled independently and D_f is cut into batches.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterator

import numpy as np

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

from ..atomic import atomic_path
from ..seeds import named_generator

__all__ = [
    "AuditData",
    "DatasetError",
    "DatasetNotFoundError",
    "ImageSource",
    "PARTS",
    "resolve_forget_size",
    "select_forget",
    "split_image_source",
    "save_audit_data",
    "load_audit_data",
    "split_indices_frame",
]

PARTS: tuple[str, ...] = ("retain", "forget", "val", "test")
SPLITS: tuple[str, ...] = ("uniform", "adversarial")
_FORMAT_VERSION = 1


#: What an :class:`AuditData` holds: images (N, C, H, W) or other features of one label each
#: ("classification", e.g. tabular rows (N, d)), both scored per example; or "text" windows with a
#: target at every position.
KINDS = ("image", "classification", "text")


class DatasetError(ValueError):
    """A dataset cannot be split as requested (sizes, split kind, parameters)."""


class DatasetNotFoundError(FileNotFoundError):
    """The files of a dataset are missing or corrupt; the message says where to put them and how to get them."""


@dataclass(frozen=True, eq=False)
class AuditData:
    """One dataset split for an audit (Section 6, App. D).

    Attributes
    ----------
    name, kind
        Dataset name (``"digits"``, ``"cifar100"``, ``"shakespeare"``, or a loader's import path) and
        :data:`KINDS`: ``"image"``, ``"classification"`` (one label per example, any feature shape)
        or ``"text"``.
    num_classes
        Number of classes (images) or vocabulary size (text, 100).
    retain_x, retain_y
        Retain set D_r.  Images: float32 ``(N, C, H, W)`` normalised per channel with the mean and
        standard deviation of the training portion (D_r and D_f); labels int64 ``(N,)``.
        Text: int64 ``(N, T)`` input windows and int64 ``(N, T)`` next-character targets
        (``y[:, t] = x[:, t + 1]`` within the text; the target at every position is scored).
    forget_x, forget_y
        The candidate forget pool D_f, ordered by batch.
    forget_batch
        int64 ``(N_f,)``: candidate batch j in ``[0, m)`` of each row of the pool; batch j is the
        contiguous block ``j*B:(j+1)*B``.
    val_x, val_y, test_x, test_y
        Validation and test sets.
    m, batch_size
        ``m`` candidate batches of ``batch_size`` (B) examples each.
    meta
        JSON-serialisable description: split kind, classes in D_f/D_r, roles, checksums, sizes.
    retain_id, forget_id, val_id, test_id
        Global example ids (int64), unique across the four parts: images use the index in the
        source dataset (CIFAR-100 test images are offset by the training-set size); text windows
        are numbered retain, forget, validation, test in construction order.  Default: consecutive.
    extra
        Named arrays a dataset keeps beside its parts for what its evaluation runs measure (question-
        answer data: the alternative answers of TOFU's truth ratio, :func:`~.qa.build_qa_data`);
        empty for every other dataset, whose files then hold the arrays they always held.
    """

    name: str
    kind: str
    num_classes: int
    retain_x: np.ndarray
    retain_y: np.ndarray
    forget_x: np.ndarray
    forget_y: np.ndarray
    forget_batch: np.ndarray
    val_x: np.ndarray
    val_y: np.ndarray
    test_x: np.ndarray
    test_y: np.ndarray
    m: int
    batch_size: int
    meta: dict = field(default_factory=dict)
    retain_id: np.ndarray | None = None
    forget_id: np.ndarray | None = None
    val_id: np.ndarray | None = None
    test_id: np.ndarray | None = None
    extra: dict[str, np.ndarray] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise DatasetError(f"kind must be one of {KINDS}, got {self.kind!r}")
        start = 0
        for part in PARTS:
            n = len(getattr(self, f"{part}_x"))
            if len(getattr(self, f"{part}_y")) != n:
                raise DatasetError(f"{self.name}: {part}_x and {part}_y differ in length")
            ids = getattr(self, f"{part}_id")
            if ids is None:
                object.__setattr__(self, f"{part}_id", np.arange(start, start + n, dtype=np.int64))
            elif len(ids) != n:
                raise DatasetError(f"{self.name}: {part}_id has {len(ids)} entries for {n} examples")
            start += n
        if len(self.forget_x) != self.m * self.batch_size:
            raise DatasetError(f"{self.name}: forget pool has {len(self.forget_x)} rows, expected m*B = {self.m}*{self.batch_size}")
        expected = np.repeat(np.arange(self.m, dtype=np.int64), self.batch_size)
        if self.forget_batch.shape != expected.shape or not np.array_equal(self.forget_batch, expected):
            raise DatasetError(f"{self.name}: forget_batch must be 0..m-1 in contiguous blocks of B rows")

    def batch_rows(self, j: int) -> slice:
        """Rows of candidate batch ``j`` in the forget pool."""
        if not 0 <= j < self.m:
            raise IndexError(f"batch {j} outside [0, {self.m})")
        return slice(j * self.batch_size, (j + 1) * self.batch_size)

    def forget_rows(self, signs: np.ndarray) -> np.ndarray:
        """Rows of the forget pool in the batches with sign +1 (the sampled forget set D_f(S))."""
        signs = np.asarray(signs)
        if signs.shape != (self.m,):
            raise DatasetError(f"sign vector of length {signs.shape} for m = {self.m}")
        return np.flatnonzero(np.repeat(signs > 0, self.batch_size))

    def sizes(self) -> dict[str, int]:
        """Number of examples per part."""
        return {part: int(len(getattr(self, f"{part}_x"))) for part in PARTS}

    def parts(self) -> Iterator[tuple[str, np.ndarray, np.ndarray, np.ndarray]]:
        """Yield ``(part, x, y, ids)`` for retain, forget, val, test."""
        for part in PARTS:
            yield part, getattr(self, f"{part}_x"), getattr(self, f"{part}_y"), getattr(self, f"{part}_id")


@dataclass(frozen=True, eq=False)
class ImageSource:
    """Raw labelled images before splitting.

    ``x`` is ``(N, C, H, W)`` (any real dtype), ``y`` int64 labels, ``ids`` global example ids.
    ``test_*`` is the official test set where the dataset has one (CIFAR-100), else ``None`` and
    the test set is carved out of ``x`` (digits).
    """

    name: str
    x: np.ndarray
    y: np.ndarray
    ids: np.ndarray
    num_classes: int
    test_x: np.ndarray | None = None
    test_y: np.ndarray | None = None
    test_ids: np.ndarray | None = None
    class_names: tuple[str, ...] = ()
    meta: dict = field(default_factory=dict)


def resolve_forget_size(n_train: int, *, batch_size: int, forget_fraction: float | None, m: int | None) -> int:
    """Number m of candidate batches: ``m`` if given, else ``floor(forget_fraction * n_train / B)``."""
    if batch_size is None or int(batch_size) < 1:
        raise DatasetError(f"batch_size must be a positive integer, got {batch_size!r}")
    if m is None:
        if forget_fraction is None:
            raise DatasetError("give either m (number of candidate forget batches) or forget_fraction")
        if not 0.0 < forget_fraction < 1.0:
            raise DatasetError(f"forget_fraction must lie in (0, 1), got {forget_fraction}")
        m = int(np.floor(forget_fraction * n_train / batch_size + 1e-9))
    if int(m) < 1:
        raise DatasetError(f"the forget pool holds no batch: m = {m} (n_train = {n_train}, B = {batch_size})")
    if int(m) * int(batch_size) >= n_train:
        raise DatasetError(f"m*B = {m}*{batch_size} forget examples leave no retain set out of {n_train} training examples")
    return int(m)


def select_forget(labels: np.ndarray, n_forget: int, split: str, rng: np.random.Generator) -> tuple[np.ndarray, dict[str, Any]]:
    """Positions (into ``labels``) of the forget pool, in random order (App. D.1).

    ``uniform``: ``n_forget`` positions uniformly at random without replacement.
    ``adversarial``: the classes are put in random order and taken whole until ``n_forget``
    examples are reached; the last class is taken partially, so the forget pool and the retain
    set (all other positions) share at most that one class.
    """
    n = len(labels)
    if not 0 < n_forget < n:
        raise DatasetError(f"cannot take {n_forget} forget examples out of {n}")
    if split == "uniform":
        pos = rng.choice(n, size=n_forget, replace=False)
    elif split == "adversarial":
        classes = rng.permutation(np.unique(labels))
        chosen: list[np.ndarray] = []
        need = n_forget
        for c in classes:
            members = rng.permutation(np.flatnonzero(labels == c))
            chosen.append(members[:need])
            need -= len(chosen[-1])
            if need == 0:
                break
        pos = rng.permutation(np.concatenate(chosen))
    else:
        raise DatasetError(f"unknown split {split!r}; expected one of {SPLITS}")
    mask = np.zeros(n, dtype=bool)
    mask[pos] = True
    forget_classes = sorted(int(c) for c in np.unique(labels[mask]))
    retain_classes = sorted(int(c) for c in np.unique(labels[~mask]))
    info = {
        "forget_classes": forget_classes,
        "retain_classes": retain_classes,
        "overlap_classes": sorted(set(forget_classes) & set(retain_classes)),
    }
    return pos.astype(np.int64), info


def _channel_stats(train_x: np.ndarray) -> tuple[list[float], list[float]]:
    """Per-channel mean and standard deviation of the training portion (float64, channel by channel)."""
    mean = np.empty(train_x.shape[1])
    std = np.empty(train_x.shape[1])
    for c in range(train_x.shape[1]):
        ch = train_x[:, c].astype(np.float64)
        mean[c] = ch.mean()
        std[c] = ch.std()
    std[std == 0] = 1.0
    return mean.tolist(), std.tolist()


def split_image_source(
    src: ImageSource,
    *,
    split: str = "uniform",
    batch_size: int,
    forget_fraction: float | None = None,
    m: int | None = None,
    seed: int,
    val_fraction: float = 0.1,
    test_fraction: float = 0.2,
    max_retain: int | None = None,
) -> AuditData:
    """Split labelled images into retain / forget pool / validation / test (App. D.1).

    Without an official test set, ``test_fraction`` of the images is held out first; then
    ``val_fraction`` of the remainder is the validation set (CIFAR-100: 10% of the 50,000
    training images, leaving the 45,000-image training portion).  The forget pool holds ``m*B``
    images of the training portion (``m`` from ``forget_fraction`` when not given: 10% of 45,000
    is 4,500 for CIFAR-100), chosen by :func:`select_forget`; the rest is the retain set.  Retain
    and forget pool are shuffled independently and the pool is cut into ``m`` batches.

    The validation/test partition depends only on ``seed`` (not on ``split``), so uniform and
    adversarial splits of one dataset share validation and test sets.

    ``max_retain`` keeps at most that many retain images, a uniformly random subset (the first of
    the shuffled retain set); the others are used nowhere.  A smaller training set is how a design
    makes its models memorise (docs/workflow.md, "A memorising regime"); ``None`` keeps them all.
    """
    if split not in SPLITS:
        raise DatasetError(f"unknown split {split!r} for {src.name}; expected one of {SPLITS}")
    if not 0.0 <= val_fraction < 1.0:
        raise DatasetError(f"val_fraction must lie in [0, 1), got {val_fraction}")
    rng_hold = named_generator(seed, src.name, "holdout")
    n = len(src.x)
    perm = rng_hold.permutation(n)
    if src.test_x is None:
        if not 0.0 < test_fraction < 1.0:
            raise DatasetError(f"test_fraction must lie in (0, 1), got {test_fraction}")
        n_test = int(round(test_fraction * n))
        test_pos, rest = np.sort(perm[:n_test]), perm[n_test:]
    else:
        test_pos, rest = None, perm
    n_val = int(round(val_fraction * len(rest)))
    val_pos, train_pos = np.sort(rest[:n_val]), np.sort(rest[n_val:])

    m = resolve_forget_size(len(train_pos), batch_size=batch_size, forget_fraction=forget_fraction, m=m)
    n_forget = m * int(batch_size)
    rng_forget = named_generator(seed, src.name, "forget", split)
    f_local, class_info = select_forget(src.y[train_pos], n_forget, split, rng_forget)
    is_forget = np.zeros(len(train_pos), dtype=bool)
    is_forget[f_local] = True
    forget_pos = train_pos[f_local]  # already in random order
    retain_pos = train_pos[~is_forget][rng_forget.permutation(int((~is_forget).sum()))]
    if max_retain is not None:
        if int(max_retain) < 1:
            raise DatasetError(f"max_retain must be a positive integer, got {max_retain!r}")
        retain_pos = retain_pos[: int(max_retain)]

    mean, std = _channel_stats(src.x[train_pos])
    norm = lambda a: _normalise_with(a, mean, std)  # noqa: E731
    if src.test_x is None:
        test_x, test_y, test_id = norm(src.x[test_pos]), src.y[test_pos], src.ids[test_pos]
    else:
        test_x, test_y, test_id = norm(src.test_x), src.test_y, src.test_ids

    meta = dict(src.meta)
    meta.update(
        {
            "split": split,
            "seed": int(seed),
            "normalisation": {"mean": mean, "std": std},
            "val_fraction": float(val_fraction),
            "test_fraction": float(test_fraction) if src.test_x is None else None,
            "forget_fraction": forget_fraction,
            "n_train_portion": int(len(train_pos)),
            **({"max_retain": int(max_retain)} if max_retain is not None else {}),
            **class_info,
        }
    )
    if src.class_names:
        meta["class_names"] = list(src.class_names)
    return AuditData(
        name=src.name,
        kind="image",
        num_classes=int(src.num_classes),
        retain_x=norm(src.x[retain_pos]),
        retain_y=src.y[retain_pos].astype(np.int64),
        forget_x=norm(src.x[forget_pos]),
        forget_y=src.y[forget_pos].astype(np.int64),
        forget_batch=np.repeat(np.arange(m, dtype=np.int64), int(batch_size)),
        val_x=norm(src.x[val_pos]),
        val_y=src.y[val_pos].astype(np.int64),
        test_x=test_x,
        test_y=np.asarray(test_y, dtype=np.int64),
        m=m,
        batch_size=int(batch_size),
        meta=meta,
        retain_id=src.ids[retain_pos].astype(np.int64),
        forget_id=src.ids[forget_pos].astype(np.int64),
        val_id=src.ids[val_pos].astype(np.int64),
        test_id=np.asarray(test_id, dtype=np.int64),
    )


def _normalise_with(x: np.ndarray, mean: list[float], std: list[float]) -> np.ndarray:
    out = x.astype(np.float32, copy=True)
    out -= np.asarray(mean, dtype=np.float32)[None, :, None, None]
    out /= np.asarray(std, dtype=np.float32)[None, :, None, None]
    return out


# --------------------------------------------------------------------------- persistence

_ARRAYS = ("retain_x", "retain_y", "forget_x", "forget_y", "forget_batch", "val_x", "val_y", "test_x", "test_y",
           "retain_id", "forget_id", "val_id", "test_id")
#: The prefix of an :attr:`AuditData.extra` array's name in the file.
_EXTRA = "extra_"


def _json_default(obj: Any) -> Any:
    if isinstance(obj, np.integer):
        return int(obj)
    if isinstance(obj, np.floating):
        return float(obj)
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    if isinstance(obj, (tuple, set)):
        return list(obj)
    if isinstance(obj, Path):
        return str(obj)
    raise TypeError(f"meta value of type {type(obj).__name__} is not JSON-serialisable")


def save_audit_data(data: AuditData, path: str | os.PathLike, *, compress: bool = False) -> None:
    """Write ``data`` to one ``.npz`` file atomically (temporary file in the same directory, then ``os.replace``).

    Text windows are stored as uint8 (the vocabulary has 100 symbols) and restored to int64 by
    :func:`load_audit_data`.
    """
    arrays: dict[str, np.ndarray] = {}
    for name in _ARRAYS:
        a = np.asarray(getattr(data, name))
        if data.kind == "text" and name.endswith(("_x", "_y")) and data.num_classes <= 256 and (a.size == 0 or a.min() >= 0):
            a = a.astype(np.uint8)  # not a question-answer pair's targets, whose unscored ones are negative (IGNORE)
        arrays[name] = a
    arrays.update({_EXTRA + name: np.asarray(a) for name, a in data.extra.items()})
    header = {
        "format_version": _FORMAT_VERSION,
        "name": data.name,
        "kind": data.kind,
        "num_classes": int(data.num_classes),
        "m": int(data.m),
        "batch_size": int(data.batch_size),
        "meta": data.meta,
    }
    arrays["header"] = np.array(json.dumps(header, default=_json_default, sort_keys=True))
    with atomic_path(path) as tmp:
        with open(tmp, "wb") as fh:
            (np.savez_compressed if compress else np.savez)(fh, **arrays)


def load_audit_data(path: str | os.PathLike) -> AuditData:
    """Read an :class:`AuditData` written by :func:`save_audit_data`."""
    with np.load(path, allow_pickle=False) as z:
        header = json.loads(str(z["header"]))
        if header.get("format_version") != _FORMAT_VERSION:
            raise DatasetError(f"{path}: audit-data format {header.get('format_version')} is not {_FORMAT_VERSION}; rerun the data preparation")
        arrays = {name: z[name] for name in _ARRAYS}
        extra = {name.removeprefix(_EXTRA): z[name] for name in z.files if name.startswith(_EXTRA)}
    if header["kind"] == "text":
        for name in _ARRAYS:
            if name.endswith(("_x", "_y")):
                arrays[name] = arrays[name].astype(np.int64)
    return AuditData(
        name=header["name"],
        kind=header["kind"],
        num_classes=header["num_classes"],
        m=header["m"],
        batch_size=header["batch_size"],
        meta=header["meta"],
        extra=extra,
        **arrays,
    )


def split_indices_frame(data: AuditData) -> pd.DataFrame:
    """One row per example: ``example`` (global id), ``part``, ``batch`` (-1 outside the forget pool), ``label``.

    ``label`` is the class for images and -1 for text windows (their targets are sequences).
    Rows are in the order of the arrays in ``data`` (retain, forget by batch, val, test).
    """
    import pandas as pd

    frames = []
    for part, _x, y, ids in data.parts():
        n = len(ids)
        batch = data.forget_batch if part == "forget" else np.full(n, -1, dtype=np.int64)
        label = np.asarray(y, dtype=np.int64) if data.kind != "text" else np.full(n, -1, dtype=np.int64)
        frames.append(pd.DataFrame({"example": np.asarray(ids, dtype=np.int64), "part": part, "batch": batch, "label": label}))
    df = pd.concat(frames, ignore_index=True)
    df["part"] = df["part"].astype(str)
    return df
