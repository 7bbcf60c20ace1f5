"""config/tofu.yaml, TOFU at its authors' scale for GPUs (docs/configuration.md#tofu-on-a-gpu-cluster):
``unlearn-audit plan`` prices it before anything is downloaded, and its dry run through
profiles/slurm asks every GPU job for one GPU, the memory of Llama-3.2-1B's weights and a runtime
within the walltime, at most 3.5x the GPU-hours ``plan`` prices (a safety factor of 2, every run
of a chunk asking for an evaluation run's time, which decodes and scores TOFU's metrics, and 5
minutes of start-up a job).  The dry run reads a TOFU-shaped
stand-in of full.json (200 authors of 20 generated pairs, TOFU's layout) and of its two perturbed
files (alternative answers of authors 180-199 and 0-19) with the character tokenizer: neither TOFU nor Llama's tokenizer can be downloaded in the tests."""

from __future__ import annotations

import copy
import json
import re

import pytest
import yaml

from cli_runner import run_cli
from unlearn_audit.pipeline.config import validate_config
from unlearn_audit.plan_reports.hours import plan_rows
from unlearn_audit.language_model_shapes import lm_host_mem_mb, lm_shape
from unlearn_audit.pipeline.plan.resources import ResourcesPlan
from workflow_utils import REPO, load_config, planned_jobs, snakemake

pytestmark = pytest.mark.workflow

TOFU = REPO / "config" / "tofu.yaml"
SCHEMA = REPO / "workflow" / "schemas" / "config.schema.yaml"
GPU_RULES = ("nn_train", "nn_train_retrain", "nn_unlearn")


def _priced_hours() -> float:
    config = validate_config(copy.deepcopy(load_config(TOFU)), SCHEMA, read_data=False)
    total = next(r for r in plan_rows(config, {}, config["cluster"]["assume_tflops"]) if r["target"] == "total")
    return total


def test_plan_prices_the_tofu_config_before_its_data_are_downloaded(tmp_path):
    rc, stdout, stderr = run_cli("plan", "--configfile", TOFU, cwd=tmp_path)  # no resources/ here: nothing downloaded
    assert rc == 0, stderr
    total = _priced_hours()
    design = load_config(TOFU)["nn"]["designs"]["tofu_llama"]
    # per design (author-level and per-pair): 30 base trainings and the Retrain control's model; 7 kinds of
    # run (5 methods, 2 controls) x 30
    assert (total["base_trainings"], total["unlearning_runs"]) == (2 * 31, 2 * 210)
    flops = lm_shape(design["model"]["params"]).training_flops(design["dataset_params"]["max_length"])
    assert total["device_hours"] == pytest.approx(total["images"] * flops / 100e12 / 3600)
    line = next(line for line in stdout.splitlines() if line.startswith("total"))
    assert f"{total['device_hours']:,.2f} (estimate)" in line and "hours on A100" in stdout.splitlines()[0]
    assert "assumed 100 TFLOP/s" in stdout
    # beside the estimate, what the authors measured (a config that reads no TOFU file is not compared with it)
    assert "authors report 16.5 A100-80GB hours for one 30-run TOFU design with 3 methods and 17.8 with 5" in stdout
    assert "authors report" not in run_cli("plan", "--configfile", REPO / "config" / "llm.yaml", cwd=tmp_path)[1]
    docs = (REPO / "docs" / "configuration.md").read_text()
    assert f"prices it at {total['device_hours']:.2f} A100-hours" in docs  # the number the docs quote


def _resources(proc) -> list[tuple[str, dict[str, str]]]:
    """(rule, resources) of every job a dry run printed."""
    out: list[tuple[str, dict[str, str]]] = []
    for line in (proc.stdout + "\n" + proc.stderr).splitlines():
        found = re.match(r"^\s*(?:local)?rule (\S+):$", line)
        if found:
            out.append((found.group(1), {}))
        elif out and line.strip().startswith("resources: "):
            out[-1][1].update(item.split("=", 1) for item in line.strip()[len("resources: "):].split(", "))
    return out


def test_the_tofu_dry_run_through_the_slurm_profile_asks_for_what_its_jobs_need(tmp_path):
    (tmp_path / "resources" / "tofu").mkdir(parents=True)
    rows = [{"question": f"Where did author {a} write book {k}?", "answer": f"Author {a} wrote book {k} in town {(a * k) % 17}."}
            for a in range(200) for k in range(20)]
    (tmp_path / "resources" / "tofu" / "full.json").write_text("".join(json.dumps(r) + "\n" for r in rows))
    # TOFU's perturbed files: alternative answers of authors 180-199 (forget10) and of 0-19 (retain)
    for name, authors in (("forget10_perturbed.json", range(180, 200)), ("retain_perturbed.json", range(20))):
        alt = [{**rows[20 * a + k], "paraphrased_answer": f"In town {(a * k) % 17}, author {a} wrote book {k}.",
                "perturbed_answer": [f"In town {(a * k + j) % 17 + 17}, author {a} wrote book {k}." for j in range(5)]}
               for a in authors for k in range(20)]
        (tmp_path / "resources" / "tofu" / name).write_text("".join(json.dumps(r) + "\n" for r in alt))
    cfg = load_config(TOFU)
    for design in cfg["nn"]["designs"].values():
        design["dataset_params"]["tokenizer"] = "char"
    (tmp_path / "tofu.yaml").write_text(yaml.safe_dump(cfg, sort_keys=False))
    proc = snakemake(tmp_path, tmp_path / "tofu.yaml", "-n", "--profile", "profiles/slurm")
    assert proc.returncode == 0, proc.stderr[-3000:]
    jobs = _resources(proc)
    gpu_jobs = [(rule, res) for rule, res in jobs if rule in GPU_RULES]
    assert {rule for rule, _ in gpu_jobs} == set(GPU_RULES)
    assert planned_jobs(proc)["nn_unlearn"] == len([r for r, _ in gpu_jobs if r == "nn_unlearn"])
    model_mb = lm_host_mem_mb(cfg["nn"]["designs"]["tofu_llama"]["model"]["params"])
    assert model_mb > 14_000  # three fp32 copies of 1.24 B weights
    for rule, res in gpu_jobs:
        assert res["gpu"] == "1" and 0 < int(res["runtime"]) <= 1440, (rule, res)
        assert int(res["mem_mb"]) == ResourcesPlan.BASE_MEM_MB + 500 + ResourcesPlan.CUDA_MEM_MB + model_mb, (rule, res)
    # the jobs that need no GPU ask for none, nor for the memory of a model they do not load
    assert all(res.get("gpu", "0") == "0" and int(res.get("mem_mb", 0)) < model_mb for rule, res in jobs if rule not in GPU_RULES)
    requested = sum(int(res["runtime"]) for _, res in gpu_jobs) / 60
    priced = _priced_hours()["device_hours"]
    assert priced < requested <= 3.5 * priced, (requested, priced)
