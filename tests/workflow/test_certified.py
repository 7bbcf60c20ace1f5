"""The certified audits of the shared run (.test/all.yaml): joint designs with one base model per
candidate, model clipping with checkpoints, rewind-to-delete, the pairwise baseline, Table 6 and
Figures 1a-c (with their CSVs).  Configs these audits refuse: tests/pipeline/test_config.py."""

import json

import numpy as np
import pandas as pd
import pytest

from unlearn_audit.stats.signs import num_sign_vectors, sign_vector_rank


def test_joint_designs_train_one_model_per_candidate(shared_run):
    res = shared_run.results
    joint = {n: d for n, d in shared_run.config["nn"]["designs"].items() if d.get("auditor") == "joint"}
    assert sorted(joint) == ["joint", "joint_fullbatch", "pair_fullbatch"]
    for name, design in joint.items():
        models = sorted((res / "designs" / name / "base").glob("*/candidate/*.pt"))
        assert len(models) == num_sign_vectors(design["m"]), name
        assert not list((res / "designs" / name / "base").glob("*/calib")), name  # no per-run base models
        signs = pd.read_parquet(res / "designs" / name / "signs.parquet")
        calib = signs[signs.phase == "calib"].sort_values("run")
        ranks = [sign_vector_rank(s) for s in calib.signs]
        gamma = design["calibration_runs"]
        assert ranks == [k for k in range(num_sign_vectors(design["m"])) for _ in range(gamma)]
        assert len(signs[signs.phase == "eval"]) == design["evaluation_runs"]
        assert set(calib.seed).isdisjoint(signs[signs.phase == "eval"].seed)


def test_table6_and_model_clipping_records(shared_run):
    res = shared_run.results
    t6 = pd.read_csv(res / "tables" / "table6.csv")
    required = ["split", "epsilon", "delta", "C2", "sigma", "noisy_steps", "epsilon_lb_claim_first_step", "epsilon_lb_claim", "test",
                "epsilon_lb_ceiling_claim", "epsilon_lb_theorem42_first_step", "epsilon_lb_theorem42", "epsilon_lb_ceiling_theorem42"]
    assert [c for c in t6.columns if c in required] == required  # the claim first, Theorem 4.2's after it
    row = t6.iloc[0]
    assert (row.epsilon, row.delta, row.C2, row.sigma, row.noisy_steps) == (1.0, 1e-5, 0.2, 0.1, 40)
    assert 0 <= row.epsilon_lb_theorem42 < row.epsilon and 0 <= row.epsilon_lb_theorem42_first_step < row.epsilon
    assert 0 <= row.epsilon_lb_claim < row.epsilon and 0 <= row.epsilon_lb_claim_first_step < row.epsilon
    metrics = pd.read_parquet(shared_run.run_file("mc_certified", "eval", 0, "metrics.parquet"))
    record = json.loads(metrics.record.iloc[0])
    assert record["noisy_steps"] == 40 and record["certified"] is True
    assert record["max_pre_noise_norm"] <= 0.2 + 1e-6
    bounds = pd.read_parquet(res / "mc_certified" / "bounds.parquet")
    assert set(bounds.auditor) == {"joint"} and set(bounds.r) == {4} and set(bounds.delta) == {1e-5}
    assert bounds.role.value_counts()["preregistered"] == 1
    # the reference test pre-registered at the certified δ > 0: the unlearning ε itself, never below Theorem 4.2's
    from unlearn_audit.stats.reference import reference_epsilon_lower_bound

    assert set(bounds.test) == {"reference"} and (bounds.epsilon_lb_test >= bounds.epsilon_lb - 1e-9).all()
    pre = bounds[bounds.role == "preregistered"].iloc[0]
    ov = pd.read_parquet(res / "mc_certified" / "overlaps.parquet")
    v = ov[(ov.r == pre.r) & (ov.score == pre.score)].sort_values("run").overlap.to_numpy()
    assert pre.epsilon_lb_test == pytest.approx(reference_epsilon_lower_bound(v, 4, 4, delta=1e-5, statistic=pre.statistic))
    assert t6.loc[0, "test"] == "reference" and t6.loc[0, "epsilon_lb_claim"] == pytest.approx(pre.epsilon_lb_test)
    steps = pd.read_parquet(res / "mc_certified" / "checkpoint_bounds.parquet")
    assert sorted(steps.step.unique()) == [1, 20]
    uncert = pd.read_parquet(res / "mc_uncertified" / "bounds.parquet")
    assert set(uncert.delta) == {0.0}  # the fixed-step variant makes no (ε, δ) claim
    # each step also at ζ/K (K steps): never above the step's own level-ζ bound, and the audit at ζ/K
    u_steps = pd.read_parquet(res / "mc_uncertified" / "checkpoint_bounds.parquet")
    k = u_steps.step.nunique()
    assert k >= 2 and (u_steps.epsilon_lb_bonferroni_steps <= u_steps.epsilon_lb_test + 1e-12).all()
    from unlearn_audit import epsilon_lower_bound

    over = pd.read_parquet(res / "mc_uncertified" / "overlaps.parquet")
    row = uncert[uncert.role == "preregistered"].iloc[0]
    v = over[(over.r == row.r) & (over.score == row.score)].sort_values("run").overlap.to_numpy()
    at_k = epsilon_lower_bound(v, int(row.m), int(row.r), zeta=0.05 / k, statistic=row.statistic).epsilon_lb
    at_1 = epsilon_lower_bound(v, int(row.m), int(row.r), zeta=0.05, statistic=row.statistic).epsilon_lb
    assert at_k <= at_1 and row.epsilon_lb == at_1  # the final audit is at ζ; the ζ/K reading is never larger


