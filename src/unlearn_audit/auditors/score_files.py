"""Batchwise audit (Algorithm 2) of per-run scores from any producer (``unlearn-audit audit``).

The input is long-format scores in the SCORES schema (one row per example per run), written by the
workflow or by anyone else.  Each run's sign vector S is read from ``in_forget``: batch j has
S_j = +1 iff its examples were in the forget set (all examples of a batch must agree), or, with a
SIGNS table, from that table (and ``in_forget`` must agree with it).  The per-example Gaussians are
fitted on the ``calib`` runs only (:func:`~.batchwise.fit_table`) and the guesses, overlaps and
bounds come from the ``eval`` runs only (:func:`~.batchwise.audit_tables`), exactly as rules
``nn_fit`` and ``nn_audit`` compute them.

Before any statistics, the checks of the workflow (each a ``ValueError`` with one line saying what
is wrong): the columns are present; the phases are ``calib`` and ``eval`` and their runs are
disjoint (Section 5: calibration and evaluation runs must be independent); one row per example per
run, every run scoring the same examples, each example in one batch; every S balanced (S ∈ S_m: ⌊m/2⌋ entries +1, so m may be odd); no missing phase, run, batch or
example;
every batch with >= 2 calibration runs in the forget set and >= 2 out (Algorithm 2, step 7); every
r even and <= m.

A run is identified by its ``seed`` and its ``sign_index`` where those columns identify runs (one
value per run, a different one for every run of a phase: the workflow numbers runs within each
phase, so its calib run 0 and eval run 0 are different runs); otherwise the runs must have distinct
``run`` ids across the phases.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import numpy as np
import pandas as pd

from ..stats.bounds import STATISTICS
from ..stats.selection import Cell
from .batchwise import DEFAULT_CELL, fit_table
from .tables import audit_tables
from .runs import SCORE_COLUMNS

__all__ = ["ScoreAudit", "read_score_files", "read_signs_file", "audit_scores"]

#: Columns every scores table must have (besides the score column audited).
REQUIRED = ("phase", "run", "batch", "example", "in_forget")
PHASES = ("calib", "eval")


@dataclass(frozen=True)
class ScoreAudit:
    """What :func:`audit_scores` computed: the FIT, OVERLAPS and BOUNDS tables and the audit's shape."""

    experiment: str
    score: str
    m: int
    calibration_runs: int
    evaluation_runs: int
    fit: pd.DataFrame
    overlaps: pd.DataFrame
    bounds: pd.DataFrame


def _parquet_files(path: Path, pattern: str) -> list[Path]:
    if path.is_file():
        return [path]
    if not path.is_dir():
        raise ValueError(f"--scores {path}: no such file or directory")
    files = sorted(p for p in path.rglob(pattern) if p.is_file())
    if not files:
        raise ValueError(f"--scores {path}: no files matching {pattern!r} under it")
    return files


def read_score_files(path: str | os.PathLike, pattern: str = "*.parquet") -> tuple[pd.DataFrame, int]:
    """Every Parquet file named like ``pattern`` under ``path`` (searched recursively), or the file
    ``path``, as one frame, and the number of files.  The workflow's run folders also hold
    ``metrics.parquet``: read its scores with ``pattern="scores.parquet"``."""
    files = _parquet_files(Path(path), pattern)
    frames = []
    for f in files:
        try:
            frames.append(pd.read_parquet(f))
        except Exception as exc:  # noqa: BLE001 - any reader failure is one line
            raise ValueError(f"--scores: cannot read {f} as Parquet ({' '.join(str(exc).split())})") from None
    columns = [set(df.columns) for df in frames]
    for f, cols in zip(files, columns):
        missing = [c for c in REQUIRED if c not in cols]
        if missing:
            raise ValueError(f"--scores: {f} has no column(s) {', '.join(missing)} (SCORES schema: {', '.join(REQUIRED)}, {', '.join(SCORE_COLUMNS.values())}); "
                             "choose the score files with --glob, e.g. --glob scores.parquet")
    scores = pd.concat(frames, ignore_index=True)
    if scores.empty:
        raise ValueError(f"--scores {path}: the {len(files)} file(s) read hold no rows; give files with one row per example per run")
    return scores, len(files)


def read_signs_file(path: str | os.PathLike) -> pd.DataFrame:
    """A SIGNS table (columns ``phase``, ``run``, ``signs``; one design)."""
    path = Path(path)
    if not path.is_file():
        raise ValueError(f"--signs {path}: no such file")
    try:
        signs = pd.read_parquet(path)
    except Exception as exc:  # noqa: BLE001
        raise ValueError(f"--signs {path}: cannot read Parquet ({' '.join(str(exc).split())})") from None
    missing = [c for c in ("phase", "run", "signs") if c not in signs.columns]
    if missing:
        raise ValueError(f"--signs {path}: no column(s) {', '.join(missing)} (SIGNS schema)")
    if "design" in signs.columns and signs["design"].nunique() > 1:
        raise ValueError(f"--signs {path}: holds designs {', '.join(sorted(map(str, signs['design'].unique())))}; give the signs of one design")
    return signs


