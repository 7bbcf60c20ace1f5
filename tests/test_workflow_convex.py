"""End-to-end Snakemake run of the convex audits (Section 8, Table 2) on a small config."""

import pandas as pd
import pytest

from workflow_utils import planned_jobs, small_config, snakemake, write_config

pytestmark = pytest.mark.workflow


def test_convex_tables_end_to_end_and_rerun_is_noop(tmp_path):
    cfg = write_config(tmp_path, small_config("convex"))
    dry = snakemake(tmp_path, cfg, "-n")
    assert dry.returncode == 0, dry.stderr
    jobs = planned_jobs(dry)
    assert jobs["convex_audit"] == 4 and jobs["convex_table"] == 2 and jobs["convex_figure"] == 1

    proc = snakemake(tmp_path, cfg, cores=2)
    assert proc.returncode == 0, proc.stderr
    res = tmp_path / "results"
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

    again = snakemake(tmp_path, cfg, "-n")
    assert again.returncode == 0 and planned_jobs(again) == {}

    report = snakemake(tmp_path, cfg, "--report", "results/report.html")
    assert report.returncode == 0, report.stderr[-3000:]
    html = (res / "report.html").read_text()
    for name in ("table2a.csv", "table2b.csv", "convex_epsilon_lb.png"):
        assert f"{name};base64," in html, f"{name} is not embedded in the report"


def test_unknown_mechanism_parameter_is_refused_before_running(tmp_path):
    bad = {"convex": {"mechanisms": {"cubic_newton": {"params": {"lambda0": 0.2}}}}}
    cfg = write_config(tmp_path, small_config("convex"), overrides=bad)
    proc = snakemake(tmp_path, cfg, "-n")
    assert proc.returncode != 0
    assert "convex.mechanisms.cubic_newton.params" in proc.stderr and "lambda0" in proc.stderr
