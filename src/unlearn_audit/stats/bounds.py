"""Statistically valid lower bounds on ε (paper Section 4, App. A.3, B, C; docs/bounds.md §0).

* :func:`epsilon_lower_bound` — Theorem 4.2 (mean: Chernoff bound, Eq. 1; median:
  Eq. 2) and, for δ > 0, Lemma C.1, solved for ε.  ``epsilon_ldp`` is the bound for
  the induced LDP mechanism; ``epsilon_lb = epsilon_ldp / 2`` is the unlearning bound
  (Lemma 4.1 / Theorem 4.1).  ``method="exact"`` / ``"mgf"`` dispatch to the tighter δ = 0
  tests of :mod:`.posterior_tests` (docs/bounds.md §1–5).
* :func:`pairwise_epsilon_lower_bound` — Eq. 3 with Clopper–Pearson intervals.
* :func:`gdp_mu_lower_bound`, :func:`gdp_mu_lower_bound_from_accuracy`,
  :func:`gdp_delta`, :func:`gdp_epsilon` — the μ-GDP view.
* :func:`unlearning_epsilon_lower_bound`, :func:`pairwise_unlearning_epsilon_lower_bound`,
  :func:`pairwise_unlearning_mu_lower_bound` — the same tests read as bounds on an (ε, δ)
  *unlearning* claim, which induces a (2ε, (1 + e^ε)δ) mechanism (δ-aware Lemma 4.1).

Everything is computed in log space (``gammaln``, ``logsumexp``), so m in the
hundreds of thousands, with counts like 10^30000, is exact to float precision.

For every δ < M'/K the pointwise bound factorises, π_ε(u) = N_u · g(ε) with
g(ε) = (e^ε + a)/(e^ε + M' − 1), a = (M'−1)/M' · K · δ (Corollaries B.2, C.3).
Hence the λ-minimisation of Eq. 1 and the tail of Eq. 2 do not depend on ε, and
setting the bound to ζ gives log g(ε) in closed form; ε follows by inverting g.

Depends on numpy and scipy only (and the library's pure-Python :mod:`unlearn_audit.checks`).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, fields, replace
from typing import Sequence

import numpy as np
from scipy.optimize import brentq
from scipy.special import betainccinv, betaincinv, logsumexp, ndtri

from ..checks import check_count as _check_count
from ..checks import check_delta as _check_delta
from ..checks import check_error_counts as _check_errors
from ..checks import check_zeta as _check_zeta
from .gaussian_mechanism import hockey_stick_delta
from .posterior_tests import METHODS, posterior_epsilon_ldp
from .selection import Cell
from .signs import check_m_r
from .theorem42 import (  # noqa: F401  (re-exported: the public names and the helpers tests reach)
    ALL_STATISTICS,
    STATISTICS,
    log_comb,
    log_g_threshold,
    log_g_to_epsilon,
    log_mgf_min,
    log_num_guesses,
    log_num_sign_vectors,
    log_overlap_counts,
    max_delta,
)

__all__ = [
    "prepare_overlaps",
    "log_g_factor",
    "log_tail_bound",
    "PARAMETERS",
    "Bound",
    "EpsilonMuBounds",
    "pairwise_error_limits",
    "STATISTICS",
    "ALL_STATISTICS",
    "log_num_sign_vectors",
    "log_num_guesses",
    "log_overlap_counts",
    "max_delta",
    "audit_tail_bound",
    "epsilon_lower_bound",
    "clopper_pearson_upper",
    "clopper_pearson_lower",
    "pairwise_epsilon_lower_bound",
    "gdp_mu_lower_bound",
    "gdp_mu_lower_bound_from_accuracy",
    "gdp_delta",
    "gdp_epsilon",
    "unlearning_epsilon_lower_bound",
    "pairwise_unlearning_epsilon_lower_bound",
    "pairwise_unlearning_mu_lower_bound",
]

#: Bounds at or below this are reported as 0 and not rejected: every test reports
#: sup{ε ≥ 0 : p_ε ≤ ζ} with ``rejected = bound > 0``, and at p_0 = ζ exactly that sup is 0 but the
#: solvers can land a rounding error above it (docs/bounds.md §5).
ZERO_BOUND_TOL = 1e-12


def as_bound(value: float) -> float:
    """A solved bound under the one convention: 0 when it is 0 up to rounding (≤ ZERO_BOUND_TOL)
    or not a positive number, else the value."""
    value = float(value)
    return value if value > ZERO_BOUND_TOL else 0.0


#: What a :class:`Bound` bounds: the ε of (ε, δ)-indistinguishability or the μ of μ-GDP.
PARAMETERS = ("epsilon", "mu")


@dataclass(frozen=True)
class Bound:
    """One lower bound of one test on one audit's overlaps: every bound of the sign-vector tests
    and every row of a BOUNDS table comes from one (docs/bounds.md).

    ``parameter`` says what is bounded, "epsilon" or "mu".  ``ldp`` bounds the induced LDP (or
    GDP) mechanism on S_m; ``lb`` the unlearning claim: ``ldp / 2`` by Lemma 4.1, or the test's own
    route (Lemma C.1 with δ for an (ε, δ) claim; §6a's common reference for μ).  ``rejected`` is
    True iff the test rejects H0: parameter ≤ 0 at level ζ, i.e. ``ldp > 0``.  ``method`` names
    the test: "theorem4.2" (Eq. 1/2, Lemma C.1), "exact", "mgf", "adaptive"
    (:mod:`.posterior_tests`), "lemma_c1" or "tradeoff" for μ (:mod:`.gdp_overlaps`), "eq3" for
    Eq. 3 and the μ of the same confusion counts, "accuracy" for μ = 2Φ⁻¹(acc_LB) of a two-point
    guessing game (:mod:`unlearn_audit.auditors.weight_space`).  ``delta``
    is the δ the test assumed (0 for μ).  ``cell`` is the pre-registered cell (r, statistic, score,
    test) the bound answers and ``ceiling`` the largest ``lb`` the same test gives on the same
    (m, r, L, ζ) when every guess is right (App. F), where the caller knows them; None otherwise.

    ``epsilon_ldp``/``epsilon_lb`` (ε bounds) and ``mu_ldp``/``mu_lb`` (μ bounds) read ``ldp``
    and ``lb`` under their parameter's name; reading the other parameter's is an AttributeError.
    """

    parameter: str
    ldp: float
    lb: float
    rejected: bool
    statistic: str
    statistic_value: float
    m: int
    r: int
    L: int
    zeta: float
    delta: float = 0.0
    method: str = "theorem4.2"
    cell: Cell | None = None
    ceiling: float | None = None

    def __post_init__(self):
        if self.parameter not in PARAMETERS:
            raise ValueError(f"parameter must be one of {PARAMETERS}, got {self.parameter!r}")

    def _named(self, parameter: str, value: float) -> float:
        if self.parameter != parameter:
            raise AttributeError(f"a bound on {self.parameter} has no {parameter} value")
        return value

    @property
    def epsilon_ldp(self) -> float:
        return self._named("epsilon", self.ldp)

    @property
    def epsilon_lb(self) -> float:
        return self._named("epsilon", self.lb)

    @property
    def mu_ldp(self) -> float:
        return self._named("mu", self.ldp)

    @property
    def mu_lb(self) -> float:
        return self._named("mu", self.lb)

    def record(self) -> dict:
        """The bound as a flat record under its parameter's names (``epsilon_ldp``, ``epsilon_lb``, …
        or ``mu_ldp``, ``mu_lb``, …), as the CLI prints it; ``cell`` and ``ceiling`` where set."""
        out = {f"{self.parameter}_ldp": self.ldp, f"{self.parameter}_lb": self.lb}
        out.update((f.name, getattr(self, f.name)) for f in fields(self) if f.name not in ("parameter", "ldp", "lb", "cell", "ceiling"))
        if self.cell is not None:
            out["cell"] = asdict(self.cell)
        if self.ceiling is not None:
            out[f"{self.parameter}_lb_ceiling"] = self.ceiling
        return out

    def answering(self, cell: Cell | None = None, ceiling: float | None = None) -> "Bound":
        """This bound with its pre-registered cell and ceiling filled in."""
        return replace(self, cell=cell if cell is not None else self.cell, ceiling=ceiling if ceiling is not None else self.ceiling)


class EpsilonMuBounds:
    """The shape of every audit result that reports an ε bound and a μ bound of the same runs:
    its ``epsilon`` and ``mu`` fields are :class:`Bound` objects, ``epsilon_lb`` and ``mu_lb``
    read them (the pairwise audit, App. A.3; a weight-space audit's likelihood-ratio test and
    Algorithm 1 on a pair of hypotheses, App. H.1)."""

    epsilon: Bound
    mu: Bound

    @property
    def epsilon_lb(self) -> float:
        return self.epsilon.lb

    @property
    def mu_lb(self) -> float:
        return self.mu.lb

    def delta_lb(self, epsilon: float) -> float:
        """δ(ε) of a μ_LB-GDP mechanism (:func:`gdp_delta`): for a Gaussian pair (exactly μ-GDP)
        δ(ε) increases with μ, so this lower-bounds the pair's δ(ε) whenever μ_LB ≤ μ."""
        return gdp_delta(self.mu_lb, epsilon)

    def epsilon_lb_gdp(self, delta: float) -> float:
        """ε(δ) of a μ_LB-GDP mechanism (:func:`gdp_epsilon`)."""
        return gdp_epsilon(self.mu_lb, delta)


