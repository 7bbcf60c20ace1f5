"""The shared run itself (.test/all.yaml, made by tests/workflow/conftest.py): every rule of the
workflow ran, a rerun schedules nothing, the run's config is its config file alone, and the App. F
ceilings it wrote.  These tests go first, so that one worker makes the run while the others test
the library; the other modules that read it go last (tests/conftest.py)."""

import re

import pandas as pd
import yaml

from unlearn_audit.pipeline.config import result_config
from workflow_utils import REPO, load_config, planned_jobs, validated

DEFAULT = REPO / "config" / "config.yaml"
def test_every_rule_of_the_workflow_ran(shared_run):
    """Each rule of the Snakefile and workflow/rules/*.smk had a job in the shared run, so every rule's
    step ran end to end; and every rule that ran is one written out in those files (no rule is made
    in a Python loop: chunks of runs are wildcards of one rule per step)."""
    sources = [REPO / "Snakefile", *sorted((REPO / "workflow" / "rules").glob("*.smk"))]
    text = "".join(path.read_text() for path in sources)
    named = set(re.findall(r"^rule (\w+):", text, flags=re.MULTILINE)) | set(re.findall(r"^use rule \w+ as (\w+) with:", text, flags=re.MULTILINE))
    assert len(named) > 20 and {"nn_fit", "certified_table6", "nn_train", "nn_train_retrain", "nn_unlearn"} <= named
    assert not re.search(r"^for .*:\n(\s+.*\n)*?\s+rule:", text, flags=re.MULTILINE)
    ran = set(shared_run.jobs)
    assert ran == named, (sorted(named - ran), sorted(ran - named))


def test_every_figure_writes_the_numbers_it_plots_beside_it(shared_run):
    figures = shared_run.results / "figures"
    pngs = sorted(figures.glob("*.png"))
    assert len(pngs) >= 14, pngs
    for png in pngs:
        for ext in (".pdf", ".csv"):
            assert png.with_suffix(ext).is_file(), f"{png.name} has no {ext} beside it"
        assert len(pd.read_csv(png.with_suffix(".csv"))) > 0, png.name
    plotted = pd.read_csv(figures / "convex_epsilon_lb.csv")
    table2a = pd.read_csv(shared_run.results / "tables" / "table2a.csv")
    cubic = plotted[(plotted.mechanism == "cubic_newton") & (plotted.auditor == "pairwise")]
    assert cubic.epsilon_lb.tolist() == table2a.epsilon_lb_pairwise.tolist()


def test_the_shared_run_wrote_the_ceilings_and_a_rerun_schedules_nothing(shared_run):
    tables = shared_run.results / "tables"
    table = pd.read_csv(tables / "attainable_bounds.csv")
    assert table["epsilon_ldp_mean"].round(2).tolist() == [4.00, 40.83]
    for ext in ("md", "tex"):
        assert (tables / f"attainable_bounds.{ext}").stat().st_size > 0
    again = shared_run.snakemake("-n")
    assert again.returncode == 0 and planned_jobs(again) == {}
    assert "Nothing to be done" in again.stdout + again.stderr


def test_the_config_a_run_uses_is_its_config_file_alone(shared_run, monkeypatch):
    """The shared run was given its config with --configfile: its snapshot (rule config_snapshot) is
    that file plus the schema's defaults, less the execution-only keys, with nothing of
    config/config.yaml in it."""
    monkeypatch.syspath_prepend(str(REPO / "examples" / "noisy_finetune"))  # its noisy_ft method is validated by import
    snapshot = yaml.safe_load((shared_run.results / "config.yaml").read_text())
    assert snapshot == result_config(validated(shared_run.config))
    assert "results_dir" not in snapshot
    default = load_config(DEFAULT)
    assert not set(default["nn"]["designs"]) & set(snapshot["nn"]["designs"])
    assert not set(default["nn"]["experiments"]) & set(snapshot["nn"]["experiments"])


def test_every_job_log_ends_with_what_the_job_wrote(shared_run):
    logs = sorted(p for p in (shared_run.results / "logs").rglob("*.log") if "slurm" not in p.parts)
    assert len(logs) > 50
    for log in logs:
        lines = log.read_text().strip().splitlines()
        assert lines, f"{log} is empty"
        assert lines[-1].startswith("done in ") or lines[-1].startswith("done: wrote"), f"{log}: last line {lines[-1]!r}"
    audits = [p for p in logs if p.name in ("audit.log", "joint_audit.log") and p.parent.name != "gaussian_unlearning"]
    assert audits and all("epsilon_LB = " in p.read_text().strip().splitlines()[-1] for p in audits)
