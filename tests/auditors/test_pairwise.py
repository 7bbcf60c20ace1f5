"""The pairwise auditor, the baseline of App. A.3 (auditors/pairwise.py, after Nasr et al. 2021):
Algorithm 3 with m = 2 (two forget sets, S ∈ {(+1, −1), (−1, +1)}), its confusion matrix on the
evaluation runs, and the bounds of Eq. 3 with two-sided Clopper–Pearson intervals read as bounds on
the (ε, δ) unlearning claim (δ-aware Lemma 4.1), with the μ-GDP bound halved likewise (docs/bounds.md §6)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from sign_vector_designs import calib_signs, design_frames, planted_scores
from unlearn_audit import schemas
from unlearn_audit.auditors import joint_fit, joint_guesses, pairwise_audit, pairwise_audit_table
from unlearn_audit.auditors.pairwise import PAIRWISE_COLUMNS
from unlearn_audit.stats.bounds import pairwise_unlearning_epsilon_lower_bound, pairwise_unlearning_mu_lower_bound
from unlearn_audit.stats.signs import sample_sign_vectors


def _design(shift=1.0, n_calib=20, n_eval=60, seed=4):
    rng = np.random.default_rng(seed)
    cs = calib_signs(2, n_calib)
    es = sample_sign_vectors(2, n_eval, rng)
    batch = np.array([0, 0, 1])
    off = np.zeros((2, 3))
    return cs, es, batch, planted_scores(cs, batch, off, rng, shift=shift), planted_scores(es, batch, off, rng, shift=shift)


def test_pairwise_confusion_matrix_and_table():
    rng = np.random.default_rng(4)
    cs = calib_signs(2, 20)
    es = sample_sign_vectors(2, 60, rng)
    batch = np.array([0, 0, 1])
    off = np.zeros((2, 3))
    c, e = planted_scores(cs, batch, off, rng, shift=1.0), planted_scores(es, batch, off, rng, shift=1.0)
    res = pairwise_audit(c, cs, e, es, delta=0.01)
    guess = joint_guesses(joint_fit(c, cs), e, 2)
    pos, pred = es[:, 0] == 1, guess[:, 0] == 1
    assert (res.fp, res.n_neg, res.fn, res.n_pos) == (int((pred & ~pos).sum()), int((~pos).sum()), int((~pred & pos).sum()), int(pos.sum()))
    assert res.epsilon_lb > 0 and res.mu_lb > 0 and res.delta == 0.01

    cal, cal_s = design_frames("p", "calib", cs, batch, c, c)
    ev, ev_s = design_frames("p", "eval", es, batch, e, e, run0=500)
    table = pairwise_audit_table(cal, cal_s, ev, ev_s, delta=0.01)
    assert list(table.columns) == ["experiment", "auditor", "score", "fp", "n_neg", "fn", "n_pos", "zeta", "delta", "epsilon_lb", "mu_lb",
                                   "epsilon_lb_reference", "test", "epsilon_lb_test"]
    assert list(table.score) == ["logit", "loss"] and set(table.auditor) == {"pairwise"}
    assert table.epsilon_lb.iloc[0] == res.epsilon_lb and table.fp.iloc[0] == res.fp
    # the m = 2 overlap form beside Eq. 3: the reference test of the same guesses (V = 2 right, 0 wrong), at the same δ
    from unlearn_audit.stats.reference import reference_epsilon_lower_bound

    right = int(pos.sum() + (~pos).sum() - res.fp - res.fn)
    overlaps = [2] * right + [0] * (len(es) - right)
    assert table.epsilon_lb_reference.iloc[0] == pytest.approx(reference_epsilon_lower_bound(overlaps, 2, 2, delta=0.01))
    assert (table.test == "eq3").all() and (table.epsilon_lb_test == table.epsilon_lb).all()
    pre = pairwise_audit_table(cal, cal_s, ev, ev_s, delta=0.01, test="reference")
    assert (pre.test == "reference").all() and (pre.epsilon_lb_test == pre.epsilon_lb_reference).all()
    with pytest.raises(ValueError, match="test of a pairwise audit"):
        pairwise_audit_table(cal, cal_s, ev, ev_s, test="adaptive")

    cs6 = calib_signs(4, 2)
    with pytest.raises(ValueError, match="needs m = 2"):
        pairwise_audit(np.zeros((cs6.shape[0], 3)), cs6, np.zeros((2, 3)), cs6[:2])


def test_pairwise_columns_are_the_pairwise_schema():
    assert PAIRWISE_COLUMNS == tuple(schemas.PAIRWISE.names)


def test_bounds_are_the_unlearning_bounds_of_the_counts():
    cs, es, _, c, e = _design(shift=0.6)
    for zeta, delta in ((0.05, 0.0), (0.1, 0.02)):
        res = pairwise_audit(c, cs, e, es, zeta=zeta, delta=delta)
        assert (res.zeta, res.delta) == (zeta, delta) and res.n_pos + res.n_neg == 60
        assert 0 < res.fp + res.fn < 60  # a noisy but informative predictor
        counts = (res.fp, res.n_neg, res.fn, res.n_pos)
        assert res.epsilon_lb == pairwise_unlearning_epsilon_lower_bound(*counts, zeta=zeta, delta=delta).epsilon_lb
        assert res.mu_lb == pairwise_unlearning_mu_lower_bound(*counts, zeta=zeta)


def test_perfect_separation_gives_half_of_eq3_at_zero_errors():
    """No error in n_neg + n_pos runs: FP_hi = 1 − (ζ/2)^{1/n_neg}, FN_hi = 1 − (ζ/2)^{1/n_pos}
    (Clopper–Pearson at 0 errors), and at δ = 0 the unlearning bound is Eq. 3 halved (Lemma 4.1)."""
    cs, es, _, c, e = _design(shift=8.0, n_eval=200)
    res = pairwise_audit(c, cs, e, es)
    assert res.fp == res.fn == 0
    fp_hi, fn_hi = 1 - 0.025 ** (1 / res.n_neg), 1 - 0.025 ** (1 / res.n_pos)
    eq3 = max(math.log((1 - fp_hi) / fn_hi), math.log((1 - fn_hi) / fp_hi))
    assert res.epsilon_lb == pytest.approx(eq3 / 2, rel=1e-9)
    assert res.epsilon_lb > 1.0
    # the saturation of Table 2 in small: more runs cannot pass what a δ > 0 claim allows
    assert pairwise_audit(c, cs, e, es, delta=0.1).epsilon_lb < res.epsilon_lb


def test_pairwise_audit_bad_input():
    cs, es, _, c, e = _design()
    with pytest.raises(ValueError, match="the evaluation sign vectors have m = 4"):
        pairwise_audit(c, cs, np.zeros((2, 3)), calib_signs(4, 1)[:2])
    with pytest.raises(ValueError, match=r"eval scores \(runs, examples\) and sign vectors \(runs, m\) must have the same runs; got \(59, 3\) and \(60, 2\)"):
        pairwise_audit(c, cs, e[:-1], es)
    pos = es[:, 0] == 1
    with pytest.raises(ValueError, match=r"the evaluation runs need both forget sets: got \d+ runs with S = \(\+1, −1\) and 0"):
        pairwise_audit(c, cs, e[pos], es[pos])
    with pytest.raises(ValueError, match="zeta"):
        pairwise_audit(c, cs, e, es, zeta=0.0)
    with pytest.raises(ValueError, match="delta"):
        pairwise_audit(c, cs, e, es, delta=1.0)
    with pytest.raises(ValueError, match="at least 4 calibration runs"):  # Algorithm 3's fit: 2 runs per candidate
        pairwise_audit(c[:3], cs[:3], e, es)


def test_pairwise_audit_table_needs_m_equal_2():
    rng = np.random.default_rng(1)
    cs4 = calib_signs(4, 2)
    batch = np.arange(4)
    cal, cal_s = design_frames("p", "calib", cs4, batch, rng.normal(size=(12, 4)), rng.normal(size=(12, 4)))
    ev, ev_s = design_frames("p", "eval", cs4[:4], batch, rng.normal(size=(4, 4)), rng.normal(size=(4, 4)), run0=50)
    with pytest.raises(ValueError, match=r"the calibration sign vectors have m = 4"):
        pairwise_audit_table(cal, cal_s, ev, ev_s)
    cs, es, batch2, c, e = _design()
    cal2, cal2_s = design_frames("p", "calib", cs, batch2, c, c)
    with pytest.raises(ValueError, match=r"the evaluation sign vectors have m = 4"):
        pairwise_audit_table(cal2, cal2_s, ev, ev_s)
    ev2, ev2_s = design_frames("p", "eval", es, batch2, e, e, run0=500)
    table = pairwise_audit_table(cal2, cal2_s, ev2, ev2_s, scores=("loss",), zeta=0.1)
    assert list(table.score) == ["loss"] and (table.zeta == 0.1).all() and (table.experiment == "p").all()