def prepare_overlaps(overlaps, r: int) -> np.ndarray:
    try:
        v = np.asarray(overlaps, dtype=float).ravel()
    except (TypeError, ValueError):
        raise ValueError("overlaps must be a sequence of numbers (one overlap V per run)") from None
    if v.size == 0:
        raise ValueError("overlaps is empty: give at least one overlap V (one per evaluation run)")
    if not np.all(np.isfinite(v)):
        raise ValueError("overlaps contain NaN or infinite values")
    if np.any(v != np.round(v)):
        raise ValueError("overlaps must be integers (V counts correct non-zero guesses)")
    if np.any(v < 0) or np.any(v > r):
        raise ValueError(f"overlaps must lie in [0, r] = [0, {r}]; got min {v.min():g}, max {v.max():g}")
    return v


def _check_delta_monotone(m: int, r: int, delta: float) -> None:
    if delta > 0 and math.log(delta) + log_num_guesses(m, r) >= log_num_sign_vectors(m):
        raise ValueError(
            f"delta = {delta:g} is too large for m = {m}, r = {r}: Lemma C.1 gives a valid test only "
            f"for delta < M'/K = {max_delta(m, r):.6g} (M' = |S_m|, K = number of guesses); "
            "use a smaller delta or a smaller r"
        )


