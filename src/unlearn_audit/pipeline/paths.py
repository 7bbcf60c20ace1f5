"""Every file path of the workflow, one helper per kind of file (DESIGN §4 layout).

The Snakemake rules (through :class:`.plan.WorkflowPlan`) and the pipeline functions both build paths
here, so a layout change is made once.  :func:`run_of_path` reads the run index back from a per-run
path, so chunked jobs need no list of runs in their ``params`` (changing ``chunk_size`` reruns
nothing).
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Sequence

__all__ = [
    "TABLE_EXTS",
    "FIGURE_EXTS",
    "table_files",
    "figure_files",
    "design_file",
    "base_model",
    "candidate_model",
    "retrain_model",
    "experiment_file",
    "run_file",
    "run_of_path",
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


def base_model(results: str, design: str, phase: str, run: int | str) -> str:
    """The base model A(D(S)) of one run: ``results/designs/<design>/base/<phase>/<run>.pt``."""
    return f"{results}/designs/{design}/base/{phase}/{run}.pt"


def base_model_list(results: str, design: str, phase: str) -> str:
    """The list of a batchwise design's base models of one phase, one path a line:
    ``results/designs/<design>/base/<phase>.txt`` (rule nn_base_models; the input of that phase's
    unlearning chunks)."""
    return f"{results}/designs/{design}/base/{phase}.txt"


def write_path_list(files: Sequence[str], out: str | os.PathLike) -> None:
    """Write ``files``, one a line, to ``out`` (atomically), as rule nn_base_models does."""
    from ..io import write_text_atomic

    write_text_atomic(out, "".join(f"{Path(f).as_posix()}\n" for f in files))


def read_path_list(path: str | os.PathLike) -> list[str]:
    """The paths :func:`write_path_list` wrote to ``path``."""
    return [line for line in Path(path).read_text().splitlines() if line]


def candidate_model(results: str, design: str, rank: int | str) -> str:
    """The base model A(D(S̃)) of candidate S̃ (its ``sign_vector_rank``) of a joint design, shared by
    all calibration and evaluation runs with that sign vector:
    ``results/designs/<design>/base/candidate/<rank>.pt``."""
    return f"{results}/designs/{design}/base/candidate/{rank}.pt"


def retrain_model(results: str, design: str) -> str:
    """The model A(D_r) retrained on the retain set alone from the design's x0 and order π (the
    *Retrain* control, exact unlearning): ``results/designs/<design>/base/retrain.pt``."""
    return f"{results}/designs/{design}/base/retrain.pt"


def experiment_file(results: str, experiment: str, name: str) -> str:
    """A per-experiment file: ``results/<experiment>/<name>`` (fit, overlaps, bounds)."""
    return f"{results}/{experiment}/{name}"


def run_file(results: str, experiment: str, phase: str, run: int | str, name: str) -> str:
    """A per-run file: ``results/<experiment>/runs/<phase>/<run>/<name>``."""
    return f"{results}/{experiment}/runs/{phase}/{run}/{name}"


_RUN_PATTERNS = (
    re.compile(r"/base/(calib|eval|candidate)/(\d+)\.pt$"),
    re.compile(r"/base/(retrain)()\.pt$"),
    re.compile(r"/runs/(calib|eval)/(\d+)/[^/]+$"),
)


def run_of_path(path: str | os.PathLike) -> tuple[str, int]:
    """(phase, run) of a per-run path made by :func:`base_model` or :func:`run_file`,
    (``"candidate"``, rank) of a :func:`candidate_model` path, or (``"retrain"``, 0) of the
    :func:`retrain_model` path."""
    text = Path(path).as_posix()
    for pattern in _RUN_PATTERNS:
        found = pattern.search(text)
        if found:
            return found.group(1), int(found.group(2) or 0)
    raise ValueError(f"{path}: not a per-run path (…/base/<phase>/<run>.pt or …/runs/<phase>/<run>/<file>)")


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