def test_figures_write_their_numbers(shared_run):
    fig = shared_run.results / "figures"
    claim = ["epsilon_lb_claim", "test", "ceiling_claim", "at_ceiling_claim"]
    columns = {
        "figure1a": ["split", "variant", "experiment", "method", "step", *claim],
        "figure1b": ["split", "auditor", "method", "epsilon", "delta", *claim],
        "figure1c": ["split", "method", "target_epsilon", "delta", *claim],
    }
    for name, cols in columns.items():
        assert (fig / f"{name}.png").stat().st_size > 1000 and (fig / f"{name}.pdf").exists()
        data = pd.read_csv(fig / f"{name}.csv")
        assert list(data.columns[: len(cols)]) == cols, name  # the claim first
        assert len(data) > 0 and (data.epsilon_lb_claim >= 0).all()
        # every claim beside the largest its cell allows under its test, and never above it; Theorem 4.2's the same
        assert data.ceiling_claim.notna().all() and (data.epsilon_lb_claim <= data.ceiling_claim * (1 + 1e-9)).all(), name
        joint = data[data.epsilon_lb_theorem42.notna()]
        assert len(joint) and (joint.epsilon_lb_theorem42 <= joint.ceiling_theorem42 * (1 + 1e-9)).all(), name
    a = pd.read_csv(fig / "figure1a.csv")
    assert set(a.variant) == {"certified", "uncertified", "control"}
    stepped = a[a.variant != "control"]
    assert stepped.epsilon_lb_bonferroni_steps.notna().all() and (stepped.epsilon_lb_bonferroni_steps <= stepped.epsilon_lb_claim + 1e-12).all()
    assert sorted(a[a.variant == "uncertified"].step) == [1, 5, 10]
    # the accuracies of the audited models at each step, the controls' one row each (no step)
    assert a.loc[a.variant != "control", ["test_acc", "forget_acc"]].notna().all().all()
    controls = a[a.variant == "control"]
    assert sorted(controls.method) == ["No unlearning", "Retrain"] and controls.step.isna().all()
    b = pd.read_csv(fig / "figure1b.csv")
    assert set(b.auditor) == {"joint", "pairwise"}
    flags = {"test_acc", "forget_acc", "at_chance", "no_op", "no_power", "not_forgotten", "at_ceiling_claim", "at_ceiling_theorem42"}
    for name in columns:  # every audited model set with its accuracies, its flags and its ceiling marks, each by its own test
        data = pd.read_csv(fig / f"{name}.csv")
        assert flags <= set(data.columns), name
        on_ceiling = np.isclose(data.epsilon_lb_claim, data.ceiling_claim, rtol=1e-9, atol=0) & (data.ceiling_claim > 0)
        assert (data.at_ceiling_claim.astype(bool) == on_ceiling).all(), name
        joint = data[data.epsilon_lb_theorem42.notna()]
        on_ceiling = np.isclose(joint.epsilon_lb_theorem42, joint.ceiling_theorem42, rtol=1e-9, atol=0) & (joint.ceiling_theorem42 > 0)
        assert (joint.at_ceiling_theorem42.astype(bool) == on_ceiling).all(), name
    # each checkpoint step is flagged as a model set of its own (the certified steps' models are at chance here)
    certified = a[a.variant == "certified"]
    n_test = 359  # the digits test set
    assert certified.at_chance.astype(bool).tolist() == [bool(t <= 0.1 + 2 * np.sqrt(0.09 / n_test)) for t in certified.test_acc]
    no_unlearning = a[a.method == "No unlearning"]  # deterministic training: the control copies its input, on both ceilings
    assert no_unlearning.at_ceiling_claim.astype(bool).all() and no_unlearning.at_ceiling_theorem42.astype(bool).all()
    table6 = pd.read_csv(shared_run.results / "tables" / "table6.csv")
    assert {"test_acc_first_step", "forget_acc_first_step", "at_chance_first_step", "no_op_first_step", "not_forgotten_first_step",
            "at_ceiling_claim_first_step", "at_ceiling_theorem42_first_step", "test_acc", "forget_acc", "at_chance", "no_op", "no_power",
            "not_forgotten", "epsilon_lb_ceiling_claim", "epsilon_lb_ceiling_theorem42", "at_ceiling_claim", "at_ceiling_theorem42"} <= set(table6.columns)
    assert (table6.epsilon_lb_theorem42 <= table6.epsilon_lb_ceiling_theorem42 * (1 + 1e-9)).all()
    assert (table6.epsilon_lb_claim <= table6.epsilon_lb_ceiling_claim * (1 + 1e-9)).all()
    assert (table6.epsilon_lb_ceiling_claim >= table6.epsilon_lb_ceiling_theorem42).all()  # the reference test's ceiling is the larger
    assert table6.method.tolist()[-2:] == ["No unlearning", "Retrain"]
    for value, ceiling in (("epsilon_lb_theorem42", "epsilon_lb_ceiling_theorem42"), ("epsilon_lb_claim", "epsilon_lb_ceiling_claim")):
        flag = "at_ceiling" + ceiling.removeprefix("epsilon_lb_ceiling")
        assert table6[flag].astype(bool).tolist() == [bool(np.isclose(v, c, rtol=1e-9)) for v, c in zip(table6[value], table6[ceiling])]


