"""Every file path of the workflow, one helper per kind of file (the layout of docs/schemas.md#outputs).

The Snakemake rules (through :class:`.plan.WorkflowPlan`) and the pipeline functions both build paths
here, so a layout change is made once.  Base training and unlearning run in chunks of runs, one job
a chunk, and each chunk job writes one folder named by its runs (:func:`chunk_name`, e.g.
``calib0-29_eval0-9``) that holds one file per run; so one wildcard rule per step makes every chunk,
and :func:`run_of_path` reads a run's (phase, index) back from its path.
"""

from __future__ import annotations

import functools
import os
import re
from pathlib import Path
from typing import Sequence

__all__ = [
    "TABLE_EXTS",
    "FIGURE_EXTS",
    "CHUNK_PATTERN",
    "table_files",
    "figure_files",
    "design_file",
    "chunk_name",
    "chunk_keys",
    "base_chunk_dir",
    "base_model",
    "retrain_model",
    "experiment_file",
    "unlearn_chunk_dir",
    "run_file",
    "run_of_path",
    "finished_run_files",
    "finished_base_models",
    "convex_file",
    "gaussian_unlearning_file",
    "gaussian_unlearning_cell",
]

TABLE_EXTS = ("csv", "md", "tex")
FIGURE_EXTS = ("png", "pdf")


def table_files(results: str, name: str) -> list[str]:
    """``results/tables/<name>.{csv,md,tex}``."""
    return [f"{results}/tables/{name}.{ext}" for ext in TABLE_EXTS]


def figure_files(results: str, name: str) -> list[str]:
    """``results/figures/<name>.{png,pdf}``."""
    return [f"{results}/figures/{name}.{ext}" for ext in FIGURE_EXTS]


def design_file(results: str, design: str, name: str) -> str:
    """A per-design file: ``results/designs/<design>/<name>`` (data split, sign vectors)."""
    return f"{results}/designs/{design}/{name}"


#: The phases of a chunk's keys: calibration and evaluation runs, a joint design's candidate models.
_CHUNK_PHASES = ("calib", "eval", "candidate")
_CHUNK_PART = r"(calib|eval|candidate)([0-9]+)(?:-([0-9]+))?"
#: A wildcard constraint matching exactly the names :func:`chunk_name` makes.
CHUNK_PATTERN = r"(?:calib|eval|candidate)[0-9]+(?:-[0-9]+)?|calib[0-9]+(?:-[0-9]+)?_eval[0-9]+(?:-[0-9]+)?"


def chunk_name(keys: Sequence[tuple[str, int]]) -> str:
    """The name of a chunk of (phase, run) keys: each phase's consecutive runs as ``<phase><first>-<last>``
    (``<phase><run>`` for one run), joined by ``_``: ``calib0-29_eval0-9``, ``eval7``, ``candidate0-19``.
    A chunk holds consecutive runs of one phase, or calibration runs then evaluation runs."""
    parts: list[tuple[str, int, int]] = []
    for phase, run in keys:
        if phase not in _CHUNK_PHASES:
            raise ValueError(f"a chunk holds runs of phases {_CHUNK_PHASES}, not {phase!r}")
        if parts and parts[-1][0] == phase:
            if run != parts[-1][2] + 1:
                raise ValueError(f"a chunk's {phase} runs must be consecutive; {run} follows {parts[-1][2]}")
            parts[-1] = (phase, parts[-1][1], run)
        else:
            parts.append((phase, run, run))
    if not parts or len(parts) > 2 or (len(parts) == 2 and [p for p, _, _ in parts] != ["calib", "eval"]):
        raise ValueError(f"a chunk is one phase's consecutive runs or calibration runs then evaluation runs, got {list(keys)!r}")
    return "_".join(f"{p}{a}" if a == b else f"{p}{a}-{b}" for p, a, b in parts)


def chunk_keys(name: str) -> list[tuple[str, int]]:
    """The (phase, run) keys of the chunk :func:`chunk_name` named ``name``."""
    return list(_chunk_keys(name))


@functools.lru_cache(maxsize=None)
def _chunk_keys(name: str) -> tuple[tuple[str, int], ...]:
    if not re.fullmatch(CHUNK_PATTERN, name):
        raise ValueError(f"{name!r} is not a chunk name (e.g. calib0-29_eval0-9, eval7, candidate0-19)")
    keys = []
    for part in name.split("_"):
        phase, first, last = re.fullmatch(_CHUNK_PART, part).groups()
        keys += [(phase, run) for run in range(int(first), int(last if last is not None else first) + 1)]
    return tuple(keys)


