"""The runs of a sign-vector audit (docs/workflow.md#the-dag-step-by-step, steps 2, 5, 6; Section 5).

* :func:`sign_table` — every sign vector of a design (calibration and evaluation runs), each
  drawn from its own SeedSequence stream (:mod:`unlearn_audit.seeds`);
* :func:`candidate_sign_table`, :func:`candidate_of_runs` — the same for a joint (Algorithm 3)
  design: Γ calibration runs per candidate S̃ ∈ S_m, and the base model of every run;
* :func:`sign_matrix`, :func:`score_matrix` — one phase's runs as arrays;
* :class:`PhaseRuns`, :func:`phase_runs` — one phase's scores and sign vectors, checked against
  each other once (the input of :class:`~.audit.SignVectorAudit`);
* :func:`check_single_phase` — the guard that keeps calibration and evaluation apart.

Section 5: "Calibration runs and evaluation runs are drawn independently, which is required for
the audit's lower bound to be valid."  The phase of every row is checked, so a calibration run
can never leak into evaluation.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..seeds import check_phase_separation, seed_sequence
from ..catalogue import SCORE_NAMES, score_column
from ..stats.signs import num_sign_vectors, sample_sign_vectors, sign_vector_rank, sign_vector_unrank

__all__ = ["SCORE_COLUMNS", "PhaseRuns", "phase_runs", "sign_table", "candidate_sign_table", "candidate_of_runs", "sign_matrix", "score_matrix", "check_single_phase"]

#: Score name → its column in the score files (one entry per ``catalogue.SCORE_NAMES``).
SCORE_COLUMNS = {name: score_column(name) for name in SCORE_NAMES}


def _sign_rows(design: str, phase: str, signs_of_run, count: int, root_seed: int, start: int) -> list[dict]:
    rows = []
    for run in range(count):
        seq = seed_sequence(root_seed, design, "signs", phase, run)
        rows.append(
            {
                "design": design,
                "phase": phase,
                "run": run,
                "sign_index": start + run,
                "seed": int(seq.generate_state(1, dtype=np.uint64)[0]),
                "signs": signs_of_run(run, seq).astype(np.int8),
            }
        )
    return rows


def _sampled(m: int):
    return lambda run, seq: sample_sign_vectors(m, 1, np.random.default_rng(seq))[0]


def _checked(rows: list[dict]) -> pd.DataFrame:
    table = pd.DataFrame(rows)
    check_phase_separation(table.loc[table.phase == "calib", "seed"], table.loc[table.phase == "eval", "seed"])
    return table


def sign_table(design: str, m: int, n_calib: int, n_eval: int, root_seed: int) -> pd.DataFrame:
    """All sign vectors of a design: Γ calibration runs and L evaluation runs (SIGNS schema), each
    S drawn uniformly from S_m (Algorithm 2)."""
    calib = _sign_rows(design, "calib", _sampled(m), n_calib, root_seed, 0)
    return _checked(calib + _sign_rows(design, "eval", _sampled(m), n_eval, root_seed, len(calib)))


def candidate_sign_table(design: str, m: int, rounds: int, n_eval: int, root_seed: int) -> pd.DataFrame:
    """The sign vectors of a joint (Algorithm 3) design: calibration run k·Γ + γ has the candidate
    S̃ of rank k (``sign_vector_rank``), γ = 0..Γ−1, for every S̃ ∈ S_m; the L evaluation runs draw S
    uniformly from S_m exactly as in :func:`sign_table`."""
    calib = _sign_rows(design, "calib", lambda run, seq: sign_vector_unrank(run // rounds, m), rounds * num_sign_vectors(m), root_seed, 0)
    return _checked(calib + _sign_rows(design, "eval", _sampled(m), n_eval, root_seed, len(calib)))


def candidate_of_runs(signs: pd.DataFrame, phase: str) -> dict[int, int]:
    """{run: rank of its sign vector} for one phase: the base model A(D(S)) a run unlearns from,
    since base training is a deterministic function of S (fixed x0 and order π)."""
    sub = signs[signs.phase == phase]
    return {int(run): sign_vector_rank(np.asarray(s)) for run, s in zip(sub.run, sub.signs)}


def sign_matrix(signs: pd.DataFrame, phase: str) -> tuple[np.ndarray, np.ndarray]:
    """(runs, sign vectors (runs, m)) of one phase, sorted by run."""
    sub = signs[signs.phase == phase].sort_values("run")
    return sub["run"].to_numpy(), np.stack([np.asarray(s, dtype=np.int8) for s in sub["signs"]])


def score_matrix(scores: pd.DataFrame, score: str) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Pivot long-format scores of one phase to (runs, examples) arrays.

    Returns (runs, examples, values (R, n), in_forget (R, n)); every run must score the same
    examples, once each.
    """
    if score not in SCORE_COLUMNS:
        raise ValueError(f"score must be one of {sorted(SCORE_COLUMNS)}, got {score!r}")
    if scores.duplicated(["run", "example"]).any():
        raise ValueError("score files hold an example twice within one run: one row per example per run is required")
    col = SCORE_COLUMNS[score]
    values = scores.pivot(index="run", columns="example", values=col).sort_index()
    inside = scores.pivot(index="run", columns="example", values="in_forget").sort_index()
    if values.isna().any().any():
        raise ValueError("score files do not cover the same examples in every run")
    return values.index.to_numpy(), values.columns.to_numpy(), values.to_numpy(float), inside.to_numpy(bool)


