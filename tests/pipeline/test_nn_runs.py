"""The neural-network steps' bookkeeping (pipeline/nn_runs.py) that the end-to-end tests do not
reach one by one: which runs a chunk computes and which base model each run reads."""

from __future__ import annotations

import numpy as np
import pytest

from unlearn_audit.pipeline.plan import paths
from unlearn_audit.pipeline.nn_runs import _base_of_runs, _run_keys
from unlearn_audit.stats.signs import sign_vector_rank


def test_a_chunk_refuses_base_models_of_other_runs():
    models = [paths.base_model("r", "d", "calib0-4", "calib", run) for run in (4, 3)]
    with pytest.raises(ValueError, match=r"base models are of runs \[\('calib', 4\), \('calib', 3\)\], not of the chunk's runs"):
        _base_of_runs([("calib", 3), ("calib", 4)], {}, models)


def test_a_joint_chunk_reads_the_candidate_model_of_each_runs_sign_vector():
    signs = {("calib", 0): np.array([1, -1, 1, -1]), ("eval", 0): np.array([-1, 1, 1, -1])}  # balanced: |S_4| = 6
    candidates = [paths.base_model("r", "d", "candidate0-5", "candidate", rank) for rank in range(6)]
    ranks = [sign_vector_rank(signs[key]) for key in (("eval", 0), ("calib", 0))]
    assert ranks[0] != ranks[1]
    assert _base_of_runs([("eval", 0), ("calib", 0)], signs, candidates) == [candidates[r] for r in ranks]


def test_a_list_of_per_run_models_must_match_the_runs():
    models = [paths.base_model("r", "d", "calib4-5", "calib", run) for run in (4, 5)]
    assert _base_of_runs([("calib", 4), ("calib", 5)], {}, models) == models
    with pytest.raises(ValueError, match="3 runs but 2 base models"):
        _base_of_runs([("calib", 4), ("calib", 5), ("eval", 0)], {}, models)


def test_a_chunks_runs_are_read_from_its_output_paths():
    outputs = [paths.run_file("r", "e", "calib9_eval0", "e", "calib", 9, "scores.parquet"),
               paths.run_file("r", "e", "calib9_eval0", "e", "eval", 0, "scores.parquet")]
    assert _run_keys(outputs) == [("calib", 9), ("eval", 0)]
    with pytest.raises(ValueError, match="never a mix"):
        _run_keys([paths.base_model("r", "d", "candidate0", "candidate", 0), paths.base_model("r", "d", "eval0", "eval", 0)])
    with pytest.raises(ValueError, match="never a mix"):
        _run_keys([paths.retrain_model("r", "d"), paths.base_model("r", "d", "eval0", "eval", 0)])
    assert _run_keys([paths.retrain_model("r", "d")]) == [("retrain", 0)]


def test_every_run_of_the_retrain_control_reads_the_one_retrained_model():
    retrained = paths.retrain_model("r", "d")
    assert _base_of_runs([("calib", 0), ("calib", 1), ("eval", 0)], {}, [retrained]) == [retrained] * 3
