"""Job resources for a cluster (plain Python, no SLURM needed): mem_mb and runtime from each design's
size growing with the attempt, a GPU only for the GPU rules, and the SLURM profile's settings."""

from __future__ import annotations

import re
from pathlib import Path
from types import SimpleNamespace

import pytest
import yaml

from unlearn_audit.pipeline.config import validate_config
from unlearn_audit.pipeline.plan import WorkflowPlan

REPO = Path(__file__).resolve().parents[2]
SCHEMA = REPO / "workflow" / "schemas" / "config.schema.yaml"
PROFILE = REPO / "profiles" / "slurm" / "config.yaml"
ENV_PARTITION, ENV_ACCOUNT = "UNLEARN_AUDIT_SLURM_PARTITION", "UNLEARN_AUDIT_SLURM_ACCOUNT"


def _plan(device: str = "cpu") -> WorkflowPlan:
    cfg = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
    cfg["device"] = device
    return WorkflowPlan(validate_config(cfg, SCHEMA))


def _call(resource, attempt: int, wildcards=None):
    return resource(wildcards or SimpleNamespace(), attempt) if callable(resource) else resource


# ----------------------------------------------------------------------------- resource helpers
def test_memory_follows_the_dataset_and_grows_with_the_attempt():
    plan = _plan()
    digits, text = plan.nn_mem_mb("digits_uniform"), plan.nn_mem_mb("shakespeare")
    assert digits == 2000 and text == 2500
    for design in ("digits_uniform", "shakespeare"):
        first = plan.nn_mem_mb(design, 1)
        assert [plan.nn_mem_mb(design, a) for a in (1, 2, 3)] == [first, 2 * first, 3 * first]


def test_cifar_designs_ask_for_more_memory_and_time_than_digits():
    cfg = yaml.safe_load((REPO / "config" / "paper.yaml").read_text())
    plan = WorkflowPlan(validate_config(cfg, SCHEMA))
    cifar = [d for d in plan.nn["designs"] if plan.nn_design(d)["dataset"] == "cifar100"]
    assert cifar
    assert min(plan.nn_mem_mb(d) for d in cifar) > _plan().nn_mem_mb("digits_uniform")
    assert plan.nn_runtime_minutes("cifar_uniform", 1) == 240 + 5 > _plan().nn_runtime_minutes("digits_uniform", 1)


def test_runtime_scales_with_runs_and_attempt():
    plan = _plan()
    assert plan.nn_runtime_minutes("digits_uniform", 25) == 25 + 5
    assert plan.nn_runtime_minutes("digits_uniform", 25, attempt=2) == 2 * (25 + 5)
    assert plan.nn_runtime_minutes("digits_uniform", 50) > plan.nn_runtime_minutes("digits_uniform", 10)


def test_chunk_jobs_request_a_gpu_only_on_cuda():
    cpu, cuda = _plan("cpu").nn_job_resources("digits_uniform", 10), _plan("cuda").nn_job_resources("digits_uniform", 10)
    assert cpu["gpu"] == 0 and "cpus_per_gpu" not in cpu
    assert cuda["gpu"] == 1 and cuda["cpus_per_gpu"] >= 1
    # the CUDA context's host memory comes on top
    assert _call(cuda["mem_mb"], 1) > _call(cpu["mem_mb"], 1)
    for res in (cpu, cuda):
        assert [_call(res["mem_mb"], a) for a in (1, 2)] == [_call(res["mem_mb"], 1), 2 * _call(res["mem_mb"], 1)]
        assert _call(res["runtime"], 1) == 10 + 5 and _call(res["runtime"], 3) == 3 * (10 + 5)


def test_auto_device_requests_no_gpu():
    assert _plan("auto").nn_job_resources("digits_uniform", 3)["gpu"] == 0


def test_step_resources_read_the_design_from_either_wildcard():
    plan = _plan()
    res = plan.nn_step_resources(minutes=15)
    by_design = _call(res["mem_mb"], 1, SimpleNamespace(design="shakespeare"))
    by_experiment = _call(res["mem_mb"], 2, SimpleNamespace(experiment="shakespeare_retain_finetune"))
    assert by_design == plan.nn_mem_mb("shakespeare") and by_experiment == 2 * by_design
    assert _call(res["runtime"], 1) == 15 and _call(res["runtime"], 2) == 30


