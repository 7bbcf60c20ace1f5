"""The SLURM profile on a real SLURM: the second run (.test/slurm.yaml through `--profile
profiles/slurm`, tests/workflow/conftest.py) sent its cluster jobs to SLURM.

Checked: job ids in Snakemake's log, one SLURM log file per job under <results_dir>/logs/slurm/,
every chunk its own job (no group jobs), the time limit SLURM granted each training and unlearning
chunk equal to the plan's runtime (the cost model's, under cluster.walltime_minutes), no GPU asked
for on a CPU config, SLURM reporting the jobs finished.  That its outputs equal the
shared run's, byte for byte, is tests/workflow/test_second_run.py.  Skipped where no SLURM answers
(`sinfo` missing or failing; the second run then runs locally); ci/slurm_up.sh brings up a
one-node SLURM on localhost.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from local_slurm import SUBMITTED, slurm_partition, snakemake_on_slurm
from unlearn_audit.pipeline.plan import WorkflowPlan
from workflow_utils import REPO, load_config, validated

#: The jobs of .test/slurm.yaml that are not local rules: two convex_audit, nn_prepare_data, two
#: training chunks, two unlearning chunks, nn_fit.
EXPECTED_SUBMISSIONS = 8


def _minutes(limit: str) -> int:
    """SLURM's time limit ``[D-]H:MM:SS`` or ``M:SS`` in minutes."""
    days, _, clock = limit.rpartition("-")
    parts = [int(p) for p in clock.split(":")]
    hours, minutes, seconds = ([0] * (3 - len(parts)) + parts)
    return int(days or 0) * 1440 + hours * 60 + minutes + (seconds > 0)


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
    assert not [k for k in kinds if k.startswith("group_")], kinds
    assert sorted(kinds) == sorted(["rule_convex_audit"] * 2 + ["rule_nn_fit", "rule_nn_prepare_data"] + ["rule_nn_train", "rule_nn_unlearn"] * 2), kinds

    # the time limit SLURM granted each chunk is the plan's runtime; no job asked for a GPU (device: cpu)
    plan = WorkflowPlan(validated(load_config(second_run.workdir / "config.yaml")))
    # the SLURM executor files a job's log under rule_<name>/<its wildcard values joined by _>/
    planned = {("rule_nn_train", f"{d}_{c}"): plan.resources.runtime_minutes(d, len(keys)) for d, c, keys in plan.nn.design_chunks()}
    planned |= {("rule_nn_unlearn", f"{g[0]}_{c}"): plan.resources.runtime_minutes(plan.nn.design_of(g[0]), len(keys), 1, g)
                for g, c, keys in plan.nn.experiment_chunks()}
    granted = subprocess.run(["squeue", "-h", "--states=all", "-j", ",".join(ids), "-o", "%i|%l|%b"],
                             capture_output=True, text=True, timeout=30)
    limits = {i: (_minutes(limit), gres) for i, limit, gres in (line.split("|") for line in granted.stdout.split())}
    kind_of = {i: by_id[i].relative_to(slurm_logs).parts[:2] for i in ids}
    chunks = {kind_of[i]: minutes for i, (minutes, _) in limits.items() if kind_of[i] in planned}
    assert len(chunks) == 4 and all(chunks[k] == planned[k] for k in chunks), (chunks, planned)
    assert all("gpu" not in gres for _, gres in limits.values()), limits
    assert max(minutes for minutes, _ in limits.values()) <= plan.pricing.walltime_minutes()

    # SLURM itself reports the jobs it still lists (finished jobs stay listed for MinJobAge) as done
    queue = subprocess.run(["squeue", "-h", "--states=all", "-j", ",".join(ids), "-o", "%i %T"],
                           capture_output=True, text=True, timeout=30)
    states = dict(line.split() for line in queue.stdout.splitlines() if line.strip())
    assert states, f"squeue lists none of the jobs {ids}: {queue.stderr}"
    assert set(states) <= set(ids) and set(states.values()) == {"COMPLETED"}, states

    summary = (f"SLURM run: {second_run.seconds:.0f} s, SLURM job ids {', '.join(ids)}; time limits granted "
               f"(min): {', '.join(f'{kind_of[i]} {m}' for i, (m, _) in sorted(limits.items()))}")
    print(summary)
    if os.environ.get("SLURM_CI_REPORT"):  # .ci/run prints it after the tests
        Path(os.environ["SLURM_CI_REPORT"]).write_text(summary + "\n")


def test_cpu_jobs_local_keeps_the_jobs_that_need_no_gpu_off_the_cluster(tmp_path):
    """``cluster.cpu_jobs: local`` (config/paper.yaml's choice): a convex audit, a job that needs no
    GPU, runs on the submitting host under the SLURM profile; nothing is submitted."""
    partition, no_slurm = slurm_partition()
    if no_slurm:
        pytest.skip(no_slurm)
    configfile = REPO / ".test" / "slurm.yaml"
    plan = WorkflowPlan(validated(load_config(configfile)))
    target = plan.files.convex_file("cubic_newton", 800, "summary.parquet")
    proc = snakemake_on_slurm(tmp_path, configfile, partition, 300, "--config", "cluster={'cpu_jobs': 'local'}", "--", target)
    log = proc.stdout + proc.stderr
    assert proc.returncode == 0, log[-3000:]
    assert (tmp_path / target).is_file()
    assert SUBMITTED.findall(log) == [], log[-3000:]
    assert not list((tmp_path / plan.results / "logs" / "slurm").rglob("*.log"))  # no SLURM job wrote a log