def _as_bool(col: pd.Series) -> np.ndarray:
    values = col.to_numpy()
    if values.dtype == bool:
        return values
    if pd.api.types.is_numeric_dtype(col) and col.notna().all() and set(np.unique(values)) <= {0, 1}:
        return values.astype(bool)
    raise ValueError(f"column in_forget must be boolean (or 0/1), got values like {col.iloc[0]!r}")


def _run_label(phase: str, run) -> str:
    return f"{phase} run {run}"


def _identifies_runs(scores: pd.DataFrame, col: str) -> bool:
    """Whether ``col`` has one value per run and a different value for every run of a phase."""
    per_run = scores.groupby(["phase", "run"])[col].nunique()
    if per_run.max() > 1:
        return False
    firsts = scores.groupby(["phase", "run"])[col].first()
    return bool((firsts.groupby(level="phase").nunique() == firsts.groupby(level="phase").size()).all())


def _check_disjoint(scores: pd.DataFrame) -> None:
    """No run in both phases, by every column that identifies runs (seed, sign_index; else run)."""
    ids = [c for c in ("seed", "sign_index") if c in scores.columns and _identifies_runs(scores, c)] or ["run"]
    for col in ids:
        per_phase = {ph: set(scores.loc[scores.phase == ph, col].tolist()) for ph in PHASES}
        shared = per_phase["calib"] & per_phase["eval"]
        if shared:
            value = min(shared)
            runs = {ph: scores.loc[(scores.phase == ph) & (scores[col] == value), "run"].iloc[0] for ph in PHASES}
            hint = "give each run a distinct run id (or a seed column that identifies it)" if col == "run" else "an evaluation run must not reuse a calibration run (Section 5)"
            raise ValueError(
                f"{col} {value} occurs in both phases (calib run {runs['calib']}, eval run {runs['eval']}): "
                f"calibration and evaluation runs must be disjoint; {hint}"
            )


def _sign_vectors(scores: pd.DataFrame, signs: pd.DataFrame | None) -> tuple[int, dict[tuple[str, int], np.ndarray]]:
    """m and {(phase, run): S}; from ``in_forget`` per batch, or from ``signs`` (then checked against it)."""
    per_batch = scores.groupby(["phase", "run", "batch"], sort=True)["in_forget"].agg(["min", "max"])
    split = per_batch[per_batch["min"] != per_batch["max"]]
    if len(split):
        (phase, run, batch), _ = next(iter(split.iterrows()))
        raise ValueError(f"{_run_label(phase, run)}: the examples of batch {batch} disagree on in_forget; all examples of a batch are in the forget set or none")
    inside = per_batch["max"].astype(bool)
    batches = np.sort(scores["batch"].unique())
    if signs is None:
        m = len(batches)
        position = {b: j for j, b in enumerate(batches)}
        out = {}
        for (phase, run), grp in inside.groupby(level=["phase", "run"], sort=True):
            s = -np.ones(m, dtype=np.int8)
            s[[position[b] for b in grp.index.get_level_values("batch")]] = np.where(grp.to_numpy(), 1, -1)
            out[(phase, run)] = s
        return m, out
    lengths = {len(s) for s in signs["signs"]}
    if len(lengths) != 1:
        raise ValueError(f"--signs: sign vectors of different lengths {sorted(lengths)}")
    m = lengths.pop()
    if not np.issubdtype(batches.dtype, np.integer) or batches.min() < 0 or batches.max() >= m:
        raise ValueError(f"--signs: batch ids must be integers in [0, {m}) to index sign vectors of length m = {m}; got {batches.min()}..{batches.max()}")
    table = {(str(ph), int(r)): np.asarray(s, dtype=np.int8) for ph, r, s in zip(signs["phase"], signs["run"], signs["signs"])}
    out = {}
    for (phase, run), grp in inside.groupby(level=["phase", "run"], sort=True):
        s = table.get((str(phase), int(run)))
        if s is None:
            raise ValueError(f"--signs: no sign vector for {_run_label(phase, run)} of the scores")
        b = grp.index.get_level_values("batch").to_numpy()
        wrong = np.flatnonzero((s[b] == 1) != grp.to_numpy())
        if wrong.size:
            raise ValueError(f"{_run_label(phase, run)}: in_forget of batch {b[wrong[0]]} disagrees with S_j = {s[b[wrong[0]]]} of the signs file")
        out[(phase, run)] = s
    return m, out


