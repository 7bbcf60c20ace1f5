"""benchmarks/gpu.sh, the prepared check for a GPU, as far as a CPU checks it: the script parses,
its header lists exactly the steps it runs (the workflow's own smoke run on the device first), every
step has its own time limit and the steps fit the 8-minute budget, and the cases it times (benchmarks/gpu_cases.py, benchmarks/workflow_loop.py)
run at tiny shapes and append their rows as they finish.  ``bash benchmarks/gpu.sh --dry-run``
runs every step on the CPU (about a minute; not part of the suite)."""

from __future__ import annotations

import math
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from unlearn_audit.pipeline.plan.cost.throughput import model_key, read_hvp_costs, read_step_costs

REPO = Path(__file__).resolve().parents[1]
SCRIPT = REPO / "benchmarks" / "gpu.sh"


def _steps() -> list[tuple[str, int]]:
    return [(m.group(1), int(m.group(2))) for m in re.finditer(r"^step ([\w-]+) +(\d+) ", SCRIPT.read_text(), flags=re.MULTILINE)]


def test_the_script_parses_and_lists_its_steps():
    assert subprocess.run(["bash", "-n", str(SCRIPT)], capture_output=True).returncode == 0
    steps = _steps()
    listed = re.findall(r"^# +\d+ ([\w-]+) ", SCRIPT.read_text(), flags=re.MULTILINE)
    assert [name for name, _ in steps] == listed
    assert [name for name, _ in steps[:3]] == ["smoke", "cuda-tests", "loop-k1"]  # most decisive first: the workflow itself
    assert sum(limit for _, limit in steps) <= 480 and steps[0][1] <= 120 and all(limit <= 60 for _, limit in steps[1:])
    usage = subprocess.run(["bash", str(SCRIPT), "--no-such-flag"], capture_output=True, text=True)
    assert usage.returncode == 2 and "--dry-run" in usage.stderr


def _gpu_cases():
    """benchmarks/gpu_cases.py as a module (it imports its neighbour throughput.py)."""
    sys.path.insert(0, str(REPO / "benchmarks"))
    try:
        import gpu_cases
    finally:
        sys.path.remove(str(REPO / "benchmarks"))
    return gpu_cases


def _run(*args: str) -> str:
    proc = subprocess.run([sys.executable, *args], capture_output=True, text=True, cwd=REPO, timeout=120)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc.stdout


def test_each_case_runs_and_appends_its_row(tmp_path):
    results = tmp_path / "RESULTS.md"
    results.write_text("# Measured\n\nprose before\n")
    _run("benchmarks/gpu_cases.py", "noisy", "r2d", "lstm", "lissa", "lissa-lstm", "lm", "decode", "--tiny", "--units", "2", "--append", str(results))
    rows = [line.split(" | ") for line in results.read_text().splitlines() if " tiny | " in line]
    assert [r[2] for r in rows] == ["noisy tiny", "r2d tiny", "lstm tiny", "lissa tiny", "lissa-lstm tiny", "lm tiny", "decode tiny"]
    # the language model's throughput row (sequences/s), read as the cost model reads a step's cost
    lm = read_step_costs(results, "cpu")[("causal_lm llama d=64 L=2", "T=16", 1)]
    assert lm.images_per_s > 0
    assert all(float(r[-1].rstrip(" |")) >= 0 for r in rows)
    _run("benchmarks/gpu_cases.py", "lissa", "lissa-lstm", "--tiny", "--units", "2", "--hvp-batch", "4", "8", "--append", str(results))
    hvp = read_hvp_costs(results, "cpu")  # the Hessian-vector product rows the cost model prices the Hessian method at
    assert set(hvp) == {("tinynet w=0.25", "8x8x3"), ("charlstm h=16", "T=12")}
    assert all(c.images_per_s > 0 and c.step_s >= 0 for c in hvp.values())
    _run("benchmarks/workflow_loop.py", "--k", "1", "2", "--width", "0.25", "--size", "8", "--classes", "10", "--batch", "16",
         "--steps", "4", "--append", str(results))
    loop = [line for line in results.read_text().splitlines() if "| 8x8x3 |" in line and line.count("|") == 10]  # the throughput rows
    assert [line.split(" | ")[4] for line in loop] == ["1", "2"]
    assert results.read_text().startswith("# Measured\n\nprose before\n")


def test_the_lm_case_measures_the_model_the_tofu_design_is_priced_for():
    """gpu.sh's ``lm`` row (bf16, config/tofu.yaml's model and sequences) is the row ``plan`` prices
    config/tofu.yaml's design at: the same model label, precision and input."""
    gpu_cases = _gpu_cases()
    from unlearn_audit.language_model_shapes import lm_label

    shapes = gpu_cases._shapes(False)
    design = yaml.safe_load((REPO / "config" / "tofu.yaml").read_text())["nn"]["designs"]["tofu_llama"]
    assert design["precision"] == "bf16" and shapes["sequences"] == design["train"]["batch_size"] == 32
    assert (f"{lm_label(shapes['lm'])} bf16", f"T={shapes['tokens']}") == model_key(design)[:2] == ("causal_lm meta-llama/Llama-3.2-1B bf16", "T=256")
    assert "--dtype bf16" in next(line for line in SCRIPT.read_text().splitlines() if line.startswith("step lm "))


