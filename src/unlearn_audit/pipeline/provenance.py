"""Rule ``provenance``: ``<results_dir>/provenance.json``, what a run was computed with
(docs/schemas.md#provenance).

The workflow's checkout (git commit and whether tracked files differ from it), the versions of
Python and of the packages the results depend on, PyTorch's CPU kernels and the devices of the host,
and a hash of the run's configuration.  The results themselves never read it: its content varies by
machine, which is its point (the digits bounds depend on the CPU's kernels, README.md "Results of
the default run"), and the rule asks for nothing that changes when a run is repeated on one machine,
so a finished run stays finished.  torch is imported only when the record is made.
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import subprocess
from importlib import metadata
from pathlib import Path

__all__ = ["FORMAT", "PACKAGES", "PAPERS", "config_sha256", "git_state", "package_versions", "cpu_model", "torch_devices",
           "provenance_record", "report_header", "write_provenance"]

#: The record's layout version (its ``format`` key): raised when a key changes meaning or goes.
FORMAT = 1
#: The distributions whose versions the record names, beside Python's: the ones whose code computes
#: or schedules the results.
PACKAGES = ("torch", "numpy", "pandas", "snakemake", "unlearn-audit")
#: What the workflow reproduces, named in the report's header.
PAPERS = ("Auditing of Unlearning Algorithms", "Gaussian Certified Unlearning in High Dimensions")
#: The config's sections a run may enable, in the order the header lists them.
SECTIONS = ("perfect_prediction", "convex", "gaussian_unlearning", "nn")


def config_sha256(config: dict) -> str:
    """sha256 of ``config`` as canonical JSON (keys sorted, no spaces): equal for equal configs,
    however the YAML was written.  The rule passes the validated config less its execution-only keys
    (:func:`.config.result_config`, the content of ``<results_dir>/config.yaml``), so the hash is the
    same wherever the results live."""
    text = json.dumps(config, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()


def _git(checkout: Path, *args: str) -> str | None:
    """``git -C checkout *args``'s output, or None where git is missing or fails."""
    try:
        proc = subprocess.run(["git", "-C", str(checkout), *args], capture_output=True, text=True, timeout=60, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    return proc.stdout if proc.returncode == 0 else None


def git_state(checkout: str | os.PathLike) -> dict:
    """``{"commit": the checked-out commit, "dirty": whether a tracked file differs from it}``; both
    None where ``checkout`` is not in a git work tree (an unpacked archive, an installed copy) or
    git cannot read it.  Untracked files do not count as dirty."""
    commit = _git(Path(checkout), "rev-parse", "--verify", "HEAD")
    status = _git(Path(checkout), "status", "--porcelain", "--untracked-files=no") if commit else None
    if commit is None or status is None:
        return {"commit": None, "dirty": None}
    return {"commit": commit.strip(), "dirty": bool(status.strip())}


def package_versions(packages=PACKAGES) -> dict:
    """``{"python": ..., <distribution>: its installed version, or None}``; read from the installed
    distributions' metadata, so nothing is imported (the library never imports snakemake)."""
    versions = {"python": platform.python_version()}
    for name in packages:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = None
    return versions


def cpu_model(cpuinfo: str | os.PathLike = "/proc/cpuinfo") -> str | None:
    """The CPU's model name, from ``cpuinfo``'s first ``model name`` line (Linux on x86; other
    systems: :func:`platform.processor`, or None where that is empty)."""
    try:
        for line in Path(cpuinfo).read_text(errors="replace").splitlines():
            key, _, value = line.partition(":")
            if key.strip() == "model name" and value.strip():
                return value.strip()
    except OSError:
        pass
    return platform.processor() or None


def torch_devices() -> dict:
    """PyTorch's view of the host: its version as built (``2.14.1+cu130``: the distribution's metadata
    leaves the local tag out), the CPU kernels it dispatches to
    (``torch.backends.cpu.get_cpu_capability()``: ``AVX512``, ``AVX2``, ``DEFAULT``, …), the CUDA
    version it was built for (None for a CPU build) and the name of every CUDA device it sees."""
    import torch

    cuda = [torch.cuda.get_device_name(i) for i in range(torch.cuda.device_count())] if torch.cuda.is_available() else []
    return {"torch": torch.__version__, "cpu_capability": torch.backends.cpu.get_cpu_capability(),
            "cuda_version": torch.version.cuda, "cuda_devices": cuda}


def provenance_record(config: dict, checkout: str | os.PathLike) -> dict:
    """The record :func:`write_provenance` writes (its keys: docs/schemas.md#provenance)."""
    devices = torch_devices()
    return {
        "format": FORMAT,
        "workflow": git_state(checkout),
        "config_sha256": config_sha256(config),
        "versions": {**package_versions(), "torch": devices["torch"]},
        "cpu": {"model": cpu_model(), "torch_capability": devices["cpu_capability"]},
        "cuda": {"version": devices["cuda_version"], "devices": devices["cuda_devices"]},
        "platform": platform.platform(),
    }


def report_header(record: dict, config: dict) -> dict:
    """The landing page of the run's Snakemake report (``snakemake --report ... --report-metadata
    <results_dir>/report_metadata.yaml``; docs/workflow.md, "make report"): the package and commit,
    the config's hash, root seed, level and sections, and the machine, from the provenance
    ``record`` and the run's ``config`` (:func:`~.config.result_config`'s); a flat mapping of
    strings and numbers, as the report's metadata must be (a list would show as its items joined
    by bare commas)."""
    workflow, versions = record["workflow"], record["versions"]
    commit = workflow.get("commit")
    state = "not a git checkout" if not commit else f"{commit}{' with uncommitted changes' if workflow.get('dirty') else ''}"
    cuda = [str(d) for d in record["cuda"]["devices"]]
    return {
        "Workflow": f"unlearn-audit {versions.get('unlearn-audit') or '(not installed: the checkout)'}",
        "Reproduces": "; ".join(PAPERS),
        "Commit": state,
        "Configuration": f"config.yaml beside the results (sha256 {record['config_sha256'][:16]})",
        "Root seed": int(config["seed"]),
        "Level zeta": float(config["zeta"]),
        "Sections": ", ".join(name for name in SECTIONS if (config.get(name) or {}).get("enabled")) or "none",
        "Machine": f"{record['cpu']['model']} ({record['cpu']['torch_capability']})"
                   + (f"; CUDA {record['cuda']['version']}: {', '.join(cuda)}" if cuda else "; no CUDA device"),
        "Software": ", ".join(f"{name} {version}" for name, version in versions.items()),
    }


def write_provenance(config: dict, checkout: str | os.PathLike, path: str | os.PathLike, header: str | os.PathLike | None = None) -> dict:
    """Rule ``provenance``: write :func:`provenance_record` to ``path`` as indented JSON (atomically)
    and, where ``header`` is given, its :func:`report_header` there as YAML; return the record."""
    import yaml

    from ..atomic import write_text_atomic

    record = provenance_record(config, checkout)
    write_text_atomic(path, json.dumps(record, indent=2) + "\n")
    if header is not None:
        write_text_atomic(header, yaml.safe_dump(report_header(record, config), sort_keys=False, allow_unicode=True))
    return record
