"""The neural-network audits of the shared run (.test/all.yaml): the tiny digits design and the
generated plays.

Checks the outputs of Tables 1a, 1b, 3, 4, 5, 7 and the figure, that changing one unlearning
hyperparameter reruns only that experiment's jobs (never base training), that chunk_size and
resources_dir are not part of any result and that the device-path keys reach the rules (that a
second run gives the same bytes is tests/workflow/test_second_run.py).
"""

import copy
import math

import numpy as np
import pandas as pd
import pytest

from unlearn_audit.pipeline.plan import paths
from workflow_utils import REPO, merge


def _chunks(design: dict) -> int:
    """How many jobs one step (training, or one experiment's unlearning) of a batchwise design has:
    its calibration-then-evaluation runs in chunks of chunk_size."""
    return math.ceil((design["calibration_runs"] + design["evaluation_runs"]) / design["chunk_size"])


def test_nn_audit_end_to_end(shared_run):
    res = shared_run.results

    table1b = pd.read_csv(res / "tables" / "table1b.csv")
    # the claim first, with its own ceiling, the scale-free readings, then Theorem 4.2's
    assert list(table1b.columns[:14]) == ["method", "params", "dataset", "split", "epsilon_lb_claim", "test", "epsilon_lb_ceiling_claim", "guess_fraction",
                                          "guess_fraction_low", "guess_fraction_high", "epsilon_lb_theorem42_at_paper_size", "epsilon_lb_theorem42",
                                          "epsilon_lb_ceiling_theorem42", "epsilon_ldp"]
    for col in ("r", "retain_acc", "forget_acc", "test_acc", "at_ceiling_claim", "at_ceiling_theorem42"):
        assert col in table1b.columns
    # every audit stands beside its design's controls, with accuracies and the flags
    assert table1b.method.tolist() == ["Retain fine-tune", "Noisy fine-tune", "No unlearning", "Retrain"]
    assert {"at_chance", "no_op", "no_power", "not_forgotten"} <= set(table1b.columns)
    # the tiny design's No-unlearning control is rejected: it has power, and nothing says otherwise
    assert not table1b.no_power.any() and table1b[table1b.method == "No unlearning"].epsilon_lb_claim.iloc[0] > 0
    assert set(table1b.test) == {"reference"}  # the default pre-registered test
    assert (table1b.epsilon_lb_claim <= table1b.epsilon_lb_ceiling_claim * (1 + 1e-9)).all()
    assert table1b.guess_fraction.between(0, 1).all() and (table1b.guess_fraction_low <= table1b.guess_fraction).all()
    assert table1b.epsilon_lb_theorem42_at_paper_size.notna().all()  # digits: the paper's CIFAR-100 size
    for name in ("table3", "table4", "table5", "table7"):  # every table: accuracies and flags on every row
        assert {"test_acc", "at_chance", "no_op", "no_power", "not_forgotten"} <= set(pd.read_csv(res / "tables" / f"{name}.csv").columns), name
    retrain = table1b[table1b.method == "Retrain"].iloc[0]
    # exact unlearning: A(D_r) does not depend on S, every run's scores are the same, the guess is fixed
    assert retrain.epsilon_lb_theorem42 == 0 and not retrain.no_op and not retrain.not_forgotten
    scores = [pd.read_parquet(shared_run.run_file("tiny_retrain", "eval", r, "scores.parquet")) for r in (0, 1)]
    assert (scores[0].score_logit == scores[1].score_logit).all() and not (scores[0].in_forget == scores[1].in_forget).all()
    t1 = table1b[table1b.method == "Retain fine-tune"]
    assert t1.r.iloc[0] == 24
    assert 0 <= t1.epsilon_lb_theorem42.iloc[0] == pytest.approx(t1.epsilon_ldp.iloc[0] / 2)
    assert t1.test_acc.between(0, 1).all()
    # the refactor changes no bound: the claim is the BOUNDS row's epsilon_lb_test, Theorem 4.2's its epsilon_lb
    bounds = pd.read_parquet(res / "tiny_ft" / "bounds.parquet")
    reported = bounds[bounds.role == "preregistered"].iloc[0]
    assert (t1.epsilon_lb_claim.iloc[0], t1.epsilon_lb_theorem42.iloc[0]) == (reported.epsilon_lb_test, reported.epsilon_lb)
    overlaps = pd.read_parquet(res / "tiny_ft" / "overlaps.parquet")
    v = overlaps[(overlaps.r == reported.r) & (overlaps.score == reported.score)].overlap
    assert t1.guess_fraction.iloc[0] == pytest.approx(v.mean() / reported.r)
    t3 = pd.read_csv(res / "tables" / "table3.csv")
    assert set(t3.columns) >= {"r", "epsilon_lb_claim_logit", "epsilon_lb_claim_loss", "epsilon_lb_theorem42_logit", "epsilon_lb_theorem42_loss"}
    ft3 = t3[(t3.method == "Retain fine-tune") & (t3.r == reported.r)].iloc[0]
    assert ft3.epsilon_lb_claim_logit == reported.epsilon_lb_test and ft3.epsilon_lb_theorem42_logit == reported.epsilon_lb
    assert set(pd.read_csv(res / "tables" / "table4.csv").columns) >= {"r", "epsilon_lb_claim_mean", "epsilon_lb_claim_median"}
    t7 = pd.read_csv(res / "tables" / "table7.csv")
    assert t7.method.tolist() == ["No unlearning", "Retrain", "Hessian"] and t7.sigma.tolist()[2] == 0.001
    assert (res / "figures" / "nn_epsilon_vs_r.png").stat().st_size > 1000

    # scores are Parquet in the documented long format, calibration and evaluation separate
    scores = pd.read_parquet(shared_run.run_file("tiny_ft", "eval", 0, "scores.parquet"))
    assert len(scores) == 24 and scores.phase.unique().tolist() == ["eval"]
    assert scores.in_forget.sum() == 12
    signs = pd.read_parquet(res / "designs" / "tiny" / "signs.parquet")
    assert set(signs[signs.phase == "calib"].seed).isdisjoint(signs[signs.phase == "eval"].seed)
    bounds = pd.read_parquet(res / "tiny_ft" / "bounds.parquet")
    assert set(bounds.statistic) == {"mean", "median"} and set(bounds.score) == {"logit", "loss"}
    metrics = pd.read_parquet(shared_run.run_file("tiny_ft", "calib", 0, "metrics.parquet"))
    assert metrics.precision.tolist() == ["fp32"] and metrics.compiled.tolist() == [False] and metrics.deterministic.tolist() == [True]


