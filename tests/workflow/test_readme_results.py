"""analysis/readme_results.py writes the README's results section from a run's files: the run's own
claim counts and provenance, Table 1b's rows, and which claims hold on every CPU when given the same
config's runs from other CPUs; ``--write`` replaces that section alone."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys

import pandas as pd
import pytest

from workflow_utils import REPO, script_module

pytestmark = pytest.mark.workflow


@pytest.fixture(scope="module")
def readme_results():
    return script_module("analysis/readme_results.py", "readme_results_script", on_path=REPO / "analysis")


def test_the_section_counts_this_runs_claims_and_rows(shared_run, readme_results):
    text = readme_results.section(shared_run.results)
    statuses = readme_results.claims_module.evaluate(shared_run.results).status.value_counts()
    assert text.startswith(readme_results.HEADING + "\n")
    assert f"This run: {statuses.get('PASS', 0)} PASS, {statuses.get('FAIL', 0)} FAIL," in text
    assert readme_results.provenance_line(shared_run.results) in text
    assert "shows no claim to hold on every CPU" in text  # one run, one CPU
    t1b = pd.read_csv(shared_run.results / "tables" / "table1b.csv")
    rows = [line for line in text.splitlines() if line.startswith("| uniform |") or line.startswith("| adversarial |")]
    assert len(rows) == len(t1b)  # one line per row of the run's Table 1b, its claim printed
    assert all(f"{c:.2f}" in text for c in t1b.epsilon_lb_claim)


def test_other_cpus_runs_say_which_claims_hold_on_every_cpu(shared_run, readme_results, tmp_path):
    other = tmp_path / "other"
    shutil.copytree(shared_run.results, other, ignore=shutil.ignore_patterns("logs", "benchmarks"))
    record = json.loads((other / "provenance.json").read_text())
    record["cpu"] = {**record.get("cpu", {}), "model": "Another CPU", "torch_capability": "AVX2"}
    (other / "provenance.json").write_text(json.dumps(record))
    line = readme_results.cpus_line(shared_run.results, [other])
    assert line.startswith("Runs on 2 CPU(s)") and "Another CPU (AVX2 kernels)" in line and "differ" not in line


def test_write_replaces_the_section_and_nothing_else(shared_run, tmp_path):
    readme = tmp_path / "README.md"
    readme.write_text("# title\n\nbefore\n\n## Results of the default run\n\nstale 99.99\n\n## Troubleshooting\n\nafter\n")
    proc = subprocess.run([sys.executable, str(REPO / "analysis" / "readme_results.py"), str(shared_run.results), "--write", str(readme),
                           "--details", str(tmp_path / "results.md")], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    text = readme.read_text()
    assert text.startswith("# title\n\nbefore\n\n## Results of the default run\n") and text.endswith("## Troubleshooting\n\nafter\n")
    assert "stale 99.99" not in text and "This run:" in text
    assert "# Every claim of the default run" in (tmp_path / "results.md").read_text()
