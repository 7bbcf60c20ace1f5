"""Job resources for a cluster (plain Python, no SLURM needed): mem_mb and runtime from each design's
size growing with the attempt, a GPU only for the GPU rules, and the SLURM profile's settings."""

from __future__ import annotations

import re
from pathlib import Path
from types import SimpleNamespace

import pytest
import yaml

from unlearn_audit.pipeline.config import ConfigError, validate_config
from unlearn_audit.pipeline.plan import ResourcesPlan, WorkflowPlan

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
    digits, text = plan.resources.mem_mb("digits_uniform"), plan.resources.mem_mb("shakespeare")
    assert digits == 2000 and text == 2500
    for design in ("digits_uniform", "shakespeare"):
        first = plan.resources.mem_mb(design, 1)
        assert [plan.resources.mem_mb(design, a) for a in (1, 2, 3)] == [first, 2 * first, 3 * first]


def test_cifar_designs_ask_for_more_memory_and_time_than_digits():
    cfg = yaml.safe_load((REPO / "config" / "paper.yaml").read_text())
    plan = WorkflowPlan(validate_config(cfg, SCHEMA))
    cifar = [d for d in plan.config["nn"]["designs"] if plan.nn.design(d)["dataset"] == "cifar100"]
    assert cifar
    assert min(plan.resources.mem_mb(d) for d in cifar) > _plan().resources.mem_mb("digits_uniform")
    assert plan.resources.runtime_minutes("cifar_uniform", 1) > _plan().resources.runtime_minutes("digits_uniform", 1)
    cfg["cluster"]["runtime_from"] = "config"
    assert WorkflowPlan(validate_config(cfg, SCHEMA)).resources.runtime_minutes("cifar_uniform", 1) == 240 + 5


def test_runtime_scales_with_runs_and_attempt():
    plan = _plan()
    assert plan.resources.runtime_minutes("digits_uniform", 25) == 25 + 5
    assert plan.resources.runtime_minutes("digits_uniform", 25, attempt=2) == 2 * (25 + 5)
    assert plan.resources.runtime_minutes("digits_uniform", 50) > plan.resources.runtime_minutes("digits_uniform", 10)


def test_chunk_jobs_request_a_gpu_only_on_cuda():
    cpu, cuda = _plan("cpu").resources.job_resources("digits_uniform", 10), _plan("cuda").resources.job_resources("digits_uniform", 10)
    assert cpu["gpu"] == 0 and "cpus_per_gpu" not in cpu
    assert cuda["gpu"] == 1 and cuda["cpus_per_gpu"] >= 1
    # the CUDA context's host memory comes on top
    assert _call(cuda["mem_mb"], 1) > _call(cpu["mem_mb"], 1)
    for res in (cpu, cuda):
        assert [_call(res["mem_mb"], a) for a in (1, 2)] == [_call(res["mem_mb"], 1), 2 * _call(res["mem_mb"], 1)]
        assert _call(res["runtime"], 1) == 10 + 5 and _call(res["runtime"], 3) == 3 * (10 + 5)


def test_auto_device_requests_no_gpu():
    assert _plan("auto").resources.job_resources("digits_uniform", 3)["gpu"] == 0


def test_step_resources_read_the_design_from_either_wildcard():
    plan = _plan()
    res = plan.resources.step_resources(minutes=15)
    by_design = _call(res["mem_mb"], 1, SimpleNamespace(design="shakespeare"))
    by_experiment = _call(res["mem_mb"], 2, SimpleNamespace(experiment="shakespeare_retain_finetune"))
    assert by_design == plan.resources.mem_mb("shakespeare") and by_experiment == 2 * by_design
    assert _call(res["runtime"], 1) == 15 and _call(res["runtime"], 2) == 30


