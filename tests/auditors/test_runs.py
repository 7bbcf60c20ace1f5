"""The runs of a sign-vector audit (auditors/runs.py; docs/workflow.md#the-dag-step-by-step,
steps 2, 5, 6; Section 5): the sign table of a design (every S uniform on S_m from its own SeedSequence stream, calibration and
evaluation seeds disjoint), the joint (Algorithm 3) design with Γ calibration runs per candidate
S̃ ∈ S_m, one phase's runs as arrays, and the phase guard that keeps calibration and evaluation
apart ("Calibration runs and evaluation runs are drawn independently", Section 5)."""

import numpy as np
import pandas as pd
import pytest

from unlearn_audit import schemas
from unlearn_audit.auditors.runs import (
    SCORE_COLUMNS,
    candidate_of_runs,
    candidate_sign_table,
    check_single_phase,
    score_matrix,
    sign_matrix,
    sign_table,
)
from unlearn_audit.seeds import seed_sequence
from unlearn_audit.stats.signs import enumerate_sign_vectors, is_balanced, num_sign_vectors, sign_vector_rank


def test_sign_table_is_deterministic_balanced_and_phase_separated():
    a = sign_table("digits_uniform", 30, 8, 4, root_seed=7)
    b = sign_table("digits_uniform", 30, 8, 4, root_seed=7)
    pd.testing.assert_frame_equal(a.drop(columns="signs"), b.drop(columns="signs"))
    assert all(np.array_equal(x, y) for x, y in zip(a.signs, b.signs))
    assert all(is_balanced(s) for s in a.signs)
    assert (a.phase == "calib").sum() == 8 and (a.phase == "eval").sum() == 4
    assert a["seed"].is_unique
    assert set(a.loc[a.phase == "calib", "seed"]).isdisjoint(a.loc[a.phase == "eval", "seed"])
    _, cal = sign_matrix(a, "calib")
    _, ev = sign_matrix(a, "eval")
    assert not any(np.array_equal(c, e) for c in cal for e in ev)
    other = sign_table("digits_adversarial", 30, 8, 4, root_seed=7)
    assert not np.array_equal(np.stack(other.signs), np.stack(a.signs))


def test_sign_table_columns_numbering_and_seeds():
    t = sign_table("d", 6, 3, 2, root_seed=11)
    assert list(t.columns) == schemas.SIGNS.names
    assert (t.design == "d").all()
    assert t.run.tolist() == [0, 1, 2, 0, 1] and t.sign_index.tolist() == [0, 1, 2, 3, 4]  # runs within a phase, rows across
    for row in t.itertuples():  # the seed column is the first word of the run's own sign stream
        assert row.seed == int(seed_sequence(11, "d", "signs", row.phase, row.run).generate_state(1, dtype=np.uint64)[0])
        assert row.signs.dtype == np.int8
    assert not sign_table("d", 6, 3, 2, root_seed=12).seed.isin(t.seed).any()  # another root: other streams


def test_sign_table_draws_uniformly_from_s_m():
    """M' = 6 for m = 4; 600 draws: χ² with 5 dof below its 99.9% quantile 20.52."""
    t = sign_table("uniformity", 4, 1, 600, root_seed=3)
    ranks = [sign_vector_rank(s) for s in t.loc[t.phase == "eval", "signs"]]
    counts = np.bincount(ranks, minlength=6)
    chi2 = float(np.sum((counts - 100) ** 2 / 100))
    assert chi2 < 20.52, counts


def test_candidate_sign_table_has_rounds_runs_of_every_candidate():
    m, rounds, n_eval = 4, 3, 5
    t = candidate_sign_table("joint", m, rounds, n_eval, root_seed=2)
    calib, ev = t[t.phase == "calib"], t[t.phase == "eval"]
    assert len(calib) == rounds * num_sign_vectors(m) == 18 and len(ev) == n_eval
    all_s = enumerate_sign_vectors(m)
    for row in calib.itertuples():  # calibration run k·Γ + γ has the candidate of rank k
        np.testing.assert_array_equal(row.signs, all_s[row.run // rounds])
    assert all(is_balanced(s) for s in ev.signs)
    assert t.sign_index.tolist() == list(range(18 + n_eval)) and t.seed.is_unique
    assert set(calib.seed).isdisjoint(ev.seed)
    # the evaluation runs draw S exactly as sign_table does (same streams, same root)
    plain = sign_table("joint", m, 1, n_eval, root_seed=2)
    for a, b in zip(ev.signs, plain[plain.phase == "eval"].signs):
        np.testing.assert_array_equal(a, b)
    runs = candidate_of_runs(t, "calib")
    assert runs == {run: run // rounds for run in range(18)}
    assert candidate_of_runs(t, "eval") == {int(r): sign_vector_rank(s) for r, s in zip(ev.run, ev.signs)}


def test_sign_matrix_sorts_by_run():
    t = sign_table("d", 8, 5, 2, root_seed=1)
    shuffled = t.sample(frac=1.0, random_state=0)
    runs, s = sign_matrix(shuffled, "calib")
    assert runs.tolist() == [0, 1, 2, 3, 4] and s.shape == (5, 8) and s.dtype == np.int8
    for run, vec in zip(runs, s):
        np.testing.assert_array_equal(vec, t[(t.phase == "calib") & (t.run == run)].signs.iloc[0])


def _scores(runs=(2, 0, 1), examples=(10, 11, 12)):
    rows = [{"phase": "calib", "run": r, "example": e, "batch": e - 10, "in_forget": (r + e) % 2 == 0,
             "score_logit": 10.0 * r + e, "score_loss": -(10.0 * r + e)} for r in runs for e in examples]
    return pd.DataFrame(rows)


def test_score_matrix_pivots_runs_by_examples():
    assert SCORE_COLUMNS == {"logit": "score_logit", "loss": "score_loss"}
    runs, examples, values, inside = score_matrix(_scores(), "logit")
    assert runs.tolist() == [0, 1, 2] and examples.tolist() == [10, 11, 12]
    np.testing.assert_array_equal(values, 10.0 * np.arange(3)[:, None] + np.array([10, 11, 12]))
    np.testing.assert_array_equal(inside, (np.arange(3)[:, None] + np.array([10, 11, 12])) % 2 == 0)
    assert inside.dtype == bool
    _, _, loss, _ = score_matrix(_scores(), "loss")
    np.testing.assert_array_equal(loss, -values)


def test_score_matrix_bad_input():
    with pytest.raises(ValueError, match=r"score must be one of \['logit', 'loss'\], got 'prob'"):
        score_matrix(_scores(), "prob")
    frame = _scores()
    with pytest.raises(ValueError, match="an example twice within one run"):
        score_matrix(pd.concat([frame, frame.iloc[[0]]]), "logit")
    with pytest.raises(ValueError, match="do not cover the same examples in every run"):
        score_matrix(frame.iloc[1:], "logit")


def test_check_single_phase():
    frame = _scores()
    before = frame.copy()
    check_single_phase(frame, "calib")  # no error
    with pytest.raises(ValueError, match=r"expected only 'eval' runs here, got phases \['calib'\]"):
        check_single_phase(frame, "eval")
    mixed = pd.concat([frame, frame.assign(phase="eval")])
    with pytest.raises(ValueError, match=r"got phases \['calib', 'eval'\]: calibration and evaluation must not mix"):
        check_single_phase(mixed, "calib")
    pd.testing.assert_frame_equal(frame, before)  # a guard, never a filter