def test_rewind_to_delete_draws_noise_per_run(shared_run):
    # runs 0 and 1 unlearn the same candidate model (Γ = 2 runs per candidate) and release
    # different models: each draws its own noise
    s0, s1 = (pd.read_parquet(shared_run.run_file("r2d_eps10", "calib", r, "scores.parquet")) for r in (0, 1))
    assert (s0.in_forget == s1.in_forget).all()
    assert not (s0.score_logit == s1.score_logit).all()
    record = json.loads(pd.read_parquet(shared_run.run_file("r2d_eps10", "calib", 0, "metrics.parquet")).record.iloc[0])
    assert record["sigma"] > 0 and record["m_f"] == 12 and record["sensitivity"] > 0
    pairwise = pd.read_parquet(shared_run.results / "r2d_pairwise_eps10" / "pairwise.parquet")
    assert set(pairwise.score) == {"logit", "loss"}
    # pre-registered: the reference test of the m = 2 overlaps, Eq. 3 beside it
    assert set(pairwise.test) == {"reference"} and (pairwise.epsilon_lb_test == pairwise.epsilon_lb_reference).all()
    assert (pd.read_parquet(shared_run.results / "ft_pairwise" / "pairwise.parquet").test == "eq3").all()
    assert (pairwise.n_pos + pairwise.n_neg == 4).all() and (pairwise.delta == 1e-3).all()


