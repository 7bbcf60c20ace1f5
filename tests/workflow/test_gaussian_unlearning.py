"""The Gaussian certified-unlearning experiments and audit of the shared run (.test/all.yaml), that
the top-level zeta reaches their audit alone, and what config/paper.yaml plans for them (the p grid,
the n = p/2 runs, both log-losses) and for Table 1a's two IDA grids."""


import pandas as pd
import yaml

from workflow_utils import executed_rules, planned_jobs

#: The jobs of the other sections whose results depend on zeta (every bound is at level zeta).
OTHER_BOUND_RULES = ("attainable_bounds", "convex_", "nn_audit", "nn_checkpoint_audit", "nn_table", "nn_figure", "nn_summary_figure", "certified_", "tradeoff_")


def test_gaussian_unlearning_end_to_end_and_zeta_reruns_only_the_audit(shared_run, tmp_path):
    res = shared_run.results
    slopes = pd.read_csv(res / "tables" / "gaussian_unlearning_slopes.csv")
    assert list(slopes.columns) == ["analysis", "experiment", "error_loss", "n_over_p", "newton_steps", "noise", "m", "p", "slope", "slope_se"]
    # newton_steps [1, 2] (.test/all.yaml): Zou et al.'s two-step removal beside the paper's one step;
    # with its radius r_2 = kappa r_1^2 the l2-Laplace GED falls with p where one step's is flat
    assert set(slopes.newton_steps) == {1, 2}
    two = slopes[(slopes.newton_steps == 2) & (slopes.experiment == "ged_vs_p") & (slopes.n_over_p == 1.0)].set_index(["noise", "m"]).slope
    assert (two.loc["laplace"] < -0.3).all() and (two.loc["gaussian"] < -0.7).all(), two
    slopes = slopes[slopes.newton_steps == 1]
    assert slopes.analysis.iloc[0] == "primary" and (res / "figures" / "gaussian_unlearning_ged_m_slope_vs_clip.csv").exists()
    assert set(slopes.experiment) == {"ged_vs_p", "ued_vs_p", "ged_vs_eps", "ued_vs_eps", "ged_vs_m", "ued_vs_m"}
    gp = slopes[(slopes.experiment == "ged_vs_p") & (slopes.noise == "gaussian")]
    assert gp.p.isna().all() and gp.slope.between(-0.7, -0.3).all()
    assert sorted(set(zip(gp.n_over_p, gp.m))) == [(0.5, 1), (0.5, 5), (1.0, 1), (1.0, 5)]  # n = p and n = p/2
    lp = slopes[(slopes.experiment == "ged_vs_p") & (slopes.noise == "laplace")]
    assert lp.slope.abs().max() < 0.25
    ge = slopes[(slopes.experiment == "ged_vs_eps") & (slopes.noise == "gaussian")]
    assert sorted(ge.m) == [1, 5] and ge.slope.between(-1.15, -0.85).all()
    # GED vs m with both log-losses, labelled; the clip bends the Laplace slope down (the paper's 0.24)
    gm = slopes[slopes.experiment == "ged_vs_m"].set_index(["error_loss", "noise"]).slope
    unclipped, clipped = "logistic (unclipped)", "logistic, clipped (prob_clip = 1e-06)"
    assert set(gm.index.get_level_values(0)) == {unclipped, clipped}
    assert gm[(clipped, "laplace")] < gm[(unclipped, "laplace")] - 0.3
    assert slopes[slopes.error_loss == clipped].experiment.isin(["ged_vs_m", "ued_vs_m"]).all()
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
    assert {(n, p) for n, p in zip(raw.n, raw.p)} == {(p, p) for p in (40, 80, 160)} | {(p // 2, p) for p in (40, 80, 160)}
    for error in ("ged", "ued"):
        for axis in ("p", "eps", "m"):
            stem = res / "figures" / f"gaussian_unlearning_{error}_vs_{axis}"
            assert stem.with_suffix(".png").stat().st_size > 1000 and stem.with_suffix(".pdf").is_file()
            plotted = pd.read_csv(stem.with_suffix(".csv"))  # the numbers of the figure
            assert set(plotted.y) == {error} and plotted["mean"].gt(0).all()
            assert set(plotted.newton_steps) == {1, 2}  # a panel per step count
    # the UED-vs-m figure shows the primary (unclipped) loss; the clip has its own sensitivity figure
    plotted = pd.read_csv(res / "figures" / "gaussian_unlearning_ued_vs_m.csv")
    assert set(plotted.error_loss) == {unclipped}
    swept = pd.read_csv(res / "figures" / "gaussian_unlearning_ged_m_slope_vs_clip.csv")
    assert set(swept.error_loss) == {unclipped, clipped} and swept.prob_clip.isna().sum() == 2  # one unclipped row per noise

    # zeta is the level of the audit's bounds: a larger zeta (weaker guarantee) gives larger
    # lower bounds, and of this section only the audit job depends on it (cells, gather and slopes
    # do not); the config snapshot is rewritten because the config it records changed, and the
    # provenance record (its config hash) because it follows every table
    planned = shared_run.dry_run({"zeta": 0.2}, name="config_zeta.yaml")
    gaussian = {k: v for k, v in planned.items() if not k.startswith(OTHER_BOUND_RULES)}
    assert gaussian == {"gaussian_unlearning_audit": 1, "config_snapshot": 1, "provenance": 1, "all": 1}, planned
    assert not [k for k in planned if k.startswith(("nn_train", "nn_unlearn", "nn_fit", "nn_prepare", "nn_sample"))], planned
    # run on a copy of the finished run, for the audit's table: it reruns the audit alone
    rerun_dir = shared_run.copy(tmp_path / "run")
    slopes_before = (rerun_dir.results / "tables" / "gaussian_unlearning_slopes.csv").read_bytes()
    targets = ["results/tables/gaussian_unlearning_audit.csv", "results/tables/gaussian_unlearning_slopes.csv", "results/config.yaml"]
    rerun = rerun_dir.snakemake(*targets, configfile=rerun_dir.write_config({"zeta": 0.2}, "config_zeta.yaml"), cores=2)
    assert rerun.returncode == 0, rerun.stderr
    assert planned_jobs(rerun) == {"gaussian_unlearning_audit": 1, "config_snapshot": 1}, planned_jobs(rerun)
    assert not [r for r in executed_rules(rerun) if r.startswith("gaussian_unlearning_") and r != "gaussian_unlearning_audit"], executed_rules(rerun)
    b = pd.read_csv(rerun_dir.results / "tables" / "gaussian_unlearning_audit.csv").set_index("mechanism")
    assert list(b.index) == list(a.index) and (b.true_mu == a.true_mu).all()
    assert (b.mu_lb >= a.mu_lb - 1e-12).all(), pd.concat({"zeta=0.05": a.mu_lb, "zeta=0.2": b.mu_lb}, axis=1)
    assert (b.mu_lb > a.mu_lb).any(), pd.concat({"zeta=0.05": a.mu_lb, "zeta=0.2": b.mu_lb}, axis=1)
    assert (rerun_dir.results / "tables" / "gaussian_unlearning_slopes.csv").read_bytes() == slopes_before
    assert yaml.safe_load((rerun_dir.results / "config.yaml").read_text())["zeta"] == 0.2
