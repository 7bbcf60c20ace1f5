"""Run the real Snakemake workflow from tests, each in its own working directory."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]
SNAKEFILE = REPO / "Snakefile"


SECTIONS = ("perfect_prediction", "convex", "gaussian_unlearning", "nn")


def only(**sections: dict) -> dict:
    """Config overrides that run only the given sections; every other section is disabled."""
    unknown = set(sections) - set(SECTIONS)
    if unknown:
        raise ValueError(f"unknown config sections {sorted(unknown)}")
    return {name: sections.get(name, {"enabled": False}) for name in SECTIONS}


def write_config(tmp_path: Path, overrides: dict | None = None, base: str = "config/config.yaml", replace: tuple[str, ...] = ()) -> Path:
    """Base config with ``overrides`` merged in; top-level keys in ``replace`` are replaced whole."""
    cfg = yaml.safe_load((REPO / base).read_text())
    cfg["results_dir"] = str(tmp_path / "results")
    cfg["resources_dir"] = str(tmp_path / "resources")

    def merge(a, b):
        for k, v in b.items():
            if isinstance(v, dict) and isinstance(a.get(k), dict):
                merge(a[k], v)
            else:
                a[k] = v

    for key in replace:
        cfg[key] = (overrides or {})[key]
    merge(cfg, {k: v for k, v in (overrides or {}).items() if k not in replace})
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(cfg))
    return path


def snakemake(workdir: Path, configfile: Path, *args: str, cores: int = 1, timeout: int = 400) -> subprocess.CompletedProcess:
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1")
    cmd = [
        sys.executable, "-m", "snakemake", "-s", str(SNAKEFILE), "-d", str(workdir),
        "--configfile", str(configfile), "--cores", str(cores), *args,
    ]
    return subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=timeout)


def planned_jobs(proc: subprocess.CompletedProcess) -> dict[str, int]:
    """Parse the job-count table of a dry run ({rule: count})."""
    counts: dict[str, int] = {}
    lines = proc.stdout.splitlines() + proc.stderr.splitlines()
    in_table = False
    for line in lines:
        parts = line.split()
        if parts[:2] == ["job", "count"]:
            in_table = True
            continue
        if in_table:
            if len(parts) == 2 and parts[1].isdigit():
                if parts[0] != "total":
                    counts[parts[0]] = int(parts[1])
            elif parts and not set(line.replace(" ", "")) <= {"-"}:
                in_table = False
    return counts
