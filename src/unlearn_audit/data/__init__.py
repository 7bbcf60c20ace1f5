"""Datasets of the audits behind one interface (Section 6, App. D).

Every dataset is split into a retain set, a candidate forget pool of ``m`` batches of ``B``
examples, and validation/test sets, returned as an :class:`AuditData`:

- ``digits``: scikit-learn's bundled 8x8 digits (offline; the default configuration);
- ``cifar100``: CIFAR-100 under ``<resources_dir>/cifar-100-python`` (App. D.1; uniform or adversarial split);
- ``shakespeare``: Gutenberg plays as (play, role) clients (App. D.2).

>>> data = prepare_audit_data("digits", batch_size=1, m=144, seed=0, resources_dir="resources")
>>> data.sizes()["forget"]
144
"""

from __future__ import annotations

import inspect
import math
import os
import typing
from dataclasses import dataclass
from typing import Any, Callable, Mapping

from ..import_paths import import_object, is_import_path, keyword_binding_error
from .cifar100 import load_cifar100_source
from .digits import load_digits_source
from .qa import QA_CANDIDATES, QA_FORMATS, build_qa_data, check_qa_design, load_qa_source
from .shakespeare import ShakespeareCorpus, build_shakespeare_data, load_shakespeare_corpus
from .sizes import qa_evaluation_counts, qa_sizes, shakespeare_sizes
from .splits import (
    PARTS,
    AuditData,
    DatasetError,
    DatasetNotFoundError,
    ImageSource,
    load_audit_data,
    save_audit_data,
    split_image_source,
    split_indices_frame,
)
from .vocab import VOCAB_SIZE, CharVocab, default_vocab

__all__ = [
    "dataset_parameter_names",
    "dataset_job_mem_mb",
    "dataset_design_problems",
    "dataset_loader",
    "dataset_spec",
    "DATASET_PATH_FORM",
    "LOADER_ARGUMENTS",
    "AuditData",
    "DATASETS",
    "DatasetError",
    "DatasetNotFoundError",
    "DatasetSpec",
    "ImageSource",
    "PARTS",
    "ShakespeareCorpus",
    "CharVocab",
    "VOCAB_SIZE",
    "default_vocab",
    "load_dataset",
    "prepare_audit_data",
    "save_audit_data",
    "load_audit_data",
    "split_indices_frame",
]


@dataclass(frozen=True)
class DatasetSpec:
    """A registered dataset: ``load(resources_dir, **load_params)`` reads the source and
    ``build(source, split=, batch_size=, forget_fraction=, m=, seed=, **split_params)`` splits it.

    The facts the workflow plans with, the one place they are kept (docs/development.md#add-a-dataset):
    ``job_mem_mb``, the host memory (MB) a training or unlearning job needs for the dataset's arrays
    beyond the Python and torch process (the SLURM ``mem_mb`` of
    :class:`~unlearn_audit.pipeline.plan.resources.ResourcesPlan`); for an image dataset
    ``train_portion`` (images of the training portion before the forget pool is cut out of it,
    :func:`.splits.split_image_source`), ``n_test`` (test images) and ``image`` (side, channels),
    which ``unlearn-audit plan``'s cost model reads (:mod:`unlearn_audit.plan_reports.hours`);
    ``None`` where only the data tell (text).  ``size_model(design, pool)``, where given, is a text
    dataset's (|D_r|, pool, |test|) of a design (:mod:`.sizes`; :meth:`sizes`), and
    ``exact_sizes`` says whether the sizes are the data's (False: an estimate, which the config
    check does not hold a design to).  ``build``'s keyword parameters are the dataset's split
    parameters.  ``check(source, m=, batch_size=, **split_params)``, where given, says what a design
    asks of the data that only the data answer (:func:`dataset_design_problems`).
    ``evaluation_counts(design, pool)``, where given, is what the dataset's own metrics add to an
    evaluation run (:class:`.sizes.EvaluationCounts`: TOFU's on question-answer designs), which the
    cost model prices."""

    name: str
    kind: str
    description: str
    load: Callable[..., Any]
    build: Callable[..., AuditData]
    default_forget_fraction: float | None = None
    job_mem_mb: int = 4000
    train_portion: int | None = None
    n_test: int | None = None
    image: tuple[int, int] | None = None
    check: Callable[..., list[tuple[str, str]]] | None = None
    size_model: Callable[[Mapping, float], tuple[float, float, float]] | None = None
    exact_sizes: bool = True
    evaluation_counts: Callable[[Mapping, float], Any] | None = None

    def sizes(self, design: Mapping, pool: float) -> tuple[float, float, float]:
        """(|D_r|, m·B, |test|) of a design whose candidate pool is ``pool`` examples (NaN where the
        design has no B: a text dataset's size model counts it), in examples: the size model's, or
        the training portion less the pool, capped at ``dataset_params.max_retain``, and the test
        size; NaN where the dataset has neither (only its data tell)."""
        if self.size_model is not None:
            return self.size_model(design, pool)
        if self.train_portion is None or self.n_test is None:
            return math.nan, pool, math.nan
        retain = self.train_portion - pool
        max_retain = (design.get("dataset_params") or {}).get("max_retain")
        return (min(retain, float(max_retain)) if max_retain else retain), pool, self.n_test


