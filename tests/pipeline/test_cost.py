"""The cost model of `unlearn-audit plan`: the DAG's work per table and figure, and its hours."""

import math
from pathlib import Path

import pytest
import yaml

from cli_runner import run_cli
from linear_passes import counted_linear_passes
from unlearn_audit.pipeline.config import validate_config
from unlearn_audit.plan_reports.hours import plan_rows, read_throughputs, tinynet_training_flops
from unlearn_audit.pipeline.plan.cost.throughput import model_key
from unlearn_audit.pipeline.plan import WorkflowPlan

REPO = Path(__file__).resolve().parents[2]
SCHEMA = REPO / "workflow" / "schemas" / "config.schema.yaml"


def _config(name: str = "config.yaml") -> dict:
    return validate_config(yaml.safe_load((REPO / "config" / name).read_text()), SCHEMA)


def test_counts_are_the_dags_jobs():
    config = _config()
    plan = WorkflowPlan(config)
    rows = {r["target"]: r for r in plan_rows(config, {})}
    designs = plan.nn.used_designs()
    models = sum(len(plan.nn.candidates(d)) or plan.nn.design(d)["calibration_runs"] + plan.nn.design(d)["evaluation_runs"] for d in designs)
    retrained = sum(plan.nn.retrains(d) for d in designs)  # one A(D_r) per design, for its Retrain control
    runs = sum(len(plan.nn.phase_runs(plan.nn.design_of(e), ph)) for e in plan.nn.experiments() for ph in ("calib", "eval"))
    assert rows["total"]["base_trainings"] == models + retrained
    assert (models, retrained) == (414, 15)  # 280 digits (the audit-size series adds 120), 104 candidate models, 30 Shakespeare; 15 designs
    assert rows["total"]["unlearning_runs"] == runs
    # Table 7: three sigma variants on the uniform design (App. G.4) and its two controls: 40 base
    # models and A(D_r), 5 x 40 runs
    assert (rows["table7"]["base_trainings"], rows["table7"]["unlearning_runs"]) == (41, 200)
    # a checkpointed experiment extracts scores at every checkpoint step as well
    mc = rows["figure1a"]
    assert mc["score_extractions"] > mc["unlearning_runs"]
    assert all(math.isnan(r["device_hours"]) for r in rows.values())  # no throughput given


def test_paper_scale_training_flops_and_hours_follow_the_throughput():
    # App. D.1 TinyNet on CIFAR-100, 400 epochs of |D(S)| = 45,000 - 4,500/2 images: about 10 PFLOP
    pflop = tinynet_training_flops(1.0, 32, 3, 100) * 400 * (45_000 - 2_250) / 1e15
    assert 9 < pflop < 11
    config = _config("paper.yaml")
    slow = {r["target"]: r for r in plan_rows(config, {("tinynet w=1", "32x32x3", 1): 1000.0})}
    fast = {r["target"]: r for r in plan_rows(config, {("tinynet w=1", "32x32x3", 1): 4000.0})}
    assert slow["table1b"]["device_hours"] == pytest.approx(4 * fast["table1b"]["device_hours"])
    assert slow["table1b"]["device_hours"] == pytest.approx(slow["table1b"]["images"] / 1000.0 / 3600)
    assert "shakespeare" in slow["total"]["left_out"]  # text designs have no throughput row


def test_base_trainings_of_a_grouped_design_cost_at_its_k_rate():
    config = _config("config.yaml")
    rates = {("tinynet w=0.25", "8x8x1", 1): 10000.0}
    one = {r["target"]: r for r in plan_rows(config, rates)}
    for design in config["nn"]["designs"].values():
        design["models_per_group"] = 8
    same = {r["target"]: r for r in plan_rows(config, rates)}  # no K = 8 row: the K = 1 rate
    grouped = {r["target"]: r for r in plan_rows(config, {**rates, ("tinynet w=0.25", "8x8x1", 8): 20000.0})}
    assert same["table6"]["device_hours"] == pytest.approx(one["table6"]["device_hours"])
    # only the base trainings get faster: table 6's unlearning runs stay at the K = 1 rate
    assert one["table6"]["device_hours"] / 2 < grouped["table6"]["device_hours"] < one["table6"]["device_hours"]


