"""Every file path of the workflow (pipeline/paths.py): per-run paths and their round trip, the
table and figure files."""

from __future__ import annotations

from pathlib import Path

import pytest

from unlearn_audit.pipeline import paths


@pytest.mark.parametrize("phase", ["calib", "eval"])
@pytest.mark.parametrize("run", [0, 7, 123])
def test_run_of_path_round_trips_base_model_paths(phase, run):
    path = paths.base_model("results", "digits_uniform", phase, run)
    assert path == f"results/designs/digits_uniform/base/{phase}/{run}.pt"
    assert paths.run_of_path(path) == (phase, run)
    assert paths.run_of_path(Path("/abs") / path) == (phase, run)


@pytest.mark.parametrize("phase", ["calib", "eval"])
@pytest.mark.parametrize("run", [0, 42])
@pytest.mark.parametrize("name", ["scores.parquet", "metrics.parquet"])
def test_run_of_path_round_trips_run_files(phase, run, name):
    path = paths.run_file("/tmp/results", "exp_ga", phase, run, name)
    assert path == f"/tmp/results/exp_ga/runs/{phase}/{run}/{name}"
    assert paths.run_of_path(path) == (phase, run)


@pytest.mark.parametrize(
    "path",
    [
        "results/designs/d/signs.parquet",
        "results/exp/bounds.parquet",
        "results/designs/d/base/test/3.pt",  # unknown phase
        "results/designs/d/base/calib/x.pt",  # not a run index
        "results/designs/d/base/calib/3.pt.tmp",
        "results/exp/runs/eval/3",  # a run directory, not a file in it
        "results/exp/runs/eval/3/sub/scores.parquet",
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


def test_the_list_of_a_phases_base_models_round_trips(tmp_path):
    models = [paths.base_model("results", "digits_uniform", "eval", run) for run in (0, 1, 10)]
    out = tmp_path / paths.base_model_list("results", "digits_uniform", "eval")
    assert out.as_posix().endswith("results/designs/digits_uniform/base/eval.txt")
    paths.write_path_list(models, out)
    assert paths.read_path_list(out) == models
    assert out.read_text() == "".join(f"{m}\n" for m in models)
