"""The workflow itself on a GPU, before any benchmark: ``.test/cuda_smoke.yaml`` (every neural-network
rule kind on tiny designs) through Snakemake on ``--device``, then the determinism and precision cases.

    python benchmarks/cuda_smoke.py --device cuda --out /tmp/cuda-smoke      # the first step of benchmarks/gpu.sh
    python benchmarks/cuda_smoke.py --device cpu --out /tmp/smoke --quick    # its dry run

Cases, each a Snakemake run into its own results folder under ``--out``:

1. ``fp32``: the whole smoke config (every design and experiment, tables and figures).
2. ``fp32-again``: the experiments of ``CHECKED`` once more from scratch; their score, fit, overlap
   and bound Parquet data must equal case 1's (deterministic kernels; the workflow sets
   ``CUBLAS_WORKSPACE_CONFIG`` for a CUDA job).
3. ``tf32`` and ``bf16``: the experiments of ``CHECKED`` with every design's ``precision`` set so.

``--quick`` runs case 1 on the ``CHECKED`` experiments only.  Prints one line a case (seconds, ok or
what failed) and exits 1 when any failed.  Not part of the test suite.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import yaml

REPO = Path(__file__).resolve().parents[1]
CONFIG = REPO / ".test" / "cuda_smoke.yaml"
#: The experiments the determinism and precision cases rerun: a grouped digits method and the
#: CharLSTM's Hessian method (its Newton step inside the precision region, cuDNN off).
CHECKED = ("tiny_ft", "plays_hessian")
PARQUETS = ("fit.parquet", "overlaps.parquet", "bounds.parquet")


def snakemake(out: Path, device: str, cores: int, gpu_jobs: int, overlay: dict | None = None, targets: list[str] | None = None) -> tuple[bool, float, str]:
    """One Snakemake run of the smoke config into ``out`` (with ``overlay`` merged over it); (ok, seconds, tail of its log)."""
    out.mkdir(parents=True, exist_ok=True)
    configs = [str(CONFIG)]
    if overlay:
        (out / "overlay.yaml").write_text(yaml.safe_dump(overlay))
        configs.append(str(out / "overlay.yaml"))
    cmd = [sys.executable, "-m", "snakemake", *(str(out / "results" / t) for t in targets or ()), "--cores", str(cores),
           "--configfile", *configs, "--config", f"device={device}", f"results_dir={out / 'results'}", "--directory", str(REPO)]
    env = dict(os.environ)
    if device != "cpu":
        cmd += ["--resources", f"gpu={gpu_jobs}"]
        env["UNLEARN_AUDIT_JOBS_PER_GPU"] = str(gpu_jobs)
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True)
    (out / "snakemake.log").write_text(proc.stdout + proc.stderr)
    return proc.returncode == 0, time.perf_counter() - t0, (proc.stdout + proc.stderr)[-1500:]


def bounds_of(experiments) -> list[str]:
    return [f"{e}/bounds.parquet" for e in experiments]


def differences(a: Path, b: Path, experiments) -> list[str]:
    """The Parquet files of ``experiments`` whose data differ between two results folders."""
    out = []
    for e in experiments:
        for name in PARQUETS:
            fa, fb = a / e / name, b / e / name
            if not (fa.exists() and fb.exists()):
                out.append(f"{e}/{name} missing")
                continue
            try:
                pd.testing.assert_frame_equal(pd.read_parquet(fa), pd.read_parquet(fb), check_exact=True)
            except AssertionError as why:
                out.append(f"{e}/{name}: {str(why).splitlines()[0]}")
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--device", default="cuda", choices=["cuda", "cpu", "auto"])
    ap.add_argument("--out", required=True, help="a folder for the runs (made; its case folders replaced)")
    ap.add_argument("--cores", type=int, default=min(os.cpu_count() or 2, 12))
    ap.add_argument("--gpu-jobs", type=int, default=6, help="jobs sharing the GPU at once (UNLEARN_AUDIT_JOBS_PER_GPU)")
    ap.add_argument("--quick", action="store_true", help="case 1 on the checked experiments only (a dry run of the script)")
    args = ap.parse_args(argv)
    out = Path(args.out)
    designs = yaml.safe_load(CONFIG.read_text())["nn"]["designs"]
    cases = [("fp32", None, None if not args.quick else bounds_of(CHECKED)),
             ("fp32-again", None, bounds_of(CHECKED)),
             *((p, {"nn": {"designs": {d: {"precision": p} for d in designs}}}, bounds_of(CHECKED)) for p in ("tf32", "bf16"))]
    failed = False
    for name, overlay, targets in cases:
        case_dir = out / name
        shutil.rmtree(case_dir, ignore_errors=True)
        ok, seconds, tail = snakemake(case_dir, args.device, args.cores, args.gpu_jobs, overlay, targets)
        note = "ok" if ok else "failed:\n" + tail
        if ok and name == "fp32-again":
            diff = differences(out / "fp32" / "results", case_dir / "results", CHECKED)
            note = "ok, the Parquet data equal case fp32's" if not diff else "NOT DETERMINISTIC: " + "; ".join(diff)
            ok = not diff
        failed |= not ok
        print(f"{name:<11} {seconds:6.1f} s  {note}", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