def _load_digits(resources_dir: str | os.PathLike) -> ImageSource:
    return load_digits_source()


DATASETS: dict[str, DatasetSpec] = {
    "digits": DatasetSpec("digits", "image", "scikit-learn 8x8 digits, 10 classes, offline", _load_digits, split_image_source, 0.1,
                          job_mem_mb=500, train_portion=1_294, n_test=359, image=(8, 1)),
    "cifar100": DatasetSpec("cifar100", "image", "CIFAR-100 (App. D.1), 100 classes, 32x32 RGB", load_cifar100_source, split_image_source, 0.1,
                            job_mem_mb=4000, train_portion=45_000, n_test=10_000, image=(32, 3)),
    "shakespeare": DatasetSpec("shakespeare", "text", "Shakespeare (play, role) clients, 80-character windows (App. D.2)",
                               load_shakespeare_corpus, build_shakespeare_data, 0.1, job_mem_mb=1000, size_model=shakespeare_sizes,
                               exact_sizes=False),
    "qa": DatasetSpec("qa", "text", "question-answer pairs about entities in TOFU's format, a candidate batch one entity's pairs",
                      load_qa_source, build_qa_data, None, job_mem_mb=500, check=check_qa_design, size_model=qa_sizes,
                      evaluation_counts=qa_evaluation_counts),
}


#: How a dataset of one's own is written (docs/configuration.md#your-own-model-and-data).
DATASET_PATH_FORM = ("'package.module:loader' naming loader(*, split, batch_size, m, seed, resources_dir, **dataset_params) "
                     "-> AuditData")
#: The arguments the workflow passes every loader of one's own (``dataset_params`` come on top).
LOADER_ARGUMENTS = ("split", "batch_size", "m", "seed", "resources_dir")
#: Host memory (MB) a job needs for a dataset of one's own, unless its loader says (``loader.job_mem_mb``).
DEFAULT_JOB_MEM_MB = DatasetSpec.__dataclass_fields__["job_mem_mb"].default


def dataset_loader(name: str) -> Callable[..., AuditData]:
    """The loader of a dataset of one's own, named by import path (:data:`DATASET_PATH_FORM`)."""
    return import_object(name, "dataset", DATASET_PATH_FORM, error=DatasetError)


def dataset_job_mem_mb(name: str) -> int:
    """Host memory (MB) a training or unlearning job needs for dataset ``name``'s arrays: its spec's
    ``job_mem_mb`` (:func:`dataset_spec`; for one of one's own its loader's ``job_mem_mb`` attribute,
    default :data:`DEFAULT_JOB_MEM_MB`)."""
    spec = dataset_spec(name)
    if spec is None:
        raise DatasetError(f"unknown dataset {name!r}; known: {sorted(DATASETS)}")
    return spec.job_mem_mb


def _loader_problems(name: str, params: Mapping[str, Any]) -> list[str]:
    """A loader of one's own: importable, and taking :data:`LOADER_ARGUMENTS` and ``params`` by keyword."""
    try:
        loader = dataset_loader(name)
    except DatasetError as exc:
        return [str(exc)]
    error = keyword_binding_error(loader, {**{a: None for a in LOADER_ARGUMENTS}, **params})
    if error:
        return [f"dataset {name!r}: the loader cannot take {list(LOADER_ARGUMENTS)} and dataset_params {sorted(params)} by keyword ({error}); "
                f"write it as {DATASET_PATH_FORM}"]
    return []


def _checked_own(name: str, data: Any, *, m: int | None, batch_size: int | None) -> AuditData:
    """What a loader of one's own returned, checked against the design before anything trains on it."""
    if not isinstance(data, AuditData):
        raise DatasetError(f"dataset {name!r}: the loader returned {type(data).__name__!r}, not an AuditData; write it as {DATASET_PATH_FORM}")
    if m is not None and data.m != m:
        raise DatasetError(f"dataset {name!r}: the loader returned m = {data.m} candidate batches, the design asks for m = {m}")
    if batch_size is not None and data.batch_size != batch_size:
        raise DatasetError(f"dataset {name!r}: the loader returned batches of B = {data.batch_size}, the design asks for batch_size = {batch_size}")
    if len(data.retain_x) == 0 or len(data.test_x) == 0:
        raise DatasetError(f"dataset {name!r}: the loader returned an empty retain or test set; the audit trains on the one and measures the other")
    return data


