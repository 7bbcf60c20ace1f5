"""The convex audits (Section 8, Table 2) and their trade-off figure in the shared run, and the
report that embeds them."""

import pandas as pd
import pytest

from tradeoff_checks import figure_outputs
from unlearn_audit.io import read_parquet


def test_convex_tables_end_to_end(shared_run):
    jobs = shared_run.jobs
    assert jobs["convex_audit"] == 4 and jobs["convex_table"] == 2 and jobs["convex_figure"] == 1
    res = shared_run.results
    for name in ("table2a", "table2b"):
        df = pd.read_csv(res / "tables" / f"{name}.csv")
        assert list(df.columns) == ["epsilon", "sigma", "epsilon_lb_pairwise", "epsilon_lb_joint", "mu_lb"]
        assert (df[["epsilon_lb_pairwise", "epsilon_lb_joint", "mu_lb"]] >= 0).all().all()
        for ext in ("md", "tex"):
            assert (res / "tables" / f"{name}.{ext}").read_text().count("\n") > 3
    a = pd.read_csv(res / "tables" / "table2a.csv")
    assert a.sigma.round(4).tolist() == [0.6197, 0.0017]
    b = pd.read_csv(res / "tables" / "table2b.csv")
    assert b.sigma.round(4).tolist() == [0.3756, 0.0166]
    # 2L = 2000 error-free draws at eps = 100 saturate well above 0 but below the certified eps
    assert 4 < b.epsilon_lb_pairwise.iloc[1] < 100
    decisions = pd.read_parquet(res / "convex" / "cubic_newton" / "eps_800.0" / "decisions.parquet")
    assert len(decisions) == 2000 and set(decisions.truth.unique()) <= {0, 1}
    for ext in ("png", "pdf"):
        assert (res / "figures" / f"convex_epsilon_lb.{ext}").stat().st_size > 1000


def test_the_sweep_table_marks_the_largest_rho_beside_the_configured_point(shared_run):
    """App. H.4 (rule convex_sweep): every grid point of each sweep, its Lemma 3 ratio, the sweep's
    largest marked once and the configured instance marked; refused instances kept with the reason."""
    assert shared_run.jobs["convex_sweep"] == 1
    res = shared_run.results
    table = pd.read_csv(res / "tables" / "appendix_h4.csv")
    assert (res / "tables" / "appendix_h4.md").read_text().count("\n") > 8
    cubic = table[table.sweep == "cubic_newton"]
    assert len(cubic) == 4 and cubic.largest.sum() == 1
    best = cubic[cubic.largest].iloc[0]
    assert (best.M, best.R) == (0.001, 10.0) and best.rho == pytest.approx(0.2235, abs=1e-4) and best.configured
    assert cubic.feasible.all() and cubic.rho.gt(0).all()  # at lam = 0.2 every (M, R) here has an interior optimum
    assert cubic[(cubic.M == 0.005) & (cubic.R == 10.0)].rho.iloc[0] == pytest.approx(0.2112, abs=1e-4)
    remark = table[table.sweep == "Remark H.2"]
    assert len(remark) == 4 and remark.configured.sum() == 1  # d = 2, one forget point: the default instance
    assert remark[remark.d == 3].rho.max() < remark[remark.d == 2].rho.max()  # more dimensions: no larger ratio


def test_convex_tradeoff_figure_from_the_four_audits(shared_run):
    """The convex trade-off figure (rule tradeoff_convex) plots each audit's claim and proven curve;
    a rerun plans nothing (tests/workflow/test_core.py)."""
    assert shared_run.jobs["tradeoff_convex"] == 1
    csv = figure_outputs(shared_run.results / "figures" / "tradeoff_convex")
    assert sorted(csv.subject.unique()) == ["cubic_newton:0.1", "cubic_newton:800", "output_perturbation:1", "output_perturbation:100"]
    summary = read_parquet(shared_run.results / "convex" / "output_perturbation" / "eps_100.0" / "summary.parquet")
    proven = csv[(csv.subject == "output_perturbation:100") & (csv.curve == "proven")]
    assert proven.mu.unique().tolist() == [pytest.approx(summary.mu_lb.iloc[0])] and summary.mu_lb.iloc[0] > 1


def test_the_report_embeds_the_convex_tables_and_figure(shared_report):
    html = shared_report.read_text()
    for name in ("table2a.csv", "table2b.csv", "convex_epsilon_lb.png"):
        assert f"{name};base64," in html, f"{name} is not embedded in the report"