def test_unlearning_of_a_grouped_design_costs_at_its_k_rate():
    """``unlearn_models_per_group`` prices the grouped methods' runs at that K's rate; the controls,
    Hessian and R2D, which run one at a time, stay at K = 1; the list of grouped methods is the
    registry's."""
    from unlearn_audit.unlearning import get_method
    from unlearn_audit.unlearning.params import BUILTIN_GROUPED, BUILTIN_PARAMS

    assert set(BUILTIN_GROUPED) == {m for m in BUILTIN_PARAMS if get_method(m).final_steps is not None}
    config = _config("config.yaml")
    rates = {("tinynet w=0.25", "8x8x1", 1): 10000.0, ("tinynet w=0.25", "8x8x1", 5): 20000.0}
    one = {r["target"]: r for r in plan_rows(config, rates)}
    for design in config["nn"]["designs"].values():
        design["unlearn_models_per_group"] = 5
    grouped = {r["target"]: r for r in plan_rows(config, rates)}
    assert grouped["table1b"]["device_hours"] < one["table1b"]["device_hours"]
    assert grouped["table7"]["device_hours"] == pytest.approx(one["table7"]["device_hours"])  # Hessian only: never grouped
    assert grouped["figure1c"]["device_hours"] == pytest.approx(one["figure1c"]["device_hours"])  # rewind-to-delete


def test_read_throughputs_takes_the_rows_of_the_device_each_under_its_precision(tmp_path):
    results = tmp_path / "RESULTS.md"
    results.write_text(
        "| date | device | model | input | K | dtype | batch | images/s (all K) | images/s per model |\n"
        "|---|---|---|---|---|---|---|---|---|\n"
        "| 2026-12-01 | cpu (AMD EPYC, 1 threads) | tinynet w=0.25 | 8x8x1 | 1 | fp32 | 64 | 14000 | 14000 |\n"
        "| 2026-12-01 | cpu (AMD EPYC, 1 threads) | tinynet w=0.25 | 8x8x1 | 1 | bf16 | 64 | 20000 | 20000 |\n"
        "| 2026-12-01 | NVIDIA H200 | tinynet w=1 | 32x32x3 | 8 | fp32 | 128 | 80000 | 10000 |\n"
        "| 2026-12-01 | cpu (AMD EPYC, 1 threads) | tinynet w=0.25 | 8x8x1 | 1 | fp32+compile | 64 | 30000 | 30000 |\n"
    )
    # a bf16 row prices a design of precision bf16 (its model label says so), never an fp32 one
    assert read_throughputs(results, "cpu") == {("tinynet w=0.25", "8x8x1", 1): 14000.0, ("tinynet w=0.25 bf16", "8x8x1", 1): 20000.0}
    design = {"dataset": "digits", "model": {"name": "tinynet", "params": {"width": 0.25, "in_channels": 1}}}
    assert model_key(design)[0] == "tinynet w=0.25" and model_key({**design, "precision": "bf16"})[0] == "tinynet w=0.25 bf16"
    # the rate summed over the K models prices K-at-a-time work, not the per-model column
    assert read_throughputs(results, "h200") == {("tinynet w=1", "32x32x3", 8): 80000.0}
    assert read_throughputs(tmp_path / "missing.md", "cpu") == {}


