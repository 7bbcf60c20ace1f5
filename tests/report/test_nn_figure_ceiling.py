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
from unlearn_audit.auditors.audit import bounds_table, claim_ceiling
from unlearn_audit.io import write_parquet
from unlearn_audit.pipeline import nn
from unlearn_audit.report import nn_figures
from unlearn_audit.report.nn_figures import FRAME_COLUMNS, experiment_labels
from unlearn_audit.report.nn_tables import CEILING_MARK, CEILING_NOTE, table1, table3, table4
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


def _overlap_paths(tmp_path, names) -> list[str]:
    """The OVERLAPS files of the experiments ``names`` (the evaluation runs behind their bounds)."""
    paths = []
    for name in names:
        _, _, _, m, _, _, r_grid, perfect = SPECS[name]
        path = tmp_path / "overlaps" / f"{name}.parquet"
        path.parent.mkdir(parents=True, exist_ok=True)
        write_parquet(_overlaps(name, r_grid, perfect, m), path, schemas.OVERLAPS)
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
        # the claim's own ceiling: here the claim is Theorem 4.2's, so the two ceilings and marks agree
        assert b.epsilon_lb_ceiling_claim == claim_ceiling(int(b.m), int(b.r), int(b.L), test=b.test, zeta=float(b.zeta), statistic=b.statistic) == want
    assert (out.at_ceiling_claim == out.at_ceiling).all()
    perfect = out.experiment.isin([n for n, s in SPECS.items() if s[-1]])
    positive = out.epsilon_lb_ceiling > 0
    assert out[perfect & positive].at_ceiling.all()
    # a cell that cannot reject even with every guess right (m = 6, r = 2, median) marks nothing
    assert (~positive).any() and not out[~positive].at_ceiling.any()
    mean = out.statistic == "mean"
    assert not out[~perfect & mean].at_ceiling.any()
    assert (out[~perfect & mean].epsilon_lb < out[~perfect & mean].epsilon_lb_ceiling).all()


def test_with_ceilings_gives_the_claim_its_own_ceiling():
    """Under the reference test the claim's ceiling is the reference test's of perfect overlaps (above
    Theorem 4.2's), and each bound is marked against its own test's ceiling: a claim above Theorem
    4.2's ceiling is not at that ceiling, but at its own where every guess was right."""
    frames = [bounds_table(_overlaps(name, SPECS[name][6], SPECS[name][7], SPECS[name][3]), SPECS[name][3], zeta=ZETA,
                           primary=Cell(SPECS[name][6][1], "mean", "logit", "reference")) for name in ("dig_ft", "dig_h1")]
    out = nn.with_ceilings(pd.concat(frames, ignore_index=True))
    assert set(out.test) == {"reference"}
    for b in out.itertuples():
        assert b.epsilon_lb_ceiling_claim == claim_ceiling(int(b.m), int(b.r), int(b.L), test="reference", zeta=ZETA, statistic=b.statistic)
        assert b.epsilon_lb_ceiling_claim >= b.epsilon_lb_ceiling
    mean = out[out.statistic == "mean"]
    assert (mean.epsilon_lb_ceiling_claim > mean.epsilon_lb_ceiling).all()
    perfect = mean.experiment == "dig_ft"
    assert mean[perfect].at_ceiling_claim.all() and mean[perfect].at_ceiling.all()
    assert not mean[~perfect].at_ceiling_claim.any() and (mean[~perfect].epsilon_lb_test < mean[~perfect].epsilon_lb_ceiling_claim).all()
    # a claim above Theorem 4.2's ceiling (the old column beside it) is no proof of a perfect audit
    assert (mean[perfect].epsilon_lb_test > mean[perfect].epsilon_lb_ceiling).all()


