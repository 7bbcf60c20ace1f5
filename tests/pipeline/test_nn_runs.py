"""The neural-network steps' bookkeeping (pipeline/nn_runs.py) that the end-to-end tests do not
reach one by one: which base model each run of an unlearning chunk reads."""

from __future__ import annotations

import numpy as np
import pytest

from unlearn_audit.pipeline import paths
from unlearn_audit.pipeline.nn_runs import _base_of_runs
from unlearn_audit.stats.signs import sign_vector_rank


def test_a_chunk_reads_its_own_runs_models_from_the_phases_list(tmp_path):
    listed = tmp_path / "eval.txt"
    paths.write_path_list([paths.base_model("r", "d", "eval", run) for run in range(5)], listed)
    assert _base_of_runs([3, 1], {}, [str(listed)]) == ["r/designs/d/base/eval/3.pt", "r/designs/d/base/eval/1.pt"]
    with pytest.raises(ValueError, match=r"lists no base model of runs \[7\]"):
        _base_of_runs([1, 7], {}, [str(listed)])


def test_a_joint_chunk_reads_the_candidate_model_of_each_runs_sign_vector():
    signs = {0: np.array([1, -1, 1, -1]), 1: np.array([-1, 1, 1, -1])}  # balanced: |S_4| = 6 candidates
    candidates = [paths.candidate_model("r", "d", rank) for rank in range(6)]
    assert sign_vector_rank(signs[0]) != sign_vector_rank(signs[1])
    assert _base_of_runs([1, 0], signs, candidates) == [candidates[sign_vector_rank(signs[1])], candidates[sign_vector_rank(signs[0])]]


def test_a_list_of_per_run_models_must_match_the_runs():
    models = [paths.base_model("r", "d", "calib", run) for run in (4, 5)]
    assert _base_of_runs([4, 5], {}, models) == models
    with pytest.raises(ValueError, match="3 runs but 2 base models"):
        _base_of_runs([4, 5, 6], {}, models)
