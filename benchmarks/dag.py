"""The DAG of each config as a cluster sees it: rules defined, jobs planned, the CPU seconds of one dry
run, and the largest ``runtime`` (minutes) and GPU count any job asks for (Snakemake's own resolved
resources of every job, as the dry run prints them; no group jobs bundle them).

Run: ``python benchmarks/dag.py [--configs config/config.yaml config/paper.yaml]`` from the repository
root (a quiet machine: each dry run is timed alone, in an empty folder).  Not part of the test suite.
"""

from __future__ import annotations

import argparse
import re
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SNAKEMAKE = [sys.executable, "-m", "snakemake"]


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _run(args: list[str], cwd: Path) -> tuple[subprocess.CompletedProcess, float, float]:
    cpu, wall = _children_cpu(), time.perf_counter()
    proc = subprocess.run([*SNAKEMAKE, "-s", str(REPO / "Snakefile"), *args], cwd=cwd, capture_output=True, text=True)
    if proc.returncode:
        sys.exit(f"snakemake {' '.join(args)} failed:\n{proc.stderr[-3000:]}")
    return proc, time.perf_counter() - wall, _children_cpu() - cpu


def measure(config: Path) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        rules, _, _ = _run(["--configfile", str(config), "--list-rules"], Path(tmp))
        dry, wall, cpu = _run(["--configfile", str(config), "-n", "--cores", "1"], Path(tmp))
    text = dry.stdout + dry.stderr
    lines = re.findall(r"^\s*resources: (.*)$", text, flags=re.MULTILINE)
    runtimes = [int(v) for line in lines for v in re.findall(r"\bruntime=(\d+)", line)]
    gpus = [int(v) for line in lines for v in re.findall(r"\bgpu=(\d+)", line)]
    total = re.search(r"^total\s+(\d+)", text, flags=re.MULTILINE)
    return {
        "config": config.relative_to(REPO).as_posix(),
        "rules": len([line for line in rules.stdout.splitlines() if line.strip()]),
        "jobs": int(total.group(1)) if total else len(lines),
        "dry_run_wall_s": wall,
        "dry_run_cpu_s": cpu,
        "max_runtime_min": max(runtimes, default=0),
        "max_gpus": max(gpus, default=0),
        "gpu_jobs": sum(1 for g in gpus if g),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--configs", nargs="+", default=["config/config.yaml", "config/paper.yaml"])
    args = parser.parse_args()
    print(f"load average before: {Path('/proc/loadavg').read_text().split()[:3]}")
    print(f"{'config':<22} {'rules':>6} {'jobs':>7} {'dry-run wall s':>15} {'dry-run CPU s':>14} {'max runtime min':>16} {'max GPUs':>9} {'GPU jobs':>9}")
    for name in args.configs:
        r = measure(REPO / name)
        print(f"{r['config']:<22} {r['rules']:>6,} {r['jobs']:>7,} {r['dry_run_wall_s']:>15.1f} {r['dry_run_cpu_s']:>14.1f} "
              f"{r['max_runtime_min']:>16,} {r['max_gpus']:>9} {r['gpu_jobs']:>9,}")
    print(f"load average after: {Path('/proc/loadavg').read_text().split()[:3]}")


if __name__ == "__main__":
    main()