def test_a_recorded_grouped_row_makes_the_grouped_default_cheaper(tmp_path):
    """Digits base trainings grouped by K = 5: a K = 5 row whose summed rate beats K = 1 must lower
    their cost, although its per-model rate is a fifth of it."""
    head = ("| date | device | model | input | K | dtype | batch | images/s (all K) | images/s per model |\n"
            "|---|---|---|---|---|---|---|---|---|\n")
    one_row = "| 2026-12-01 | cpu | tinynet w=0.25 | 8x8x1 | 1 | fp32 | 64 | 10000 | 10000 |\n"
    five_row = "| 2026-12-01 | cpu | tinynet w=0.25 | 8x8x1 | 5 | fp32 | 64 | 12500 | 2500 |\n"
    (tmp_path / "one.md").write_text(head + one_row)
    (tmp_path / "both.md").write_text(head + one_row + five_row)
    config = _config("config.yaml")
    for design in config["nn"]["designs"].values():
        design["models_per_group"] = 5
    one = {r["target"]: r for r in plan_rows(config, read_throughputs(tmp_path / "one.md", "cpu"))}
    both = {r["target"]: r for r in plan_rows(config, read_throughputs(tmp_path / "both.md", "cpu"))}
    for target in ("table1b", "table5", "total"):
        assert one[target]["device_hours"] / 1.25 < both[target]["device_hours"] < one[target]["device_hours"]


def test_plan_command(tmp_path):
    (tmp_path / "none.md").write_text("no throughput rows\n")
    rc, stdout, stderr = run_cli("plan", "--configfile", REPO / "config" / "config.yaml", "--results", tmp_path / "none.md", cwd=tmp_path)
    assert rc == 0, stderr
    lines = stdout.splitlines()
    assert lines[0].split()[:3] == ["target", "base", "trainings"]
    assert any(line.startswith("total ") and " 429 " in line for line in lines)  # 414 base models and 15 A(D_r)
    rc, _, stderr = run_cli("plan", "--configfile", "nope.yaml", cwd=tmp_path)
    assert rc == 2 and stderr.strip() == "error: --configfile nope.yaml: no such file"
    rc, _, stderr = run_cli("plan", "--results", tmp_path / "absent.md", cwd=tmp_path)
    assert rc == 2 and "--results" in stderr and "no such file" in stderr and len(stderr.strip().splitlines()) == 1


def test_plan_reads_the_checkout_it_runs_in(tmp_path):
    """In a clone of the workflow, plan reads that clone's config and RESULTS.md, not those of the
    checkout the package was installed from."""
    import shutil

    clone = tmp_path / "clone"
    shutil.copytree(REPO / "workflow" / "schemas", clone / "workflow" / "schemas")
    config = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
    config["nn"]["enabled"] = False
    (clone / "config").mkdir()
    (clone / "config" / "config.yaml").write_text(yaml.safe_dump(config))
    (clone / "benchmarks").mkdir()
    (clone / "benchmarks" / "RESULTS.md").write_text("no rows yet\n")
    rc, stdout, stderr = run_cli("plan", cwd=clone)
    assert rc == 0, stderr
    assert f"rows of {clone / 'benchmarks' / 'RESULTS.md'}" in stdout
    assert not any(line.startswith("table1b") for line in stdout.splitlines())  # nn is off in the clone's config


