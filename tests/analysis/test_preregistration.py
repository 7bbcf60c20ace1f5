"""analysis/preregistration.py proves from git when each design's audit was fixed, and the history
keeps the project's rule: a design whose settings changed after results were first written (the
commit that added docs/results.md) was given a fresh root seed."""

from __future__ import annotations

import importlib.util
import subprocess
import sys

import pytest
import yaml

from workflow_utils import REPO


def _git(*args: str) -> str:
    return subprocess.run(["git", "-C", str(REPO), *args], capture_output=True, text=True, check=True).stdout


@pytest.fixture(scope="module")
def prereg():
    if _git("rev-parse", "--is-shallow-repository").strip() == "true":
        pytest.skip("a shallow clone has no history to prove the order of commits with")
    spec = importlib.util.spec_from_file_location("preregistration_script", REPO / "analysis" / "preregistration.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def test_the_seed_counts_where_it_is_in_effect_not_where_it_is_written(prereg):
    base = {"seed": 7, "nn": {"designs": {"d": {"m": 4}}, "experiments": {"e": {"design": "d", "method": "x", "r": [2]}}}}
    explicit = yaml.safe_load(yaml.safe_dump(base))
    explicit["nn"]["designs"]["d"]["seed"] = 7
    assert prereg.design_settings(base, "d") == prereg.design_settings(explicit, "d")
    explicit["nn"]["designs"]["d"]["seed"] = 8
    assert prereg.design_settings(base, "d") != prereg.design_settings(explicit, "d")
    explicit["nn"]["designs"]["d"]["seed"] = 7
    explicit["nn"]["experiments"]["e"]["params"] = {"epochs": 8}  # a budget is part of what is fixed
    assert prereg.design_settings(base, "d") != prereg.design_settings(explicit, "d")


def test_each_design_was_fixed_by_a_commit_that_changed_it_and_none_changed_after_its_results_without_a_fresh_seed(prereg):
    records = prereg.records("config/config.yaml")
    config = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
    assert {r["design"] for r in records} == {e["design"] for e in config["nn"]["experiments"].values()}
    added = _git("log", "--diff-filter=A", "--format=%H", "--", "docs/results.md").split()
    first_results = added[-1] if added else None
    for r in records:
        commit = _git("rev-parse", r["fixed_by"].split()[0]).strip()
        parent = _git("rev-list", "--parents", "-n", "1", commit).split()[1:]
        if parent:  # the fixing commit changed the design: its parent reads otherwise
            before = yaml.safe_load(subprocess.run(["git", "-C", str(REPO), "show", f"{parent[0]}:config/config.yaml"],
                                                   capture_output=True, text=True).stdout or "{}")
            assert r["design"] not in before.get("nn", {}).get("designs", {}) or prereg.design_settings(before, r["design"]) != \
                prereg.design_settings(config, r["design"]), r
        if first_results and subprocess.run(["git", "-C", str(REPO), "merge-base", "--is-ancestor", first_results, commit]).returncode == 0 \
                and commit != first_results:
            then = yaml.safe_load(_git("show", f"{first_results}:config/config.yaml"))
            if r["design"] in then["nn"]["designs"]:
                assert prereg.design_settings(then, r["design"])["seed"] != r["seed"], \
                    f"{r['design']} changed after results were written ({r['fixed_by']}) without a fresh seed"
