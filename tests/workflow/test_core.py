"""The workflow's skeleton: the default config plans every table (with torch not importable), lint
is clean, and a bad config stops Snakemake with one line (the paper's DAG: test_paper.py; a
finished run schedules nothing: test_shared_run.py)."""

import os
import subprocess
import sys

import pytest

from workflow_utils import planned_jobs, planned_wildcards, snakemake, write_config

EVERY_TABLE = [
    "attainable_bounds", "table1a", "table1b", "table2a", "table2b", "table3", "table4", "table5", "table7",
    "gaussian_unlearning_slopes", "gaussian_unlearning_audit",
]


def _missing_tables(proc) -> list[str]:
    planned = proc.stdout + proc.stderr
    return [t for t in EVERY_TABLE if f"/tables/{t}.csv" not in planned]


def test_dry_run_of_the_default_config_plans_every_table_with_torch_not_importable(tmp_path):
    """Parsing the Snakefile and planning the DAG import no torch (a dry run works where torch is
    not installed), and the default config plans every table."""
    blocker = tmp_path / "block"
    (blocker / "torch").mkdir(parents=True)
    (blocker / "torch" / "__init__.py").write_text("raise ImportError('torch is blocked in this test')\n")
    check = subprocess.run([sys.executable, "-c", "import torch"], env=dict(os.environ, PYTHONPATH=str(blocker)), capture_output=True, text=True)
    assert check.returncode != 0 and "blocked" in check.stderr
    proc = snakemake(tmp_path, write_config(tmp_path), "-n", pythonpath=str(blocker))
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "attainable_bounds" in planned_jobs(proc)
    assert {"design": "digits_uniform", "chunk": "calib0-29_eval0-9"} in planned_wildcards(proc, "nn_train")
    assert not _missing_tables(proc)
    summary = [line for line in proc.stderr.splitlines() if line.startswith("unlearn-audit: config ")]
    assert len(summary) == 1 and "sections enabled: perfect_prediction, convex, gaussian_unlearning, nn (" in summary[0]


def test_lint_is_clean(tmp_path):
    proc = snakemake(tmp_path, write_config(tmp_path), "--lint")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "Congratulations" in proc.stdout + proc.stderr


def test_a_bad_config_stops_snakemake_with_one_line_before_any_job(tmp_path):
    """What validate_config refuses (tests/pipeline/test_config.py has the messages) reaches the
    user as one ``Error: config key ...`` line, a non-zero exit and no traceback."""
    proc = snakemake(tmp_path, write_config(tmp_path, overrides={"zeta": 1.5}), "-n")
    assert proc.returncode != 0
    errors = [line for line in proc.stderr.splitlines() if line.startswith("Error")]
    assert errors == ["Error: config key 'zeta': 1.5 is greater than or equal to the maximum of 1"], proc.stderr
    assert "Traceback" not in proc.stderr and not (tmp_path / "results").exists()


def test_a_key_given_twice_stops_snakemake_with_one_line(tmp_path):
    config = tmp_path / "twice.yaml"
    config.write_text("results_dir: results\nzeta: 0.05\nzeta: 0.1\n")
    proc = snakemake(tmp_path, config, "-n")
    errors = [line for line in proc.stderr.splitlines() if line.startswith("Error")]
    assert proc.returncode != 0 and len(errors) == 1 and "key 'zeta' appears twice" in errors[0] and "line 3" in errors[0], proc.stderr
    assert "Traceback" not in proc.stderr


def test_a_local_run_asking_for_more_gpu_jobs_than_gpu_slots_stops_with_one_line(tmp_path, monkeypatch):
    """``--resources gpu=N`` above devices × UNLEARN_AUDIT_JOBS_PER_GPU would leave jobs waiting for a
    slot while holding Snakemake's: refused before any job; at the slots' number the run plans."""
    monkeypatch.setenv("UNLEARN_AUDIT_GPUS", "1")
    monkeypatch.setenv("UNLEARN_AUDIT_JOBS_PER_GPU", "2")
    config = write_config(tmp_path, overrides={"device": "cuda"})
    proc = snakemake(tmp_path, config, "-n", "--resources", "gpu=3")
    errors = [line for line in proc.stderr.splitlines() if line.startswith("Error")]
    assert proc.returncode != 0 and len(errors) == 1, proc.stderr[-2000:]
    assert "--resources gpu=3" in errors[0] and "2 GPU slot(s)" in errors[0] and "give --resources gpu=2" in errors[0]
    assert "Traceback" not in proc.stderr
    assert snakemake(tmp_path, config, "-n", "--resources", "gpu=2").returncode == 0


def test_a_local_cuda_run_without_a_gpu_stops_with_one_line_before_any_job(tmp_path, monkeypatch):
    """device: cuda where this machine shows no GPU: a run stops before its first job with one line
    and the fix; a dry run (planning the paper's DAG on a laptop) still plans."""
    from unlearn_audit.pipeline.runtime import visible_gpu_count

    if visible_gpu_count():
        pytest.skip("this machine has a GPU: a cuda run is possible here")
    for var in ("UNLEARN_AUDIT_GPUS", "CUDA_VISIBLE_DEVICES"):
        monkeypatch.delenv(var, raising=False)
    config = write_config(tmp_path, overrides={"device": "cuda"})
    proc = snakemake(tmp_path, config)
    errors = [line for line in proc.stderr.splitlines() if line.startswith("Error")]
    assert proc.returncode != 0 and len(errors) == 1, proc.stderr[-2000:]
    assert "no NVIDIA GPU" in errors[0] and "device: cpu or auto" in errors[0]
    assert not (tmp_path / "results").exists() or not any((tmp_path / "results").rglob("*.parquet"))
    assert snakemake(tmp_path, config, "-n").returncode == 0
