"""analysis/claims.py's language-model claim has teeth: on an llm_qa table where the methods reach
Retrain's answer accuracy and their claims are positive it passes; the same table with the methods'
claims those of exact unlearning (0), or with methods that never reach Retrain's accuracy, fails;
a run without the table skips it."""

from __future__ import annotations


import pandas as pd
import pytest
import yaml

from workflow_utils import claims_script


@pytest.fixture(scope="module")
def claims():
    return claims_script()


#: config/llm.yaml's table as a run of it wrote it (the columns the claim reads).
TABLE = pd.DataFrame({
    "method": ["Gradient ascent", "Gradient difference", "NPO", "SimNPO", "Retain fine-tune", "No unlearning", "Retrain"],
    "split": ["uniform"] * 7,
    "forget_acc": [0.546, 0.505, 0.543, 0.539, 0.575, 0.642, 0.530],
    "test_acc": [0.508, 0.495, 0.500, 0.505, 0.504, 0.544, 0.503],
    "epsilon_lb_claim": [8.55, 5.05, 5.48, 8.22, 6.40, 8.22, 0.0],
})


def _verdict(claims, tmp_path, table: pd.DataFrame):
    (tmp_path / "tables").mkdir(exist_ok=True)
    (tmp_path / "config.yaml").write_text(yaml.safe_dump({"zeta": 0.05}))
    table.to_csv(tmp_path / "tables" / "llm_qa.csv", index=False)
    ok, numbers, margins = claims.llm_looks_unlearned_yet_rejected(claims.Run(tmp_path))
    return ok, numbers, margins


def test_methods_that_look_unlearned_yet_are_rejected_pass(claims, tmp_path):
    ok, numbers, margins = _verdict(claims, tmp_path, TABLE)
    assert ok and "5 of 5 rejected" in numbers and margins["rows looking unlearned"] == 4.5


def test_methods_with_exact_unlearnings_claims_fail(claims, tmp_path):
    doctored = TABLE.assign(epsilon_lb_claim=[0.0, 0.0, 0.0, 0.0, 0.0, 8.22, 0.0])
    ok, numbers, _ = _verdict(claims, tmp_path, doctored)
    assert not ok and "0 of 5 rejected" in numbers


def test_methods_that_do_not_look_unlearned_fail(claims, tmp_path):
    doctored = TABLE.assign(forget_acc=[0.642] * 5 + [0.642, 0.530])  # every method keeps No unlearning's accuracy
    ok, numbers, margins = _verdict(claims, tmp_path, doctored)
    assert not ok and "[does not look unlearned]" in numbers and margins["rows looking unlearned"] < 0


def test_a_run_without_the_table_skips_it(claims, tmp_path):
    (tmp_path / "config.yaml").write_text(yaml.safe_dump({"zeta": 0.05}))
    with pytest.raises(claims.Missing):
        claims.llm_looks_unlearned_yet_rejected(claims.Run(tmp_path))