def epsilon_lower_bound(
    overlaps: Sequence[float],
    m: int,
    r: int,
    *,
    zeta: float = 0.05,
    statistic: str = "mean",
    delta: float = 0.0,
    method: str = "theorem4.2",
) -> Bound:
    """Lower bound on ε from the overlaps V^(1..L) of L independent audit runs (Theorem 4.2).

    Parameters
    ----------
    overlaps : per-run overlap scores V ∈ {0, …, r}.
    m : number of candidate forget batches.
    r : guess budget (even, 0 < r ≤ m).
    zeta : significance level ζ ∈ (0, 1); the bound is valid with probability ≥ 1 − ζ.
    statistic : "mean" (Chernoff bound, Eq. 1), "median" (Eq. 2) or "perfect" (the number of runs with
        V = r against Binomial(L, q_ε(r)); ``method="exact"`` only, docs/bounds.md §4a).
    delta : δ ∈ [0, M'/K) of the LDP mechanism (Lemma C.1); 0 is Theorem 4.2.
    method : "theorem4.2" (default: Eq. 1/2, Lemma C.1); "exact" (δ = 0: exact tail of the
        L-fold convolution of the dominating law for the mean, exact binomial tail for the
        median), "mgf" (δ = 0, mean only: max-MGF Chernoff bound) or "adaptive", see
        :mod:`.posterior_tests` and docs/bounds.md.  The reference test of the unlearning claim
        (docs/bounds.md §6b) is :func:`.reference.reference_epsilon_lower_bound`.

    Returns
    -------
    Bound with ``epsilon_ldp`` ≥ 0 (0 and ``rejected=False`` when the test does not
    reject, including whenever the mean or median is ≤ r/2) and ``epsilon_lb = epsilon_ldp / 2``.
    ``epsilon_ldp`` is finite for every method at δ = 0.
    """
    check_m_r(m, r)
    m, r = int(m), int(r)
    zeta = _check_zeta(zeta)
    delta = _check_delta(delta)
    if statistic not in ALL_STATISTICS:
        raise ValueError(f"statistic must be one of {ALL_STATISTICS}, got {statistic!r}")
    if statistic == "perfect" and method != "exact":
        raise ValueError(f"statistic='perfect' (the perfect-guess count) is tested by method='exact' only (its exact "
                         f"binomial tail; Theorem 4.2 has no version of it), got method={method!r}")
    if method == "reference":
        raise ValueError("method='reference' bounds the unlearning claim, not the induced mechanism: use "
                         "unlearn_audit.reference_epsilon_lower_bound (or unlearn-audit bound --method reference)")
    if method != "theorem4.2":
        return _posterior_bound(overlaps, m, r, zeta, statistic, delta, method)
    _check_delta_monotone(m, r, delta)
    v = prepare_overlaps(overlaps, r)
    stat, log_g = log_g_threshold(v, m, r, zeta, statistic)
    eps = 0.0
    if stat > r / 2:
        eps = log_g_to_epsilon(log_g, m, r, delta)
        if not eps > 0.0:  # negative, −inf or NaN: not rejected
            eps = 0.0
    return _result(eps, statistic, stat, m, r, v.size, zeta, delta, "theorem4.2")


