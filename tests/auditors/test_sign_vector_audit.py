"""The one sign-vector audit object (auditors/audit.py): validated once, fitted once, every statistic
a method, the same numbers as the tables the workflow and the CLI write."""

import numpy as np
import pandas as pd
import pytest

from sign_vector_designs import calib_signs, design_frames, planted_scores
from synthetic_scores import long_scores
from unlearn_audit.auditors.audit import SignVectorAudit, bounds_table
from unlearn_audit.auditors.batchwise import Batchwise, fit_table
from unlearn_audit.auditors.joint import Joint
from unlearn_audit.auditors.pairwise import Pairwise
from unlearn_audit.auditors.runs import PhaseRuns, phase_runs, sign_table
from unlearn_audit.auditors.score_files import audit_scores
from unlearn_audit.auditors.tables import audit_tables, joint_audit_tables, pairwise_audit_table
from unlearn_audit.stats.bounds import Bound, unlearning_epsilon_lower_bound
from unlearn_audit.stats.gdp_overlaps import mu_lower_bound
from unlearn_audit.stats.perfect_prediction import perfect_prediction_epsilon_lb
from unlearn_audit.stats.selection import Cell

M, R_VALUES = 8, (2, 4, 8)


def _batchwise_frames(seed=0, shift=1.2):
    rng = np.random.default_rng(seed)
    signs = sign_table("d", M, 16, 12, root_seed=seed + 3)
    calib = long_scores(signs, "calib", "e", rng, shift=shift)
    evals = long_scores(signs, "eval", "e", rng, shift=shift)
    # evaluation runs numbered after the calibration runs, every run identified by its run id alone
    signs.loc[signs.phase == "eval", "run"] += 100
    evals["run"] += 100
    return signs, calib.drop(columns=["seed", "sign_index"]), evals.drop(columns=["seed", "sign_index"])


def _batchwise_audit(seed=0, shift=1.2):
    signs, calib, evals = _batchwise_frames(seed, shift)
    return SignVectorAudit.calibrate(Batchwise(), phase_runs(calib, signs[signs.phase == "calib"], "calib", "logit", M),
                                     phase_runs(evals, signs[signs.phase == "eval"], "eval", "logit", M), experiment="e", score="logit")


def test_batchwise_audit_gives_the_workflow_tables():
    """calibrate → table equals rule nn_fit's FIT then rule nn_audit's tables, row for row."""
    signs, calib, evals = _batchwise_frames()
    audit = _batchwise_audit()
    primary = Cell(8, "mean", "logit")
    ours = audit.table(R_VALUES, primary=primary)
    theirs = audit_tables(fit_table(calib, "e", scores=["logit"]), evals, signs[signs.phase == "eval"], M, R_VALUES, primary=primary)
    for a, b in zip(ours, theirs):
        pd.testing.assert_frame_equal(a, b)
    assert ours[1]["rejected"].any()  # a planted signal: the comparison is not of empty bounds


def test_cli_audit_is_the_same_object():
    """`unlearn-audit audit`'s computation (score_files.audit_scores) reports the object's bounds."""
    signs, calib, evals = _batchwise_frames(seed=4)
    res = audit_scores(pd.concat([calib, evals], ignore_index=True), list(R_VALUES), signs=signs)
    audit = _batchwise_audit(seed=4)
    for r in R_VALUES:
        np.testing.assert_array_equal(res.overlaps[res.overlaps.r == r].sort_values("run")["overlap"], audit.overlaps(r))
        row = res.bounds[(res.bounds.r == r) & (res.bounds.statistic == "mean")].iloc[0]
        assert row["epsilon_lb"] == audit.epsilon_lower_bound(r).lb
        assert row["mu_lb"] == audit.mu_lower_bound(r).lb


def test_overlaps_are_computed_once_and_read_only():
    audit = _batchwise_audit()
    v = audit.overlaps(4)
    assert audit.overlaps(4) is v and not v.flags.writeable
    assert v.shape == (12,) and v.min() >= 0 and v.max() <= 4
    np.testing.assert_array_equal(np.maximum(audit.guesses(4) * audit.evaluation.signs, 0).sum(axis=1), v)


def test_each_bound_carries_its_cell_and_ceiling():
    audit = _batchwise_audit()
    for test in ("theorem4.2", "exact", "adaptive"):
        b = audit.epsilon_lower_bound(8, test=test)
        assert isinstance(b, Bound) and b.parameter == "epsilon" and b.method == ("theorem4.2" if test == "theorem4.2" else test)
        assert b.cell == Cell(8, "mean", "logit", test)
        assert 0 < b.lb <= b.ceiling
        row = bounds_table(audit.overlap_table([8]), M, primary=b.cell).query("statistic == 'mean'").iloc[0]
        assert row["epsilon_lb_test"] == b.lb and row["role"] == "preregistered"
    assert audit.epsilon_lower_bound(8).ceiling == pytest.approx(perfect_prediction_epsilon_lb(M, 8, 12), rel=1e-12)
    mu = audit.mu_lower_bound(8, method="tradeoff")
    assert mu.parameter == "mu" and mu.method == "tradeoff" and 0 < mu.lb <= mu.ceiling
    assert mu.lb == mu_lower_bound(audit.overlaps(8), M, 8, method="tradeoff").lb


