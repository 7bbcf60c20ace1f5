"""Write the small example inputs of the README's `unlearn-audit` commands (deterministic).

    .venv/bin/python examples/make_example_inputs.py            # rewrites the files below
    .venv/bin/python examples/make_example_inputs.py --out DIR  # writes them under DIR instead

* ``scores/calib/<run>.parquet``, ``scores/eval/<run>.parquet``: per-run membership scores in the
  ``SCORES`` schema, one row per example per run, as any producer (the workflow or your own code)
  would write them for ``unlearn-audit audit``.  m = 60 candidate batches of B = 2 examples,
  Γ = 20 calibration and L = 10 evaluation runs; each run's sign vector S ∈ S_m comes from
  ``unlearn_audit.auditors.runs.sign_table`` (the workflow's sampling) and sets ``in_forget``.
  The scores are synthetic: a per-example level, a shift for examples whose batch was in the
  forget set (the membership signal an unlearning algorithm failed to remove) and Gaussian noise.
* ``signs.parquet``: the same sign vectors in the ``SIGNS`` schema (for ``audit --signs``).
* ``overlaps.parquet``: the ``OVERLAPS`` table the workflow would write for these scores (fit on
  the calibration runs, guesses and overlaps V on the evaluation runs, r = 20, 40, 60, both
  scores), with its ``m`` column: ``unlearn-audit bound --overlaps-file`` reads it.

numpy, pandas and pyarrow, plus the library's sign sampling, audit functions and schemas.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import pandas as pd

from unlearn_audit import schemas
from unlearn_audit.auditors.batchwise import fit_table
from unlearn_audit.auditors.tables import audit_tables
from unlearn_audit.auditors.runs import sign_table
from unlearn_audit.io import write_parquet

HERE = Path(__file__).resolve().parent
EXPERIMENT = "example"
SEED = 20260707
M, PER_BATCH, N_CALIB, N_EVAL = 60, 2, 20, 10
R_VALUES = (20, 40, 60)
SHIFT, NOISE = 0.25, 0.5  # in-forget shift of the logit score and its run-to-run noise


def make_inputs(seed: int = SEED) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """(signs, scores, overlaps): SIGNS, SCORES (both phases) and OVERLAPS tables."""
    signs = sign_table(EXPERIMENT, M, N_CALIB, N_EVAL, root_seed=seed)
    rng = np.random.default_rng(seed)
    n = M * PER_BATCH
    batch = np.repeat(np.arange(M), PER_BATCH)
    level = rng.normal(2.0, 1.0, n)  # per-example difficulty: the logit score of a model that never saw it
    frames = []
    for row in signs.itertuples(index=False):
        inside = np.asarray(row.signs)[batch] == 1
        logit = level + SHIFT * inside + rng.normal(0.0, NOISE, n)
        loss = np.log1p(np.exp(-logit))  # cross-entropy of the true class when φ = logit
        frames.append(pd.DataFrame({
            "experiment": EXPERIMENT, "phase": row.phase, "run": row.run, "sign_index": row.sign_index, "seed": row.seed,
            "batch": batch, "example": np.arange(n), "in_forget": inside, "score_logit": logit, "score_loss": loss,
        }))
    scores = pd.concat(frames, ignore_index=True)
    fit = fit_table(scores[scores.phase == "calib"], EXPERIMENT)
    overlaps, _ = audit_tables(fit, scores[scores.phase == "eval"], signs[signs.phase == "eval"], M, R_VALUES)
    return signs, scores, overlaps


def write_inputs(out: Path, seed: int = SEED) -> list[Path]:
    """Write every example input under ``out``; returns the paths written."""
    signs, scores, overlaps = make_inputs(seed)
    written = []
    for (phase, run), sub in scores.groupby(["phase", "run"], sort=True):
        path = out / "scores" / phase / f"{run:02d}.parquet"
        path.parent.mkdir(parents=True, exist_ok=True)
        write_parquet(sub, path, schemas.SCORES)
        written.append(path)
    write_parquet(signs, out / "signs.parquet", schemas.SIGNS)
    write_parquet(overlaps, out / "overlaps.parquet", schemas.OVERLAPS)
    return written + [out / "signs.parquet", out / "overlaps.parquet"]


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, default=HERE, help="folder to write into (default: examples/)")
    args = ap.parse_args(argv)
    paths = write_inputs(args.out)
    print(f"wrote {len(paths)} files under {args.out} ({sum(p.stat().st_size for p in paths) / 1024:.0f} KiB)")


if __name__ == "__main__":
    main()