def test_with_guesses_reads_each_cells_overlaps(bounds, tmp_path):
    from unlearn_audit.stats.guesses import guess_fraction, theorem42_at_size

    overlaps = pd.concat([_overlaps(name, s[6], s[7], s[3]) for name, s in SPECS.items()], ignore_index=True)
    experiments = {name: _summary(name) for name in SPECS}
    out = nn.with_guesses(bounds, overlaps, experiments)
    assert list(out.columns) == list(bounds.columns) + list(schemas.GUESS_COLUMNS)
    for b in out.itertuples():
        v = overlaps[(overlaps.experiment == b.experiment) & (overlaps.score == b.score) & (overlaps.r == b.r)].overlap.to_numpy()
        assert (b.guess_fraction, b.guess_fraction_low, b.guess_fraction_high) == guess_fraction(v, int(b.r))
        assert b.guess_fraction == pytest.approx(b.mean_overlap / b.r, rel=1e-12)
        m_paper, r_paper = {"digits": (4500, 3000), "shakespeare": (400, 100)}[experiments[b.experiment]["dataset"]]
        assert b.epsilon_lb_theorem42_at_paper_size == theorem42_at_size(v, int(b.r), m_paper, r_paper, zeta=float(b.zeta))
    perfect = out[out.experiment == "dig_ft"]
    assert (perfect.guess_fraction == 1).all() and (perfect.guess_fraction_low == 1).all() and (perfect.guess_fraction_high == 1).all()
    one_miss = out[out.experiment == "dig_h1"]
    assert (one_miss.guess_fraction_low < one_miss.guess_fraction).all() and (one_miss.guess_fraction_high == 1).all()  # clipped at 1
    # another dataset has no paper size; checkpoint bounds (no overlaps kept) read the mean overlap alone
    other = nn.with_guesses(bounds, overlaps, {n: {**e, "dataset": "qa"} for n, e in experiments.items()})
    assert other.epsilon_lb_theorem42_at_paper_size.isna().all() and (other.guess_fraction == out.guess_fraction).all()
    steps = nn.with_guesses(bounds, None, experiments)
    assert np.allclose(steps.guess_fraction, out.guess_fraction) and steps[list(schemas.GUESS_COLUMNS[1:])].isna().all().all()
    with pytest.raises(ValueError, match="no overlaps of its cell"):
        nn.with_guesses(bounds, overlaps[overlaps.experiment != "txt"], experiments)


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
    assert np.allclose(m24.get_ydata(), [claim_ceiling(24, r, L, test="theorem4.2", zeta=ZETA) for r in (4, 8, 24)], rtol=0, atol=0)
    # the legend sits beside the axes, over no line
    for ax in fig.axes:
        assert ax.get_legend().get_window_extent().x0 >= ax.get_window_extent().x1

    data = pd.read_csv(tmp_path / "nn_epsilon_vs_r.csv")
    assert set(FRAME_COLUMNS) <= set(data.columns)
    assert set(data.experiment) == set(SPECS)
    for row in data.itertuples():
        assert row.ceiling_theorem42 == pytest.approx(perfect_prediction_epsilon_lb(row.m, row.r, row.L, zeta=row.zeta, statistic=row.statistic), rel=1e-12)
        assert row.ceiling_claim == pytest.approx(claim_ceiling(row.m, row.r, row.L, test=row.test, zeta=row.zeta, statistic=row.statistic), rel=1e-12)
    assert data.groupby("experiment").reported.sum().eq(1).all()
    assert set(data.loc[data.experiment.isin(["dig_h1", "dig_h2"]), "label"]) == {"Hessian σ=1e-3, B=1", "Hessian σ=5e-3, B=1"}
    perfect = data.experiment.isin(["dig_ft", "dig_b4"])
    assert data[perfect].at_ceiling_claim.all() and not data[~perfect].at_ceiling_claim.any()
    assert (data.at_ceiling_theorem42 == data.at_ceiling_claim).all()  # the claim here is Theorem 4.2's
    assert list(data.columns[12:16]) == ["epsilon_lb_claim", "test", "ceiling_claim", "at_ceiling_claim"]  # the claim first


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
    nn.table("table5", paths, _metrics(tmp_path, names), experiments, tmp_path / "table5.csv", overlap_paths=_overlap_paths(tmp_path, names))

    csv = pd.read_csv(tmp_path / "table5.csv")
    assert list(csv.columns[5:15]) == ["epsilon_lb_claim", "test", "epsilon_lb_ceiling_claim", *schemas.GUESS_COLUMNS, "epsilon_lb_theorem42",
                                       "epsilon_lb_ceiling_theorem42", "epsilon_ldp"]
    assert csv.at_ceiling_claim.dtype == bool and csv.at_ceiling_theorem42.dtype == bool
    for row in csv.itertuples():
        assert row.epsilon_lb_ceiling_theorem42 == pytest.approx(perfect_prediction_epsilon_lb(row.m, row.r, L, zeta=ZETA), rel=1e-12)
        assert row.epsilon_lb_ceiling_claim == pytest.approx(claim_ceiling(row.m, row.r, L, test=row.test, zeta=ZETA), rel=1e-12)
    # dig_ft and dig_b4 (every guess right) sit on the ceiling at every r, dig_h1 (one miss) below it at every r
    below = csv.epsilon_lb_claim < csv.epsilon_lb_ceiling_claim * (1 - 1e-6)
    assert below.sum() == 3 and (csv.at_ceiling_claim == ~below).all() and (csv.at_ceiling_theorem42 == ~below).all()
    assert (csv.guess_fraction[~below] == 1).all() and (csv.guess_fraction[below] < 1).all()

    md = (tmp_path / "table5.md").read_text()
    body = [line for line in md.splitlines() if line.startswith("| ") and line[2].isdigit()]
    assert len(body) == len(csv)
    header = [c.strip() for c in md.splitlines()[2].strip("|").split("|")]
    for line, row in zip(body, csv.itertuples()):
        cells = dict(zip(header, (c.strip() for c in line.strip("|").split("|"))))
        for column, flag in (("epsilon_lb_claim", row.at_ceiling_claim), ("epsilon_lb_theorem42", row.at_ceiling_theorem42)):
            assert cells[column].endswith(CEILING_MARK) == bool(flag), line  # each marked by its own flag
        assert not cells["epsilon_lb_ceiling_claim"].endswith(CEILING_MARK)
    assert not any(h.startswith("at_ceiling") for h in header)  # the flags are the marks in Markdown
    assert md.rstrip().endswith(CEILING_NOTE)
    tex = (tmp_path / "table5.tex").read_text()
    assert tex.count(r"\textsuperscript{\ddag}") == int(csv.at_ceiling_claim.sum() + csv.at_ceiling_theorem42.sum()) and CEILING_MARK not in tex
    assert "limited by m, r and L" in tex


