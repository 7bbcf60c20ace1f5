"""Every file path of the workflow (pipeline/paths.py): chunk names, per-run paths and their round
trip, the table and figure files."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from unlearn_audit.pipeline.plan import paths


@pytest.mark.parametrize("phase", ["calib", "eval"])
@pytest.mark.parametrize("run", [0, 7, 123])
def test_run_of_path_round_trips_base_model_paths(phase, run):
    path = paths.base_model("results", "digits_uniform", "calib0-29_eval0-9", phase, run)
    assert path == f"results/designs/digits_uniform/base/calib0-29_eval0-9/{phase}/{run}.pt"
    assert paths.run_of_path(path) == (phase, run)
    assert paths.run_of_path(Path("/abs") / path) == (phase, run)


@pytest.mark.parametrize("phase", ["calib", "eval"])
@pytest.mark.parametrize("run", [0, 42])
@pytest.mark.parametrize("name", ["scores.parquet", "metrics.parquet"])
def test_run_of_path_round_trips_run_files(phase, run, name):
    path = paths.run_file("/tmp/results", "exp_ga", "eval0-99", "exp_gb", phase, run, name)
    assert path == f"/tmp/results/exp_ga/runs/eval0-99/exp_gb/{phase}/{run}/{name}"
    assert paths.run_of_path(path) == (phase, run)


@pytest.mark.parametrize(
    "path",
    [
        "results/designs/d/signs.parquet",
        "results/exp/bounds.parquet",
        "results/designs/d/base/c/test/3.pt",  # unknown phase
        "results/designs/d/base/c/calib/x.pt",  # not a run index
        "results/designs/d/base/c/calib/3.pt.tmp",
        "results/designs/d/base/calib/3.pt",  # no chunk folder
        "results/exp/runs/c/exp/eval/3",  # a run directory, not a file in it
        "results/exp/runs/c/exp/eval/3/sub/scores.parquet",
        "results/exp/runs/eval/3/scores.parquet",  # no chunk folder
        paths.design_file("results", "d", "data.npz"),
        paths.experiment_file("results", "e", "fit.parquet"),
    ],
)
def test_run_of_path_refuses_other_paths(path):
    with pytest.raises(ValueError, match="not a per-run path"):
        paths.run_of_path(path)


def test_table_and_figure_files():
    assert paths.table_files("res", "table2a") == ["res/tables/table2a.csv", "res/tables/table2a.md", "res/tables/table2a.tex"]
    assert paths.figure_files("res", "fig") == ["res/figures/fig.png", "res/figures/fig.pdf"]


@pytest.mark.parametrize(
    "keys, name",
    [
        ([("calib", r) for r in range(30)] + [("eval", r) for r in range(10)], "calib0-29_eval0-9"),
        ([("eval", 7)], "eval7"),
        ([("calib", 28), ("calib", 29), ("eval", 0)], "calib28-29_eval0"),
        ([("candidate", r) for r in range(20)], "candidate0-19"),
        ([("calib", r) for r in range(100, 110)], "calib100-109"),
    ],
)
def test_a_chunk_name_lists_its_runs_and_round_trips(keys, name):
    assert paths.chunk_name(keys) == name
    assert paths.chunk_keys(name) == keys
    assert re.fullmatch(paths.CHUNK_PATTERN, name)


@pytest.mark.parametrize(
    "keys, message",
    [
        ([("calib", 0), ("calib", 2)], "consecutive"),
        ([("eval", 0), ("calib", 1)] + [("eval", 1)], "one phase's consecutive runs or calibration runs then evaluation"),
        ([("eval", 0), ("calib", 1)], "calibration runs then evaluation"),
        ([("retrain", 0)], "phases"),
        ([], "calibration runs then evaluation"),
    ],
)
def test_a_chunk_is_consecutive_runs_of_at_most_two_phases(keys, message):
    with pytest.raises(ValueError, match=message):
        paths.chunk_name(keys)


@pytest.mark.parametrize("name", ["retrain.pt", "calib", "calib0-", "test0-3", "calib0_calib1", "eval0_calib1", "candidate0_eval1", "calib0-3_eval0_eval2"])
def test_other_names_are_not_chunks(name):
    assert not re.fullmatch(paths.CHUNK_PATTERN, name)
    with pytest.raises(ValueError, match="not a chunk name"):
        paths.chunk_keys(name)
