"""Sizing an audit before paying for it: the ε_LB an audit of given (m, B, r, Γ, L) can expect from a
membership signal of given strength, and its ceiling (docs/cli.md, ``unlearn-audit size``).

The model is Algorithm 2's own: each candidate example's score is Gaussian with a run-to-run spread
of 1, shifted by its d′ when the example is in the forget set (d′ = gap / spread), and the B scores
of one batch correlate by ρ across runs (``batch_correlation``; each batch's noise is
√(1−ρ)(e − ē) + √(1 + (B−1)ρ) ē of B independent normals e, whose covariance is (1−ρ)I + ρ11ᵀ).
Given one number, every example has that d′; given per-example values (a pilot's, with their
sampling noise deconvolved by :func:`~.signal.pilot_signal`, which also measures ρ), each simulated
example draws one of them (with replacement), so the pilot's spread of signals carries over; a pilot
of exactly m·B examples keeps its values in its (batch, example) order.  Each simulated audit draws Γ
calibration and L evaluation runs with uniform sign vectors, fits the per-example Gaussians on the
calibration runs, guesses every evaluation run at r and bounds the overlaps under the pre-registered
statistic and test.  Calibration sign vectors that leave some batch fewer than 2 runs in or out of
the forget set cannot be fitted (Algorithm 2, step 7): they are drawn again from the next child of
the seed's SeedSequence (``redraws`` counts them; a real audit of the design fails its fit about
redraws / (simulations + redraws) of the time).  The median over simulated audits is what to
expect; the 10th and 90th percentiles say how much one audit's bound moves.  A design whose expected
bound is 0 cannot show anything: enlarge m, r, Γ or L, or train models that memorise.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..checks import check_int, check_zeta
from ..stats.perfect_prediction import perfect_prediction_epsilon_lb
from ..stats.signs import check_m_r, sample_sign_vectors
from .audit import SignVectorAudit, claim_bound
from .batchwise import Batchwise
from .runs import PhaseRuns

__all__ = ["AuditSize", "expected_bound"]

#: The largest number of scores one simulated audit may hold ((Γ + L) · m · B), so that sizing
#: stays a few seconds: beyond it the command refuses with the numbers to lower.
MAX_SIMULATED_SCORES = 20_000_000

#: The most draws of one simulated audit's Γ calibration sign vectors before a design whose draws
#: leave some batch fewer than 2 runs in or out of the forget set is refused.
MAX_SIGN_DRAWS = 100


@dataclass(frozen=True)
class AuditSize:
    """What an audit of ``m`` batches of ``batch_size`` examples, guess budget ``r``,
    ``calibration_runs`` Γ and ``evaluation_runs`` L can expect at membership signal ``d_prime``."""

    d_prime: float
    m: int
    batch_size: int
    r: int
    calibration_runs: int
    evaluation_runs: int
    batch_correlation: float  # ρ of two examples of one batch across runs (module docstring)
    test: str
    statistic: str
    zeta: float
    simulations: int
    median: float
    q10: float
    q90: float
    ceiling: float            # Theorem 4.2's perfect-prediction ceiling of (m, r, L)
    test_ceiling: float       # the pre-registered test's, every guess right
    rejected_share: float     # the share of simulated audits whose bound is positive
    redraws: int              # calibration sign vectors drawn again, some batch < 2 runs in or out
    bounds: np.ndarray = field(default_factory=lambda: np.empty(0), repr=False, compare=False)  # each simulated audit's bound

    def record(self) -> dict:
        """The summary (every field but the simulated ``bounds``)."""
        return {k: v for k, v in self.__dict__.items() if k != "bounds"}


def _fittable(signs: np.ndarray) -> bool:
    """Every batch ≥ 2 of the calibration runs ``signs`` (Γ, m) in the forget set and ≥ 2 out (Algorithm 2, step 7)."""
    inside = (signs == 1).sum(axis=0)
    return bool(np.all(inside >= 2) and np.all(signs.shape[0] - inside >= 2))


def _calibration_signs(m: int, gamma: int, rng: np.random.Generator, redraw: np.random.SeedSequence) -> tuple[np.ndarray, int]:
    """Γ sign vectors from ``rng``, drawn again from the next child of ``redraw`` while they are not
    :func:`_fittable` (at most :data:`MAX_SIGN_DRAWS` draws); and the number of redraws."""
    signs, redraws = sample_sign_vectors(m, gamma, rng), 0
    while not _fittable(signs):
        redraws += 1
        if redraws == MAX_SIGN_DRAWS:
            raise ValueError(f"calibration_runs = {gamma} left some batch fewer than 2 calibration runs in or out of the forget set "
                             f"in {MAX_SIGN_DRAWS} draws of one simulated audit's sign vectors: give more calibration runs")
        signs = sample_sign_vectors(m, gamma, np.random.default_rng(redraw.spawn(1)[0]))
    return signs, redraws


def _noise(rng: np.random.Generator, runs: int, m: int, batch_size: int, rho: float) -> np.ndarray:
    """(runs, m·B) standard normal scores whose B examples of one batch correlate by ``rho`` (module docstring)."""
    e = rng.standard_normal((runs, m, batch_size))
    mean = e.mean(axis=2, keepdims=True)
    return (np.sqrt(1 - rho) * (e - mean) + np.sqrt(1 + (batch_size - 1) * rho) * mean).reshape(runs, m * batch_size)


def _check_rho(rho, batch_size: int) -> float:
    """ρ of a batch of B examples: a correlation matrix (1−ρ)I + ρ11ᵀ needs −1/(B−1) ≤ ρ ≤ 1."""
    rho = float(rho)
    low = -1.0 / (batch_size - 1) if batch_size > 1 else -1.0
    if not low <= rho <= 1.0:
        raise ValueError(f"batch_correlation must be in [{low:.3g}, 1] for batches of {batch_size}, got {rho!r}")
    return rho


def expected_bound(d_prime, m: int, r: int, calibration_runs: int, evaluation_runs: int, *, batch_size: int = 1,
                   batch_correlation: float = 0.0, test: str = "reference", statistic: str = "mean", zeta: float = 0.05,
                   simulations: int = 100, seed: int = 0) -> AuditSize:
    """Simulate ``simulations`` audits of the module docstring's model and summarise their bounds;
    ``d_prime`` is one number or per-example values, a pilot's deconvolved ones
    (:func:`~.signal.pilot_signal`; ``AuditSize.d_prime``: their median)."""
    pool = np.atleast_1d(np.asarray(d_prime, dtype=float))
    if pool.size == 0 or not np.all(np.isfinite(pool)):
        raise ValueError(f"d_prime must be finite numbers, got {d_prime!r}")
    if pool.size == 1 and pool[0] < 0:
        raise ValueError(f"d_prime must be >= 0, got {d_prime!r}")
    m, r = int(m), int(r)
    check_m_r(m, r)
    batch_size = check_int(batch_size, "batch_size", 1)
    rho = _check_rho(batch_correlation, batch_size)
    gamma = check_int(calibration_runs, "calibration_runs", 4)
    L = check_int(evaluation_runs, "evaluation_runs", 1)
    simulations = check_int(simulations, "simulations", 1)
    zeta = check_zeta(zeta)
    n = m * batch_size
    if (gamma + L) * n > MAX_SIMULATED_SCORES:
        raise ValueError(f"(calibration_runs + evaluation_runs) · m · batch_size = {(gamma + L) * n:,} scores per simulated audit is more than "
                         f"{MAX_SIMULATED_SCORES:,}; size a smaller audit (the bound grows smoothly with m and r) or fewer runs")
    rng, redraw = np.random.default_rng(seed), np.random.SeedSequence(seed)
    batch = np.repeat(np.arange(m), batch_size)
    bounds, redraws = [], 0
    for _ in range(simulations):
        shift = pool if pool.size == n else rng.choice(pool, size=n, replace=True) if pool.size > 1 else np.full(n, pool[0])
        calib_signs, k = _calibration_signs(m, gamma, rng, redraw)
        redraws += k
        runs = {}
        for phase, count in (("calib", gamma), ("eval", L)):
            signs = calib_signs if phase == "calib" else sample_sign_vectors(m, count, rng)
            values = _noise(rng, count, m, batch_size, rho) + shift * (signs[:, batch] == 1)
            runs[phase] = PhaseRuns.from_arrays(values, signs, phase, batch=batch)
        audit = SignVectorAudit.calibrate(Batchwise(), runs["calib"], runs["eval"])
        bounds.append(claim_bound(audit.overlaps(r), m, r, zeta=zeta, statistic=statistic, test=test).lb)
    b = np.asarray(bounds)
    test_ceiling = claim_bound(np.full(L, r), m, r, zeta=zeta, statistic=statistic, test=test).lb
    return AuditSize(d_prime=float(np.median(pool)), m=m, batch_size=batch_size, r=r, calibration_runs=gamma, evaluation_runs=L,
                     batch_correlation=rho, test=test, statistic=statistic, zeta=zeta, simulations=simulations, median=float(np.median(b)),
                     q10=float(np.quantile(b, 0.1)), q90=float(np.quantile(b, 0.9)),
                     ceiling=perfect_prediction_epsilon_lb(m, r, L, zeta=zeta, statistic=statistic), test_ceiling=float(test_ceiling),
                     rejected_share=float(np.mean(b > 0)), redraws=redraws, bounds=b)