def test_the_lm_case_measures_any_language_model_design_and_plan_prices_config_llm_at_its_rows():
    """``gpu_cases.py lm --design config/llm.yaml:qa_gpt2``: that design's GPT-2, sequences and
    optimizer, under the label ``plan`` prices the design at; benchmarks/RESULTS.md holds its CPU rows
    at two batch sizes, so that ``plan`` prices config/llm.yaml from a measurement, not an estimate."""
    from unlearn_audit.plan_reports.hours import plan_rows, read_throughputs
    from unlearn_audit.pipeline.config import validate_config

    gpu_cases = _gpu_cases()
    from unlearn_audit.language_model_shapes import lm_label

    config = yaml.safe_load((REPO / "config" / "llm.yaml").read_text())
    design = config["nn"]["designs"]["qa_gpt2"]
    shapes = gpu_cases._shapes(False, design="config/llm.yaml:qa_gpt2")
    assert (shapes["tokens"], shapes["sequences"], shapes["optimizer"]) == (112, 32, design["train"].get("optimizer", "sgd")) == (112, 32, "adamw")
    assert (lm_label(shapes["lm"]), f"T={shapes['tokens']}") == model_key(design)[:2]
    costs = read_step_costs(REPO / "benchmarks" / "RESULTS.md", "AMD EPYC")
    assert (*model_key(design)[:2], 1) in costs
    total = next(r for r in plan_rows(validate_config(config, REPO / "workflow" / "schemas" / "config.schema.yaml", read_data=False),
                                      read_throughputs(REPO / "benchmarks" / "RESULTS.md", "AMD EPYC")) if r["target"] == "total")
    assert math.isfinite(total["device_hours"]) and not total["estimate"]


def test_a_decode_row_prices_an_evaluation_runs_greedy_decoding_of_its_design(tmp_path):
    """``gpu_cases.py decode --design config/llm.yaml:qa_gpt2``'s shapes name the model and input the
    design is priced under; its rows at two batches give the cost model a token step's fixed cost
    and rate, at which an evaluation run's ``decode`` part (the TOFU metrics' greedy answers) is
    priced in place of the training rows' forward-pass share."""
    from unlearn_audit.pipeline.plan.cost.runs import unlearning_run_work
    from unlearn_audit.pipeline.plan.cost.throughput import priced_parts, read_unit_costs
    from unlearn_audit.pipeline.plan import WorkflowPlan
    from unlearn_audit.pipeline.config import validate_config

    gpu_cases = _gpu_cases()
    config = validate_config(yaml.safe_load((REPO / "config" / "llm.yaml").read_text()), REPO / "workflow" / "schemas" / "config.schema.yaml",
                             read_data=False)
    design = config["nn"]["designs"]["qa_gpt2"]
    shapes = gpu_cases._shapes(False, design="config/llm.yaml:qa_gpt2")
    run, label = gpu_cases.case_timer("decode", 2, shapes | {"sequences": 8}, __import__("torch").device("cpu"))
    run(1)  # greedy steps of the design's model run
    rows = [f"| 2026-12-07 | cpu (test) | decode | {label.replace('batch 8', f'batch {b}')} | fp32 | 20 | {ms} |" for b, ms in ((8, 4.0), (64, 11.0))]
    results = tmp_path / "RESULTS.md"
    results.write_text(gpu_cases.UNIT_HEADER + "\n|---|---|---|---|---|---|---|\n" + "\n".join(rows) + "\n")
    cost = read_unit_costs(results, "cpu")[("decode", *model_key(design)[:2])]
    assert cost.step_s == pytest.approx(3.0e-3) and cost.seconds(10, 640) == pytest.approx(10 * 3.0e-3 + 640 * 1.0e-3 / 8)
    plan = WorkflowPlan(config)
    group = next(g for g in plan.nn.unlearn_groups() if plan.nn.experiment(g[0])["method"] == "npo")
    work = unlearning_run_work(design, [plan.nn.experiment(e) for e in group])
    decode = work.eval_parts["decode"]
    assert "decode" not in work.parts and work.eval_steps == pytest.approx(work.steps + decode.steps)
    steps, images, seconds = priced_parts(design, work.eval_parts, read_unit_costs(results, "cpu"))
    assert (steps, images) == (decode.steps, decode.images) and seconds == pytest.approx(cost.seconds(decode.units, decode.examples))
