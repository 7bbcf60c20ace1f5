"""unlearn-audit plan --check: the cost model's seconds beside a finished run's benchmark files, per
kind of job, on benchmark files written with known seconds (a kind made slower by a known factor
shows that factor; the start-up calibrated on the controls is the one they were written with)."""

from __future__ import annotations

import math

import pytest
import yaml

from unlearn_audit.cli import main
from unlearn_audit.pipeline.config import validate_config
from unlearn_audit.plan_reports.check import _jobs, check_kinds, format_check
from unlearn_audit.pipeline.plan import WorkflowPlan
from unlearn_audit.pipeline.plan.cost.throughput import StepCost
from workflow_utils import REPO

SCHEMA = REPO / "workflow" / "schemas" / "config.schema.yaml"
RATES = {("tinynet w=0.25", "8x8x1", 1): StepCost(0.001, 10_000.0), ("tinynet w=0.25", "8x8x1", 4): StepCost(0.0005, 20_000.0),
         ("charlstm h=64", "T=80", 1): StepCost(0.002, 2_000.0)}
STARTUP = 4.0
SLOWER = {"unlearn ida, tinynet w=0.25": 2.0, "train charlstm h=64": 1.2}


def _config() -> dict:
    return validate_config(yaml.safe_load((REPO / "config" / "config.yaml").read_text()), SCHEMA)


def _write_run(tmp_path, config) -> None:
    """Every chunk job's benchmark file, each taking its predicted seconds times its kind's factor."""
    empty = tmp_path / "empty"
    (empty / "benchmarks").mkdir(parents=True)
    plan = WorkflowPlan(config)
    paths = [(d, c, tmp_path / "run" / "benchmarks" / "nn" / d / f"train_{c}.tsv") for d, c, _ in plan.nn.design_chunks()]
    paths += [(g[0], c, tmp_path / "run" / "benchmarks" / g[0] / f"unlearn_{c}.tsv") for g, c, _ in plan.nn.experiment_chunks()]
    for _, _, path in paths:  # first: every file, so that _jobs sees each job
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("s\th:m:s\n1.0\t0:00:01\n")
    for job, (_, _, path) in zip(_jobs(config, tmp_path / "run" / "benchmarks", RATES), paths):
        seconds = (STARTUP + job.run_s) * SLOWER.get(job.kind, 1.0)
        path.write_text(f"s\th:m:s\n{seconds}\t0:00:00\n")


def test_each_kind_shows_how_far_it_is_from_its_prediction(tmp_path):
    config = _config()
    _write_run(tmp_path, config)
    rows, startup = check_kinds(config, tmp_path / "run", RATES)
    assert startup == pytest.approx(STARTUP)
    by_kind = {r.kind: r for r in rows}
    assert {"train tinynet w=0.25", "train charlstm h=64", "unlearn ida, tinynet w=0.25", "unlearn ida, charlstm h=64",
            "unlearn hessian, tinynet w=0.25", "control No unlearning, tinynet w=0.25", "control Retrain, charlstm h=64"} <= set(by_kind)
    for kind, row in by_kind.items():
        assert row.ratio == pytest.approx(SLOWER.get(kind, 1.0)), kind
    assert not by_kind["unlearn ida, tinynet w=0.25"].within() and by_kind["train charlstm h=64"].within()
    text = format_check(rows, "cpu", startup, calibrated=True)
    assert "outside: unlearn ida, tinynet w=0.25" in text and "(calibrated the start-up)" in text
    controls = sum(1 for r in rows if r.kind.startswith("control "))
    assert f"{len(rows) - controls - 1} of {len(rows) - controls} kinds checked within 1.3x" in text  # the controls calibrated it


def test_a_model_without_a_rate_is_not_priced_and_a_given_startup_is_used(tmp_path):
    config = _config()
    _write_run(tmp_path, config)
    rates = {k: v for k, v in RATES.items() if k[0] != "charlstm h=64"}
    rows, startup = check_kinds(config, tmp_path / "run", rates, startup_s=1.0)
    assert startup == 1.0
    lstm = next(r for r in rows if r.kind == "train charlstm h=64")
    assert math.isnan(lstm.predicted_s)
    assert "not priced (no throughput row for their model on this device): " in format_check(rows, "cpu", 1.0, False)
    assert all(math.isnan(r.predicted_s) == ("charlstm" in r.kind) for r in rows)


def test_the_cli_says_what_is_wrong(tmp_path, capsys):
    (tmp_path / "empty" / "benchmarks").mkdir(parents=True)
    assert main(["plan", "--check", str(tmp_path / "nowhere")]) == 2
    assert "no benchmarks/ folder there" in capsys.readouterr().err
    assert main(["plan", "--check", str(tmp_path / "empty")]) == 2
    assert "give the config(s) the run used (--configfile)" in capsys.readouterr().err
    assert main(["plan", "--check", str(tmp_path / "empty"), "--startup-s", "-1"]) == 2
    assert "--startup-s must be seconds >= 0" in capsys.readouterr().err