def base_chunk_dir(results: str, design: str, chunk: str) -> str:
    """The folder of one base-training chunk job: ``results/designs/<design>/base/<chunk>``."""
    return f"{results}/designs/{design}/base/{chunk}"


def base_model(results: str, design: str, chunk: str, phase: str, run: int | str) -> str:
    """The base model A(D(S)) of one run, in its chunk's folder: ``…/base/<chunk>/<phase>/<run>.pt``;
    phase ``candidate``: a joint design's model of candidate S̃ (its ``sign_vector_rank``), shared by
    every calibration and evaluation run with that sign vector."""
    return f"{base_chunk_dir(results, design, chunk)}/{phase}/{run}.pt"


def retrain_model(results: str, design: str) -> str:
    """The model A(D_r) retrained on the retain set alone from the design's x0 and order π (the
    *Retrain* control, exact unlearning): ``results/designs/<design>/base/retrain.pt``."""
    return f"{results}/designs/{design}/base/retrain.pt"


def experiment_file(results: str, experiment: str, name: str) -> str:
    """A per-experiment file: ``results/<experiment>/<name>`` (fit, overlaps, bounds)."""
    return f"{results}/{experiment}/{name}"


def unlearn_chunk_dir(results: str, group: str, chunk: str) -> str:
    """The folder of one unlearning chunk job of a group of experiments (named by its first
    experiment; a group is one experiment, or the variants that share a noiseless part):
    ``results/<group>/runs/<chunk>``."""
    return f"{results}/{group}/runs/{chunk}"


def run_file(results: str, group: str, chunk: str, experiment: str, phase: str, run: int | str, name: str) -> str:
    """A per-run file of ``experiment`` in its group's chunk folder:
    ``results/<group>/runs/<chunk>/<experiment>/<phase>/<run>/<name>``."""
    return f"{unlearn_chunk_dir(results, group, chunk)}/{experiment}/{phase}/{run}/{name}"


def finished_run_files(results: str | os.PathLike, experiment: str, phase: str, name: str) -> list[Path]:
    """The per-run ``name`` files of an experiment's ``phase`` in a finished run's results folder, in
    run order, found by the layout whatever the run's chunking (:func:`run_file`)."""
    return sorted(Path(results).glob(f"*/runs/*/{experiment}/{phase}/*/{name}"), key=lambda p: int(p.parent.name))


def finished_base_models(results: str | os.PathLike, design: str, phase: str) -> list[Path]:
    """The base models of a design's ``phase`` in a finished run's results folder, in run order (:func:`base_model`)."""
    return sorted(Path(results).glob(f"designs/{design}/base/*/{phase}/*.pt"), key=lambda p: int(p.stem))


_RUN_PATTERNS = (
    re.compile(r"/base/[^/]+/(calib|eval|candidate)/(\d+)\.pt$"),
    re.compile(r"/base/(retrain)()\.pt$"),
    re.compile(r"/runs/[^/]+/[^/]+/(calib|eval)/(\d+)/[^/]+$"),
)


def run_of_path(path: str | os.PathLike) -> tuple[str, int]:
    """(phase, run) of a per-run path made by :func:`base_model` or :func:`run_file` (``"candidate"``,
    rank for a joint design's candidate model), or (``"retrain"``, 0) of the :func:`retrain_model` path."""
    text = Path(path).as_posix()
    for pattern in _RUN_PATTERNS:
        found = pattern.search(text)
        if found:
            return found.group(1), int(found.group(2) or 0)
    raise ValueError(f"{path}: not a per-run path (…/base/<chunk>/<phase>/<run>.pt or …/runs/<chunk>/<experiment>/<phase>/<run>/<file>)")


def convex_file(results: str, mechanism: str, epsilon: float | str, name: str) -> str:
    """A per-(mechanism, ε) file of the convex audits: ``results/convex/<mechanism>/eps_<ε>/<name>``;
    a number ε is written as ``repr(float(ε))`` so that 5 and 5.0 name one file."""
    label = epsilon if isinstance(epsilon, str) else repr(float(epsilon))
    return f"{results}/convex/{mechanism}/eps_{label}/{name}"


def gaussian_unlearning_file(results: str, name: str) -> str:
    """A file of the Gaussian-unlearning experiments: ``results/gaussian_unlearning/<name>``."""
    return f"{results}/gaussian_unlearning/{name}"


def gaussian_unlearning_cell(results: str, experiment: str, x: float | str) -> str:
    """One grid cell of a Gaussian-unlearning experiment: ``…/<experiment>/cells/<x>.parquet``."""
    label = x if isinstance(x, str) else repr(x)
    return gaussian_unlearning_file(results, f"{experiment}/cells/{label}.parquet")