def _result(eps: float, statistic: str, stat: float, m: int, r: int, L: int, zeta: float, delta: float, method: str) -> Bound:
    """The :class:`Bound` of a solved ε_LDP (ε_LB = ε_LDP / 2, Lemma 4.1)."""
    eps = as_bound(eps)
    return Bound(
        parameter="epsilon", ldp=float(eps), lb=float(eps) / 2.0, rejected=bool(eps > 0.0), statistic=statistic,
        statistic_value=stat, m=m, r=r, L=int(L), zeta=zeta, delta=delta, method=method,
    )


def _posterior_bound(overlaps, m: int, r: int, zeta: float, statistic: str, delta: float, method: str) -> Bound:
    """The δ = 0 tests of :mod:`.posterior_tests` ("exact", "mgf"), as an :class:`Bound`."""
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}, got {method!r}")
    if delta > 0:
        raise ValueError(f"method={method!r} supports delta = 0 only; use method='theorem4.2' (Lemma C.1) for delta > 0")
    v = prepare_overlaps(overlaps, r)
    stat, eps = posterior_epsilon_ldp(v, m, r, zeta=zeta, statistic=statistic, method=method)
    return _result(eps, statistic, stat, m, r, v.size, zeta, delta, method)


def log_g_factor(epsilon, m: int, r: int, log_delta):
    """log g(ε; δ) = log((e^ε + (M' − 1)/M' · K · δ) / (e^ε + M' − 1)), the per-run factor of the
    tail bounds of Theorem 4.2 (δ = 0, ``log_delta = −inf``) and Lemma C.1.

    Vectorised over ``epsilon`` and ``log_delta`` (broadcast); a float for scalar input.
    """
    log_mp = log_num_sign_vectors(m)
    log_b = log_mp + math.log1p(-math.exp(-log_mp))  # log(M' − 1)
    # logaddexp(ε, −inf) is exactly ε, so δ = 0 needs no special case
    log_num = np.logaddexp(epsilon, log_b - log_mp + log_num_guesses(m, r) + np.asarray(log_delta, dtype=float))
    out = log_num - np.logaddexp(epsilon, log_b)
    return float(out) if np.ndim(out) == 0 else out


def audit_tail_bound(
    value: float,
    m: int,
    r: int,
    L: int,
    epsilon: float,
    *,
    statistic: str = "mean",
    delta: float = 0.0,
) -> float:
    """Right-hand side of Eq. 1 (mean) or Eq. 2 (median) at ε: an upper bound on
    Pr[statistic ≥ value] for any (ε, δ)-LDP mechanism — the p-value of the claim ε.
    Capped at 1.
    """
    check_m_r(m, r)
    delta = _check_delta(delta)
    _check_delta_monotone(m, r, delta)
    if statistic not in STATISTICS:
        raise ValueError(f"statistic must be one of {STATISTICS}, got {statistic!r}")
    L = _check_count(L, "L")
    if L == 0:
        raise ValueError("L must be >= 1")
    epsilon = float(epsilon)
    if not epsilon >= 0:
        raise ValueError(f"epsilon must be >= 0, got {epsilon!r}")
    log_g = log_g_factor(epsilon, m, r, math.log(delta) if delta > 0 else -math.inf)
    return float(min(1.0, math.exp(log_tail_bound(value, m, r, L, log_g, statistic))))