def test_the_pairwise_table_of_the_uncertified_methods(shared_run):
    """Sec. 7.3 (rule certified_pairwise_table): the pairwise auditor's counts and bound for each
    uncertified experiment that lists the table, beside the largest bound its L runs allow."""
    assert shared_run.jobs["certified_pairwise_table"] == 1
    table = pd.read_csv(shared_run.results / "tables" / "pairwise_uncertified.csv")
    assert table.method.tolist() == ["retain_finetune"]
    row = table.iloc[0]
    audit = pd.read_parquet(shared_run.results / "ft_pairwise" / "pairwise.parquet")
    want = audit[audit.score == "logit"].iloc[0]
    assert (row.fp, row.n_neg, row.fn, row.n_pos, row.L) == (want.fp, want.n_neg, want.fn, want.n_pos, want.n_neg + want.n_pos)
    # the claim first (Eq. 3, pre-registered here), with its own ceiling; Eq. 3's columns beside it
    assert row.test == "eq3" and row.epsilon_lb_claim == want.epsilon_lb_test == want.epsilon_lb and row.epsilon_lb_ceiling_claim == row.epsilon_lb_ceiling_eq3
    assert row.epsilon_lb_eq3 == want.epsilon_lb and 0 <= row.epsilon_lb_eq3 <= row.epsilon_lb_ceiling_eq3
    assert 0 <= row.test_acc <= 1
    assert {"at_ceiling_claim", "at_ceiling_eq3", "at_chance", "no_op", "no_power", "not_forgotten"} <= set(table.columns)


def test_appendix_f4_audits_the_first_noisy_step_batchwise_and_jointly(shared_run):
    """App. F.4 (rule nn_checkpoint_audit, then nn_table): the batchwise experiment's calibration runs'
    scores at step 1 are fitted and its evaluation runs' scores at step 1 audited, with the same
    library functions as the final audit; the joint experiment's step-1 row of its own checkpoint
    audit stands beside it, each beside its design's controls."""
    from unlearn_audit import schemas
    from unlearn_audit.auditors.batchwise import fit_table
    from unlearn_audit.auditors.tables import audit_tables
    from unlearn_audit.io import read_concat

    assert shared_run.jobs["nn_checkpoint_audit"] == 1
    res = shared_run.results
    steps = pd.read_parquet(res / "tiny_mc_uncertified" / "checkpoint_bounds.parquet")
    assert steps.step.unique().tolist() == [1] and (steps.role == "preregistered").sum() == 1
    plan = shared_run.plan
    files = [shared_run.workdir / f for ph in ("calib", "eval") for f in plan.nn.run_files("tiny_mc_uncertified", ph, "checkpoint_scores.parquet")]
    scores = read_concat(files, schemas.CHECKPOINT_SCORES).drop(columns="step")
    signs = pd.read_parquet(res / "designs" / "tiny" / "signs.parquet")
    fitted = fit_table(scores[scores.phase == "calib"], "tiny_mc_uncertified")
    _, want = audit_tables(fitted, scores[scores.phase == "eval"], signs[signs.phase == "eval"], 24, [8, 24])
    got = steps.sort_values(["score", "statistic", "r"]).reset_index(drop=True)
    want = want.sort_values(["score", "statistic", "r"]).reset_index(drop=True)
    np.testing.assert_allclose(got.epsilon_lb, want.epsilon_lb)
    # the table: the method's step-1 bound (not its final one), the joint auditor's step 1 beside it, the controls as trained
    f4 = pd.read_csv(res / "tables" / "appendix_f4.csv")
    assert f4.auditor.tolist() == ["joint"] * 3 + ["batchwise"] * 3 and f4.batch_size.tolist() == [6] * 3 + [1] * 3
    method = f4[(f4.auditor == "batchwise") & (f4.step == 1)].iloc[0]
    at_step = steps[steps.role == "preregistered"].iloc[0]
    assert (method.epsilon_lb_claim, method.epsilon_lb_theorem42) == (at_step.epsilon_lb_test, at_step.epsilon_lb)
    assert method.guess_fraction == pytest.approx(at_step.mean_overlap / at_step.r) and np.isnan(method.guess_fraction_low)  # a step keeps no overlaps
    final = pd.read_parquet(res / "tiny_mc_uncertified" / "bounds.parquet")
    assert method.epsilon_lb_claim_final == final[final.role == "preregistered"].epsilon_lb_test.iloc[0]
    joint_steps = pd.read_parquet(res / "mc_uncertified" / "checkpoint_bounds.parquet")
    joint = f4[(f4.auditor == "joint") & (f4.step == 1)].iloc[0]
    joint_at_step = joint_steps[(joint_steps.step == 1) & (joint_steps.role == "preregistered")].iloc[0]
    assert (joint.epsilon_lb_claim, joint.epsilon_lb_theorem42) == (joint_at_step.epsilon_lb_test, joint_at_step.epsilon_lb)
    assert f4[f4.step.isna()].method.tolist() == ["No unlearning", "Retrain"] * 2
    assert f4[f4.step.isna()].guess_fraction_low.notna().all()  # the controls' final overlaps: the interval too
    assert {"at_chance", "no_op", "no_power", "not_forgotten", "at_ceiling_claim", "at_ceiling_theorem42", "epsilon_lb_ceiling_claim",
            "epsilon_lb_ceiling_theorem42", "test_acc"} <= set(f4.columns)


