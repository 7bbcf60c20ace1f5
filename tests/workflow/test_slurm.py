"""The SLURM profile on a real SLURM: the second run (.test/slurm.yaml through `--profile
profiles/slurm`, tests/workflow/conftest.py) sent its cluster jobs to SLURM.

Checked: job ids in Snakemake's log, one SLURM log file per job under results/logs/slurm/, the
unlearning chunks in one group job, SLURM reporting the jobs finished.  That its outputs equal the
shared run's, byte for byte, is tests/workflow/test_second_run.py.  Skipped where no SLURM answers
(`sinfo` missing or failing; the second run then runs locally); ci/slurm_up.sh brings up a
one-node SLURM on localhost.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from local_slurm import SUBMITTED

#: The jobs of .test/slurm.yaml that are not local rules: two convex_audit, nn_prepare_data, two
#: training chunks, the two unlearning chunks as one group job, nn_fit.
EXPECTED_SUBMISSIONS = 7


def test_the_second_run_sent_its_cluster_jobs_to_slurm(second_run):
    if second_run.no_slurm:
        pytest.skip(second_run.no_slurm)
    log = second_run.proc.stdout + second_run.proc.stderr

    # every cluster job was submitted with sbatch, and Snakemake's log file names its SLURM job id
    ids = SUBMITTED.findall(log)
    assert len(ids) == len(set(ids)) == EXPECTED_SUBMISSIONS, (ids, log[-5000:])
    logfiles = list((second_run.workdir / ".snakemake" / "log").glob("*.snakemake.log"))
    assert logfiles and set(ids) <= set(SUBMITTED.findall("".join(f.read_text() for f in logfiles)))

    # one SLURM log per job under results/logs/slurm/, written by the job on the node
    slurm_logs = second_run.results / "logs" / "slurm"
    by_id = {p.stem: p for p in slurm_logs.rglob("*.log")}
    assert set(ids) <= set(by_id), (sorted(by_id), ids)
    kinds = [by_id[i].relative_to(slurm_logs).parts[0] for i in ids]
    assert sorted(k for k in kinds if not k.startswith(("rule_nn_train_", "group_"))) == [
        "rule_convex_audit"] * 2 + ["rule_nn_fit", "rule_nn_prepare_data"], kinds
    assert sorted(k for k in kinds if k.startswith("rule_nn_train_")) == [
        "rule_nn_train_plays_0", "rule_nn_train_plays_1"], kinds
    groups = [i for i, kind in zip(ids, kinds) if kind.startswith("group_")]
    assert len(groups) == 1, kinds
    group_log = by_id[groups[0]].read_text()
    for chunk in ("0", "1"):
        assert f"nn_unlearn_plays_ft_{chunk}" in group_log, group_log[-3000:]

    # SLURM itself reports the jobs it still lists (finished jobs stay listed for MinJobAge) as done
    queue = subprocess.run(["squeue", "-h", "--states=all", "-j", ",".join(ids), "-o", "%i %T"],
                           capture_output=True, text=True, timeout=30)
    states = dict(line.split() for line in queue.stdout.splitlines() if line.strip())
    assert states, f"squeue lists none of the jobs {ids}: {queue.stderr}"
    assert set(states) <= set(ids) and set(states.values()) == {"COMPLETED"}, states

    summary = f"SLURM run: {second_run.seconds:.0f} s, SLURM job ids {', '.join(ids)}"
    print(summary)
    if os.environ.get("SLURM_CI_REPORT"):  # .ci/run prints it after the tests
        Path(os.environ["SLURM_CI_REPORT"]).write_text(summary + "\n")