def log_tail_bound(value: float, m: int, r: int, L: int, log_g: float, statistic: str) -> float:
    """log of Eq. 1 (mean: L·(log g + min_λ[log Σ_u e^{λu} N_u − λ·value])) or Eq. 2 (median:
    log C(L, ⌈L/2⌉) + ⌈L/2⌉·(log g + log Σ_{u ≥ ⌈value⌉} N_u)) for the per-run factor ``log_g``,
    capped at 0; −inf for a median above r."""
    log_n = log_overlap_counts(m, r)
    if statistic == "mean":
        log_p = L * (log_g + log_mgf_min(log_n, float(value)))
    else:
        k = (int(L) + 1) // 2
        start = max(int(math.ceil(value)), 0)
        if start > r:
            return -math.inf
        log_p = float(log_comb(L, k)) + k * (log_g + float(logsumexp(log_n[start:])))
    return float(min(log_p, 0.0))


# --------------------------------------------------------------------------------------
# Clopper–Pearson, pairwise (Eq. 3) and μ-GDP
# --------------------------------------------------------------------------------------
def clopper_pearson_upper(k: int, n: int, alpha: float) -> float:
    """Upper end of a one-sided level-(1−α) Clopper–Pearson interval for a binomial rate."""
    if k >= n:
        return 1.0
    return float(betainccinv(k + 1, n - k, alpha))  # the Beta(k+1, n−k) upper α-quantile


def clopper_pearson_lower(k: int, n: int, alpha: float) -> float:
    """Lower end of a one-sided level-(1−α) Clopper–Pearson interval for a binomial rate."""
    if k <= 0:
        return 0.0
    return float(betaincinv(k, n - k + 1, alpha))  # the Beta(k, n−k+1) lower α-quantile


def _safe_log_ratio(num: float, den: float) -> float:
    if num <= 0.0:
        return -math.inf
    return math.log(num) - math.log(den)


def pairwise_error_limits(fp, n_neg, fn, n_pos, *, zeta: float = 0.05) -> tuple[float, float]:
    """(FP_hi, FN_hi): the upper ends of two-sided 1−ζ Clopper–Pearson intervals (each tail ζ/2)
    for the false-positive rate (fp of n_neg negatives) and the false-negative rate (fn of n_pos):
    what Eq. 3 and the μ-GDP bound of a confusion matrix read."""
    fp, n_neg = _check_errors(fp, n_neg, "fp", "n_neg")
    fn, n_pos = _check_errors(fn, n_pos, "fn", "n_pos")
    zeta = _check_zeta(zeta)
    return clopper_pearson_upper(fp, n_neg, zeta / 2), clopper_pearson_upper(fn, n_pos, zeta / 2)


def _eq3_bound(ldp: float, lb: float, fp: int, n_neg: int, fn: int, n_pos: int, zeta: float, delta: float) -> Bound:
    """Eq. 3 as a :class:`Bound`: m = r = 2, L = n_neg + n_pos runs, statistic the error rate."""
    runs = n_neg + n_pos
    return Bound("epsilon", float(ldp), float(lb), lb > 0.0, "error_rate", (fp + fn) / runs, 2, 2, runs, zeta, delta, "eq3")


def pairwise_epsilon_lower_bound(fp, n_neg, fn, n_pos, *, zeta: float = 0.05, delta: float = 0.0) -> Bound:
    """Eq. 3: ε_LB = max{log((1−δ−FP_hi)/FN_hi), log((1−δ−FN_hi)/FP_hi)}, clamped at 0, for a pair
    of hypotheses claimed (ε, δ)-indistinguishable (the bound is on the pair itself: ``ldp`` =
    ``lb``); FP_hi, FN_hi from :func:`pairwise_error_limits`.  A :class:`Bound` of method "eq3".
    """
    fp, n_neg = _check_errors(fp, n_neg, "fp", "n_neg")
    fn, n_pos = _check_errors(fn, n_pos, "fn", "n_pos")
    zeta = _check_zeta(zeta)
    delta = _check_delta(delta)
    fp_hi, fn_hi = pairwise_error_limits(fp, n_neg, fn, n_pos, zeta=zeta)
    eps = float(max(_safe_log_ratio(1 - delta - fp_hi, fn_hi), _safe_log_ratio(1 - delta - fn_hi, fp_hi), 0.0))
    return _eq3_bound(eps, eps, fp, n_neg, fn, n_pos, zeta, delta)


