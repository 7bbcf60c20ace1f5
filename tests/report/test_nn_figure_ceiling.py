"""The ε_LB-vs-r figure and the neural-network tables against the perfect-prediction ceiling (App. F).

Bounds come from simulated overlaps through the real code path (``bounds_table``): an experiment
whose every evaluation run guesses every batch right sits on its ceiling at every r, one that
misses a batch in one run does not.  Checked: the ceiling column equals the statistics' value,
the figure has one panel per (dataset, split) with a dashed ceiling per (m, L), distinct labels,
colours and markers and a legend beside the axes, its CSV beside it, and the tables mark exactly
the cells at the ceiling.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from unlearn_audit import schemas
from unlearn_audit.auditors.audit import bounds_table
from unlearn_audit.io import write_parquet
from unlearn_audit.pipeline import nn
from unlearn_audit.report import nn_figures
from unlearn_audit.report.nn_figures import FRAME_COLUMNS, experiment_labels
from unlearn_audit.report.nn_tables import CEILING_MARK, CEILING_NOTE, table1, table4
from unlearn_audit.stats.perfect_prediction import (
    CEILING_RTOL,
    at_ceiling,
    perfect_prediction_bound,
    perfect_prediction_epsilon_lb,
)
from unlearn_audit.stats.selection import Cell

L, ZETA = 10, 0.05

#: name → (dataset, split, B, m, label, params, r grid, perfect)
SPECS = {
    "dig_ft": ("digits", "uniform", 1, 24, "Forget ascent", {}, [4, 8, 24], True),
    "dig_h1": ("digits", "uniform", 1, 24, "Hessian", {"sigma": 1e-3}, [4, 8, 24], False),
    "dig_h2": ("digits", "uniform", 1, 24, "Hessian", {"sigma": 5e-3}, [4, 8, 24], False),
    "dig_b4": ("digits", "uniform", 4, 6, "Forget ascent", {}, [2, 4, 6], True),
    "dig_adv": ("digits", "adversarial", 1, 24, "Retain fine-tune", {}, [4, 8, 24], False),
    "txt": ("shakespeare", "uniform", 4, 10, "IDA q=1", {}, [2, 4, 10], False),
}


def _overlaps(name: str, r_grid, perfect: bool, m: int) -> pd.DataFrame:
    """OVERLAPS rows of one experiment: V = r in every run (perfect), else V = r − 2 in run 0."""
    rows = []
    for score in ("logit", "loss"):
        for r in r_grid:
            for run in range(L):
                v = r if perfect or run > 0 else r - 2
                rows.append({"experiment": name, "auditor": "batchwise", "score": score, "run": run, "sign_index": run, "m": m, "r": r, "overlap": v})
    frame = pd.DataFrame(rows).astype({"run": np.int32, "sign_index": np.int64, "m": np.int32, "r": np.int32, "overlap": np.int32})
    return frame[schemas.OVERLAPS.names]


def _summary(name: str) -> dict:
    dataset, split, b, m, label, params, r_grid, _ = SPECS[name]
    return {"design": f"{dataset}_{split}_b{b}", "dataset": dataset, "split": split, "batch_size": b, "m": m, "method": "forget_ascent",
            "label": label, "params": params, "report_r": r_grid[1], "r": r_grid}


@pytest.fixture(scope="module")
def bounds() -> pd.DataFrame:
    frames = []
    for name, (_, _, _, m, _, _, r_grid, perfect) in SPECS.items():
        frames.append(bounds_table(_overlaps(name, r_grid, perfect, m), m, zeta=ZETA, primary=Cell(r_grid[1], "mean", "logit")))
    return pd.concat(frames, ignore_index=True)


@pytest.fixture
def bound_paths(bounds, tmp_path) -> list[str]:
    paths = []
    for name, sub in bounds.groupby("experiment", sort=False):
        path = tmp_path / "bounds" / f"{name}.parquet"
        path.parent.mkdir(parents=True, exist_ok=True)
        write_parquet(sub.reset_index(drop=True), path, schemas.BOUNDS)
        paths.append(str(path))
    return paths


def _metrics(tmp_path, names) -> list[str]:
    frame = pd.DataFrame([{"experiment": e, "phase": "eval", "run": i, "retain_acc": 0.9, "forget_acc": 0.8, "test_acc": 0.7,
                           "n_test": 300, "n_forget": 50, "chance_acc": 0.1,
                           "record": "{}", "precision": "fp32", "compiled": False, "deterministic": True} for e in names for i in range(L)])
    path = tmp_path / "metrics.parquet"
    write_parquet(frame.astype({"run": np.int32}), path, schemas.RUN_METRICS)
    return [str(path)]


# --------------------------------------------------------------------------------------
# statistics and pipeline: the ceiling of every bound
# --------------------------------------------------------------------------------------
def test_at_ceiling_tolerance():
    c = perfect_prediction_epsilon_lb(24, 8, L, zeta=ZETA)
    assert c == perfect_prediction_bound(24, 8, L, zeta=ZETA).epsilon_lb > 0
    assert at_ceiling(c, c) and at_ceiling(c * (1 + CEILING_RTOL / 2), c)
    assert not at_ceiling(c * (1 - 10 * CEILING_RTOL), c)
    assert not at_ceiling(0.0, 0.0) and not at_ceiling(math.nan, c)


def test_with_ceilings_is_the_perfect_prediction_bound_of_each_row(bounds):
    out = nn.with_ceilings(bounds)
    assert len(out) == len(bounds) and list(out.columns[: len(bounds.columns)]) == list(bounds.columns)
    for b in out.itertuples():
        want = perfect_prediction_bound(int(b.m), int(b.r), int(b.L), zeta=float(b.zeta), statistic=b.statistic).epsilon_lb
        assert b.epsilon_lb_ceiling == want
    perfect = out.experiment.isin([n for n, s in SPECS.items() if s[-1]])
    positive = out.epsilon_lb_ceiling > 0
    assert out[perfect & positive].at_ceiling.all()
    # a cell that cannot reject even with every guess right (m = 6, r = 2, median) marks nothing
    assert (~positive).any() and not out[~positive].at_ceiling.any()
    mean = out.statistic == "mean"
    assert not out[~perfect & mean].at_ceiling.any()
    assert (out[~perfect & mean].epsilon_lb < out[~perfect & mean].epsilon_lb_ceiling).all()


def test_with_ceilings_refuses_delta_above_zero(bounds):
    with pytest.raises(ValueError, match="delta"):
        nn.with_ceilings(bounds.assign(delta=1e-5))


# --------------------------------------------------------------------------------------
# the figure
# --------------------------------------------------------------------------------------
def test_labels_tell_the_hessian_variants_and_batch_sizes_apart():
    experiments = {name: _summary(name) for name in SPECS}
    labels = experiment_labels(experiments)
    assert labels["dig_h1"] == "Hessian σ=1e-3, B=1" and labels["dig_h2"] == "Hessian σ=5e-3, B=1"
    assert labels["dig_ft"] == "Forget ascent, B=1" and labels["dig_b4"] == "Forget ascent, B=4"
    assert labels["txt"] == "IDA q=1" and labels["dig_adv"] == "Retain fine-tune"  # one B in those panels
    twins = {"x": _summary("dig_adv"), "y": _summary("dig_adv")}
    assert experiment_labels(twins) == {"x": "Retain fine-tune [x]", "y": "Retain fine-tune [y]"}


def test_figure_has_a_panel_per_dataset_and_split_with_its_ceilings(bound_paths, tmp_path, monkeypatch):
    experiments = {name: _summary(name) for name in SPECS}
    figures = []
    real_save = nn_figures.save_figure

    def keep(fig, stem, data=None):
        figures.append(fig)
        fig.canvas.draw()  # for the legend's extent below, before save_figure closes the figure
        return real_save(fig, stem, data=data)

    monkeypatch.setattr(nn_figures, "save_figure", keep)
    nn.figure_r(bound_paths, experiments, tmp_path / "nn_epsilon_vs_r.png")
    for ext in ("png", "pdf", "csv"):
        assert (tmp_path / f"nn_epsilon_vs_r.{ext}").stat().st_size > 500

    (fig,) = figures
    axes = {ax.get_title(): ax for ax in fig.axes}
    assert sorted(axes) == ["digits, adversarial split", "digits, uniform split", "shakespeare, uniform split"]

    uniform = axes["digits, uniform split"]
    legend = uniform.get_legend()
    texts = [t.get_text() for t in legend.get_texts()]
    assert {"ceiling m=24, L=10", "ceiling m=6, L=10"} <= set(texts)
    assert sum(t.startswith("ceiling") for t in texts) == 2  # one per distinct (m, L)
    lines = {line.get_label(): line for line in uniform.get_lines() if not line.get_label().startswith("_")}
    ceilings = [line for label, line in lines.items() if label.startswith("ceiling")]
    assert all(line.get_linestyle() not in ("-", "None") for line in ceilings)
    drawn = [line for label, line in lines.items() if not label.startswith("ceiling")]
    assert len(drawn) == 4
    assert len({line.get_color() for line in drawn}) == 4 and len({line.get_marker() for line in drawn}) == 4
    # the ceiling line of m = 24 passes through the ceiling of each r
    m24 = lines["ceiling m=24, L=10"]
    assert list(m24.get_xdata()) == [4, 8, 24]
    assert np.allclose(m24.get_ydata(), [perfect_prediction_epsilon_lb(24, r, L, zeta=ZETA) for r in (4, 8, 24)], rtol=0, atol=0)
    # the legend sits beside the axes, over no line
    for ax in fig.axes:
        assert ax.get_legend().get_window_extent().x0 >= ax.get_window_extent().x1

    data = pd.read_csv(tmp_path / "nn_epsilon_vs_r.csv")
    assert set(FRAME_COLUMNS) <= set(data.columns)
    assert set(data.experiment) == set(SPECS)
    for row in data.itertuples():
        assert row.ceiling == pytest.approx(perfect_prediction_epsilon_lb(row.m, row.r, row.L, zeta=row.zeta, statistic=row.statistic), rel=1e-12)
    assert data.groupby("experiment").reported.sum().eq(1).all()
    assert set(data.loc[data.experiment.isin(["dig_h1", "dig_h2"]), "label"]) == {"Hessian σ=1e-3, B=1", "Hessian σ=5e-3, B=1"}
    perfect = data.experiment.isin(["dig_ft", "dig_b4"])
    assert data[perfect].at_ceiling.all() and not data[~perfect].at_ceiling.any()


def test_figure_rule_declares_its_csv():
    rules = (Path(__file__).resolve().parents[2] / "workflow" / "rules" / "nn.smk").read_text()
    block = rules[rules.index("rule nn_figure_r:"):]
    assert 'multiext(plan.files.figure_stem("nn_epsilon_vs_r"), ".pdf", ".csv")' in block


# --------------------------------------------------------------------------------------
# the tables
# --------------------------------------------------------------------------------------
def test_table5_marks_the_cells_at_the_ceiling(bound_paths, tmp_path):
    names = ["dig_ft", "dig_h1", "dig_b4"]
    experiments = {name: _summary(name) for name in names}
    paths = [p for p in bound_paths if any(p.endswith(f"/{n}.parquet") for n in names)]
    nn.table("table5", paths, _metrics(tmp_path, names), experiments, tmp_path / "table5.csv")

    csv = pd.read_csv(tmp_path / "table5.csv")
    assert {"epsilon_lb", "epsilon_lb_ceiling", "at_ceiling"} <= set(csv.columns)
    assert csv.at_ceiling.dtype == bool
    for row in csv.itertuples():
        assert row.epsilon_lb_ceiling == pytest.approx(perfect_prediction_epsilon_lb(row.m, row.r, L, zeta=ZETA), rel=1e-12)
    # dig_ft and dig_b4 (every guess right) sit on the ceiling at every r, dig_h1 (one miss) below it at every r
    below = csv.epsilon_lb < csv.epsilon_lb_ceiling * (1 - 1e-6)
    assert below.sum() == 3 and (csv.at_ceiling == ~below).all()

    md = (tmp_path / "table5.md").read_text()
    body = [line for line in md.splitlines() if line.startswith("| ") and line[2].isdigit()]
    assert len(body) == len(csv)
    for line, row in zip(body, csv.itertuples()):
        cells = [c.strip() for c in line.strip("|").split("|")]
        eps = cells[list(csv.columns).index("epsilon_lb")]
        assert eps.endswith(CEILING_MARK) == bool(row.at_ceiling), line
    assert "at_ceiling" not in md.splitlines()[2]  # the flag is the mark in Markdown
    assert md.rstrip().endswith(CEILING_NOTE)
    tex = (tmp_path / "table5.tex").read_text()
    assert tex.count(r"\textsuperscript{\ddag}") == int(csv.at_ceiling.sum()) and CEILING_MARK not in tex
    assert "limited by m, r and L" in tex


def test_a_table_with_no_cell_at_the_ceiling_has_no_mark_and_no_note(bound_paths, tmp_path):
    names = ["dig_h1", "dig_adv"]
    paths = [p for p in bound_paths if any(p.endswith(f"/{n}.parquet") for n in names)]
    nn.table("table1b", paths, _metrics(tmp_path, names), {n: _summary(n) for n in names}, tmp_path / "table1b.csv")
    csv = pd.read_csv(tmp_path / "table1b.csv")
    assert not csv.at_ceiling.any() and (csv.epsilon_lb < csv.epsilon_lb_ceiling).all()
    md = (tmp_path / "table1b.md").read_text()
    assert CEILING_MARK not in md


def test_table1_and_table4_carry_ceilings_only_when_the_bounds_do(bounds):
    experiments = {name: _summary(name) for name in ("dig_ft", "dig_h1")}
    metrics = pd.DataFrame([{"experiment": e, "phase": "eval", "run": i, "retain_acc": 0.9, "forget_acc": 0.8, "test_acc": 0.7}
                            for e in experiments for i in range(L)])
    plain = table1(bounds, metrics, experiments)
    assert "at_ceiling" not in plain.columns and "epsilon_lb_ceiling" not in plain.columns
    t1 = table1(nn.with_ceilings(bounds), metrics, experiments)
    assert t1.at_ceiling.tolist() == [True, False]
    assert list(t1.columns[:5]) == ["method", "params", "split", "epsilon_lb", "epsilon_lb_ceiling"]
    t4 = table4(nn.with_ceilings(bounds), metrics, experiments)
    assert {"epsilon_lb_ceiling_mean", "epsilon_lb_ceiling_median", "at_ceiling_mean", "at_ceiling_median"} <= set(t4.columns)
    assert (t4.epsilon_lb_ceiling_median < t4.epsilon_lb_ceiling_mean).all()  # the two statistics' ceilings differ
    ft = t4[t4.method == "Forget ascent"]
    assert ft.at_ceiling_mean.all() and ft.at_ceiling_median.all()
