"""Every design's audits stand beside their controls (pipeline/controls.py): No unlearning (the
trained model as is) and Retrain (A(D_r)), added by validate_config to every table and figure."""

import copy
from pathlib import Path

import pytest
import yaml

from unlearn_audit.pipeline.config import ConfigError, validate_config
from unlearn_audit.pipeline.controls import control_experiments

REPO = Path(__file__).resolve().parents[2]
SCHEMA = REPO / "workflow" / "schemas" / "config.schema.yaml"


def _default() -> dict:
    return yaml.safe_load((REPO / "config" / "config.yaml").read_text())


def test_every_design_gets_both_controls_in_every_table_and_figure_of_its_experiments():
    cfg = validate_config(_default(), SCHEMA)
    exps = cfg["nn"]["experiments"]
    designs = {e["design"] for e in exps.values() if e["method"] != "no_unlearning"}
    for design in designs:
        mine = [e for e in exps.values() if e["design"] == design and e["method"] != "no_unlearning"]
        tables = {t for e in mine for t in e.get("tables", [])}
        figures = {f for e in mine for f in e.get("figures", [])}
        for suffix, label, base in (("no_unlearning", "No unlearning", "trained"), ("retrain", "Retrain", "retrain")):
            ctl = exps[f"{design}_{suffix}"]
            assert (ctl["method"], ctl["label"], ctl["base"]) == ("no_unlearning", label, base)
            assert set(ctl["tables"]) == tables and set(ctl["figures"]) == figures, design
            # the cell (and auditor) of the design's first experiment, fixed before the run
            for key in ("r", "report_r", "statistic", "score", "test", "auditor"):
                assert ctl.get(key) == mine[0].get(key), (design, key)
    assert exps["digits_r2d_pair_uniform_retrain"]["auditor"] == "pairwise"
    # each design's controls follow its last experiment
    names = list(exps)
    assert names.index("digits_uniform_no_unlearning") > max(names.index(n) for n, e in exps.items() if e["design"] == "digits_uniform" and e["method"] != "no_unlearning")


def test_controls_can_be_switched_off_and_are_never_duplicated():
    cfg = _default()
    cfg["nn"]["controls"] = False
    assert not any(e["method"] == "no_unlearning" for e in validate_config(cfg, SCHEMA)["nn"]["experiments"].values())
    cfg = _default()
    cfg["nn"]["experiments"]["mine"] = {"design": "digits_uniform", "method": "no_unlearning", "label": "As trained", "r": [60], "tables": ["table1b"]}
    exps = validate_config(cfg, SCHEMA)["nn"]["experiments"]
    assert "digits_uniform_no_unlearning" not in exps and "digits_uniform_retrain" in exps
    # an experiment shown in no table or figure gets no controls
    assert control_experiments({"x": {"design": "d", "method": "ida", "r": [2]}}) == {}


def test_a_control_name_taken_by_another_experiment_is_kept():
    cfg = _default()
    cfg["nn"]["experiments"]["digits_uniform_retrain"] = copy.deepcopy(cfg["nn"]["experiments"]["digits_uniform_ida_q1"])
    exps = validate_config(cfg, SCHEMA)["nn"]["experiments"]
    assert exps["digits_uniform_retrain"]["method"] == "ida"


def test_base_retrain_is_checked_by_the_schema():
    cfg = _default()
    cfg["nn"]["experiments"]["digits_uniform_ida_q1"]["base"] = "scratch"
    with pytest.raises(ConfigError, match="base"):
        validate_config(cfg, SCHEMA)


def test_the_shared_test_runs_written_out_controls_are_what_nn_controls_adds():
    """.test/all.yaml runs with nn.controls off and writes two designs' controls out; they are
    exactly the experiments add_controls would make (same method, base, label, cell, tables, figures)."""
    cfg = yaml.safe_load((REPO / ".test" / "all.yaml").read_text())
    exps = cfg["nn"]["experiments"]
    written = {n: e for n, e in exps.items() if e["method"] == "no_unlearning"}
    generated = control_experiments({n: e for n, e in exps.items() if e["method"] != "no_unlearning"})
    assert set(written) == {"tiny_no_unlearning", "tiny_retrain", "joint_no_unlearning", "joint_retrain"} <= set(generated)
    for name, exp in written.items():
        want = generated[name]
        assert exp["label"] == want["label"] and exp.get("base", "trained") == want["base"], name
        assert sorted(exp.get("tables", [])) == sorted(want["tables"]) and sorted(exp.get("figures", [])) == sorted(want["figures"]), name
        assert exp.get("r") == want.get("r"), name