def gdp_mu_lower_bound(fp, n_neg, fn, n_pos, *, zeta: float = 0.05) -> float:
    """μ_LB = max(0, Φ⁻¹(1 − FP_hi) − Φ⁻¹(FN_hi)) from error counts (μ-GDP trade-off curve).

    FP_hi, FN_hi from :func:`pairwise_error_limits` (two-sided 1−ζ Clopper–Pearson).
    """
    fp_hi, fn_hi = pairwise_error_limits(fp, n_neg, fn, n_pos, zeta=zeta)
    return float(max(0.0, -ndtri(fp_hi) - ndtri(fn_hi)))


def gdp_mu_lower_bound_from_accuracy(correct, total, *, zeta: float = 0.05) -> float:
    """μ_LB = max(0, 2Φ⁻¹(acc_LB)) from a two-hypothesis guessing game with equal priors
    (Algorithm 1 with m = r = 2); acc_LB is the one-sided 1−ζ Clopper–Pearson lower bound.
    The best accuracy against μ-GDP is Φ(μ/2).
    """
    correct, total = _check_errors(correct, total, "correct", "total")
    zeta = _check_zeta(zeta)
    acc_lb = clopper_pearson_lower(correct, total, zeta)
    return float(max(0.0, 2.0 * ndtri(acc_lb))) if acc_lb > 0 else 0.0


def gdp_delta(mu: float, epsilon: float) -> float:
    """δ(ε) = Φ(−ε/μ + μ/2) − e^ε Φ(−ε/μ − μ/2) of a μ-GDP mechanism (Dong, Roth & Su 2022)."""
    mu = float(mu)
    if not mu >= 0:
        raise ValueError(f"mu must be >= 0, got {mu!r}")
    epsilon = float(epsilon)
    if not (epsilon >= 0 and math.isfinite(epsilon)):
        raise ValueError(f"epsilon must be a finite number >= 0, got {epsilon!r}")
    return float(hockey_stick_delta(epsilon, mu))


def gdp_epsilon(mu: float, delta: float) -> float:
    """Smallest ε ≥ 0 with δ(ε) ≤ delta for a μ-GDP mechanism (inverse of :func:`gdp_delta`)."""
    mu = float(mu)
    if not (mu >= 0 and math.isfinite(mu)):
        raise ValueError(f"mu must be a finite number >= 0, got {mu!r}")
    delta = float(delta)
    if not (0.0 < delta < 1.0):
        raise ValueError(f"delta must lie in (0, 1), got {delta!r}")
    if gdp_delta(mu, 0.0) <= delta:
        return 0.0
    hi = max(1.0, mu * mu)
    while gdp_delta(mu, hi) > delta:
        hi *= 2.0
    return float(brentq(lambda e: gdp_delta(mu, e) - delta, 0.0, hi, xtol=1e-12, rtol=1e-12, maxiter=500))


# --------------------------------------------------------------------------------------
# δ-aware Lemma 4.1: bounds for the (ε, δ) unlearning claim itself
# --------------------------------------------------------------------------------------
_REL_TOL = 1e-10


def _log_induced_delta(epsilon: float, log_delta: float) -> float:
    """log((1 + e^ε) δ): the δ of the LDP mechanism induced by an (ε, δ) unlearning claim."""
    return log_delta + float(np.logaddexp(0.0, epsilon))


def _unlearning_cap(m: int, r: int, delta: float) -> float:
    """log(M'/(Kδ) − 1): the ε at which (1 + e^ε)δ reaches Lemma C.1's limit M'/K (+inf at δ = 0)."""
    if delta == 0.0:
        return math.inf
    x = log_num_sign_vectors(m) - log_num_guesses(m, r) - math.log(delta)  # log(M'/(Kδ))
    if x <= 0.0:
        return -math.inf
    return x + math.log1p(-math.exp(-x))


