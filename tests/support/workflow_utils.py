"""Run the real Snakemake workflow from tests, each in its own working directory.

The configs come from files: the small stand-alone ones in ``.test/`` (also runnable by hand,
``snakemake --cores 2 --configfile .test/<name>.yaml``) or ``config/*.yaml``.  A test writes a
copy into its tmp directory with ``results_dir``/``resources_dir`` pointing there and, where it
needs to, a few keys changed.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[2]
#: The workflow (the root Snakefile only includes it).
SNAKEFILE = REPO / "workflow" / "Snakefile"
SMALL_CONFIGS = REPO / ".test"


def script_module(path: str | Path, name: str, *, on_path: str | Path | None = None):
    """A script of the checkout (``path``: absolute, or relative to the checkout) as a module named
    ``name``, registered in ``sys.modules`` (so that its dataclasses resolve their module);
    ``on_path``: a folder put first on ``sys.path`` before it runs (a script that imports its
    neighbours)."""
    if on_path is not None and str(on_path) not in sys.path:
        sys.path.insert(0, str(on_path))
    spec = importlib.util.spec_from_file_location(name, REPO / path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def claims_script():
    """analysis/claims.py as a module (:func:`script_module`)."""
    return script_module("analysis/claims.py", "claims_script")


def small_config(name: str) -> str:
    """The path (relative to the repository) of the stand-alone config ``.test/<name>.yaml``."""
    path = SMALL_CONFIGS / f"{name}.yaml"
    if not path.is_file():
        raise FileNotFoundError(path)
    return str(path.relative_to(REPO))


def load_config(source: str | Path) -> dict:
    path = Path(source)
    return yaml.safe_load((path if path.is_absolute() else REPO / path).read_text())


def merge(base: dict, overrides: dict) -> dict:
    """Merge ``overrides`` into ``base`` in place (nested mappings key by key) and return it."""
    for key, value in overrides.items():
        if isinstance(value, dict) and isinstance(base.get(key), dict):
            merge(base[key], value)
        else:
            base[key] = value
    return base


def write_config(tmp_path: Path, source: str | Path = "config/config.yaml", overrides: dict | None = None, name: str = "config.yaml") -> Path:
    """A copy of ``source`` with results and resources under ``tmp_path`` and ``overrides`` merged in."""
    cfg = load_config(source)
    cfg["results_dir"] = str(tmp_path / "results")
    cfg["resources_dir"] = str(tmp_path / "resources")
    merge(cfg, overrides or {})
    path = tmp_path / name
    path.write_text(yaml.safe_dump(cfg, sort_keys=False))
    return path


def snakemake(workdir: Path, configfile: Path | str, *args: str, cores: int = 1, timeout: int = 600,
              pythonpath: str | None = None) -> subprocess.CompletedProcess:
    """``snakemake -s workflow/Snakefile -d workdir --configfile configfile --cores N *args``, one thread per
    job; ``pythonpath`` (when given) is what the run and its jobs import user modules from."""
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1")
    env.pop("PYTHONPATH", None)
    if pythonpath is not None:
        env["PYTHONPATH"] = pythonpath
    cmd = [
        sys.executable, "-m", "snakemake", "-s", str(SNAKEFILE), "-d", str(workdir),
        "--configfile", str(configfile), "--cores", str(cores), *args,
    ]
    return subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=timeout, cwd=REPO)


def planned_jobs(proc: subprocess.CompletedProcess) -> dict[str, int]:
    """Parse the job-count table ({rule: count}) of a dry run, or of a real run (the jobs it ran)."""
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


def planned_job_wildcards(proc: subprocess.CompletedProcess) -> list[tuple[str, dict[str, str]]]:
    """(rule, wildcards) of every job that a dry run (or a real run) printed ({} for a job without)."""
    out: list[tuple[str, dict[str, str]]] = []
    for line in (proc.stdout + "\n" + proc.stderr).splitlines():
        found = re.match(r"^\s*(?:local)?rule (\S+):$", line)
        if found:
            out.append((found.group(1), {}))
        elif out and line.strip().startswith("wildcards: ") and not out[-1][1]:
            out[-1][1].update(item.split("=", 1) for item in line.strip()[len("wildcards: "):].split(", "))
    return out


def planned_wildcards(proc: subprocess.CompletedProcess, rule: str) -> list[dict[str, str]]:
    """The wildcards of every job of ``rule`` that a dry run (or a real run) printed."""
    return [wildcards for name, wildcards in planned_job_wildcards(proc) if name == rule]


def executed_rules(proc: subprocess.CompletedProcess) -> list[str]:
    """The rule of every job that a real run started (its ``rule X:`` / ``localrule X:`` lines)."""
    text = proc.stdout + "\n" + proc.stderr
    return re.findall(r"^\s*(?:local)?rule (\S+):$", text, flags=re.MULTILINE)


def output_hashes(results: Path, skip: tuple[str, ...] = ("logs", "benchmarks")) -> dict[str, str]:
    """sha256 of every file under ``results`` by relative path, except the top-level folders in ``skip``."""
    out = {}
    for path in sorted(results.rglob("*")):
        rel = path.relative_to(results)
        if path.is_file() and rel.parts[0] not in skip:
            out[rel.as_posix()] = hashlib.sha256(path.read_bytes()).hexdigest()
    return out


def validated(cfg: dict) -> dict:
    """A copy of ``cfg`` with the schema's defaults, as plain JSON types (as Snakemake's config holds it)."""
    import copy
    import json

    from unlearn_audit.pipeline.config import validate_config

    return json.loads(json.dumps(validate_config(copy.deepcopy(cfg), REPO / "workflow" / "schemas" / "config.schema.yaml")))