def test_charlstm_flops_are_those_of_its_matrix_products():
    """The CharLSTM's training FLOPs (App. D.2: 2 layers, 8-dim embedding, 100-character vocabulary):
    an LSTM written out as its gate products, counted by torch's FLOP counter over a forward and
    backward pass (nn.LSTM's fused kernel is not counted by it)."""
    import torch
    from torch.utils.flop_counter import FlopCounterMode

    from unlearn_audit.models import build_model
    from unlearn_audit.model_specs import charlstm_training_flops

    hidden, window, batch = 16, 12, 3
    m = build_model("charlstm", hidden_size=hidden)
    x = torch.randint(0, 100, (batch, window))
    with FlopCounterMode(display=False) as counter:
        inputs = m.embed(x)
        for layer in range(m.num_layers):
            w_ih, w_hh = getattr(m.lstm, f"weight_ih_l{layer}"), getattr(m.lstm, f"weight_hh_l{layer}")
            h = c = torch.zeros(batch, hidden)
            outs = []
            for t in range(window):
                i, f, g, o = (inputs[:, t] @ w_ih.T + h @ w_hh.T).chunk(4, dim=1)
                c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
                h = torch.sigmoid(o) * torch.tanh(c)
                outs.append(h)
            inputs = torch.stack(outs, dim=1)
        m.out(inputs).sum().backward()
    # the formula also counts the gradient with respect to the zero initial state h_0 of each layer,
    # which autograd skips (2 FLOPs per multiply-add of 4h x h, once per layer): 1/window of the recurrence
    skipped = 2 * m.num_layers * 4 * hidden * hidden
    assert counter.get_total_flops() / batch == charlstm_training_flops(hidden, 8, 100, 2, window) - skipped


def test_shakespeare_is_sized_from_the_papers_character_counts():
    from unlearn_audit.pipeline.plan.cost.runs import design_sizes

    paper = _config("paper.yaml")["nn"]["designs"]["shakespeare"]
    retain, pool, test = design_sizes(paper)  # 300 roles, stride 1: App. D.2's characters
    assert (retain, pool) == (1_221_363, 135_300) and test == pytest.approx((1_221_363 + 135_300) / 8)
    default = _config()["nn"]["designs"]["shakespeare"]  # capped and m·B: exactly what it trains on
    assert design_sizes(default) == (300, 40 * 4, 300)
    half = dict(paper, dataset_params={"num_roles": 150, "stride": 2})
    assert design_sizes(half)[0] == pytest.approx(1_221_363 / 4)
    rows = {r["target"]: r for r in plan_rows(_config("paper.yaml"), {}, assume_tflops=50)}
    assert rows["table1a"]["estimate"] and not rows["total"]["left_out"] and math.isfinite(rows["table1a"]["device_hours"])


def test_batched_hours_use_the_k_rate_for_groupable_work_only(tmp_path):
    config = _config("paper.yaml")
    rates = {("tinynet w=1", "32x32x3", 1): 1000.0, ("tinynet w=1", "32x32x3", 8): 3000.0}
    rows = {r["target"]: r for r in plan_rows(config, rates, batched=8)}
    today, batched = rows["table1b"]["device_hours"], rows["table1b"]["device_hours_batched"]
    assert batched < today
    # Hessian (Table 7) cannot be grouped: its unlearning stays at the K = 1 rate, its base models train at K = 8
    plan = WorkflowPlan(config)
    t7 = rows["table7"]
    assert t7["device_hours_batched"] < t7["device_hours"]
    hessian_only = [e for e in plan.nn.table_experiments("table7") if plan.nn.experiment(e)["method"] == "hessian"]
    assert hessian_only
    no_k_row = {r["target"]: r for r in plan_rows(config, {("tinynet w=1", "32x32x3", 1): 1000.0}, batched=8)}
    assert no_k_row["table1b"]["device_hours_batched"] == pytest.approx(no_k_row["table1b"]["device_hours"])
    (tmp_path / "rates.md").write_text("| 2026-12-05 | H200 | tinynet w=1 | 32x32x3 | 1 | fp32 | 128 | 1000 | 1000 |\n"
                                       "| 2026-12-05 | H200 | tinynet w=1 | 32x32x3 | 8 | fp32 | 128 | 3000 | 375 |\n")
    rc, stdout, stderr = run_cli("plan", "--configfile", REPO / "config" / "paper.yaml", "--results", tmp_path / "rates.md",
                                 "--device", "H200", "--batched", "8", cwd=tmp_path)
    assert rc == 0, stderr
    assert "hours at K = 8" in stdout.splitlines()[0] and "hours at K = 8: every TinyNet base training" in stdout
    # the CharLSTM has no K = 8 row: said, so that equal hours are not read as no gain; the TinyNet has one
    note = next(line for line in stdout.splitlines() if line.startswith("no K = 8 row"))
    assert "charlstm h=256 T=80" in note and "tinynet" not in note
    rc, _, stderr = run_cli("plan", "--batched", "0", cwd=tmp_path)
    assert rc == 2 and "--batched must be a number of models >= 1" in stderr


