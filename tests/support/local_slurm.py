"""A SLURM that answers on this machine (ci/slurm_up.sh starts a one-node one on localhost), and
Snakemake runs sent to it through ``profiles/slurm``."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

from workflow_utils import REPO, snakemake

PROFILE = REPO / "profiles" / "slurm"
#: What Snakemake's SLURM executor logs for every job it submits.
SUBMITTED = re.compile(r"submitted with SLURM jobid (\d+)")


def slurm_partition() -> tuple[str | None, str]:
    """(the default partition of a SLURM that answers, "") or (None, why there is none)."""
    if shutil.which("sinfo") is None:
        return None, "no SLURM: `sinfo` is not on PATH (ci/slurm_up.sh starts a one-node SLURM)"
    try:
        proc = subprocess.run(["sinfo", "-h", "-o", "%P %a"], capture_output=True, text=True, timeout=20)
    except subprocess.TimeoutExpired:
        return None, "SLURM does not respond: `sinfo` took more than 20 s"
    if proc.returncode != 0 or not proc.stdout.strip():
        return None, f"SLURM does not respond: `sinfo` failed: {(proc.stderr or proc.stdout).strip()[:300]}"
    partitions = [line.split() for line in proc.stdout.splitlines() if line.strip()]
    up = [name for name, avail in partitions if avail == "up"]
    if not up:
        return None, f"SLURM has no partition that is up: {proc.stdout.strip()}"
    default = [name for name in up if name.endswith("*")]
    return (default or up)[0].rstrip("*"), ""


def cancel_submitted(workdir: Path) -> None:
    """scancel the jobs a killed run had submitted (their ids are in Snakemake's log)."""
    ids = {i for log in (workdir / ".snakemake" / "log").glob("*.log") for i in SUBMITTED.findall(log.read_text())}
    if ids:
        subprocess.run(["scancel", *sorted(ids)], capture_output=True, timeout=30)


def snakemake_on_slurm(workdir: Path, configfile: Path, partition: str, timeout: int, *args: str) -> subprocess.CompletedProcess:
    """``snakemake --profile profiles/slurm *args`` in ``workdir``; on a timeout its jobs are cancelled."""
    try:
        return snakemake(
            workdir, configfile,
            "--profile", str(PROFILE),
            "--default-resources", f"slurm_partition={partition}",
            # the localhost cluster has no accounting daemon (slurmdbd): poll squeue, not the plugin's sacct
            "--slurm-status-command", "squeue",
            # poll sooner than the profile's cluster-friendly defaults (finished jobs stay in squeue 300 s)
            "--slurm-init-seconds-before-status-checks", "2",
            "--seconds-between-status-checks", "3",
            *args,
            cores=2, timeout=timeout,
        )
    except subprocess.TimeoutExpired:
        cancel_submitted(workdir)
        raise
