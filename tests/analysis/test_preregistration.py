"""analysis/preregistration.py proves from git when each design's audit was fixed, and the history
keeps the project's rule: a design whose settings changed after results were first written (the
commit that added docs/results.md) was given a fresh root seed."""

from __future__ import annotations

import subprocess

import pytest
import yaml

from workflow_utils import REPO, script_module


def _git(*args: str) -> str:
    return subprocess.run(["git", "-C", str(REPO), *args], capture_output=True, text=True, check=True).stdout


@pytest.fixture(scope="module")
def prereg():
    if _git("rev-parse", "--is-shallow-repository").strip() == "true":
        pytest.skip("a shallow clone has no history to prove the order of commits with")
    return script_module("analysis/preregistration.py", "preregistration_script")


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


def _config_at(commit: str) -> dict:
    return yaml.safe_load(subprocess.run(["git", "-C", str(REPO), "show", f"{commit}:config/config.yaml"], capture_output=True, text=True).stdout or "{}")


def _parent(commit: str) -> str | None:
    parents = _git("rev-list", "--parents", "-n", "1", commit).split()[1:]
    return parents[0] if parents else None


def test_each_design_and_experiment_was_fixed_by_a_commit_that_changed_it_and_none_changed_after_its_results_without_a_fresh_seed(prereg):
    records = prereg.records("config/config.yaml")
    config = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
    assert {r["design"] for r in records} == {e["design"] for e in config["nn"]["experiments"].values()}
    added = _git("log", "--diff-filter=A", "--format=%H", "--", "docs/results.md").split()
    first_results = added[-1] if added else None
    then = _config_at(first_results) if first_results else {}
    for r in records:
        commit = _git("rev-parse", r["fixed_by"].split()[0]).strip()
        parent = _parent(commit)
        if parent:  # the fixing commit changed the design: its parent reads otherwise
            before = _config_at(parent)
            assert r["design"] not in before.get("nn", {}).get("designs", {}) or prereg.own_settings(before, r["design"]) != \
                prereg.own_settings(config, r["design"]), r
        for name, e in r["experiments"].items():
            fixed = _git("rev-parse", e["fixed_by"].split()[0]).strip()
            before = _config_at(_parent(fixed)) if _parent(fixed) else {}
            assert name not in before.get("nn", {}).get("experiments", {}) or prereg.experiment_settings(before, name) != \
                prereg.experiment_settings(config, name), (name, e["fixed_by"])
        if not first_results or r["design"] not in then.get("nn", {}).get("designs", {}):
            continue
        seed_then = prereg.own_settings(then, r["design"])["seed"]
        if subprocess.run(["git", "-C", str(REPO), "merge-base", "--is-ancestor", first_results, commit]).returncode == 0 and commit != first_results:
            assert seed_then != r["seed"], f"{r['design']} changed after results were written ({r['fixed_by']}) without a fresh seed"
        for name in r["experiments"]:
            if name in then["nn"]["experiments"] and prereg.experiment_settings(then, name) != prereg.experiment_settings(config, name):
                assert seed_then != r["seed"], f"{name} changed after results were written without a fresh seed of {r['design']}"


def test_an_experiment_added_later_leaves_its_designs_earlier_experiments_fixed_where_they_were(prereg):
    base = {"seed": 7, "nn": {"designs": {"d": {"m": 4}}, "experiments": {"e": {"design": "d", "method": "x", "r": [2]}}}}
    later = yaml.safe_load(yaml.safe_dump(base))
    later["nn"]["experiments"]["f"] = {"design": "d", "method": "y", "r": [2]}
    assert prereg.own_settings(base, "d") == prereg.own_settings(later, "d")
    assert prereg.experiment_settings(base, "e") == prereg.experiment_settings(later, "e")
    assert prereg.design_settings(base, "d") != prereg.design_settings(later, "d")  # the design's whole record did change
