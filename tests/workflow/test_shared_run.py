"""The shared run itself (.test/all.yaml, made by tests/workflow/conftest.py): every rule of the
workflow ran, a rerun schedules nothing, the run's config is its config file alone, its provenance
record, and the App. F ceilings it wrote.  These tests go first, so that one worker makes the run while the others test
the library; the other modules that read it go last (tests/conftest.py)."""

import json
import re

import pandas as pd
import yaml

from unlearn_audit.pipeline.config import result_config
from unlearn_audit.pipeline.provenance import PACKAGES, config_sha256
from workflow_utils import REPO, executed_rules, load_config, output_hashes, planned_jobs, validated

DEFAULT = REPO / "config" / "config.yaml"
def test_every_rule_of_the_workflow_ran(shared_run):
    """Each rule of the Snakefile and workflow/rules/*.smk had a job in the shared run, so every rule's
    step ran end to end; and every rule that ran is one written out in those files (no rule is made
    in a Python loop: chunks of runs are wildcards of one rule per step)."""
    sources = [REPO / "workflow" / "Snakefile", *sorted((REPO / "workflow" / "rules").glob("*.smk"))]
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


def test_the_run_records_its_provenance_and_a_run_without_it_adds_only_it(shared_run, monkeypatch, tmp_path):
    """<results_dir>/provenance.json (rule provenance, docs/schemas.md#provenance): the checkout's commit,
    the versions, the CPU kernels and the hash of the config the snapshot holds.  On a finished run
    made before the rule existed (a copy without the file) it is the one job to run, and running it
    changes no other output, neither its bytes nor its modification time."""
    monkeypatch.syspath_prepend(str(REPO / "examples" / "noisy_finetune"))
    record = json.loads((shared_run.results / "provenance.json").read_text())
    assert record["config_sha256"] == config_sha256(result_config(validated(shared_run.config)))
    assert set(record["versions"]) == {"python", *PACKAGES} and all(record["versions"].values())
    assert record["cpu"]["torch_capability"] and isinstance(record["cuda"]["devices"], list)
    if (REPO / ".git").exists():
        assert re.fullmatch(r"[0-9a-f]{40}", record["workflow"]["commit"]) and isinstance(record["workflow"]["dirty"], bool)

    # the report's header, from the same record and the run's config
    header = yaml.safe_load((shared_run.results / "report_metadata.yaml").read_text())
    config = result_config(validated(shared_run.config))
    assert header["Workflow"] == f"unlearn-audit {record['versions']['unlearn-audit']}" and header["Root seed"] == config["seed"]
    assert header["Level zeta"] == config["zeta"] and header["Configuration"].endswith(f"(sha256 {record['config_sha256'][:16]})")
    assert header["Sections"] == ", ".join(name for name in ("perfect_prediction", "convex", "gaussian_unlearning", "nn") if config[name]["enabled"])
    assert header["Commit"].startswith(record["workflow"]["commit"] or "not a git checkout")
    assert f"python {record['versions']['python']}" in header["Software"] and header["Machine"].startswith(record["cpu"]["model"])

    old = shared_run.copy(tmp_path / "before_provenance")
    (old.results / "provenance.json").unlink()
    (old.results / "report_metadata.yaml").unlink()
    assert old.dry_run() == {"provenance": 1, "all": 1}
    before = {p: (p.read_bytes(), p.stat().st_mtime_ns) for p in old.results.rglob("*") if p.is_file() and "logs" not in p.parts}
    ran = old.snakemake()
    assert ran.returncode == 0, ran.stderr[-3000:]
    assert sorted(executed_rules(ran)) == ["all", "provenance"], executed_rules(ran)
    after = {p: (p.read_bytes(), p.stat().st_mtime_ns) for p in old.results.rglob("*") if p.is_file() and "logs" not in p.parts}
    assert set(after) - set(before) == {old.results / "provenance.json", old.results / "report_metadata.yaml"}
    assert all(after[p] == before[p] for p in before)
    assert output_hashes(old.results).keys() == output_hashes(shared_run.results).keys()
    assert old.dry_run() == {}