def test_one_hyperparameter_reruns_only_its_experiment(shared_run):
    jobs = shared_run.dry_run_jobs({"nn": {"experiments": {"tiny_hessian": {"params": {"sigma": 0.005}}}}}, name="sigma.yaml")
    assert not any(rule.startswith("nn_train") for rule, _ in jobs), jobs
    unlearned = [w for rule, w in jobs if rule == "nn_unlearn"]
    design = shared_run.config["nn"]["designs"]["tiny"]
    assert [w["group"] for w in unlearned] == ["tiny_hessian"] * _chunks(design) and _chunks(design) == 1
    assert [w for rule, w in jobs if rule in ("nn_fit", "nn_audit", "nn_membership")] == [{"experiment": "tiny_hessian"}] * 3


def test_a_design_without_deterministic_kernels_records_it_and_on_cpu_gives_the_same_bits(shared_run, tmp_path, monkeypatch):
    """One evaluation run redone with ``deterministic: false``: its metrics say so, the unlearning steps
    ran with deterministic kernels off, and on CPU (whose kernels are deterministic anyway) its scores
    are the deterministic run's bit for bit."""
    import torch

    from unlearn_audit.pipeline.nn_runs import unlearn
    from unlearn_audit.training import sgd

    seen = []
    original = sgd.deterministic_algorithms

    def spy(*args, **kwargs):
        cm = original(*args, **kwargs)
        class Recorded:
            def __enter__(self):
                cm.__enter__()
                seen.append(torch.are_deterministic_algorithms_enabled())
            def __exit__(self, *exc):
                return cm.__exit__(*exc)
        return Recorded()

    monkeypatch.setattr(sgd, "deterministic_algorithms", spy)
    monkeypatch.chdir(shared_run.workdir)
    res, config = shared_run.results, shared_run.config
    design = dict(config["nn"]["designs"]["tiny"], deterministic=False)
    exp = config["nn"]["experiments"]["tiny_ft"]
    out = {k: [str(tmp_path / "tiny_ft" / "runs" / "eval0" / "tiny_ft" / "eval" / "0" / f"{k}.parquet")] for k in ("scores", "metrics")}
    unlearn("tiny_ft", design, exp["method"], exp["params"], config["seed"], res / "designs" / "tiny" / "data.npz",
            res / "designs" / "tiny" / "signs.parquet", [str(shared_run.base_model("tiny", "eval", 0))],
            out["scores"], out["metrics"])
    assert seen and not any(seen)
    assert pd.read_parquet(out["metrics"][0]).deterministic.tolist() == [False]
    ours = pd.read_parquet(out["scores"][0])
    theirs = pd.read_parquet(shared_run.run_file("tiny_ft", "eval", 0, "scores.parquet"))
    pd.testing.assert_frame_equal(ours, theirs)