def unlearning_epsilon_lower_bound(
    overlaps: Sequence[float],
    m: int,
    r: int,
    *,
    zeta: float = 0.05,
    statistic: str = "mean",
    delta: float = 0.0,
) -> Bound:
    """Lower bound on the ε of an (ε, δ)-certified unlearning claim (Lemma 4.1 with δ, Lemma C.1).

    If (A, U) is (ε, δ)-certified unlearning, then U(A(D(S))) and U(A(D(S'))) are both
    (ε, δ)-close to A(D_r), so by group privacy through A(D_r) the induced mechanism on S_m is
    (2ε, (1 + e^ε)δ)-LDP:  P[M(S) ∈ T] ≤ e^ε (e^ε P[M(S') ∈ T] + δ) + δ (Section 4, footnote 3).
    The p-value of the claim ε is therefore
    ``p(ε) = audit_tail_bound(stat, m, r, L, 2ε, statistic, delta=(1 + e^ε)δ)`` (Eq. 1/2 via
    Lemma C.1), non-decreasing in ε, and the bound is

        ε_LB = sup{ε ≥ 0 : p(ε) ≤ ζ},

    found by bisection to 1e-10 relative (the returned ε_LB always has p(ε_LB) ≤ ζ).

    Parameters
    ----------
    overlaps, m, r, zeta, statistic : as in :func:`epsilon_lower_bound`.
    delta : δ ∈ [0, 1) of the *unlearning* claim (not of the LDP mechanism).

    Returns
    -------
    Bound with ``epsilon_lb`` = ε_LB, ``epsilon_ldp`` = 2·ε_LB and ``delta`` = the
    unlearning δ.  At δ = 0 it is exactly :func:`epsilon_lower_bound`'s result.

    Notes
    -----
    **The cap.**  Lemma C.1 is a valid (monotone) test only while the induced δ' = (1 + e^ε)δ is
    below M'/K.  Claims with ε ≥ log(M'/(Kδ) − 1) induce δ' ≥ M'/K and cannot be rejected (at
    the cap g(ε) of Corollary C.3 reaches 1 and the tail bound is ≥ 1), so
    ε_LB < log(M'/(Kδ) − 1) always, however many runs show however strong a signal; ε_LB
    approaches the cap only as L → ∞.  If already 2δ ≥ M'/K (no ε ≥ 0 is testable) a
    ``ValueError`` is raised.
    """
    check_m_r(m, r)
    m, r = int(m), int(r)
    zeta = _check_zeta(zeta)
    delta = _check_delta(delta)
    if statistic not in STATISTICS:
        raise ValueError(f"statistic must be one of {STATISTICS}, got {statistic!r}")
    if delta == 0.0:
        return epsilon_lower_bound(overlaps, m, r, zeta=zeta, statistic=statistic, delta=0.0)
    cap = _unlearning_cap(m, r, delta)
    if not cap > 1e-9:  # 2δ ≥ M'/K, up to the rounding of log M' − log K
        raise ValueError(
            f"delta = {delta:g} is too large for m = {m}, r = {r}: an (ε, δ) unlearning claim induces a "
            f"(2ε, (1 + e^ε)δ)-LDP mechanism and Lemma C.1 needs (1 + e^ε)δ < M'/K = {max_delta(m, r):.6g}, "
            f"which fails already at ε = 0 (need delta < M'/(2K) = {max_delta(m, r) / 2:.6g}); "
            "use a smaller delta or a smaller r"
        )
    v = prepare_overlaps(overlaps, r)
    stat, log_g_star = log_g_threshold(v, m, r, zeta, statistic)
    log_delta = math.log(delta)

    def rejects(eps: float) -> bool:
        """p(ε) ≤ ζ, i.e. log g(2ε; (1 + e^ε)δ) ≤ log g* (and δ' < M'/K)."""
        if not eps < cap:
            return False
        return log_g_factor(2 * eps, m, r, _log_induced_delta(eps, log_delta)) <= log_g_star

    def p_value(eps: float) -> float:
        try:
            return audit_tail_bound(stat, m, r, int(v.size), 2 * eps, statistic=statistic,
                                    delta=delta * (1.0 + math.exp(eps)))
        except ValueError:  # δ' within rounding of M'/K: not testable
            return 1.0

    eps = 0.0
    if stat > r / 2 and rejects(0.0) and p_value(0.0) <= zeta:
        lo, hi = 0.0, cap  # rejects(lo) holds, rejects(hi) fails (g = 1 at the cap)
        while hi - lo > _REL_TOL * hi:
            mid = 0.5 * (lo + hi)
            if rejects(mid):
                lo = mid
            else:
                hi = mid
        # the returned ε must pass the tail bound as computed by audit_tail_bound (rounding)
        for _ in range(1000):
            if lo == 0.0 or p_value(lo) <= zeta:
                break
            lo = max(lo * (1.0 - 1e-12) - 1e-300, 0.0)
        else:  # pragma: no cover - rounding never needs this many steps
            lo = 0.0
        eps = as_bound(lo)
    return _result(2.0 * eps, statistic, stat, m, r, v.size, zeta, delta, "theorem4.2")  # ε_LB = ε_LDP / 2 = eps