def dataset_spec(name: str) -> DatasetSpec | None:
    """The spec of dataset ``name``: a registered one's; for one of one's own by import path (its
    loader imported) a spec with the defaults: kind ``own``, its loader as ``load`` and ``build``
    (it reads and splits at once, :data:`DATASET_PATH_FORM`), its loader's ``job_mem_mb`` attribute
    (default :data:`DEFAULT_JOB_MEM_MB`) and no sizes (only its data tell); ``None`` for an unknown name."""
    if is_import_path(name):
        loader = dataset_loader(name)
        return DatasetSpec(name, "own", f"a dataset of one's own: {DATASET_PATH_FORM}", loader, loader,
                           job_mem_mb=int(getattr(loader, "job_mem_mb", DEFAULT_JOB_MEM_MB)))
    return DATASETS.get(name)


def _spec(name: str) -> DatasetSpec:
    try:
        return DATASETS[name]
    except KeyError:
        raise DatasetError(f"unknown dataset {name!r}; known: {sorted(DATASETS)}") from None


def _accepted(fn: Callable[..., Any], skip: tuple[str, ...]) -> tuple[str, ...]:
    params = inspect.signature(fn).parameters
    return tuple(p for p, v in params.items() if p not in skip and v.kind in (v.KEYWORD_ONLY, v.POSITIONAL_OR_KEYWORD))


def _parameter_sets(spec: DatasetSpec) -> tuple[set[str], set[str]]:
    load_keys = set(_accepted(spec.load, ("resources_dir",)))
    build_keys = set(_accepted(spec.build, ("src", "pairs", "corpus", "split", "batch_size", "forget_fraction", "m", "seed")))
    return load_keys, build_keys


def dataset_parameter_names(name: str) -> list[str]:
    """Every ``dataset_params`` key that dataset ``name`` accepts (loader and split parameters)."""
    if is_import_path(name):
        return sorted(_accepted(dataset_loader(name), LOADER_ARGUMENTS))
    load_keys, build_keys = _parameter_sets(_spec(name))
    return sorted(load_keys | build_keys)


#: Ranges of the numeric dataset parameters: (check, what the value must be).
_PARAM_RANGES: dict[str, tuple[Callable[[Any], bool], str]] = {
    "val_fraction": (lambda v: 0.0 <= v < 1.0, "in [0, 1)"),
    "test_fraction": (lambda v: 0.0 < v < 1.0, "in (0, 1)"),
    "fractions": (lambda v: len(v) == 3 and all(x > 0 for x in v) and abs(sum(v) - 1.0) < 1e-9,
                  "three positive fractions (train, validation, test) summing to 1"),
    **{k: (lambda v: v is None or v >= 1, "an integer >= 1") for k in (
        "num_roles", "min_blocks", "window", "stride", "forget_stride", "eval_stride", "max_retain_windows", "max_eval_windows",
        "max_retain")},
    "format": (lambda v: v in QA_FORMATS, f"one of {list(QA_FORMATS)} (question-answer files)"),
    "candidates": (lambda v: v in QA_CANDIDATES, f"one of {list(QA_CANDIDATES)} (question-answer designs)"),
}


def dataset_params_problems(name: str, params: Mapping[str, Any]) -> list[str]:
    """What is wrong with ``params`` for dataset ``name`` (unknown keys, wrong types, values out of
    range), one line each, checked without loading anything -- so that a config is refused before
    any job."""
    from ..checks import type_mismatch

    if is_import_path(name):
        return _loader_problems(name, params)
    spec = _spec(name)
    load_keys, build_keys = _parameter_sets(spec)
    unknown = sorted(set(params) - load_keys - build_keys)
    if unknown:
        return [f"unknown parameter(s) {unknown} for dataset {name!r}; accepted: {sorted(load_keys | build_keys)}"]
    hints: dict[str, Any] = {}
    for fn in (spec.load, spec.build):
        try:
            hints.update(typing.get_type_hints(fn))
        except Exception:  # noqa: BLE001 - an annotation that does not resolve is not checked
            pass
    problems = []
    for key, value in params.items():
        wanted = type_mismatch(tuple(value) if isinstance(value, list) else value, hints.get(key))
        if wanted:
            problems.append(f"{key} must be {wanted}, got {value!r}")
        elif key in _PARAM_RANGES and value is not None:
            ok, what = _PARAM_RANGES[key]
            try:
                fine = ok(value)
            except TypeError:
                fine = False
            if not fine:
                problems.append(f"{key} must be {what}, got {value!r}")
    return problems