def audit_scores(
    scores: pd.DataFrame,
    r_values: Sequence[int],
    *,
    score: str = "logit",
    zeta: float = 0.05,
    signs: pd.DataFrame | None = None,
    experiment: str | None = None,
) -> ScoreAudit:
    """Fit on the ``calib`` runs, audit the ``eval`` runs of ``scores`` (SCORES schema) for every r.

    ``signs`` (SIGNS schema) gives the sign vectors instead of ``in_forget``.  The largest r with
    the mean statistic and ``score`` is the pre-registered cell (the workflow's default, One test,
    one level); every other row of the bounds is exploratory.  Raises ``ValueError`` (one line) for
    every check of the module docstring.
    """
    if score not in SCORE_COLUMNS:
        raise ValueError(f"--score must be one of {', '.join(SCORE_COLUMNS)}, got {score!r}")
    col = SCORE_COLUMNS[score]
    missing = [c for c in (*REQUIRED, col) if c not in scores.columns]
    if missing:
        raise ValueError(f"scores have no column(s) {', '.join(missing)} (SCORES schema: {', '.join(REQUIRED)}, {col})")
    if scores.empty:
        raise ValueError("the scores hold no rows; give one row per example per run")
    for c in ("phase", "run", "batch", "example"):
        missing_at = np.flatnonzero(scores[c].isna().to_numpy())
        if missing_at.size:
            raise ValueError(f"column {c} holds {missing_at.size} missing value(s) (first at row {int(missing_at[0])}); every row needs its {c}")
    scores = scores.copy()
    if "experiment" in scores.columns:
        names = sorted(map(str, scores["experiment"].unique()))
        if len(names) > 1:
            raise ValueError(f"scores hold experiments {', '.join(names)}; audit one experiment at a time")
        experiment = experiment or names[0]
    experiment = experiment or "scores"
    scores["experiment"] = experiment
    phases = set(map(str, scores["phase"].unique()))
    if not phases <= set(PHASES):
        raise ValueError(f"column phase must be calib or eval, got {', '.join(sorted(phases - set(PHASES)))}")
    for ph in PHASES:
        if ph not in phases:
            raise ValueError(f"no {ph} runs in the scores: the fits use calib runs only and the bounds eval runs only; both are needed")
    scores["in_forget"] = _as_bool(scores["in_forget"])
    if not np.isfinite(scores[col].to_numpy(float)).all():
        raise ValueError(f"column {col} holds NaN or infinite values")
    _check_disjoint(scores)
    dup = scores.duplicated(["phase", "run", "example"])
    if dup.any():
        row = scores[dup].iloc[0]
        raise ValueError(f"{_run_label(row.phase, row.run)} holds example {row.example} twice: one row per example per run is required")
    if scores.groupby("example")["batch"].nunique().max() > 1:
        ex = scores.groupby("example")["batch"].nunique().idxmax()
        raise ValueError(f"example {ex} is in different batches in different runs; each example belongs to one candidate batch")
    examples = set(scores["example"].unique())
    counts = scores.groupby(["phase", "run"])["example"].nunique()
    short = counts[counts < len(examples)]
    if len(short):
        (phase, run), n = next(iter(short.items()))
        raise ValueError(f"{_run_label(phase, run)} scores {n} of the {len(examples)} examples; every run must score the same examples")
    m, by_run = _sign_vectors(scores, signs)
    for (phase, run), s in by_run.items():
        if int((s == 1).sum()) != m // 2:
            raise ValueError(f"{_run_label(phase, run)} has {int((s == 1).sum())} of its m = {m} batches in the forget set; S ∈ S_m puts exactly ⌊m/2⌋ = {m // 2} in")
    calib = np.stack([s for (ph, _), s in by_run.items() if ph == "calib"])
    for side, n in (("in", (calib == 1).sum(axis=0)), ("out of", (calib == -1).sum(axis=0))):
        if n.min() < 2:
            j = int(np.argmin(n))
            batch = j if signs is not None else np.sort(scores["batch"].unique())[j]
            raise ValueError(f"batch {batch} has {int(n[j])} calibration run(s) with it {side} the forget set; the Gaussian fits need >= 2 runs in and >= 2 out for every batch: add calibration runs")
    r_values = [int(r) for r in r_values]
    for r in r_values:
        if r < 2 or r % 2 or r > m:
            raise ValueError(f"r = {r}: every guess budget must be even with 2 <= r <= m = {m}")
    if signs is None:  # dense batch ids 0..m-1, the positions of S
        dense = {b: j for j, b in enumerate(np.sort(scores["batch"].unique()))}
        scores["batch"] = scores["batch"].map(dense).astype(np.int64)
    eval_runs = sorted(run for ph, run in by_run if ph == "eval")
    n_calib = len(calib)
    if "sign_index" in scores.columns:
        index_of = scores[scores.phase == "eval"].groupby("run")["sign_index"].first().to_dict()
    else:
        index_of = {run: n_calib + i for i, run in enumerate(eval_runs)}
    eval_signs = pd.DataFrame({
        "phase": "eval", "run": eval_runs, "sign_index": [int(index_of[r]) for r in eval_runs],
        "signs": [by_run[("eval", r)] for r in eval_runs],
    })
    fit = fit_table(scores[scores.phase == "calib"], experiment, scores=[score])
    primary = Cell(max(r_values), DEFAULT_CELL["statistic"], score, DEFAULT_CELL["test"])
    overlaps, bounds = audit_tables(fit, scores[scores.phase == "eval"], eval_signs, m, r_values, zeta=zeta, statistics=STATISTICS, primary=primary)
    return ScoreAudit(experiment, score, m, n_calib, len(eval_runs), fit, overlaps, bounds)
