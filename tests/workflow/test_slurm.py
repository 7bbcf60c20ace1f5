"""The SLURM profile on a real SLURM: .test/slurm.yaml through `--profile profiles/slurm`.

Checks that the cluster jobs went to SLURM (job ids in Snakemake's log, one SLURM log file per job
under results/logs/slurm/, the unlearning chunks in one group job, SLURM reporting them finished)
and that every output equals, byte for byte, that of a local run of the same config.  Skipped
where no SLURM answers (`sinfo` missing or failing); ci/slurm_up.sh brings up a one-node SLURM on
localhost.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from workflow_utils import REPO, output_hashes, small_config, snakemake, write_config

pytestmark = pytest.mark.workflow

PROFILE = REPO / "profiles" / "slurm"
CONFIG = small_config("slurm")
SLURM_TIMEOUT_S = 300
#: The jobs of .test/slurm.yaml that are not local rules: convex_audit, nn_prepare_data, three
#: training chunks, the three unlearning chunks as one group job, nn_fit.
EXPECTED_SUBMISSIONS = 7
SUBMITTED = re.compile(r"submitted with SLURM jobid (\d+)")


def slurm_partition() -> str:
    """The default partition of a SLURM that answers, or skip the test saying why there is none."""
    if shutil.which("sinfo") is None:
        pytest.skip("no SLURM: `sinfo` is not on PATH (ci/slurm_up.sh starts a one-node SLURM)")
    try:
        proc = subprocess.run(["sinfo", "-h", "-o", "%P %a"], capture_output=True, text=True, timeout=20)
    except subprocess.TimeoutExpired:
        pytest.skip("SLURM does not respond: `sinfo` took more than 20 s")
    if proc.returncode != 0 or not proc.stdout.strip():
        pytest.skip(f"SLURM does not respond: `sinfo` failed: {(proc.stderr or proc.stdout).strip()[:300]}")
    partitions = [line.split() for line in proc.stdout.splitlines() if line.strip()]
    up = [name for name, avail in partitions if avail == "up"]
    if not up:
        pytest.skip(f"SLURM has no partition that is up: {proc.stdout.strip()}")
    default = [name for name in up if name.endswith("*")]
    return (default or up)[0].rstrip("*")


def cancel_submitted(workdir: Path) -> None:
    """scancel the jobs a killed run had submitted (their ids are in Snakemake's log)."""
    ids = {i for log in (workdir / ".snakemake" / "log").glob("*.log") for i in SUBMITTED.findall(log.read_text())}
    if ids:
        subprocess.run(["scancel", *sorted(ids)], capture_output=True, timeout=30)


def test_slurm_run_matches_local_run(tmp_path):
    partition = slurm_partition()

    on_slurm = tmp_path / "slurm"
    on_slurm.mkdir()
    cfg = write_config(on_slurm, CONFIG)
    start = time.monotonic()
    try:
        proc = snakemake(
            on_slurm, cfg,
            "--profile", str(PROFILE),
            "--default-resources", f"slurm_partition={partition}",
            # poll sooner than the profile's cluster-friendly defaults (finished jobs stay in squeue 300 s)
            "--slurm-init-seconds-before-status-checks", "2",
            "--seconds-between-status-checks", "3",
            cores=2, timeout=SLURM_TIMEOUT_S,
        )
    except subprocess.TimeoutExpired:
        cancel_submitted(on_slurm)
        pytest.fail(f"the SLURM run took more than {SLURM_TIMEOUT_S} s")
    slurm_s = time.monotonic() - start
    log = proc.stdout + proc.stderr
    assert proc.returncode == 0, log[-5000:]

    # every cluster job was submitted with sbatch, and Snakemake's log file names its SLURM job id
    ids = SUBMITTED.findall(log)
    assert len(ids) == len(set(ids)) == EXPECTED_SUBMISSIONS, (ids, log[-5000:])
    logfiles = list((on_slurm / ".snakemake" / "log").glob("*.snakemake.log"))
    assert logfiles and set(ids) <= set(SUBMITTED.findall("".join(f.read_text() for f in logfiles)))

    # one SLURM log per job under results/logs/slurm/, written by the job on the node
    slurm_logs = on_slurm / "results" / "logs" / "slurm"
    by_id = {p.stem: p for p in slurm_logs.rglob("*.log")}
    assert set(ids) <= set(by_id), (sorted(by_id), ids)
    kinds = {by_id[i].relative_to(slurm_logs).parts[0] for i in ids}
    assert {"rule_convex_audit", "rule_nn_prepare_data", "rule_nn_fit"} <= kinds, kinds
    assert sum(kind.startswith("rule_nn_train_") for kind in kinds) == 3, kinds
    groups = [i for i in ids if by_id[i].relative_to(slurm_logs).parts[0].startswith("group_")]
    assert len(groups) == 1, kinds
    group_log = by_id[groups[0]].read_text()
    for chunk in ("calib_0", "calib_1", "eval_0"):
        assert f"nn_unlearn_tiny_ft_{chunk}" in group_log, group_log[-3000:]

    # SLURM itself reports the jobs it still lists (finished jobs stay listed for MinJobAge) as done
    queue = subprocess.run(["squeue", "-h", "--states=all", "-j", ",".join(ids), "-o", "%i %T"],
                           capture_output=True, text=True, timeout=30)
    states = dict(line.split() for line in queue.stdout.splitlines() if line.strip())
    assert states, f"squeue lists none of the jobs {ids}: {queue.stderr}"
    assert set(states) <= set(ids) and set(states.values()) == {"COMPLETED"}, states

    # the same config run locally gives the same bytes, output by output
    local = tmp_path / "local"
    local.mkdir()
    proc_local = snakemake(local, write_config(local, CONFIG), cores=2, timeout=600)
    assert proc_local.returncode == 0, proc_local.stderr[-5000:]
    assert not SUBMITTED.search(proc_local.stdout + proc_local.stderr)
    a, b = output_hashes(on_slurm / "results"), output_hashes(local / "results")
    assert sorted(a) == sorted(b)
    for needed in ("tables/table1b.csv", "tables/table2a.csv", "tables/attainable_bounds.csv", "tiny_ft/bounds.parquet"):
        assert needed in a, sorted(a)
    assert sum(p.endswith(".parquet") for p in a) >= 10 and any(p.endswith(".pt") for p in a)
    differ = sorted(p for p in a if a[p] != b[p])
    assert not differ, f"SLURM and local outputs differ: {differ}"
    summary = f"SLURM run: {slurm_s:.0f} s, SLURM job ids {', '.join(ids)}"
    print(summary)
    if os.environ.get("SLURM_CI_REPORT"):  # .ci/run prints it after the tests
        Path(os.environ["SLURM_CI_REPORT"]).write_text(summary + "\n")
