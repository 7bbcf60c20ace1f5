"""Algorithm 3 (joint sign-vector prediction, Section 5 / App. A.4) and the pairwise baseline (App. A.3)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from unlearn_audit import schemas
from unlearn_audit.auditors import (
    fit_per_class,
    joint_audit_tables,
    joint_fit,
    joint_guesses,
    pairwise_audit,
    pairwise_audit_table,
)
from unlearn_audit.auditors.gaussian_fit import log_normal, variance_floor
from unlearn_audit.io import read_parquet, write_parquet
from unlearn_audit.stats.bounds import unlearning_epsilon_lower_bound
from unlearn_audit.stats.selection import Cell
from unlearn_audit.stats.signs import enumerate_sign_vectors, num_sign_vectors, overlap, sample_sign_vectors, sign_vector_rank


# ---------------------------------------------------------------------------------------------
# helpers: synthetic designs
# ---------------------------------------------------------------------------------------------
def _calib_signs(m: int, gamma: int) -> np.ndarray:
    """Γ runs of every S̃ ∈ S_m (Algorithm 3's calibration loop)."""
    return np.repeat(enumerate_sign_vectors(m), gamma, axis=0)


def _planted_scores(signs: np.ndarray, batch: np.ndarray, offsets: np.ndarray, rng, shift=1.5) -> np.ndarray:
    """Scores N(shift·S_batch + offset(S̃), 1): a per-batch signal plus a cross-batch, class-specific mean."""
    ranks = np.array([sign_vector_rank(s) for s in signs])
    mean = shift * signs[:, batch] + offsets[ranks]
    return mean + rng.standard_normal(mean.shape)


def _frames(experiment, phase, signs, batch, logit, loss, run0=0):
    """SCORES and SIGNS frames of one phase from arrays."""
    rows, srows = [], []
    for i, s in enumerate(signs):
        run = run0 + i
        srows.append({"design": experiment, "phase": phase, "run": run, "sign_index": run, "seed": 1000 + run, "signs": s.astype(np.int8)})
        for ex, b in enumerate(batch):
            rows.append({"experiment": experiment, "phase": phase, "run": run, "sign_index": run, "seed": 1000 + run, "batch": int(b),
                         "example": ex, "in_forget": bool(s[b] == 1), "score_logit": logit[i, ex], "score_loss": loss[i, ex]})
    return pd.DataFrame(rows), pd.DataFrame(srows)


# ---------------------------------------------------------------------------------------------
# fit_per_class
# ---------------------------------------------------------------------------------------------
def test_fit_per_class_moments_and_floor():
    rng = np.random.default_rng(0)
    scores = rng.normal(size=(7, 3))
    classes = np.array([0, 1, 0, 1, 0, 1, 1])
    scores[:, 2] = np.where(classes == 0, 4.0, -1.0)  # zero variance within each class
    fit = fit_per_class(scores, classes, 2)
    raw = np.stack([np.var(scores[classes == k], axis=0, ddof=1) for k in range(2)])
    for k in range(2):
        np.testing.assert_allclose(fit.mu[k], scores[classes == k].mean(axis=0), rtol=1e-14, atol=1e-15)
    np.testing.assert_allclose(fit.sd[:, :2] ** 2, raw[:, :2], rtol=1e-12)  # untouched by the floor
    floor = variance_floor(raw)
    assert floor > 0
    np.testing.assert_allclose(fit.sd[:, 2] ** 2, floor, rtol=1e-12)
    np.testing.assert_array_equal(fit.n, [3, 4])
    # log-likelihood: Σ_i log N with log σ terms
    x = rng.normal(size=(4, 3))
    ll = fit.log_likelihood(x)
    assert ll.shape == (4, 2)
    np.testing.assert_allclose(ll[:, 1], log_normal(x, fit.mu[1], fit.sd[1]).sum(axis=1), rtol=1e-13)


def test_fit_per_class_refuses_a_class_with_one_run():
    scores = np.arange(10.0).reshape(5, 2)
    with pytest.raises(ValueError, match=r"class 2 has 1 calibration run.*increase calibration runs per candidate"):
        fit_per_class(scores, np.array([0, 0, 1, 1, 2]), 3)
    with pytest.raises(ValueError, match=r"class 1 has 0 calibration run"):
        fit_per_class(scores, np.array([0, 0, 0, 2, 2]), 3)
    with pytest.raises(ValueError, match="at least 40 calibration runs"):
        joint_fit(np.zeros((20, 3)), _calib_signs(6, 1))


# ---------------------------------------------------------------------------------------------
# Algorithm 3: planted signal, no signal
# ---------------------------------------------------------------------------------------------
def test_planted_signal_is_recovered_and_rejects():
    m, B, gamma, L = 6, 3, 10, 100
    rng = np.random.default_rng(1)
    batch = np.repeat(np.arange(m), B)
    offsets = rng.normal(scale=0.5, size=(num_sign_vectors(m), batch.size))
    cs = _calib_signs(m, gamma)
    es = sample_sign_vectors(m, L, rng)
    c_logit, e_logit = _planted_scores(cs, batch, offsets, rng), _planted_scores(es, batch, offsets, rng)
    c_loss, e_loss = rng.normal(size=c_logit.shape), rng.normal(size=e_logit.shape)  # the loss carries no signal
    guesses = joint_guesses(joint_fit(c_logit, cs), e_logit, m)
    assert np.mean(np.all(guesses == es, axis=1)) >= 0.95

    cal, cal_s = _frames("exp", "calib", cs, batch, c_logit, c_loss)
    ev, ev_s = _frames("exp", "eval", es, batch, e_logit, e_loss, run0=10_000)
    ov, bd = joint_audit_tables(cal, ev, ev_s, cal_s, m, delta=0.01, primary=Cell(m, "mean", "logit"))
    logit = bd[(bd.score == "logit") & (bd.statistic == "mean")].iloc[0]
    assert logit.rejected and logit.epsilon_lb > 1.0 and logit.role == "preregistered"
    assert logit.delta == 0.01 and logit.r == m and math.isclose(logit.epsilon_ldp, 2 * logit.epsilon_lb)
    v = ov[ov.score == "logit"].sort_values("run").overlap.to_numpy()
    np.testing.assert_array_equal(v, overlap(guesses, es))
    assert logit.epsilon_lb == unlearning_epsilon_lower_bound(v, m, m, delta=0.01).epsilon_lb
    assert set(bd.role) == {"preregistered", "exploratory"} and len(bd) == 4


def test_no_signal_type_one_error():
    m, B, gamma, L, n_audits, zeta = 6, 3, 5, 30, 400, 0.05
    rng = np.random.default_rng(2)
    cs = _calib_signs(m, gamma)
    rejected = {"mean": 0, "median": 0}
    for _ in range(n_audits):
        fit = joint_fit(rng.normal(size=(cs.shape[0], m * B)), cs)
        es = sample_sign_vectors(m, L, rng)
        v = overlap(joint_guesses(fit, rng.normal(size=(L, m * B)), m), es)
        for stat in rejected:
            rejected[stat] += unlearning_epsilon_lower_bound(v, m, m, zeta=zeta, statistic=stat).rejected
    limit = zeta + 3 * math.sqrt(zeta * (1 - zeta) / n_audits)
    for stat, count in rejected.items():
        assert count / n_audits <= limit, (stat, count)


# ---------------------------------------------------------------------------------------------
# frames: schemas, phase guards, ties
# ---------------------------------------------------------------------------------------------
def _small_design(m=4, gamma=3, L=8, seed=3):
    rng = np.random.default_rng(seed)
    batch = np.repeat(np.arange(m), 2)
    cs, es = _calib_signs(m, gamma), sample_sign_vectors(m, L, rng)
    offsets = np.zeros((num_sign_vectors(m), batch.size))
    cal, cal_s = _frames("e1", "calib", cs, batch, _planted_scores(cs, batch, offsets, rng), rng.normal(size=(cs.shape[0], batch.size)))
    ev, ev_s = _frames("e1", "eval", es, batch, _planted_scores(es, batch, offsets, rng), rng.normal(size=(L, batch.size)), run0=100)
    return cal, cal_s, ev, ev_s


def test_joint_tables_match_schemas_and_guard_phases(tmp_path):
    cal, cal_s, ev, ev_s = _small_design()
    ov, bd = joint_audit_tables(cal, ev, ev_s, cal_s, 4, selection="bonferroni")
    write_parquet(ov, tmp_path / "ov.parquet", schemas.OVERLAPS)
    write_parquet(bd, tmp_path / "bd.parquet", schemas.BOUNDS)
    assert len(read_parquet(tmp_path / "bd.parquet", schemas.BOUNDS)) == 4
    assert len(read_parquet(tmp_path / "ov.parquet", schemas.OVERLAPS)) == 2 * 8
    assert set(bd.role) == {"selected", "candidate"} and np.allclose(bd.zeta, 0.05 / 4)
    leaked = pd.concat([cal, ev[ev.run == ev.run.min()]], ignore_index=True)
    with pytest.raises(ValueError, match="calibration and evaluation must not mix"):
        joint_audit_tables(leaked, ev, ev_s, cal_s, 4)
    with pytest.raises(ValueError, match="calibration and evaluation must not mix"):
        joint_audit_tables(cal, ev, ev_s, pd.concat([cal_s, ev_s], ignore_index=True), 4)
    bad = cal_s.copy()
    bad["signs"] = [-s for s in bad["signs"]]
    with pytest.raises(ValueError, match="in_forget disagrees"):
        joint_audit_tables(cal, ev, ev_s, bad, 4)


def test_ties_go_to_the_lowest_rank():
    m = 4
    cs = _calib_signs(m, 2)
    scores = np.tile([[0.0, 1.0, 2.0], [1.0, 3.0, 2.5]], (cs.shape[0] // 2, 1))  # every class fits the same Gaussians
    fit = joint_fit(scores, cs)
    ll = fit.log_likelihood(np.array([[0.3, 2.0, 2.2], [-1.0, 0.0, 5.0]]))
    assert np.all(np.isfinite(ll)) and np.all(ll == ll[:, :1])  # exact ties
    guesses = joint_guesses(fit, np.array([[0.3, 2.0, 2.2], [-1.0, 0.0, 5.0]]), m)
    np.testing.assert_array_equal(guesses, np.stack([enumerate_sign_vectors(m)[0]] * 2))
    # break the tie in favour of the last class: its guess wins
    scores[-2:, 0] += 1e-3  # the last class's mean moves, its variance does not
    fit = joint_fit(scores, cs)
    assert sign_vector_rank(joint_guesses(fit, np.array([[0.501, 2.0, 2.25]]), m)[0]) == num_sign_vectors(m) - 1


# ---------------------------------------------------------------------------------------------
# pairwise baseline (App. A.3)
# ---------------------------------------------------------------------------------------------
def test_pairwise_confusion_matrix_and_table():
    rng = np.random.default_rng(4)
    cs = _calib_signs(2, 20)
    es = sample_sign_vectors(2, 60, rng)
    batch = np.array([0, 0, 1])
    off = np.zeros((2, 3))
    c, e = _planted_scores(cs, batch, off, rng, shift=1.0), _planted_scores(es, batch, off, rng, shift=1.0)
    res = pairwise_audit(c, cs, e, es, delta=0.01)
    guess = joint_guesses(joint_fit(c, cs), e, 2)
    pos, pred = es[:, 0] == 1, guess[:, 0] == 1
    assert (res.fp, res.n_neg, res.fn, res.n_pos) == (int((pred & ~pos).sum()), int((~pos).sum()), int((~pred & pos).sum()), int(pos.sum()))
    assert res.epsilon_lb > 0 and res.mu_lb > 0 and res.delta == 0.01

    cal, cal_s = _frames("p", "calib", cs, batch, c, c)
    ev, ev_s = _frames("p", "eval", es, batch, e, e, run0=500)
    table = pairwise_audit_table(cal, cal_s, ev, ev_s, delta=0.01)
    assert list(table.columns) == ["experiment", "auditor", "score", "fp", "n_neg", "fn", "n_pos", "zeta", "delta", "epsilon_lb", "mu_lb"]
    assert list(table.score) == ["logit", "loss"] and set(table.auditor) == {"pairwise"}
    assert table.epsilon_lb.iloc[0] == res.epsilon_lb and table.fp.iloc[0] == res.fp

    cs6 = _calib_signs(4, 2)
    with pytest.raises(ValueError, match="needs m = 2"):
        pairwise_audit(np.zeros((cs6.shape[0], 3)), cs6, np.zeros((2, 3)), cs6[:2])


def test_pairwise_columns_are_the_pairwise_schema():
    from unlearn_audit import schemas
    from unlearn_audit.auditors.pairwise import PAIRWISE_COLUMNS

    assert PAIRWISE_COLUMNS == tuple(schemas.PAIRWISE.names)