def _pair_unlearning_epsilon(c: float, f_hi: float, delta: float) -> float:
    """Largest ε with 2ε < log((1 − (1 + e^ε)δ − other_hi)/f_hi), c = 1 − δ − other_hi.

    Setting the two sides equal gives f_hi·x² + δ·x − c = 0 in x = e^ε, whose positive root is
    2c / (δ + sqrt(δ² + 4 f_hi c)) (the stable form); −inf when c ≤ 0.
    """
    if c <= 0.0:
        return -math.inf
    x = 2.0 * c / (delta + math.sqrt(delta * delta + 4.0 * f_hi * c))
    return math.log(x)


def pairwise_unlearning_epsilon_lower_bound(fp, n_neg, fn, n_pos, *, zeta: float = 0.05, delta: float = 0.0) -> Bound:
    """Eq. 3 for the (ε, δ) unlearning claim of the pairwise auditor (App. A.3, Lemma 4.1 with δ).

    The two unlearned models are each (ε, δ)-close to A(D_r), hence (2ε, (1 + e^ε)δ)-
    indistinguishable.  The claim ε is rejected when Eq. 3's pair guarantee fails,

        2ε < max{log((1 − (1+e^ε)δ − FP_hi)/FN_hi), log((1 − (1+e^ε)δ − FN_hi)/FP_hi)},

    with FP_hi, FN_hi the two-sided 1−ζ Clopper–Pearson upper ends of
    :func:`pairwise_epsilon_lower_bound`.  The right side decreases in ε, so ε_LB, the largest
    rejected ε, solves a quadratic in e^ε (closed form); clamped at 0.

    Returns
    -------
    A :class:`Bound` of method "eq3" whose ``lb`` is the unlearning ε_LB at the unlearning δ and
    ``ldp`` twice it (the pair's).  At δ = 0 ``lb`` is exactly
    ``pairwise_epsilon_lower_bound(...).epsilon_lb / 2``.
    """
    fp, n_neg = _check_errors(fp, n_neg, "fp", "n_neg")
    fn, n_pos = _check_errors(fn, n_pos, "fn", "n_pos")
    zeta = _check_zeta(zeta)
    delta = _check_delta(delta)
    if delta == 0.0:
        eps = pairwise_epsilon_lower_bound(fp, n_neg, fn, n_pos, zeta=zeta, delta=0.0).epsilon_lb / 2.0
        return _eq3_bound(2.0 * eps, eps, fp, n_neg, fn, n_pos, zeta, delta)
    fp_hi, fn_hi = pairwise_error_limits(fp, n_neg, fn, n_pos, zeta=zeta)
    eps = max(
        _pair_unlearning_epsilon(1.0 - delta - fp_hi, fn_hi, delta),
        _pair_unlearning_epsilon(1.0 - delta - fn_hi, fp_hi, delta),
        0.0,
    )
    eps = float(eps)
    return _eq3_bound(2.0 * eps, eps, fp, n_neg, fn, n_pos, zeta, delta)


def pairwise_unlearning_mu_lower_bound(fp, n_neg, fn, n_pos, *, zeta: float = 0.05) -> float:
    """μ_LB of the unlearning pair: :func:`gdp_mu_lower_bound` / 2.

    The two unlearned models are each μ-GDP-close to A(D_r); Gaussian group privacy adds the μ's,
    so they are 2μ-GDP apart (docs/bounds.md §6, the μ analogue of Lemma 4.1's halving).
    """
    return gdp_mu_lower_bound(fp, n_neg, fn, n_pos, zeta=zeta) / 2.0
