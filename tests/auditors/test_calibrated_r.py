"""report_r: calibrated (auditors/calibrated_r.py; docs/bounds.md §9): r chosen by leave-one-out on the
calibration runs alone keeps the evaluation test at level ζ, statistically, on mechanisms with a known
unlearning ε against the retrained model; and the rule picks the r the held-out overlaps favour."""

from __future__ import annotations

import math

import numpy as np
import pytest

from unlearn_audit.auditors.calibrated_r import calibrated_r, loo_overlaps
from unlearn_audit.auditors.runs import PhaseRuns
from unlearn_audit.stats.reference import reference_epsilon_lower_bound
from unlearn_audit.stats.signs import sample_sign_vectors

ZETA = 0.05
R_GRID = (4, 8, 12)


def coordinate_response(signs: np.ndarray, eps: float, rng) -> np.ndarray:
    """One score per example (B = 1): Y_j = S_j with probability q, else −S_j, independently, against the
    retrained model's Y uniform on {±1}^m.  With q = 1 − e^{−ε/m}/2 every likelihood ratio lies in
    [(2(1 − q))^m, (2q)^m] ⊆ [e^{−ε}, e^ε]: the released scores are ε-indistinguishable from the
    reference's, the guess on them too (post-processing).  ε = 0: Y uniform, the null."""
    m = signs.shape[1]
    q = 1 - math.exp(-eps / m) / 2 if eps > 0 else 0.5
    return np.where(rng.random(signs.shape) < q, signs, -signs).astype(float) + 0.01 * rng.standard_normal(signs.shape)


def _runs(signs: np.ndarray, values: np.ndarray, phase: str) -> PhaseRuns:
    return PhaseRuns.from_arrays(values, signs, phase, batch=np.arange(signs.shape[1]))


def _audit(eps: float, rng, m: int = 12, gamma: int = 20, L: int = 10) -> float:
    cs, es = sample_sign_vectors(m, gamma, rng), sample_sign_vectors(m, L, rng)
    calib = _runs(cs, coordinate_response(cs, eps, rng), "calib")
    # the rule's criterion under Theorem 4.2 (fast; any rule that reads calibration runs only is valid), the claim the reference test's
    r, _ = calibrated_r(calib, R_GRID, zeta=ZETA, statistic="mean", test="theorem4.2")
    # the evaluation at the chosen r, with the Gaussians of all calibration runs
    from unlearn_audit.auditors.audit import SignVectorAudit
    from unlearn_audit.auditors.batchwise import Batchwise

    audit = SignVectorAudit.calibrate(Batchwise(), calib, _runs(es, coordinate_response(es, eps, rng), "eval"))
    return reference_epsilon_lower_bound(audit.overlaps(r), m, r, zeta=ZETA)


@pytest.mark.parametrize("eps", [0.0, 3.0])
def test_type_one_error_with_r_chosen_on_calibration_runs(eps):
    rng = np.random.default_rng(101 + int(eps))
    audits = 300
    rate = float(np.mean([_audit(eps, rng) > eps + 1e-9 for _ in range(audits)]))
    assert rate <= ZETA + 3 * math.sqrt(ZETA * (1 - ZETA) / audits), (eps, rate)


def test_the_rule_picks_the_r_of_the_largest_held_out_bound_and_reads_calibration_runs_only():
    rng = np.random.default_rng(5)
    m, gamma = 12, 24
    cs = sample_sign_vectors(m, gamma, rng)
    # strong signal on 4 examples only: small r sees them, a large r must add guesses at chance
    values = rng.standard_normal(cs.shape) + 4.0 * (cs == 1) * (np.arange(m) < 4)
    calib = _runs(cs, values, "calib")
    r, bounds = calibrated_r(calib, R_GRID, zeta=ZETA, statistic="mean", test="reference")
    assert r == max(bounds, key=lambda x: (bounds[x], -x)) and set(bounds) == set(R_GRID)
    assert r < 12 and bounds[r] > bounds[12]
    # leave-one-out: each held-out overlap is the guess of the other runs' fit, never of its own run
    overlaps = loo_overlaps(calib, [4])
    assert overlaps[4].shape == (gamma,) and overlaps[4].max() <= 4
    with pytest.raises(ValueError, match="at least 3 calibration runs"):
        calibrated_r(_runs(cs[:2], values[:2], "calib"), R_GRID, zeta=ZETA, statistic="mean", test="reference")