def check_single_phase(frame: pd.DataFrame, phase: str) -> None:
    """Refuse a frame that holds rows of any phase other than ``phase``."""
    phases = set(frame["phase"].unique())
    if phases != {phase}:
        raise ValueError(f"expected only {phase!r} runs here, got phases {sorted(phases)}: calibration and evaluation must not mix")


@dataclass(frozen=True, eq=False)
class PhaseRuns:
    """One phase's runs of a sign-vector audit as checked arrays (Section 5).

    ``runs`` (R,) run ids, sorted; ``sign_index`` (R,) each run's index in the design's sign table;
    ``examples`` (n,) the candidate examples, sorted; ``batch`` (n,) each example's candidate batch
    in [0, m), or None where the strategy does not read it (the joint and pairwise guesses score
    whole sign vectors); ``values`` (R, n) one score of every example in every run; ``signs``
    (R, m) the runs' sign vectors.  An example is in the forget set of a run iff its batch's sign
    is +1 (:attr:`in_forget`)."""

    phase: str
    runs: np.ndarray
    sign_index: np.ndarray
    examples: np.ndarray
    batch: np.ndarray | None
    values: np.ndarray
    signs: np.ndarray

    @classmethod
    def from_arrays(cls, values, signs, phase: str, batch=None) -> "PhaseRuns":
        """Runs given as arrays: ``values`` (R, n) and ``signs`` (R, m); runs and examples numbered 0.."""
        values = np.atleast_2d(np.asarray(values, dtype=float))
        signs = np.asarray(signs)
        if signs.ndim != 2 or signs.shape[1] < 1:
            raise ValueError(f"{phase} sign vectors must be (runs, m), got shape {signs.shape}")
        if values.ndim != 2 or values.shape[0] != signs.shape[0]:
            raise ValueError(f"{phase} scores (runs, examples) and sign vectors (runs, m) must have the same runs; "
                             f"got {values.shape} and {signs.shape}")
        runs = np.arange(values.shape[0])
        return cls(phase, runs, runs, np.arange(values.shape[1]), None if batch is None else np.asarray(batch, np.int64),
                   values, signs.astype(np.int8))

    @property
    def m(self) -> int:
        return int(self.signs.shape[1])

    @property
    def in_forget(self) -> np.ndarray:
        """(R, n) True where the example's batch was in the run's forget set (S_batch = +1)."""
        if self.batch is None:
            raise ValueError(f"the {self.phase} runs carry no batch ids: give each example's candidate batch")
        return self.signs[:, self.batch] == 1


def phase_runs(scores: pd.DataFrame, signs: pd.DataFrame, phase: str, score: str, m: int) -> PhaseRuns:
    """The runs of one phase as :class:`PhaseRuns`, checked once: only ``phase`` rows in both tables,
    the score table's runs are the sign table's, every S has length m, batch ids lie in [0, m) and
    every row's ``in_forget`` is S_batch = +1 of its run's sign vector."""
    check_single_phase(scores, phase)
    check_single_phase(signs, phase)
    runs_s, sign_vectors = sign_matrix(signs, phase)
    if sign_vectors.shape[1] != m:
        raise ValueError(f"the {phase} sign vectors have m = {sign_vectors.shape[1]}, expected m = {m}")
    sign_index = signs.sort_values("run")["sign_index"].to_numpy()
    runs, examples, values, inside = score_matrix(scores, score)
    if not np.array_equal(runs, runs_s):
        raise ValueError(f"{phase} score runs {runs.tolist()} do not match the sign table's {runs_s.tolist()}")
    batch = scores.drop_duplicates("example").set_index("example")["batch"].loc[examples].to_numpy(np.int64)
    if batch.min() < 0 or batch.max() >= m:
        raise ValueError(f"batch ids must lie in [0, {m})")
    if not np.array_equal(inside, sign_vectors[:, batch] == 1):
        raise ValueError(f"{phase} scores' in_forget disagrees with the sign table (S_batch = +1): wrong sign table?")
    return PhaseRuns(phase, runs, sign_index, examples, batch, values, sign_vectors)