def test_a_bf16_design_unlearns_in_bf16_and_records_it(shared_run, tmp_path, monkeypatch):
    """One evaluation run of the finished design redone with ``precision: bf16`` (from the workflow's
    base model of that run): the metrics say
    so, and the scores (always computed in fp32) differ from the fp32 run's only through the
    bf16 unlearning steps."""
    from unlearn_audit.pipeline.nn_runs import unlearn

    monkeypatch.chdir(shared_run.workdir)  # the list's paths are the run's, relative to its folder
    res = shared_run.results
    config = shared_run.config
    design = dict(config["nn"]["designs"]["tiny"], precision="bf16")
    exp = config["nn"]["experiments"]["tiny_ft"]
    out = {k: [str(tmp_path / "tiny_ft" / "runs" / "eval0" / "tiny_ft" / "eval" / "0" / f"{k}.parquet")] for k in ("scores", "metrics")}
    unlearn("tiny_ft", design, exp["method"], exp["params"], config["seed"], res / "designs" / "tiny" / "data.npz",
            res / "designs" / "tiny" / "signs.parquet", [str(shared_run.base_model("tiny", "eval", 0))],
            out["scores"], out["metrics"])
    metrics = pd.read_parquet(out["metrics"][0])
    assert metrics.precision.tolist() == ["bf16"] and metrics.compiled.tolist() == [False]
    bf16 = pd.read_parquet(out["scores"][0])
    fp32 = pd.read_parquet(shared_run.run_file("tiny_ft", "eval", 0, "scores.parquet"))
    assert bf16.score_logit.dtype == np.float64 and (bf16.example.to_numpy() == fp32.example.to_numpy()).all()
    gap = np.abs(bf16.score_logit.to_numpy() - fp32.score_logit.to_numpy())
    assert 0 < gap.max() < 2.0


