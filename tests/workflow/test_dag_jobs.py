"""analysis/dag_jobs.py, the refactor check (docs/development.md#a-refactor-changes-no-output-byte): every
job of a config's DAG with its params, equal for equal configs and different where a param differs."""

from __future__ import annotations

import json
import subprocess
import sys

import yaml

from workflow_utils import REPO


def _jobs(configfile) -> list[dict]:
    out = subprocess.run([sys.executable, "analysis/dag_jobs.py", str(configfile)], cwd=REPO, capture_output=True, text=True, check=True).stdout
    assert str(REPO) not in out  # the checkout's path is printed as <checkout>: two checkouts compare
    return [json.loads(line) for line in out.splitlines()]


def test_dag_jobs_lists_every_job_with_its_params_and_sees_a_changed_param(tmp_path):
    jobs = _jobs(REPO / ".test" / "statistics.yaml")
    assert sorted(j["rule"] for j in jobs) == ["all", "attainable_bounds", "config_snapshot", "provenance"]
    assert all(j["output"] or j["rule"] == "all" for j in jobs)
    changed = yaml.safe_load((REPO / ".test" / "statistics.yaml").read_text())
    changed["zeta"] = 0.1
    (tmp_path / "changed.yaml").write_text(yaml.safe_dump(changed))
    other = {j["rule"]: j for j in _jobs(tmp_path / "changed.yaml")}
    same = {j["rule"]: j for j in jobs}
    assert other["attainable_bounds"]["params"] != same["attainable_bounds"]["params"]
    assert other["attainable_bounds"]["output"] == same["attainable_bounds"]["output"]
