"""The log of a workflow job: its stderr, ending in one summary line of what it wrote.

Every script of ``workflow/scripts`` starts with ``start_job_log(snakemake.log[0],
snakemake.output, job=snakemake)``: stderr goes to the job's log file (line-buffered, so a killed job's log holds
everything up to the kill), and when the job ends with all its outputs in place the last line says
what it wrote -- the files with their rows (Parquet, CSV) or sizes, and for a BOUNDS file the
pre-registered cell's ε_LB -- and how long it took.  A job that fails leaves its traceback as the
last lines instead.  Given the job (``snakemake``), it also stamps every Parquet file the job
writes with its provenance (:mod:`.job_stamp`, docs/schemas.md#provenance).
"""

from __future__ import annotations

import atexit
import os
import sys
import time
from pathlib import Path
from typing import Any, Iterable

__all__ = ["start_job_log", "output_summary"]


def _describe(path: Path) -> str:
    name = path.name if path.parent.name in ("", ".") else f"{path.parent.name}/{path.name}"
    if path.is_dir():
        return f"{name}/ ({sum(1 for _ in path.iterdir())} entries)"
    if path.suffix == ".parquet":
        import pyarrow.parquet as pq

        rows = pq.ParquetFile(path).metadata.num_rows
        text = f"{name} ({rows} rows"
        if path.name.endswith("bounds.parquet") and rows:
            text += _preregistered(path)
        return text + ")"
    if path.suffix == ".csv":
        with path.open() as fh:
            rows = max(sum(1 for _ in fh) - 1, 0)
        return f"{name} ({rows} rows)"
    return f"{name} ({path.stat().st_size:,} bytes)"


def _preregistered(path: Path) -> str:
    """'; pre-registered ... ε_LB = x' for a BOUNDS file with a pre-registered (or selected) row."""
    import pandas as pd

    from ..schemas import REPORTED_ROLES

    bounds = pd.read_parquet(path)
    if "role" not in bounds.columns:
        return ""
    rows = bounds[bounds["role"].isin(REPORTED_ROLES)]
    if rows.empty:
        return ""
    row = rows.iloc[0]
    cell = ", ".join(str(row[c]) for c in ("r", "statistic", "score") if c in bounds.columns)
    claim = row["epsilon_lb_test"] if "epsilon_lb_test" in row.index else row["epsilon_lb"]
    test = f", {row['test']} test" if "test" in row.index else ""
    return f"; {row['role']} cell ({cell}{test}): epsilon_LB = {float(claim):.4g}"


def output_summary(outputs: Iterable[str | os.PathLike], seconds: float | None = None) -> str:
    """One line: what ``outputs`` hold (at most five described, then a count) and the time taken."""
    paths = [Path(p) for p in outputs]
    shown = [_describe(p) for p in paths[:5]]
    more = f" and {len(paths) - 5} more" if len(paths) > 5 else ""
    took = f" in {seconds:.1f} s" if seconds is not None else ""
    return f"done{took}: wrote {', '.join(shown) or 'nothing'}{more}"


def start_job_log(log_path: str | os.PathLike, outputs: Iterable[str | os.PathLike], job: Any = None) -> None:
    """Send stderr to ``log_path`` and, at exit, append :func:`output_summary` when every output exists;
    where ``job`` (a script's ``snakemake`` object) is given, stamp the job's Parquet outputs from its
    config and checkout (:func:`.job_stamp.install`)."""
    sys.stderr = open(log_path, "w", buffering=1)
    if job is not None:
        from .job_stamp import install, job_checkout

        install(job.config, job_checkout(getattr(job, "scriptdir", None)))
    outputs = [str(p) for p in outputs]
    started = time.perf_counter()

    def summary() -> None:
        if all(Path(p).exists() for p in outputs):
            try:
                print(output_summary(outputs, time.perf_counter() - started), file=sys.stderr)
            except Exception as exc:  # noqa: BLE001 - a summary must never fail a finished job
                print(f"done: wrote {len(outputs)} output(s) (summary failed: {exc})", file=sys.stderr)
        sys.stderr.flush()

    atexit.register(summary)