def dataset_design_problems(name: str, *, m: int | None, batch_size: int | None, resources_dir: str | os.PathLike,
                            params: Mapping[str, Any]) -> list[tuple[str, str]]:
    """What a design asks of a registered dataset that only its data answer (its spec's ``check``, on
    the source read as :func:`prepare_audit_data` reads it), before any job: (``dataset_params`` key
    or ``""``, message) each; none for a dataset without a check."""
    spec = DATASETS.get(name)
    if spec is None or spec.check is None:
        return []
    load_keys, build_keys = _parameter_sets(spec)
    try:
        source = spec.load(resources_dir, **{k: v for k, v in params.items() if k in load_keys})
    except (DatasetError, OSError) as exc:
        return [("", str(exc))]
    return spec.check(source, m=m, batch_size=batch_size, **{k: v for k, v in params.items() if k in build_keys})


def load_dataset(name: str, *, resources_dir: str | os.PathLike = "resources", **params: Any) -> ImageSource | ShakespeareCorpus:
    """Read the unsplit source of a registered dataset (images with labels, or parsed Shakespeare roles)."""
    spec = _spec(name)
    unknown = sorted(set(params) - set(_accepted(spec.load, ("resources_dir",))))
    if unknown:
        raise DatasetError(f"unknown parameter(s) {unknown} for loading dataset {name!r}")
    return spec.load(resources_dir, **params)


def prepare_audit_data(
    name: str,
    *,
    split: str = "uniform",
    batch_size: int | None,
    forget_fraction: float | None = None,
    m: int | None = None,
    seed: int,
    resources_dir: str | os.PathLike = "resources",
    **dataset_params: Any,
) -> AuditData:
    """Load and split a dataset for an audit (Section 6, App. D) -- step 1 of the workflow.

    Parameters
    ----------
    name
        ``"digits"``, ``"cifar100"`` or ``"shakespeare"``; or a dataset of one's own by import path
        (:data:`DATASET_PATH_FORM`), whose loader is called with ``split``, ``batch_size``, ``m``,
        ``seed``, ``resources_dir`` and the ``dataset_params``, and whose result is checked.
    split
        ``"uniform"`` or ``"adversarial"`` (images, App. D.1); Shakespeare's forget set is
        always a random choice of whole roles (App. D.2) and accepts ``"uniform"`` only.
    batch_size
        B, examples per candidate forget batch.  Shakespeare: windows per forget chunk
        (``None`` keeps every window of a chunk).
    forget_fraction, m
        Size of the forget pool: ``m`` batches if given, else ``forget_fraction`` of the
        training portion (images: ``m = floor(fraction * n_train / B)``; Shakespeare: share of
        training characters in the forget roles, cut into ``m`` chunks, default 10%).
    seed
        Root seed; all randomness comes from ``SeedSequence(seed, spawn_key=...)`` streams.
    resources_dir
        Where downloaded/cached datasets live.
    **dataset_params
        Loader parameters (cifar100: ``download``, ``label``; shakespeare: ``source``,
        ``download``, ``source_sha256``) and split parameters (images: ``val_fraction``,
        ``test_fraction``, ``max_retain``; shakespeare: ``num_roles``, ``min_blocks``, ``window``, ``stride``,
        ``forget_stride``, ``eval_stride``, ``max_retain_windows``, ``max_eval_windows``, ``fractions``).
    """
    if is_import_path(name):
        problems = _loader_problems(name, dataset_params)
        if problems:
            raise DatasetError(problems[0])
        data = dataset_loader(name)(split=split, batch_size=batch_size, m=m, seed=seed, resources_dir=resources_dir, **dataset_params)
        return _checked_own(name, data, m=m, batch_size=batch_size)
    spec = _spec(name)
    load_keys, build_keys = _parameter_sets(spec)
    unknown = sorted(set(dataset_params) - load_keys - build_keys)
    if unknown:
        raise DatasetError(f"unknown parameter(s) {unknown} for dataset {name!r}; accepted: {sorted(load_keys | build_keys)}")
    if spec.kind == "image" and batch_size is None:
        raise DatasetError(f"batch_size (B) is required for dataset {name!r}")
    if forget_fraction is None and (m is None or spec.kind == "text"):
        forget_fraction = spec.default_forget_fraction
    source = spec.load(resources_dir, **{k: v for k, v in dataset_params.items() if k in load_keys})
    build_params = {k: v for k, v in dataset_params.items() if k in build_keys}
    return spec.build(source, split=split, batch_size=batch_size, forget_fraction=forget_fraction, m=m, seed=seed, **build_params)