def test_attempt_resources_grow_linearly():
    res = WorkflowPlan.attempt_resources(mem_mb=1500, runtime=10)
    assert [_call(res["mem_mb"], a) for a in (1, 2, 3)] == [1500, 3000, 4500]
    assert [_call(res["runtime"], a) for a in (1, 2)] == [10, 20]


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda p: p.nn_mem_mb("no_such_design"), "unknown design 'no_such_design'"),
        (lambda p: p.nn_mem_mb("digits_uniform", 0), "attempt must be an integer >= 1"),
        (lambda p: p.nn_runtime_minutes("digits_uniform", 3, attempt=1.5), "attempt must be an integer >= 1"),
        (lambda p: p.nn_job_resources("nope", 3), "unknown design 'nope'"),
        (lambda p: p.attempt_resources(mem_mb=0, runtime=10), "mem_mb must be a positive integer"),
    ],
)
def test_bad_input_gets_one_clear_message(call, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        call(_plan())


def test_every_rule_that_can_go_to_the_cluster_declares_its_resources():
    """A rule without ``localrule: True`` runs as a cluster job: it must name mem_mb and runtime."""
    sources = [REPO / "Snakefile", *sorted((REPO / "workflow" / "rules").glob("*.smk"))]
    checked = 0
    for source in sources:
        blocks = re.split(r"^\s*rule\b", source.read_text(), flags=re.MULTILINE)[1:]
        for block in blocks:
            block = re.split(r"\n(?=\S)", block, maxsplit=1)[0]  # up to the next unindented line
            if "localrule: True" in block or not re.search(r"^\s*(script|shell|run):", block, flags=re.MULTILINE):
                continue  # a local rule, or one without a job (rule all)
            checked += 1
            assert "resources:" in block, f"{source.name}: a cluster rule without resources:\n{block[:300]}"
    assert checked >= 7


def test_unlearning_jobs_form_one_group():
    text = (REPO / "workflow" / "rules" / "nn.smk").read_text()
    unlearn = text[text.index('name:\n            f"nn_unlearn_'):]
    assert re.search(r'group:\s*\n\s*"nn_unlearn"', unlearn[:3000])


# ----------------------------------------------------------------------------- the SLURM profile
def _parse_profile(monkeypatch, **env) -> dict:
    from snakemake.profiles import ProfileConfigFileParser

    for name in (ENV_PARTITION, ENV_ACCOUNT):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    with PROFILE.open() as stream:
        return dict(ProfileConfigFileParser().parse(stream))


def test_profile_hard_codes_no_partition_or_account(monkeypatch):
    parsed = _parse_profile(monkeypatch)
    assert "default-resources" not in parsed
    assert "slurm_partition" not in PROFILE.read_text().split("default-resources")[0]


def test_profile_takes_partition_and_account_from_the_environment(monkeypatch):
    parsed = _parse_profile(monkeypatch, **{ENV_PARTITION: "gpu-short", ENV_ACCOUNT: "proj42"})
    assert parsed["default-resources"] == ["slurm_partition=gpu-short", "slurm_account=proj42"]
    only = _parse_profile(monkeypatch, **{ENV_ACCOUNT: "proj42"})
    assert only["default-resources"] == ["slurm_account=proj42"]


def test_profile_settings(monkeypatch):
    parsed = _parse_profile(monkeypatch)
    assert parsed["executor"] == "slurm"
    # the plugin's status query (sacct where accounting answers): a finished job that has left squeue
    # cannot hang the run; the localhost cluster of the tests, without slurmdbd, passes squeue itself
    assert "slurm-status-command" not in parsed
    assert parsed["slurm-logdir"] == "results/logs/slurm"
    assert parsed["slurm-keep-successful-logs"] in ("True", "true", True)
    assert int(parsed["retries"]) >= 1
    assert any(entry.startswith("nn_unlearn=") for entry in parsed["group-components"])
    assert "slurm-array-jobs" not in parsed  # arrays cannot hold group jobs


def test_every_profile_entry_has_a_comment():
    for number, line in enumerate(PROFILE.read_text().splitlines(), 1):
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        assert "#" in line, f"profiles/slurm/config.yaml:{number} has no comment: {line!r}"