def test_grouped_base_training_is_train_many_and_does_not_depend_on_the_chunking(shared_run, tmp_path):
    """``models_per_group: 3``: evaluation runs 0-2 of the finished design, trained by the workflow's
    step as one chunk, are bitwise ``train_many``'s grouped models of their training sets from the
    design's x0 and π (the grouped trainer matches the loop up to rounding: tests/training/),
    and training them as chunks [0, 1] and [2] gives the same bytes (every group is padded to K)."""
    import torch

    from unlearn_audit.data import load_audit_data
    from unlearn_audit.pipeline.nn_runs import base_training_setup, train, training_ids, universe_tensors
    from unlearn_audit.models import model_factories
    from unlearn_audit.training import train_many

    res = shared_run.results / "designs" / "tiny"
    config = shared_run.config
    design = dict(config["nn"]["designs"]["tiny"], models_per_group=3)
    one = [str(tmp_path / "one" / "base" / "eval0-2" / "eval" / f"{r}.pt") for r in range(3)]
    two = [str(tmp_path / "two" / "base" / ("eval0-1" if r < 2 else "eval2") / "eval" / f"{r}.pt") for r in range(3)]
    train("tiny", design, config["seed"], res / "data.npz", res / "signs.parquet", one)
    train("tiny", design, config["seed"], res / "data.npz", res / "signs.parquet", two[:2])
    train("tiny", design, config["seed"], res / "data.npz", res / "signs.parquet", two[2:])

    data = load_audit_data(res / "data.npz")
    signs = pd.read_parquet(res / "signs.parquet")
    signs = signs[signs.phase == "eval"].sort_values("run")
    ids = [training_ids(data, np.asarray(signs[signs.run == r].signs.iloc[0])) for r in range(3)]
    x0, tcfg, orders = base_training_setup("tiny", design, config["seed"], data)
    model = design["model"]
    make_model, make_grouped = model_factories(model["name"], model["params"])
    expected = train_many(make_model, x0, *universe_tensors(data), ids, orders, tcfg, make_grouped=make_grouped, grouped=True,
                          group_size=3, progress=False)
    for r in range(3):
        grouped, chunked = torch.load(one[r]), torch.load(two[r])
        assert all(torch.equal(grouped[k], expected[r][k]) for k in grouped)
        assert all(torch.equal(grouped[k], chunked[k]) for k in grouped)
    loop = torch.load(shared_run.base_model("tiny", "eval", 0))
    trained, between = (max(float((torch.load(one[0])[k] - other[k]).abs().max()) for k in loop) for other in (x0, torch.load(one[1])))
    assert trained > 1e-3 and between > 1e-4  # it trained, and on its own run's set


@pytest.mark.parametrize("mode", ["grouped", "vmap"])
def test_grouped_unlearning_matches_the_loop_and_does_not_depend_on_the_chunking(shared_run, tmp_path, monkeypatch, mode):
    """``unlearn_models_per_group: 3`` (a grouped network, or vmap): evaluation runs 0-2 of tiny_ft redone
    by the workflow's step as one chunk and as chunks [0, 1] and [2] give the same bytes (every group is
    padded to K), and the scores are the loop's (the finished run's, K = 1) up to the batched kernels' rounding."""
    from unlearn_audit.pipeline.nn_runs import unlearn

    monkeypatch.chdir(shared_run.workdir)  # the list's paths are the run's, relative to its folder
    res = shared_run.results
    config = shared_run.config
    design = dict(config["nn"]["designs"]["tiny"], unlearn_models_per_group=3, unlearn_group_mode=mode)
    exp = config["nn"]["experiments"]["tiny_ft"]

    def outputs(folder, runs):
        chunk = f"eval{runs[0]}" + (f"-{runs[-1]}" if len(runs) > 1 else "")
        return {k: [str(tmp_path / folder / "runs" / chunk / "tiny_ft" / "eval" / str(r) / f"{k}.parquet") for r in runs] for k in ("scores", "metrics")}

    def step(out):
        runs = [int(f.split("/")[-2]) for f in out["scores"]]
        unlearn("tiny_ft", design, exp["method"], exp["params"], config["seed"], res / "designs" / "tiny" / "data.npz",
                res / "designs" / "tiny" / "signs.parquet", [str(shared_run.base_model("tiny", "eval", r)) for r in runs],
                out["scores"], out["metrics"])

    one, first, second = outputs("one", [0, 1, 2]), outputs("two", [0, 1]), outputs("two", [2])
    for out in (one, first, second):
        step(out)
    for r in range(3):
        grouped = pd.read_parquet(one["scores"][r])
        pd.testing.assert_frame_equal(grouped, pd.read_parquet((first if r < 2 else second)["scores"][r if r < 2 else 0]))
        loop = pd.read_parquet(shared_run.run_file("tiny_ft", "eval", r, "scores.parquet"))
        assert (grouped.example.to_numpy() == loop.example.to_numpy()).all()
        assert np.abs(grouped.score_logit.to_numpy() - loop.score_logit.to_numpy()).max() < 1e-3
    others = [pd.read_parquet(p).score_logit.to_numpy() for p in one["scores"]]
    assert np.abs(others[0] - others[1]).max() > 1e-3  # each run unlearned its own base model


