"""End-to-end Snakemake run of the Gaussian certified-unlearning experiments and audit."""

import pandas as pd
import pytest

from workflow_utils import only, planned_jobs, snakemake, write_config

pytestmark = pytest.mark.workflow

SMALL = only(
    gaussian_unlearning={
        "enabled": True,
        "model": {"n_removal_sets": 1, "n_test": 200, "n_noise_draws": 5},
        "ged_vs_p": {"p": [40, 80, 160], "m": [1, 5], "epsilon": 0.75, "replications": 3},
        "ged_vs_eps": {"p": 60, "m": 1, "epsilons": [0.5, 1.0, 1.5], "replications": 2},
        "ged_vs_m": {"p": [80], "m": [2, 4, 8], "epsilon": 0.75, "replications": 2},
        "audit": {"n": 60, "p": 60, "m": 3, "epsilon": 0.75,
                  "settings": {"n_calibration": 20000, "n_fit": 2000, "n_eval": 20000, "n_alg1_runs": 10000}},
    },
)


def test_gaussian_unlearning_end_to_end(tmp_path):
    cfg = write_config(tmp_path, SMALL)
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