# ----------------------------------------------------------------------------- steps and images, counted
@pytest.mark.parametrize(("method", "params"), [
    ("retain_finetune", {"epochs": 3, "batch_size": 16}),
    ("forget_ascent", {"epochs": 2, "batch_size": 16, "ascent_epochs": 3, "ascent_batch_size": 4}),
    ("ida", {"epochs": 2, "batch_size": 16, "forget_epochs": 3, "q": 2, "forget_batch_size": 4}),
    ("neggrad_plus", {"epochs": 2, "batch_size": 16, "forget_batch_size": 4}),
    ("scrub", {"epochs": 3, "max_steps": 2, "batch_size": 16, "forget_batch_size": 4}),
    ("bad_teacher", {"epochs": 2, "batch_size": 16, "retain_fraction": 0.5}),
])
def test_the_cost_models_steps_and_images_are_what_a_run_computes(method, params):
    """The cost model's steps and images of an unlearning run against the passes of a real run of
    the method: a step is each forward and backward pass over a batch (IDA's combined step and
    NegGrad+'s step two), a teacher's forward pass a third of one (SCRUB's one teacher a step, Bad
    Teacher's two, each on its part of the batch), as its rows count a third of an image."""
    import torch

    from unlearn_audit.pipeline.plan.cost.runs import FORWARD, unlearning_images, unlearning_steps
    from unlearn_audit.unlearning.params import _ida_combined_steps
    from unlearn_audit.unlearning import make_params, unlearn

    g = torch.Generator().manual_seed(0)
    retain = (torch.randn(100, 5, generator=g), torch.randint(0, 3, (100,), generator=g))
    forget = (torch.randn(10, 5, generator=g), torch.randint(0, 3, (10,), generator=g))
    with counted_linear_passes() as counter:
        unlearn(method, torch.nn.Linear(5, 3), retain, forget, params, generator=1)
    p = make_params(method, params)
    assert counter.rows + FORWARD * counter.eval_rows == pytest.approx(unlearning_images(method, p, 100, 10))
    assert counter.calls + FORWARD * counter.eval_calls == pytest.approx(unlearning_steps(method, p, 100, 10))
    if method == "ida":
        assert _ida_combined_steps(p, 100) == 3 * 7 // 3  # every third of the 3 x 7 interleaved steps


def test_step_costs_are_the_line_through_two_batch_sizes(tmp_path):
    """A fixed cost a step and a marginal rate, from rows at two batch sizes: K = 1 (c = 2 ms,
    10,000 images/s) and K = 4 (a step of the four models c = 4 ms, 8,000 images/s a model); one
    batch size: no fixed cost."""
    from unlearn_audit.pipeline.plan.cost.throughput import read_step_costs

    def row(k, batch, step_s, per_model_rate):
        rate = k * batch / (step_s + batch / per_model_rate)  # images/s of the K models
        return f"| 2026-12-06 | cpu (test) | tinynet w=0.25 | 8x8x1 | {k} | fp32 | {batch} | {rate:.6f} | {rate / k:.6f} |"

    rows = [row(1, 8, 0.002, 10_000), row(1, 64, 0.002, 10_000), row(4, 8, 0.004, 8_000), row(4, 64, 0.004, 8_000),
            "| 2026-12-06 | cpu (test) | charlstm h=64 | T=80 | 1 | fp32 | 64 | 2000 | 2000 |"]
    results = tmp_path / "RESULTS.md"
    results.write_text("| date | device | model | input | K | dtype | batch | images/s (all K) | images/s per model |\n|---|\n" + "\n".join(rows) + "\n")
    costs = read_step_costs(results, "cpu")
    one, four, lstm = costs[("tinynet w=0.25", "8x8x1", 1)], costs[("tinynet w=0.25", "8x8x1", 4)], costs[("charlstm h=64", "T=80", 1)]
    assert one.step_s == pytest.approx(0.002) and one.images_per_s == pytest.approx(10_000)
    # a run's share of a step of four: a quarter of its fixed cost; its images at the four models' summed rate
    assert four.step_s == pytest.approx(0.001) and four.images_per_s == pytest.approx(32_000)
    assert four.seconds(10, 640) == pytest.approx(10 * 0.001 + 640 / 32_000)
    assert lstm.step_s == 0 and lstm.images_per_s == 2000