def test_resources_dir_reruns_nothing_and_chunk_size_only_the_chunks_and_what_reads_them(shared_run):
    """Where downloads are kept changes no result: on the finished run another resources_dir plans no
    job.  How runs are cut into jobs changes no result either, but a chunk's folder is named by its
    runs: more chunks (tiny: its 23 runs in chunks of 5) and fewer (plays: its two chunks in one)
    plan those designs' chunks again and the audits and tables that read them, nothing else."""
    assert shared_run.dry_run({"resources_dir": "elsewhere/resources"}, name="resources.yaml") == {}
    overrides = {"nn": {"designs": {"tiny": {"chunk_size": 5}, "plays": {"chunk_size": 1000}}}}
    chunks = [_chunks(cfg["nn"]["designs"][d]) for cfg in (shared_run.config, merge(copy.deepcopy(shared_run.config), overrides)) for d in ("tiny", "plays")]
    assert chunks == [1, 2, 5, 1], chunks  # (tiny, plays) jobs per step: before, after
    jobs = shared_run.dry_run_jobs(overrides, name="chunks.yaml")
    trained = sorted((w["design"], w["chunk"]) for rule, w in jobs if rule == "nn_train")
    plan = shared_run.plan
    keys = {d: plan.nn.run_keys(d) for d in ("tiny", "plays")}
    assert len(keys["tiny"]) == 23
    assert trained == sorted([("plays", paths.chunk_name(keys["plays"]))] + [("tiny", paths.chunk_name(keys["tiny"][i:i + 5])) for i in range(0, 23, 5)])
    assert {rule for rule, _ in jobs} <= {"nn_train", "nn_unlearn", "nn_fit", "nn_audit", "nn_membership", "nn_checkpoint_audit", "nn_table", "nn_figure_r", "nn_summary_figure",
                                          "tradeoff_sign_vector", "provenance", "all"}, jobs


@pytest.mark.parametrize(
    "key, value, steps",
    [("precision", "bf16", ("nn_train", "nn_unlearn")), ("compile", True, ("nn_train", "nn_unlearn")),
     ("models_per_group", 2, ("nn_train",)), ("unlearn_models_per_group", 2, ("nn_unlearn",)), ("unlearn_group_mode", "vmap", ("nn_unlearn",))],
)
def test_the_device_path_keys_reach_the_rules_that_read_them(shared_run, key, value, steps):
    """A design's precision, compile, models_per_group, unlearn_models_per_group and unlearn_group_mode change what its steps compute, so the
    rules must be given them (their params): changing one on a finished run reruns those steps."""
    planned = shared_run.dry_run({"nn": {"designs": {"tiny": {key: value}}}}, name=f"{key}.yaml")
    for step in steps:
        assert step in planned, (key, planned)