def test_a_machine_slower_by_the_reference_jobs_factor_reads_as_the_same_check(tmp_path):
    """Every job written 1.6x slower (a slower day of the machine): unnormalised, every kind reads 1.6x
    off; normalised by the reference job's images/s (1.6x fewer than its row's), the ratios are the
    run's own again, SLOWER's kinds their factors and the rest 1."""
    config = _config()
    _write_run(tmp_path, config)
    for tsv in (tmp_path / "run" / "benchmarks").rglob("*.tsv"):
        seconds = float(tsv.read_text().splitlines()[1].split("\t")[0])
        tsv.write_text(f"s\th:m:s\n{seconds * 1.6}\t0:00:00\n")
    slow, _ = check_kinds(config, tmp_path / "run", RATES, startup_s=STARTUP)
    assert all(r.ratio == pytest.approx(1.6 * SLOWER.get(r.kind, 1.0)) for r in slow)
    normalised, _ = check_kinds(config, tmp_path / "run", RATES, startup_s=STARTUP, speed=1 / 1.6)
    assert all(r.ratio == pytest.approx(SLOWER.get(r.kind, 1.0)) for r in normalised)
    text = format_check(normalised, "cpu", STARTUP, False, reference=(10_000.0, 16_000.0))
    assert "normalised by the reference job: 10,000 images/s beside the run against 16,000" in text


def test_the_reference_rate_is_the_reference_jobs_own_row_and_the_cli_checks_it(tmp_path, capsys):
    from unlearn_audit.pipeline.plan.cost.throughput import reference_rate

    results = tmp_path / "RESULTS.md"
    results.write_text("| date | device | model | input | K | dtype | batch | images/s (all K) | images/s per model |\n"
                       "|---|---|---|---|---|---|---|---|---|\n"
                       "| 2026-12-01 | cpu (X, 1 threads) | tinynet w=0.25 | 8x8x1 | 1 | fp32 | 64 | 12000 | 12000 |\n"
                       "| 2026-12-01 | cpu (X, 1 threads) | tinynet w=0.25 | 8x8x1 | 1 | fp32 | 8 | 4000 | 4000 |\n"
                       "| 2026-12-01 | cpu (X, 1 threads) | tinynet w=0.25 | 8x8x1 | 5 | fp32 | 64 | 20000 | 4000 |\n"
                       "| 2026-12-02 | cpu (X, 1 threads) | tinynet w=0.25 | 8x8x1 | 1 | fp32 | 64 | 16000 | 16000 |\n")
    assert reference_rate(results, "cpu") == 16000.0 and reference_rate(results, "H100") is None
    (tmp_path / "run" / "benchmarks").mkdir(parents=True)
    assert main(["plan", "--check", str(tmp_path / "run"), "--results", str(results), "--reference-img-s", "0"]) == 2
    assert "--reference-img-s must be images/s > 0" in capsys.readouterr().err
    assert main(["plan", "--check", str(tmp_path / "run"), "--results", str(results), "--device", "H100", "--reference-img-s", "9000"]) == 2
    assert "has no 'H100' row of the reference job's case" in capsys.readouterr().err


def test_a_job_that_trains_is_predicted_with_its_first_training_steps_import(tmp_path, monkeypatch):
    """The controls that calibrate the start-up only score, the Hessian method and rewind-to-delete
    take no training step; every other job (base trainings, the fine-tuning methods, the baselines)
    imports torch._dynamo at its first one: TRAINING_IMPORT_S more in its prediction, no more."""
    from unlearn_audit.plan_reports import check

    config = _config()
    _write_run(tmp_path, config)
    bench = tmp_path / "run" / "benchmarks"
    with_import = check._jobs(config, bench, RATES)
    monkeypatch.setattr(check, "TRAINING_IMPORT_S", 0.0)
    without = check._jobs(config, bench, RATES)
    extra = {j.kind: a.run_s - j.run_s for a, j in zip(with_import, without)}
    untrained = ("control ", "unlearn hessian,", "unlearn rewind_to_delete,")
    assert {k for k, v in extra.items() if v == 0} == {k for k in extra if k.startswith(untrained)}
    assert all(v == pytest.approx(2.0) for k, v in extra.items() if not k.startswith(untrained))
    assert {"train tinynet w=0.25", "unlearn ida, tinynet w=0.25", "unlearn ssd, tinynet w=0.25"} <= {k for k, v in extra.items() if v}