def test_hessian_vector_products_are_priced_at_their_own_rows_where_recorded(tmp_path):
    """The Hessian method's s1·s2 products, counted in its steps and images at HVP training units
    each, are priced instead at the model's Hessian–vector product rows (c = 5 ms a product,
    2,000 examples/s) where recorded; without a row, at the training step cost as before."""
    from types import SimpleNamespace

    from unlearn_audit.pipeline.plan.cost.runs import HVP, hessian_vector_products, run_parts, unlearning_images, unlearning_steps
    from unlearn_audit.pipeline.plan.cost.throughput import HVP_HEADER, read_hvp_costs, read_step_costs, read_unit_costs, run_seconds

    def hvp_row(batch):
        return f"| 2026-12-06 | cpu (test) | tinynet w=0.25 | 8x8x1 | fp32 | {batch} | {batch / (0.005 + batch / 2000):.6f} |"

    results = tmp_path / "RESULTS.md"
    results.write_text("| date | device | model | input | K | dtype | batch | images/s (all K) | images/s per model |\n|---|\n"
                       "| 2026-12-06 | cpu (test) | tinynet w=0.25 | 8x8x1 | 1 | fp32 | 64 | 16000 | 16000 |\n\n"
                       f"{HVP_HEADER}\n|---|\n{hvp_row(16)}\n{hvp_row(64)}\n\nprose | with a bar\n")
    steps_costs, hvp_costs = read_step_costs(results, "cpu"), read_hvp_costs(results, "cpu")
    assert set(steps_costs) == {("tinynet w=0.25", "8x8x1", 1)}  # the HVP table is not a throughput table
    assert hvp_costs[("tinynet w=0.25", "8x8x1")].step_s == pytest.approx(0.005)
    assert hvp_costs[("tinynet w=0.25", "8x8x1")].images_per_s == pytest.approx(2000)

    p = SimpleNamespace(s1=2, s2=3, batch_size=64, grad_batch_size=100)
    products = hessian_vector_products("hessian", p)
    assert products == (6, 6 * 64) and hessian_vector_products("retain_finetune", p) == (0, 0)
    steps, images = unlearning_steps("hessian", p, 1000, 10), unlearning_images("hessian", p, 1000, 10)
    assert (steps, images) == (10 + HVP * 6, 1000 + HVP * 6 * 64)
    design = {"dataset": "digits", "model": {"name": "tinynet", "params": {"width": 0.25, "in_channels": 1, "num_classes": 10}}}
    without = run_seconds(design, steps, images, 1, steps_costs)
    parts = run_parts("hessian", p, 1000)
    assert set(parts) == {"hvp"} and (parts["hvp"].units, parts["hvp"].examples) == products
    with_rows = run_seconds(design, steps, images, 1, steps_costs, parts=parts, unit_costs=read_unit_costs(results, "cpu"))
    assert without == pytest.approx(images / 16000)
    assert with_rows == pytest.approx(1000 / 16000 + 6 * 0.005 + 6 * 64 / 2000)