def test_each_column_is_marked_by_its_own_flag(tmp_path):
    """A claim at its ceiling beside a Theorem 4.2 bound below its own: only the claim is marked."""
    from unlearn_audit.report.nn_tables import write_nn_table

    frame = pd.DataFrame({"method": ["x"], "epsilon_lb_claim": [2.0], "epsilon_lb_theorem42": [1.0],
                          "at_ceiling_claim": [True], "at_ceiling_theorem42": [False]})
    write_nn_table(frame, tmp_path / "t")
    row = (tmp_path / "t.md").read_text().splitlines()[2]
    assert "2.0000" + CEILING_MARK in row and "1.0000" + CEILING_MARK not in row
    with pytest.raises(ValueError, match="at_ceiling_eq3"):
        write_nn_table(frame.assign(at_ceiling_eq3=[True]), tmp_path / "u")


def test_a_table_with_no_cell_at_the_ceiling_has_no_mark_and_no_note(bound_paths, tmp_path):
    names = ["dig_h1", "dig_adv"]
    paths = [p for p in bound_paths if any(p.endswith(f"/{n}.parquet") for n in names)]
    nn.table("table1b", paths, _metrics(tmp_path, names), {n: _summary(n) for n in names}, tmp_path / "table1b.csv",
             overlap_paths=_overlap_paths(tmp_path, names))
    csv = pd.read_csv(tmp_path / "table1b.csv")
    assert not csv.at_ceiling_claim.any() and not csv.at_ceiling_theorem42.any() and (csv.epsilon_lb_claim < csv.epsilon_lb_ceiling_claim).all()
    assert csv.epsilon_lb_theorem42_at_paper_size.notna().all() and csv.guess_fraction.between(0.5, 1).all()
    md = (tmp_path / "table1b.md").read_text()
    assert CEILING_MARK not in md


def test_table1_and_table4_carry_ceilings_only_when_the_bounds_do(bounds):
    experiments = {name: _summary(name) for name in ("dig_ft", "dig_h1")}
    metrics = pd.DataFrame([{"experiment": e, "phase": "eval", "run": i, "retain_acc": 0.9, "forget_acc": 0.8, "test_acc": 0.7}
                            for e in experiments for i in range(L)])
    plain = table1(bounds, metrics, experiments)
    assert not any("ceiling" in c for c in plain.columns)
    t1 = table1(nn.with_ceilings(bounds), metrics, experiments)
    assert t1.at_ceiling_claim.tolist() == [True, False] and t1.at_ceiling_theorem42.tolist() == [True, False]
    assert list(t1.columns[:9]) == ["method", "params", "dataset", "split", "epsilon_lb_claim", "test", "epsilon_lb_ceiling_claim", "epsilon_lb_theorem42",
                                    "epsilon_lb_ceiling_theorem42"]
    assert list(t1.columns[-3:]) == ["at_ceiling_claim", "at_ceiling_theorem42", "cell"]
    t4 = table4(nn.with_ceilings(bounds), metrics, experiments)
    assert {"epsilon_lb_ceiling_claim_mean", "epsilon_lb_ceiling_claim_median", "at_ceiling_claim_mean", "at_ceiling_claim_median",
            "epsilon_lb_ceiling_theorem42_mean", "at_ceiling_theorem42_median"} <= set(t4.columns)
    assert (t4.epsilon_lb_ceiling_claim_median < t4.epsilon_lb_ceiling_claim_mean).all()  # the two statistics' ceilings differ
    ft = t4[t4.method == "Forget ascent"]
    assert ft.at_ceiling_claim_mean.all() and ft.at_ceiling_claim_median.all() and ft.at_ceiling_theorem42_mean.all()
    t3 = table3(nn.with_guesses(nn.with_ceilings(bounds), None, experiments), metrics, experiments)
    assert {"epsilon_lb_ceiling_claim", "guess_fraction_logit", "guess_fraction_loss"} <= set(t3.columns)  # one ceiling: both columns are means
    # each score's interval and paper-size extrapolation beside its mean (NaN without per-run overlaps)
    assert {f"{c}_{score}" for c in schemas.GUESS_COLUMNS for score in ("logit", "loss")} <= set(t3.columns)
