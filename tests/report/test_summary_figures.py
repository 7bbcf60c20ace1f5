"""The at-a-glance figures (report/summary_figures.py): the finding (forget accuracy against Retrain's
beside the claim's share of its ceiling) and the growing-m series, each from table CSVs, with its CSV."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from unlearn_audit.report.summary_figures import AUDIT_SIZE_COLUMNS, FINDING_COLUMNS, audit_size_figure, audit_size_frame, finding_figure, finding_frame


def _table1b() -> pd.DataFrame:
    rows = []
    for split, rt_forget in (("uniform", 0.94), ("adversarial", 0.15)):
        rows += [
            {"method": "No unlearning", "params": "", "split": split, "forget_acc": 1.0, "test_acc": 0.96, "epsilon_lb_claim": 40.0},
            {"method": "Retrain", "params": "", "split": split, "forget_acc": rt_forget, "test_acc": 0.95, "epsilon_lb_claim": 0.0},
            {"method": "Retain fine-tune", "params": "epochs=8", "split": split, "forget_acc": rt_forget + 0.02, "test_acc": 0.94,
             "epsilon_lb_claim": 8.0},
        ]
    t = pd.DataFrame(rows).assign(test="reference", epsilon_lb_ceiling_claim=80.0, guess_fraction=0.7, at_chance=False, no_op=False,
                                  not_forgotten=False)
    return t


def _table6() -> pd.DataFrame:
    t = pd.DataFrame([
        {"method": "Model clipping (eps=1)", "split": "uniform", "epsilon": 1.0, "forget_acc": 0.95, "test_acc": 0.96, "epsilon_lb_claim": 0.0},
        {"method": "No unlearning", "split": "uniform", "epsilon": math.nan, "forget_acc": 1.0, "test_acc": 0.97, "epsilon_lb_claim": 2.9},
        {"method": "No unlearning", "split": "uniform", "epsilon": math.nan, "forget_acc": 1.0, "test_acc": 0.97, "epsilon_lb_claim": 2.9},
        {"method": "Retrain", "split": "uniform", "epsilon": math.nan, "forget_acc": 0.96, "test_acc": 0.96, "epsilon_lb_claim": 0.0},
    ])
    return t.assign(test="reference", ceiling_claim=2.9, at_chance=False, no_op=False, not_forgotten=False)  # a figure CSV's name


def test_the_finding_puts_each_method_against_its_splits_retrain_and_its_own_ceiling():
    frame = finding_frame(_table1b(), {"table6": _table6()})
    assert list(frame.columns) == FINDING_COLUMNS
    ft = frame[(frame.method == "Retain fine-tune")].set_index("split")
    assert ft.forget_gap.round(6).tolist() == [0.02, 0.02] and ft.claim_share.tolist() == [0.1, 0.1]
    assert set(frame[frame.source == "table1b"].kind) == {"heuristic", "No unlearning", "Retrain"}
    certified = frame[frame.source == "table6"]
    assert certified.kind.tolist().count("No unlearning") == 1  # a control's repeated rows are one point
    clip = certified[certified.kind == "certified"].iloc[0]
    assert clip.epsilon == 1.0 and clip.claim_share == 0.0 and round(clip.forget_gap, 6) == -0.01


def test_the_baselines_are_their_own_kind_beside_table_1bs_controls(tmp_path):
    baselines = _table1b()
    baselines.loc[baselines.method == "Retain fine-tune", "method"] = "SalUn"
    frame = finding_frame(_table1b(), {"table_baselines": baselines, "table6": _table6()})
    mine = frame[frame.source == "table_baselines"]
    assert mine.kind.tolist() == ["baseline", "baseline"] and set(mine.method) == {"SalUn"}  # controls once, from Table 1b
    assert mine.forget_gap.round(6).tolist() == [0.02, 0.02]
    paths = finding_figure(_table1b(), tmp_path / "finding", {"table_baselines": baselines})
    assert "baseline" in set(pd.read_csv(tmp_path / "finding.csv").kind) and len(paths) == 3


def test_baselines_on_another_dataset_stay_out_of_the_finding_and_keep_their_own_retrain():
    """table_baselines also holds Shakespeare's rows with their own controls, under the same split
    name: the finding (Table 1b's digits) draws only the digits baselines, each against digits' Retrain."""
    table1b = _table1b().assign(dataset="digits")
    text = _table1b().assign(dataset="shakespeare")
    text["forget_acc"] = 0.3
    baselines = pd.concat([table1b, text], ignore_index=True)
    baselines.loc[baselines.method == "Retain fine-tune", "method"] = "SalUn"
    mine = finding_frame(table1b, {"table_baselines": baselines})
    mine = mine[mine.source == "table_baselines"]
    assert len(mine) == 2 and mine.forget_gap.round(6).tolist() == [0.02, 0.02]


def test_the_finding_figure_writes_the_numbers_it_plots(tmp_path):
    paths = finding_figure(_table1b(), tmp_path / "finding", {"table6": _table6()})
    assert sorted(p.suffix for p in paths) == [".csv", ".pdf", ".png"]
    written = pd.read_csv(tmp_path / "finding.csv")
    assert len(written) == len(finding_frame(_table1b(), {"table6": _table6()})) and (tmp_path / "finding.png").stat().st_size > 10_000


def _audit_size() -> pd.DataFrame:
    rows = []
    for m, r in ((18, 12), (36, 24), (72, 50), (144, 100)):
        for method, claim in (("No unlearning", 0.4 * r), ("Retain fine-tune", 0.1 * r), ("Retrain", 0.0)):
            rows.append({"method": method, "split": "uniform", "m": m, "r": r, "L": 10, "epsilon_lb_claim": claim, "test": "reference",
                         "epsilon_lb_ceiling_claim": 0.7 * r, "guess_fraction": 0.7, "guess_fraction_low": 0.65, "guess_fraction_high": 0.75,
                         "epsilon_lb_theorem42": claim / 2, "epsilon_lb_theorem42_at_paper_size": 80.0, "forget_acc": 0.95, "test_acc": 0.95,
                         "not_forgotten": False, "no_op": False, "at_chance": False, "cell": "preregistered"})
    return pd.DataFrame(rows).sample(frac=1.0, random_state=0)


def test_the_audit_size_figure_plots_each_method_by_m_and_refuses_a_table_without_its_columns(tmp_path):
    frame = audit_size_frame(_audit_size())
    assert list(frame.columns) == AUDIT_SIZE_COLUMNS
    assert frame[frame.method == "Retain fine-tune"].m.tolist() == [18, 36, 72, 144]
    audit_size_figure(_audit_size(), tmp_path / "size")
    assert len(pd.read_csv(tmp_path / "size.csv")) == 12 and (tmp_path / "size.png").exists()
    with pytest.raises(ValueError, match="guess_fraction"):
        audit_size_frame(_audit_size().drop(columns="guess_fraction"))
