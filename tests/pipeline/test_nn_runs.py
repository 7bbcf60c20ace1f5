"""The neural-network steps' bookkeeping (pipeline/nn_runs.py) that the end-to-end tests do not
reach one by one: which runs a chunk computes and which base model each run reads."""

from __future__ import annotations

import numpy as np
import pytest

from unlearn_audit.pipeline import paths
from unlearn_audit.pipeline.nn_runs import _base_of_runs, _run_keys
from unlearn_audit.stats.signs import sign_vector_rank


def test_a_chunk_reads_its_own_runs_models_from_the_phases_lists(tmp_path):
    lists = [tmp_path / f"{phase}.txt" for phase in ("calib", "eval")]
    for phase, listed in zip(("calib", "eval"), lists):
        paths.write_path_list([paths.base_model("r", "d", phase, run) for run in range(5)], listed)
    lists = [str(p) for p in lists]
    assert _base_of_runs([("calib", 4), ("eval", 3), ("eval", 1)], {}, lists) == [
        "r/designs/d/base/calib/4.pt", "r/designs/d/base/eval/3.pt", "r/designs/d/base/eval/1.pt"]
    with pytest.raises(ValueError, match=r"list no base model of \(phase, run\) \[\('eval', 7\)\]"):
        _base_of_runs([("eval", 1), ("eval", 7)], {}, lists)


def test_a_joint_chunk_reads_the_candidate_model_of_each_runs_sign_vector():
    signs = {("calib", 0): np.array([1, -1, 1, -1]), ("eval", 0): np.array([-1, 1, 1, -1])}  # balanced: |S_4| = 6
    candidates = [paths.candidate_model("r", "d", rank) for rank in range(6)]
    ranks = [sign_vector_rank(signs[key]) for key in (("eval", 0), ("calib", 0))]
    assert ranks[0] != ranks[1]
    assert _base_of_runs([("eval", 0), ("calib", 0)], signs, candidates) == [candidates[r] for r in ranks]


def test_a_list_of_per_run_models_must_match_the_runs():
    models = [paths.base_model("r", "d", "calib", run) for run in (4, 5)]
    assert _base_of_runs([("calib", 4), ("calib", 5)], {}, models) == models
    with pytest.raises(ValueError, match="3 runs but 2 base models"):
        _base_of_runs([("calib", 4), ("calib", 5), ("eval", 0)], {}, models)


def test_a_chunks_runs_are_read_from_its_output_paths():
    outputs = [paths.run_file("r", "e", "calib", 9, "scores.parquet"), paths.run_file("r", "e", "eval", 0, "scores.parquet")]
    assert _run_keys(outputs) == [("calib", 9), ("eval", 0)]
    with pytest.raises(ValueError, match="never a mix"):
        _run_keys([paths.candidate_model("r", "d", 0), paths.base_model("r", "d", "eval", 0)])
    with pytest.raises(ValueError, match="never a mix"):
        _run_keys([paths.retrain_model("r", "d"), paths.base_model("r", "d", "eval", 0)])
    assert _run_keys([paths.retrain_model("r", "d")]) == [("retrain", 0)]


def test_every_run_of_the_retrain_control_reads_the_one_retrained_model():
    retrained = paths.retrain_model("r", "d")
    assert _base_of_runs([("calib", 0), ("calib", 1), ("eval", 0)], {}, [retrained]) == [retrained] * 3