def test_batched_rewind_to_delete_matches_the_loop(shared_run, tmp_path, monkeypatch):
    """``unlearn_models_per_group: 3`` on the full-batch design: evaluation runs 0-2 of r2d_eps10 redone
    by the workflow's step with their full-batch steps and Lipschitz probes stacked (vmap) give the
    finished run's (K = 1) records and scores within rounding; each run keeps its own noise."""
    from unlearn_audit.pipeline.nn_runs import unlearn

    monkeypatch.chdir(shared_run.workdir)
    res, config, plan = shared_run.results, shared_run.config, shared_run.plan
    design = dict(config["nn"]["designs"]["joint_fullbatch"], unlearn_models_per_group=3)
    exp = config["nn"]["experiments"]["r2d_eps10"]
    out = {k: [str(tmp_path / "r2d_eps10" / "runs" / "eval0-2" / "r2d_eps10" / "eval" / str(r) / f"{k}.parquet") for r in range(3)]
           for k in ("scores", "metrics")}
    candidates = [str(shared_run.workdir / plan.nn.base_model("joint_fullbatch", "candidate", rank)) for rank in plan.nn.candidates("joint_fullbatch")]
    unlearn(["r2d_eps10"], design, exp["method"], [exp["params"]], config["seed"], res / "designs" / "joint_fullbatch" / "data.npz",
            res / "designs" / "joint_fullbatch" / "signs.parquet", candidates, out["scores"], out["metrics"],
            release_key=plan.nn.release_key("r2d_eps10"))
    for r in range(3):
        ours = pd.read_parquet(out["scores"][r])
        theirs = pd.read_parquet(shared_run.run_file("r2d_eps10", "eval", r, "scores.parquet"))
        assert (ours.example.to_numpy() == theirs.example.to_numpy()).all()
        assert float((ours.score_logit - theirs.score_logit).abs().max()) < 1e-3
        a, b = (json.loads(pd.read_parquet(f).record.iloc[0]) for f in (out["metrics"][r], shared_run.run_file("r2d_eps10", "eval", r, "metrics.parquet")))
        assert a["sigma"] == pytest.approx(b["sigma"], rel=1e-4) and a["lipschitz"] == pytest.approx(b["lipschitz"], rel=1e-4)
