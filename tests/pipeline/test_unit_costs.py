"""The per-unit rows of benchmarks/RESULTS.md (benchmarks/gpu_cases.py) in the cost model: model
clipping's noisy steps (``noisy``), rewind-to-delete's full-batch micro-batches (``r2d``) and the
Hessian method's products (the Hessian–vector product table) priced at their rows for the device
and model where recorded, everything else as without them; the runtime each kind of job asks for."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
import yaml

from cli_runner import run_cli
from unlearn_audit.pipeline.config import validate_config
from unlearn_audit.pipeline.plan import WorkflowPlan
from unlearn_audit.plan_reports.hours import job_kind, plan_rows, read_throughputs, walltime_rows
from unlearn_audit.pipeline.plan.cost.runs import unlearning_run_work
from unlearn_audit.pipeline.plan.cost.throughput import HVP_HEADER, UNIT_HEADER, model_key, read_unit_costs
from unlearn_audit.pipeline.plan.pricing import ChunkPricing

REPO = Path(__file__).resolve().parents[2]
SCHEMA = REPO / "workflow" / "schemas" / "config.schema.yaml"
NOISY_MS, R2D_MS = 4.0, 30.0


def _unit_row(device: str, case: str, shapes: str, ms: float, dtype: str = "fp32") -> str:
    return f"| 2026-12-08 | {device} | {case} | {shapes} | {dtype} | 20 | {ms:.3f} |"


def _records(tmp_path, *rows: str, hvp_rows: tuple[str, ...] = ()) -> Path:
    path = tmp_path / "RESULTS.md"
    text = f"# Measured\n\n{UNIT_HEADER}\n|---|---|---|---|---|---|---|\n" + "\n".join(rows) + "\n"
    if hvp_rows:
        text += f"\n{HVP_HEADER}\n|---|---|---|---|---|---|---|\n" + "\n".join(hvp_rows) + "\n"
    path.write_text(text)
    return path


PAPER_ROWS = (_unit_row("NVIDIA H200", "noisy", "tinynet w=1 32x32x3, batch 128", NOISY_MS),
              _unit_row("NVIDIA H200", "r2d", "tinynet w=1 32x32x3, micro-batch 1024", R2D_MS))
#: rows of another device, and a tiny check row of the device: read by nothing that prices the H200
IGNORED_ROWS = (_unit_row("NVIDIA A100", "noisy", "tinynet w=1 32x32x3, batch 128", 9.0),
                _unit_row("NVIDIA A100", "r2d", "tinynet w=1 32x32x3, micro-batch 1024", 90.0),
                _unit_row("NVIDIA H200", "noisy tiny", "tinynet w=0.25 8x8x3, batch 16", 1.0))


def _paper(monkeypatch, records: Path) -> WorkflowPlan:
    monkeypatch.setattr(ChunkPricing, "THROUGHPUT_RECORDS", records)
    return WorkflowPlan(validate_config(yaml.safe_load((REPO / "config" / "paper.yaml").read_text()), SCHEMA, read_data=False))


def _priced(plan: WorkflowPlan) -> dict[str, float]:
    return {r["kind"]: r["priced_min"] for r in walltime_rows(plan.config)}


def test_unit_rows_are_read_for_the_device_each_under_its_precision(tmp_path):
    records = _records(tmp_path, *PAPER_ROWS, *IGNORED_ROWS,
                       _unit_row("NVIDIA H200", "noisy", "tinynet w=1 32x32x3, batch 128", 2.0, dtype="bf16"),
                       _unit_row("NVIDIA H200", "r2d", "tinynet w=1 32x32x3, micro-batch 1024", float("nan")).replace("nan", "out of memory"))
    costs = read_unit_costs(records, "H200")
    assert set(costs) == {("noisy", "tinynet w=1", "32x32x3"), ("r2d", "tinynet w=1", "32x32x3"), ("noisy", "tinynet w=1 bf16", "32x32x3")}
    # one batch size: no fixed cost, the row's rate (a unit of 128 images in 4 ms)
    assert costs[("noisy", "tinynet w=1", "32x32x3")].step_s == 0
    assert costs[("noisy", "tinynet w=1", "32x32x3")].seconds(1, 128) == pytest.approx(NOISY_MS / 1e3)
    assert costs[("r2d", "tinynet w=1", "32x32x3")].seconds(1, 1024) == pytest.approx(R2D_MS / 1e3)
    assert read_unit_costs(records, "A100")[("noisy", "tinynet w=1", "32x32x3")].seconds(1, 128) == pytest.approx(9.0 / 1e3)


def test_noisy_and_r2d_rows_price_exactly_model_clipping_and_rewind_to_delete_by_the_measured_amount(tmp_path, monkeypatch):
    """config/paper.yaml on the H200 (no throughput row: every run at 50 TFLOP/s): with the H200's
    noisy and r2d rows, a model-clipping run's T noisy steps and a rewind-to-delete run's
    micro-batches are priced at them instead of at their FLOPs, each run by exactly that
    difference; every other kind keeps its price to the bit, and rows of another device change nothing."""
    without = _priced(_paper(monkeypatch, _records(tmp_path)))
    assert _priced(_paper(monkeypatch, _records(tmp_path, *IGNORED_ROWS))) == without
    plan = _paper(monkeypatch, _records(tmp_path, *PAPER_ROWS, *IGNORED_ROWS))
    with_rows = _priced(plan)
    changed = {kind for kind in without if with_rows[kind] != without[kind]}
    assert changed == {"unlearn model_clipping, tinynet w=1", "unlearn rewind_to_delete, tinynet w=1"}
    cluster = plan.config["cluster"]
    expected = dict.fromkeys(changed, 0.0)
    for group, _, keys in plan.nn.experiment_chunks():
        design = plan.nn.design(plan.nn.design_of(group[0]))
        parts = unlearning_run_work(design, [plan.nn.experiment(e) for e in group])[3]
        flops = model_key(design)[2]
        for name, ms in (("noisy", NOISY_MS), ("r2d", R2D_MS)):
            if name in parts:
                part = parts[name]
                measured = ms / 1e3 * part.examples / (128 if name == "noisy" else 1024)  # the units' rows at the row's rate
                delta = measured - part.images * flops / (cluster["assume_tflops"] * 1e12)
                expected[job_kind(plan, plan.nn.design_of(group[0]), group)] += len(keys) * delta / 60
    for kind in changed:
        assert with_rows[kind] - without[kind] == pytest.approx(expected[kind], rel=1e-9)
        assert expected[kind] > 0  # the rows' costs are above the FLOP estimate at 50 TFLOP/s


def test_the_requested_walltime_of_every_kind_is_its_priced_minutes_times_the_factor_plus_start_up(tmp_path, monkeypatch):
    plan = _paper(monkeypatch, REPO / "benchmarks" / "RESULTS.md")
    rows = {r["kind"]: r for r in walltime_rows(plan.config)}
    assert "unlearn hessian, charlstm h=256" in rows  # the Shakespeare Hessian of Table 1a
    jobs = [(d, len(k), None) for d, _, k in plan.nn.design_chunks()] + [(plan.nn.design_of(g[0]), len(k), g) for g, _, k in plan.nn.experiment_chunks()]
    assert sum(r["jobs"] for r in rows.values()) == len(jobs)
    assert sum(r["requested_min"] for r in rows.values()) == sum(plan.resources.runtime_minutes(d, n, 1, g) for d, n, g in jobs)
    for row in rows.values():
        assert row["factor"] == plan.config["cluster"]["safety_factor"] == 2
        assert row["startup_min"] == 5 * row["jobs"]
        # each job rounds its factor x priced minutes up and adds its start-up (no job here reaches the walltime)
        assert 0 <= row["requested_min"] - (row["factor"] * row["priced_min"] + row["startup_min"]) < row["jobs"]


def test_the_shakespeare_hessian_asks_for_its_lissa_products_at_the_charlstms_rows(tmp_path, monkeypatch):
    """The Hessian method on the paper's CharLSTM (s1·s2 = 3,500 products over minibatches of 256
    windows): with the device's throughput row of the CharLSTM and its Hessian–vector product rows,
    its runs ask for the products at those rows instead of at two training windows each, by
    exactly the difference."""
    lstm = "| 2026-12-08 | NVIDIA H200 | charlstm h=256 | T=80 | 1 | fp32 | 256 | 20000 | 20000 |"
    hvp = tuple(f"| 2026-12-08 | NVIDIA H200 | charlstm h=256 | T=80 | fp32 | {b} | {b / (0.040 + b / 5000):.6f} |" for b in (10, 256))
    records = tmp_path / "RESULTS.md"
    throughput = "| date | device | model | input | K | dtype | batch | images/s (all K) | images/s per model |\n|---|\n" + lstm + "\n"
    records.write_text(throughput + f"\n{HVP_HEADER}\n|---|\n" + "\n".join(hvp) + "\n")
    hessian = "unlearn hessian, charlstm h=256"
    with_hvp = _priced(_paper(monkeypatch, records))[hessian]
    (tmp_path / "lstm.md").write_text(throughput)
    without_hvp = _priced(_paper(monkeypatch, tmp_path / "lstm.md"))[hessian]
    plan = _paper(monkeypatch, records)
    group = next(g for g in plan.nn.unlearn_groups() if g[0] == "shakespeare_hessian")
    runs = sum(len(k) for g, _, k in plan.nn.experiment_chunks() if g == group)
    part = unlearning_run_work(plan.nn.design("shakespeare"), [plan.nn.experiment("shakespeare_hessian")])[3]["hvp"]
    assert (part.units, part.examples) == (3500, 3500 * 256)
    products = part.units * 0.040 + part.examples / 5000  # the rows' fixed cost and rate
    at_steps = part.images / 20000  # the same products as 2 training windows each at the training rate
    assert with_hvp - without_hvp == pytest.approx(runs * (products - at_steps) / 60, rel=1e-9)
    assert with_hvp > 2 * without_hvp


def test_plan_prices_the_parts_at_their_rows_where_recorded(tmp_path):
    """``plan``'s hours: the Hessian method's products at the device's Hessian–vector product rows
    (the default config on the CPU: benchmarks/RESULTS.md's rows for its TinyNet and CharLSTM),
    the rest as without them; without unit costs the hours are those of before."""
    config = validate_config(yaml.safe_load((REPO / "config" / "config.yaml").read_text()), SCHEMA)
    results = REPO / "benchmarks" / "RESULTS.md"
    throughputs = read_throughputs(results, "cpu")
    before = {r["target"]: r for r in plan_rows(config, throughputs)}
    after = {r["target"]: r for r in plan_rows(config, throughputs, unit_costs=read_unit_costs(results, "cpu"))}
    assert after["table7"]["device_hours"] > before["table7"]["device_hours"]  # the Hessian's sigmas: its products cost more than 2 steps
    assert after["figure1b"]["device_hours"] == before["figure1b"]["device_hours"]  # rewind-to-delete: no CPU r2d row
    assert all(after[t]["images"] == before[t]["images"] for t in before)  # the counts are the same
    assert not math.isnan(after["total"]["device_hours"])


def test_the_plan_command_prints_each_kinds_runtime_request(tmp_path):
    rc, stdout, stderr = run_cli("plan", "--configfile", REPO / "config" / "paper.yaml", cwd=tmp_path)
    assert rc == 0, stderr
    lines = stdout.splitlines()
    head = next(i for i, line in enumerate(lines) if line.startswith("kind of job"))
    assert lines[head].split()[-6:] == ["min", "factor", "start-up", "min", "requested", "min"]
    hessian = next(line for line in lines[head:] if line.startswith("unlearn hessian, charlstm h=256 "))
    assert hessian.split()[-3] == "2"  # its factor
    assert any(line.startswith("runtime requests (cluster.runtime_from: cost_model)") for line in lines[head:])


def test_under_runtime_from_config_measured_parts_count_the_training_images_their_seconds_buy(tmp_path, monkeypatch):
    """The default config (runtime_from: config, the CPU's rows): a Hessian run's products count as
    the training images their measured seconds buy at the model's training rate, so the
    Shakespeare Hessian asks for its products at their cost, not at two training windows each;
    without the Hessian–vector product rows its minutes are those of the count alone."""
    from unlearn_audit.pipeline.plan.cost.runs import base_training_images
    from unlearn_audit.pipeline.plan.cost.throughput import read_throughputs

    results = REPO / "benchmarks" / "RESULTS.md"
    config = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
    monkeypatch.setattr(ChunkPricing, "THROUGHPUT_RECORDS", results)
    plan = WorkflowPlan(validate_config(config, SCHEMA, read_data=False))
    design = plan.nn.design("shakespeare")
    work = unlearning_run_work(design, [plan.nn.experiment("shakespeare_hessian")])
    images, parts = work.eval_images, work.eval_parts
    model, inp, _ = model_key(design)
    hvp = read_unit_costs(results, "cpu")[("hvp", model, inp)].seconds(parts["hvp"].units, parts["hvp"].examples)
    measured = images - parts["hvp"].images + hvp * read_throughputs(results, "cpu")[(model, inp, 1)]
    minutes = design["runtime_minutes_per_run"]
    assert plan.pricing.run_minutes("shakespeare", ["shakespeare_hessian"]) == pytest.approx(minutes * measured / base_training_images(design))
    assert measured > 3 * images
    # without the product rows, or for a method without parts, the count alone
    (tmp_path / "rows.md").write_text("\n".join(line for line in results.read_text().splitlines() if "| fp32 | 16 | 110 |" not in line
                                                and "| fp32 | 32 | 178 |" not in line) + "\n")
    monkeypatch.setattr(ChunkPricing, "THROUGHPUT_RECORDS", tmp_path / "rows.md")
    bare = WorkflowPlan(validate_config(config, SCHEMA, read_data=False))
    assert bare.pricing.run_minutes("shakespeare", ["shakespeare_hessian"]) == minutes * images / base_training_images(design)
    for group in (["shakespeare_ida_q1"], ["digits_uniform_retain_finetune"]):
        assert bare.pricing.run_minutes(plan.nn.design_of(group[0]), group) == plan.pricing.run_minutes(plan.nn.design_of(group[0]), group)
