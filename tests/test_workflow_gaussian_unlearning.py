"""End-to-end Snakemake run of the Gaussian certified-unlearning experiments and audit
(.test/gaussian_unlearning.yaml), and that the top-level zeta reaches the audit alone."""

import pandas as pd
import pytest
import yaml

from workflow_utils import executed_rules, planned_jobs, small_config, snakemake, write_config

pytestmark = pytest.mark.workflow

CONFIG = small_config("gaussian_unlearning")


def test_gaussian_unlearning_end_to_end_and_zeta_reruns_only_the_audit(tmp_path):
    cfg = write_config(tmp_path, CONFIG)
    proc = snakemake(tmp_path, cfg, cores=2)
    assert proc.returncode == 0, proc.stderr
    res = tmp_path / "results"
    slopes = pd.read_csv(res / "tables" / "gaussian_unlearning_slopes.csv")
    assert list(slopes.columns) == ["experiment", "noise", "m", "p", "slope", "slope_se"]
    assert set(slopes.experiment) == {"ged_vs_p", "ued_vs_p", "ged_vs_eps", "ged_vs_m"}
    gp = slopes[(slopes.experiment == "ged_vs_p") & (slopes.noise == "gaussian")]
    assert gp.p.isna().all() and gp.slope.between(-0.7, -0.3).all()
    lp = slopes[(slopes.experiment == "ged_vs_p") & (slopes.noise == "laplace")]
    assert lp.slope.abs().max() < 0.25
    ge = slopes[(slopes.experiment == "ged_vs_eps") & (slopes.noise == "gaussian")]
    assert ge.slope.iloc[0] == pytest.approx(-1.0, abs=0.15)
    audit = pd.read_csv(res / "tables" / "gaussian_unlearning_audit.csv")
    assert list(audit.columns) == ["mechanism", "claimed_mu", "true_mu", "mu_lb", "mu_lb_alg1", "epsilon_lb", "falsified"]
    a = audit.set_index("mechanism")
    assert a.loc["certified", "mu_lb"] <= a.loc["certified", "true_mu"] + 1e-12
    assert a.loc["control_tight", "mu_lb"] >= 0.8 * a.loc["control_tight", "true_mu"]
    assert a.loc["control_tight", "mu_lb"] <= a.loc["control_tight", "true_mu"]
    assert a.loc["control_undernoised", "mu_lb"] > a.loc["control_undernoised", "claimed_mu"]
    assert bool(a.loc["control_undernoised", "falsified"]) and not bool(a.loc["certified", "falsified"])
    raw = pd.read_parquet(res / "gaussian_unlearning" / "ged_vs_p.parquet")
    assert {"p", "m", "noise", "replication", "ged", "ued"} <= set(raw.columns)
    assert raw.replication.nunique() == 3
    for e in ("ged_vs_p", "ged_vs_eps", "ged_vs_m"):
        assert (res / "figures" / f"gaussian_unlearning_{e}.png").stat().st_size > 1000
    again = snakemake(tmp_path, cfg, "-n")
    assert again.returncode == 0 and planned_jobs(again) == {}

    # zeta is the level of the audit's bounds: a larger zeta (weaker guarantee) gives larger
    # lower bounds, and only the audit job depends on it (cells, gather and slopes do not); the
    # config snapshot is rewritten because the config it records changed
    slopes_before = (res / "tables" / "gaussian_unlearning_slopes.csv").read_bytes()
    cfg_zeta = write_config(tmp_path, CONFIG, overrides={"zeta": 0.2}, name="config_zeta.yaml")
    dry = snakemake(tmp_path, cfg_zeta, "-n")
    assert dry.returncode == 0, dry.stderr
    assert planned_jobs(dry) == {"gaussian_unlearning_audit": 1, "config_snapshot": 1, "all": 1}, planned_jobs(dry)
    rerun = snakemake(tmp_path, cfg_zeta, cores=2)
    assert rerun.returncode == 0, rerun.stderr
    assert planned_jobs(rerun) == {"gaussian_unlearning_audit": 1, "config_snapshot": 1, "all": 1}, planned_jobs(rerun)
    assert sorted(executed_rules(rerun)) == ["all", "config_snapshot", "gaussian_unlearning_audit"], executed_rules(rerun)
    b = pd.read_csv(res / "tables" / "gaussian_unlearning_audit.csv").set_index("mechanism")
    assert list(b.index) == list(a.index) and (b.true_mu == a.true_mu).all()
    assert (b.mu_lb >= a.mu_lb - 1e-12).all(), pd.concat({"zeta=0.05": a.mu_lb, "zeta=0.2": b.mu_lb}, axis=1)
    assert (b.mu_lb > a.mu_lb).any(), pd.concat({"zeta=0.05": a.mu_lb, "zeta=0.2": b.mu_lb}, axis=1)
    assert (res / "tables" / "gaussian_unlearning_slopes.csv").read_bytes() == slopes_before
    assert yaml.safe_load((res / "config.yaml").read_text())["zeta"] == 0.2