def test_attempt_resources_grow_linearly():
    res = ResourcesPlan.attempt_resources(mem_mb=1500, runtime=10)
    assert [_call(res["mem_mb"], a) for a in (1, 2, 3)] == [1500, 3000, 4500]
    assert [_call(res["runtime"], a) for a in (1, 2)] == [10, 20]


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda p: p.resources.mem_mb("no_such_design"), "unknown design 'no_such_design'"),
        (lambda p: p.resources.mem_mb("digits_uniform", 0), "attempt must be an integer >= 1"),
        (lambda p: p.resources.runtime_minutes("digits_uniform", 3, attempt=1.5), "attempt must be an integer >= 1"),
        (lambda p: p.resources.job_resources("nope", 3), "unknown design 'nope'"),
        (lambda p: p.resources.attempt_resources(mem_mb=0, runtime=10), "mem_mb must be a positive integer"),
    ],
)
def test_bad_input_gets_one_clear_message(call, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        call(_plan())


def test_every_rule_that_can_go_to_the_cluster_declares_its_resources():
    """A rule without ``localrule: True`` runs as a cluster job: it must name mem_mb and runtime."""
    sources = [REPO / "workflow" / "Snakefile", *sorted((REPO / "workflow" / "rules").glob("*.smk"))]
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


def test_every_cluster_job_without_a_gpu_can_stay_on_the_submitting_host():
    """cluster.cpu_jobs: local reaches every rule that may go to the cluster and never asks for a GPU
    (the rules whose resources are not a training or unlearning chunk's); the chunks never."""
    sources = [REPO / "workflow" / "Snakefile", *sorted((REPO / "workflow" / "rules").glob("*.smk"))]
    cpu_rules, chunk_rules = [], []
    for source in sources:
        for block in re.split(r"^\s*rule\b", source.read_text(), flags=re.MULTILINE)[1:]:
            block = re.split(r"\n(?=\S)", block, maxsplit=1)[0]
            name = block.split(":")[0].strip()
            if "localrule: True" in block or "resources:" not in block:
                continue
            if re.search(r"plan\.resources\.(train|unlearn)_resources", block):
                chunk_rules.append(name)
                assert "localrule:" not in block, name
            else:
                cpu_rules.append(name)
                assert "localrule: plan.resources.cpu_jobs_local()" in block, name
                assert re.search(r"plan\.resources\.(cpu_job_resources|step_resources)", block), name
    assert sorted(chunk_rules) == ["nn_train", "nn_unlearn"]
    assert sorted(cpu_rules) == ["convex_audit", "gaussian_unlearning_audit", "gaussian_unlearning_cell", "nn_fit", "nn_prepare_data"]


def test_cpu_jobs_go_to_their_own_partition_or_stay_local():
    assert _paper().resources.cpu_jobs_local()  # config/paper.yaml: no job without a GPU on a GPU partition
    assert not _plan().resources.cpu_jobs_local()
    split = _paper(cpu_jobs="submit", cpu_partition="cpu-long")
    assert not split.resources.cpu_jobs_local()
    assert split.resources.cpu_job_resources(mem_mb=1500, runtime=10)["slurm_partition"] == "cpu-long"
    assert split.resources.step_resources(minutes=15)["slurm_partition"] == "cpu-long"
    group = split.nn.unlearn_groups()[0]
    assert "slurm_partition" not in split.resources.job_resources(split.nn.design_of(group[0]), 3, group)  # the GPU jobs: the command line's
    assert "slurm_partition" not in _plan().resources.cpu_job_resources(mem_mb=1500, runtime=10)
    typed = _paper(gpu_model="h100")
    assert typed.resources.job_resources(typed.nn.design_of(group[0]), 3, group)["gpu_model"] == "h100"
    assert "gpu_model" not in _paper("cpu", gpu_model="h100").resources.job_resources(typed.nn.design_of(group[0]), 3, group)
    with pytest.raises(ConfigError, match=r"cluster.gpu_model"):
        _paper(gpu_model="h100:2")
    with pytest.raises(ConfigError, match=r"cluster.cpu_partition.*drop cpu_partition, or set cpu_jobs to submit"):
        _paper(cpu_jobs="local", cpu_partition="cpu-long")


def test_no_rule_bundles_jobs_into_group_jobs():
    """A chunk is one cluster job: a group job would ask for the sum of its members' runtimes (or, run
    side by side, their GPUs) and pay a process and a CUDA context per member."""
    for source in [REPO / "workflow" / "Snakefile", *sorted((REPO / "workflow" / "rules").glob("*.smk"))]:
        assert not re.search(r"^\s*group:", source.read_text(), flags=re.MULTILINE), source.name
    assert "group-components" not in PROFILE.read_text()


# ----------------------------------------------------------------------------- runtimes from the cost model
def _paper(device: str = "cuda", **cluster) -> WorkflowPlan:
    cfg = yaml.safe_load((REPO / "config" / "paper.yaml").read_text())
    cfg["device"] = device
    if cluster:
        cfg["cluster"] = cluster
    return WorkflowPlan(validate_config(cfg, SCHEMA))


def test_an_unlearning_run_is_priced_by_its_work_relative_to_a_base_training():
    from unlearn_audit.pipeline.plan.cost.runs import base_training_images, unlearning_run_images

    plan = _paper(runtime_from="config")
    design = plan.nn.design("cifar_uniform")
    train_minutes = plan.pricing.run_minutes("cifar_uniform")
    assert train_minutes == design["runtime_minutes_per_run"] == 240
    for experiment in ("cifar_uniform_retain_finetune", "cifar_uniform_ida_q1", "cifar_uniform_no_unlearning"):
        shared, _, scoring = unlearning_run_images(design, [plan.nn.experiment(experiment)])[0]
        expected = train_minutes * (shared + scoring) / base_training_images(design)
        assert plan.pricing.run_minutes("cifar_uniform", [experiment]) == pytest.approx(expected)
    # retain fine-tuning (5 epochs of D_r) costs more than scoring alone, far less than 100 training epochs
    ft, control = (plan.pricing.run_minutes("cifar_uniform", [e]) for e in ("cifar_uniform_retain_finetune", "cifar_uniform_no_unlearning"))
    assert control < ft < train_minutes / 4
    # experiments sharing their noiseless part (Table 7's sigmas) pay it once and each their scoring
    group = next(g for g in plan.nn.unlearn_groups() if len(g) > 1)
    design = plan.nn.design_of(group[0])
    assert plan.pricing.run_minutes(design, group[:1]) < plan.pricing.run_minutes(design, group) < len(group) * plan.pricing.run_minutes(design, group[:1])


def test_chunks_hold_fewer_runs_where_chunk_size_would_outlast_the_walltime():
    plan = _paper(walltime_minutes=600)
    for group, _, keys in plan.nn.experiment_chunks():
        design = plan.nn.design_of(group[0])
        assert plan.resources.runtime_minutes(design, len(keys), 1, group) <= 600
        assert len(keys) <= plan.nn.design(design)["chunk_size"]
    r2d = next(g for g in plan.nn.unlearn_groups() if g[0] == "cifar_r2d_eps1_uniform")
    per_run = plan.pricing.run_minutes("cifar_r2d_uniform", r2d)
    assert plan.pricing.runs_per_job("cifar_r2d_uniform", r2d) == int((600 - plan.pricing.JOB_OVERHEAD_MINUTES) // per_run) < 10
    # the runs themselves do not change: only which job computes them
    default = _paper()
    runs = lambda p: sorted((tuple(g), key) for g, _, keys in p.nn.experiment_chunks() for key in keys)
    assert runs(plan) == runs(default)
    assert len(plan.nn.experiment_chunks()) > len(default.nn.experiment_chunks())


def test_no_job_of_the_paper_config_asks_for_more_than_the_walltime_or_one_gpu():
    plan = _paper(runtime_from="config")
    jobs = [(d, len(keys), None) for d, _, keys in plan.nn.design_chunks()]
    jobs += [(plan.nn.design_of(g[0]), len(keys), g) for g, _, keys in plan.nn.experiment_chunks()]
    runtimes = [plan.resources.runtime_minutes(d, n, 1, g) for d, n, g in jobs]
    assert max(runtimes) <= plan.pricing.walltime_minutes() == 1440
    assert max(runtimes) > 600  # chunks are filled towards the walltime, not cut to one run
    assert {plan.resources.job_resources(d, n, g)["gpu"] for d, n, g in jobs} == {1}
    # a retry asks for more, up to the walltime
    assert all(plan.resources.runtime_minutes(d, n, 3, g) <= 1440 for d, n, g in jobs)


def _requested_gpu_hours(plan: WorkflowPlan) -> float:
    jobs = [(d, len(keys), None) for d, _, keys in plan.nn.design_chunks()]
    jobs += [(plan.nn.design_of(g[0]), len(keys), g) for g, _, keys in plan.nn.experiment_chunks()]
    return sum(plan.resources.runtime_minutes(d, n, 1, g) for d, n, g in jobs) / 60


def test_runtimes_from_the_cost_model_ask_for_at_most_three_times_what_plan_prices():
    """config/paper.yaml (runtime_from: cost_model): a run asks for safety_factor times its priced
    minutes, and all its jobs together for at most 3x the GPU-hours `plan` prices (the designs'
    runtime_minutes_per_run ask for more than ten times as much)."""
    from unlearn_audit.plan_reports.hours import plan_rows, read_throughputs
    from unlearn_audit.pipeline.plan.cost.runs import base_training_images, base_training_steps
    from unlearn_audit.pipeline.plan.cost.throughput import run_seconds

    plan = _paper()
    cluster = plan.config["cluster"]
    assert cluster["runtime_from"] == "cost_model" and cluster["safety_factor"] == 2
    design = plan.nn.design("cifar_uniform")
    priced = run_seconds(design, base_training_steps(design), base_training_images(design), 1, {}, cluster["assume_tflops"]) / 60
    assert plan.pricing.run_minutes("cifar_uniform") == pytest.approx(2 * priced)
    rows = plan_rows(plan.config, read_throughputs(plan.pricing.THROUGHPUT_RECORDS, cluster["cost_device"]), cluster["assume_tflops"])
    priced_hours = next(r for r in rows if r["target"] == "total")["device_hours"]
    requested = _requested_gpu_hours(plan)
    assert priced_hours < requested <= 3 * priced_hours, (requested, priced_hours)
    assert requested < _requested_gpu_hours(_paper(runtime_from="config")) / 10
    doubled = _paper(runtime_from="cost_model", cost_device="H200", assume_tflops=50, safety_factor=4)
    assert doubled.pricing.run_minutes("cifar_uniform") == pytest.approx(2 * plan.pricing.run_minutes("cifar_uniform"))


def test_a_cost_model_runtime_without_a_price_is_refused_before_any_job():
    from unlearn_audit.pipeline.config import ConfigError

    with pytest.raises(ConfigError, match=r"no throughput row of tinynet w=1 32x32x3 .* on 'no-such-gpu'.*set assume_tflops"):
        _paper(runtime_from="cost_model", cost_device="no-such-gpu")


def test_a_run_longer_than_the_walltime_is_refused_before_any_job():
    from unlearn_audit.pipeline.config import ConfigError

    cfg = yaml.safe_load((REPO / "config" / "paper.yaml").read_text())
    cfg["cluster"] = {"walltime_minutes": 200}
    with pytest.raises(ConfigError) as err:
        validate_config(cfg, SCHEMA)
    message = str(err.value)
    assert "config key 'nn.designs." in message and "more than cluster.walltime_minutes = 200" in message, message
    assert "raise cluster.walltime_minutes" in message


def test_the_example_partition_file_sends_gpu_jobs_to_the_gpu_partition():
    """profiles/slurm/partitions.example.yaml, read and scored by the SLURM plugin itself."""
    from snakemake_executor_plugin_slurm.partitions import get_best_partition, read_partition_file

    class Log:
        def info(self, *a): ...
        def debug(self, *a): ...
        def warning(self, *a): ...

    partitions = read_partition_file(REPO / "profiles" / "slurm" / "partitions.example.yaml")
    plan = _paper()
    group = plan.nn.unlearn_groups()[0]
    design = plan.nn.design_of(group[0])
    gpu_job = {k: _call(v, 1) for k, v in plan.resources.job_resources(design, 10, group).items()}
    cpu_job = {k: _call(v, 1) for k, v in plan.resources.step_resources(minutes=15).items() if k == "runtime"} | {"mem_mb": 2000}

    def job(resources):
        return SimpleNamespace(name="job", resources=SimpleNamespace(get=lambda key, default=None: resources.get(key, default), **resources),
                               threads=1, is_group=lambda: False)

    assert get_best_partition(partitions, job(gpu_job), Log()) == "gpu"
    assert get_best_partition(partitions, job(cpu_job), Log()) == "cpu"
    assert get_best_partition(partitions, job({**gpu_job, "runtime": 5000}), Log()) is None


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
    assert parsed["slurm-logdir"] == str(Path("results") / "logs" / "slurm")  # this test's command line names no config
    assert parsed["slurm-keep-successful-logs"] in ("True", "true", True)
    assert int(parsed["retries"]) >= 1
    assert "slurm-array-jobs" not in parsed


def test_slurm_logs_go_under_the_results_dir_of_the_command_line(monkeypatch, tmp_path):
    from unlearn_audit.pipeline.cluster import results_dir_of

    (tmp_path / "a.yaml").write_text("results_dir: out/a\nzeta: 0.05\n")
    (tmp_path / "b.yaml").write_text("zeta: 0.1\n")
    assert results_dir_of(["snakemake", "--configfile", "a.yaml", "b.yaml", "-n"], tmp_path) == "out/a"
    assert results_dir_of(["snakemake", "--configfile=b.yaml"], tmp_path) == "results"
    assert results_dir_of(["snakemake", "--configfile", "a.yaml", "--config", "results_dir=elsewhere"], tmp_path) == "elsewhere"
    assert results_dir_of(["snakemake", "--configfile", "missing.yaml"], tmp_path) == "results"
    assert results_dir_of(["snakemake"], REPO) == yaml.safe_load((REPO / "config" / "config.yaml").read_text())["results_dir"]
    # the profile itself, loaded for a paper run
    monkeypatch.chdir(REPO)
    monkeypatch.setattr("sys.argv", ["snakemake", "--profile", "profiles/slurm", "--configfile", "config/paper.yaml"])
    paper_results = yaml.safe_load((REPO / "config" / "paper.yaml").read_text())["results_dir"]
    assert _parse_profile(monkeypatch)["slurm-logdir"] == str(Path(paper_results) / "logs" / "slurm")


def test_every_profile_entry_has_a_comment():
    for number, line in enumerate(PROFILE.read_text().splitlines(), 1):
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        assert "#" in line, f"profiles/slurm/config.yaml:{number} has no comment: {line!r}"