def test_a_perfect_audit_reaches_its_ceiling():
    audit = _batchwise_audit(shift=20.0)
    assert (audit.overlaps(8) == 8).all()
    b = audit.epsilon_lower_bound(8)
    assert b.lb == b.ceiling > 0


def _joint_runs(m=4, gamma=3, n_eval=10, seed=0):
    rng = np.random.default_rng(seed)
    cs = calib_signs(m, gamma)
    es = cs[rng.integers(0, len(cs), n_eval)]
    batch = np.repeat(np.arange(m), 2)
    offsets = rng.normal(size=(len(np.unique(cs, axis=0)), batch.size))
    c, e = planted_scores(cs, batch, offsets, rng), planted_scores(es, batch, offsets, rng)
    return cs, es, batch, c, e


def test_joint_strategy_guesses_whole_sign_vectors_and_bounds_the_unlearning_claim():
    cs, es, batch, c, e = _joint_runs()
    cal, cal_s = design_frames("j", "calib", cs, batch, c, c)
    ev, ev_s = design_frames("j", "eval", es, batch, e, e, run0=100)
    audit = SignVectorAudit.calibrate(Joint(), phase_runs(cal, cal_s, "calib", "logit", 4), phase_runs(ev, ev_s, "eval", "logit", 4),
                                      experiment="j")
    with pytest.raises(ValueError, match="r must be m = 4, got r = 2"):
        audit.overlaps(2)
    delta = 1e-3
    b = audit.epsilon_lower_bound(4, delta=delta)
    assert b.lb == unlearning_epsilon_lower_bound(audit.overlaps(4), 4, 4, delta=delta).lb and b.delta == delta
    overlaps, bounds = joint_audit_tables(cal, ev, ev_s, cal_s, 4, delta=delta, scores=["logit"])
    np.testing.assert_array_equal(overlaps["overlap"], audit.overlaps(4))
    assert bounds.query("statistic == 'mean'")["epsilon_lb"].iloc[0] == b.lb


def test_pairwise_strategy_and_its_confusion_bound():
    cs, es, batch, c, e = _joint_runs(m=2, gamma=6, n_eval=12, seed=2)
    cal, cal_s = design_frames("p", "calib", cs, batch, c, c)
    ev, ev_s = design_frames("p", "eval", es, batch, e, e, run0=100)
    audit = SignVectorAudit.calibrate(Pairwise(), phase_runs(cal, cal_s, "calib", "logit", 2), phase_runs(ev, ev_s, "eval", "logit", 2))
    row = pairwise_audit_table(cal, cal_s, ev, ev_s, scores=["logit"]).iloc[0]
    res = audit.pairwise()
    assert (res.fp, res.fn, res.epsilon_lb, res.mu_lb) == (row.fp, row.fn, row.epsilon_lb, row.mu_lb)
    assert res.fp + res.fn == int((audit.overlaps(2) == 0).sum())  # a wrong m = 2 guess has overlap 0
    assert isinstance(res.epsilon, Bound) and isinstance(res.mu, Bound)
    assert (res.epsilon.parameter, res.mu.parameter, res.epsilon.method, res.epsilon.L) == ("epsilon", "mu", "eq3", 12)
    assert res.epsilon.statistic_value == (res.fp + res.fn) / 12 and res.epsilon.ldp == 2 * res.epsilon_lb
    with pytest.raises(ValueError, match="Eq. 3.*pairwise auditor's; this audit's strategy is 'batchwise'"):
        _batchwise_audit().pairwise()


def test_bad_runs_are_refused_before_any_fit():
    signs, calib, evals = _batchwise_frames()
    calibration = phase_runs(calib, signs[signs.phase == "calib"], "calib", "logit", M)
    evaluation = phase_runs(evals, signs[signs.phase == "eval"], "eval", "logit", M)
    with pytest.raises(ValueError, match="fit uses calibration runs only, got 'eval'"):
        SignVectorAudit.calibrate(Batchwise(), evaluation, evaluation)
    with pytest.raises(ValueError, match="bounds come from evaluation runs only, got 'calib'"):
        SignVectorAudit(Batchwise(), None, calibration)
    other = PhaseRuns.from_arrays(evaluation.values[:, :4], evaluation.signs, "eval", batch=evaluation.batch[:4])
    with pytest.raises(ValueError, match="same candidate examples"):
        SignVectorAudit.calibrate(Batchwise(), calibration, other)
    with pytest.raises(ValueError, match="in_forget disagrees with the sign table"):
        flipped = evals.copy()
        flipped.loc[0, "in_forget"] = not flipped.loc[0, "in_forget"]
        phase_runs(flipped, signs[signs.phase == "eval"], "eval", "logit", M)
    with pytest.raises(ValueError, match="m must be even"):
        SignVectorAudit(Joint(), None, PhaseRuns.from_arrays(np.zeros((2, 3)), np.array([[1, -1, -1], [-1, 1, -1]]), "eval"))