def test_text_audit_end_to_end_table1a(shared_run):
    """Table 1a on generated plays: CharLSTM, chunks of windows (batch_size null), sequence scores."""
    res = shared_run.results
    t1a = pd.read_csv(res / "tables" / "table1a.csv")
    assert t1a.method.tolist() == ["Retain fine-tune"] and t1a.r.tolist() == [6]
    assert t1a.epsilon_lb_claim.iloc[0] >= t1a.epsilon_lb_theorem42.iloc[0] >= 0 and t1a.test_acc.between(0, 1).all()
    assert t1a.epsilon_lb_theorem42_at_paper_size.notna().all()  # Shakespeare: the paper's m = 400, r = 100
    scores = pd.read_parquet(shared_run.run_file("plays_ft", "eval", 1, "scores.parquet"))
    sizes = scores.groupby("batch").size()
    assert len(sizes) == 6 and sizes.nunique() == 1  # equal chunks of windows
    assert (scores.score_logit == -scores.score_loss).all()  # text: logit score is minus the mean CE
    assert scores.in_forget.groupby(scores.batch).first().sum() == 3
    # Γ + L = 18 runs in chunks of 9: two jobs, the second with calibration and evaluation runs
    chunks = [c for d, c, _ in shared_run.plan.nn.design_chunks() if d == "plays"]
    assert chunks == ["calib0-8", "calib9-15_eval0-1"]
    assert all((res / "designs" / "plays" / "base" / c).is_dir() for c in chunks)


def test_the_divergence_script_recomputes_its_numbers_from_a_finished_run(shared_run):
    """analysis/divergences.py (the measured causes behind the claims that print DIVERGES) reads a
    run's outputs: each batchwise experiment beside its controls, its signal, Table 4's mean vs median."""
    import subprocess
    import sys

    proc = subprocess.run([sys.executable, str(REPO / "analysis" / "divergences.py"), str(shared_run.results)], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    for name in ("tiny_ft", "tiny_no_unlearning", "tiny_retrain", "plays_ft", "d_prime", "guess_fraction", "largest relative difference"):
        assert name in proc.stdout, name
    lines = proc.stdout.splitlines()
    header = next(line for line in lines if line.split()[:2] == ["experiment", "design"]).split()
    retrain = next(line for line in lines if line.strip().startswith("tiny_retrain")).split()
    # the method label "Retrain" is one word, so the columns line up with the header's
    assert float(retrain[header.index("epsilon_lb_theorem42")]) == 0.0  # exact unlearning: no bound
    missing = subprocess.run([sys.executable, str(REPO / "analysis" / "divergences.py"), str(shared_run.workdir / "nope")], capture_output=True, text=True)
    assert missing.returncode == 2 and "config.yaml not found" in missing.stderr


def test_the_precision_comparison_pairs_each_control_with_itself(shared_run):
    """analysis/precision/effect.py puts each experiment's claim and accuracies of several runs side by
    side; runs equal to the reference move nothing, so the rule passes every candidate and chooses the
    cheapest, and a doctored claim against Retrain fails it."""
    from workflow_utils import script_module

    module = script_module("analysis/precision/effect.py", "precision_effect", on_path=REPO / "analysis")
    rule = module.load_rule() | {"experiments": ["tiny_no_unlearning", "tiny_retrain"]}
    table = module.side_by_side({p: shared_run.results for p in module.precisions(rule)}, rule["experiments"])
    assert table.loc[("tiny_retrain", "fp32"), "epsilon_lb_claim"] == 0.0
    for column in module.COLUMNS:
        assert table.loc[("tiny_no_unlearning", "fp32"), column] == table.loc[("tiny_no_unlearning", "tf32"), column]
    reasons = module.verdict(table, rule)
    assert reasons == {c: [] for c in rule["candidates"]} and module.choice(reasons, rule) == rule["candidates"][0]
    table.loc[("tiny_retrain", rule["candidates"][0]), "epsilon_lb_claim"] = 0.3
    assert module.choice(module.verdict(table, rule), rule) == rule["candidates"][1]


def test_a_preregistered_adaptive_test_is_the_claim_in_bounds_table_and_log(shared_run):
    """.test/all.yaml pre-registers `test: adaptive` for tiny_hessian: every row carries its bound under
    that test (never below the exact test's for the mean), Table 7 shows it as the row's claim
    (epsilon_lb_claim, test adaptive) before the others, and the job log names the test and its claim."""
    import pandas as pd

    bounds = pd.read_parquet(shared_run.results / "tiny_hessian" / "bounds.parquet")
    assert set(bounds.test) == {"adaptive"}
    mean = bounds[bounds.statistic == "mean"]
    assert (mean.epsilon_ldp_test >= mean.epsilon_ldp_exact - 1e-12).all() and (mean.epsilon_ldp_exact >= mean.epsilon_ldp - 1e-12).all()
    median = bounds[bounds.statistic == "median"]
    assert (median.epsilon_ldp_test == median.epsilon_ldp_exact).all()  # the median's test under adaptive: exact
    reported = bounds[bounds.role == "preregistered"].iloc[0]
    table7 = pd.read_csv(shared_run.results / "tables" / "table7.csv")
    row = table7[table7.method == "Hessian"].iloc[0]
    assert row.epsilon_lb_claim == reported.epsilon_lb_test and row.test == "adaptive" and "adaptive test" in row.cell
    assert row.epsilon_lb_theorem42 == reported.epsilon_lb and row.epsilon_lb_exact == reported.epsilon_lb_exact
    last = (shared_run.results / "logs" / "tiny_hessian" / "audit.log").read_text().strip().splitlines()[-1]
    assert "adaptive test): epsilon_LB = " in last and f"{reported.epsilon_lb_test:.4g}" in last


def test_the_tests_side_by_side_script_reads_a_finished_run(shared_run):
    """analysis/tests_side_by_side.py: every test on each pre-registered cell; the reference test is never
    below Theorem 4.2, exact or adaptive, exact never below Theorem 4.2, the trade-off μ never below
    Lemma C.1's or the group-composition closed form, and Retrain stays at 0 under Theorem 4.2."""
    import io
    import subprocess
    import sys

    import pandas as pd

    proc = subprocess.run([sys.executable, str(REPO / "analysis" / "tests_side_by_side.py"), str(shared_run.results)],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    block = proc.stdout.split("\n\n")[0].splitlines()[1:]  # the first table, after its title line
    table = pd.read_fwf(io.StringIO("\n".join(block)))
    zero = table[table.delta == 0]
    assert len(zero) >= 5
    others = zero[["theorem4.2", "exact", "adaptive"]].max(axis=1)
    assert (zero.reference >= others - 1e-9).all() and (zero.exact >= zero["theorem4.2"] - 1e-9).all()
    assert (table.mu_tradeoff >= table[["mu_lemma_c1", "mu_group_composition"]].max(axis=1) - 1e-9).all()
    assert table.set_index("experiment").loc["tiny_retrain", "theorem4.2"] == 0.0
    claims = table.set_index("experiment").claim
    assert claims["tiny_hessian"] == "adaptive" and claims["tiny_ft_calibrated"] == "reference" and claims["mc_certified"] == "reference"
    cal = table.set_index("experiment").loc["tiny_ft_calibrated"]
    assert cal.r_calibrated == cal.r  # the run chose its r by the same rule
    assert "The pairwise audits" in proc.stdout and "reference_m2" in proc.stdout


def test_report_r_calibrated_chooses_r_on_the_calibration_runs_and_records_it(shared_run):
    """report_r: calibrated (docs/bounds.md §9): the pre-registered row sits at the r the leave-one-out rule
    picks from the calibration runs' scores alone, recomputed here, and BOUNDS records the rule."""
    import pandas as pd

    from unlearn_audit import schemas
    from unlearn_audit.auditors.calibrated_r import calibrated_r
    from unlearn_audit.auditors.runs import phase_runs
    from unlearn_audit.io import read_concat

    bounds = pd.read_parquet(shared_run.results / "tiny_ft_calibrated" / "bounds.parquet")
    assert set(bounds.r_rule) == {"calibrated"} and set(bounds.test) == {"reference"}
    row = bounds[bounds.role == "preregistered"].iloc[0]
    files = [shared_run.workdir / f for f in shared_run.plan.nn.run_files("tiny_ft_calibrated", "calib", "scores.parquet")]
    signs = pd.read_parquet(shared_run.results / "designs" / "tiny" / "signs.parquet")
    runs = phase_runs(read_concat(files, schemas.SCORES), signs[signs.phase == "calib"], "calib", "logit", 24)
    r, loo = calibrated_r(runs, [4, 8, 24], zeta=0.05, statistic="mean", test="reference")
    assert int(row.r) == r and loo[r] == max(loo.values())
    other = pd.read_parquet(shared_run.results / "tiny_ft" / "bounds.parquet")
    assert set(other.r_rule) == {"config"}
    assert (bounds.epsilon_lb_test >= bounds.epsilon_lb - 1e-9).all()  # the reference test is never below Theorem 4.2


def test_the_claims_script_recomputes_the_claims_the_small_run_supports(shared_run):
    """analysis/claims.py on the shared run: the claims a tiny run can support pass with this run's
    numbers, those true of any run are labelled so, the ones it lacks the outputs for are skipped,
    none crashes; a missing run is refused (its teeth: tests/workflow/test_claims.py)."""
    import subprocess
    import sys

    proc = subprocess.run([sys.executable, str(REPO / "analysis" / "claims.py"), str(shared_run.results)], capture_output=True, text=True, timeout=300)
    status = {line.split()[1].rstrip(":"): line.split()[0] for line in proc.stdout.splitlines()
              if line.startswith(("PASS", "FAIL", "SKIP", "DIVERGES", "BY-CONSTRUCTION"))}
    for key in ("no-unlearning-rejected", "retrain-type-one", "certified-below-claim", "table6-zero", "no-power-nowhere", "convex-valid"):
        assert status[key] == "PASS", (key, proc.stdout)
    for key in ("joint-controls-on-ceiling", "pairwise-eq3-zero", "reference-never-weaker"):
        assert status[key] == "BY-CONSTRUCTION", (key, proc.stdout)
    for key in ("table6-row3-at-chance", "r2d-eps1-at-chance", "table1a-ida-grid", "bound-grows-with-m"):
        assert status[key] == "SKIP", key  # the small run has no such experiment
    assert len(status) >= 30 and proc.returncode == (1 if "FAIL" in status.values() else 0)
    missing = subprocess.run([sys.executable, str(REPO / "analysis" / "claims.py"), str(shared_run.workdir / "nope")], capture_output=True, text=True)
    assert missing.returncode == 2 and "config.yaml not found" in missing.stderr


def test_the_run_comparison_script_puts_two_runs_side_by_side(shared_run):
    """analysis/compare_runs.py: every experiment's reported cell in both runs (here the run and itself:
    before equals after), and a refusal of a folder that is not a finished run."""
    import subprocess
    import sys

    script = str(REPO / "analysis" / "compare_runs.py")
    proc = subprocess.run([sys.executable, script, str(shared_run.results), str(shared_run.results)], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert "claim_before" in lines[0] and "claim_after" in lines[0]
    row = next(line for line in lines if line.startswith("tiny_hessian")).split()
    assert row[1] == row[2] and row[3] == row[4] == "adaptive"  # r and test, before and after
    missing = subprocess.run([sys.executable, script, str(shared_run.results), str(shared_run.workdir / "nope")], capture_output=True, text=True)
    assert missing.returncode == 2 and "config.yaml not found" in missing.stderr
