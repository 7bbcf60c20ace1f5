"""Sizing an audit before paying for it: the ε_LB an audit of given (m, B, r, Γ, L) can expect from a
membership signal of given strength, and its ceiling (docs/cli.md, ``unlearn-audit size``).

The model is Algorithm 2's own: each candidate example's score is Gaussian with a run-to-run spread
of 1, shifted by its d′ when the example is in the forget set (d′ = gap / spread, what
:func:`~.signal.per_example_d_prime` measures on a pilot's or a No-unlearning control's scores).
Given one number, every example has that d′; given a pilot's per-example d′, each simulated
example draws one of them (with replacement), so the pilot's spread of signals carries over.  Each
simulated audit draws Γ calibration and L evaluation runs with uniform sign vectors, fits the
per-example Gaussians on the calibration runs, guesses every evaluation run at r and bounds the
overlaps under the pre-registered statistic and test.  The median over simulated audits is what to
expect; the 10th and 90th percentiles say how much one audit's bound moves.  A design whose expected
bound is 0 cannot show anything: enlarge m, r, Γ or L, or train models that memorise.
"""

from __future__ import annotations

from dataclasses import dataclass

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

    def record(self) -> dict:
        return dict(self.__dict__)


def expected_bound(d_prime, m: int, r: int, calibration_runs: int, evaluation_runs: int, *, batch_size: int = 1,
                   test: str = "reference", statistic: str = "mean", zeta: float = 0.05, simulations: int = 100,
                   seed: int = 0) -> AuditSize:
    """Simulate ``simulations`` audits of the module docstring's model and summarise their bounds;
    ``d_prime`` is one number or a pilot's per-example values (``AuditSize.d_prime``: their median)."""
    pool = np.atleast_1d(np.asarray(d_prime, dtype=float))
    if pool.size == 0 or not np.all(np.isfinite(pool)):
        raise ValueError(f"d_prime must be finite numbers, got {d_prime!r}")
    if pool.size == 1 and pool[0] < 0:
        raise ValueError(f"d_prime must be >= 0, got {d_prime!r}")
    m, r = int(m), int(r)
    check_m_r(m, r)
    batch_size = check_int(batch_size, "batch_size", 1)
    gamma = check_int(calibration_runs, "calibration_runs", 4)
    L = check_int(evaluation_runs, "evaluation_runs", 1)
    simulations = check_int(simulations, "simulations", 1)
    zeta = check_zeta(zeta)
    n = m * batch_size
    if (gamma + L) * n > MAX_SIMULATED_SCORES:
        raise ValueError(f"(calibration_runs + evaluation_runs) · m · batch_size = {(gamma + L) * n:,} scores per simulated audit is more than "
                         f"{MAX_SIMULATED_SCORES:,}; size a smaller audit (the bound grows smoothly with m and r) or fewer runs")
    rng = np.random.default_rng(seed)
    batch = np.repeat(np.arange(m), batch_size)
    bounds = []
    for _ in range(simulations):
        shift = pool if pool.size == n else rng.choice(pool, size=n, replace=True) if pool.size > 1 else np.full(n, pool[0])
        runs = {}
        for phase, count in (("calib", gamma), ("eval", L)):
            signs = sample_sign_vectors(m, count, rng)
            values = rng.standard_normal((count, n)) + shift * (signs[:, batch] == 1)
            runs[phase] = PhaseRuns.from_arrays(values, signs, phase, batch=batch)
        try:
            audit = SignVectorAudit.calibrate(Batchwise(), runs["calib"], runs["eval"])
        except ValueError:  # an example never (or once) in or out among Γ runs: that audit cannot fit
            raise ValueError(f"calibration_runs = {gamma} leave some example never (or once) in or out of the forget set: "
                             "give more calibration runs") from None
        bounds.append(claim_bound(audit.overlaps(r), m, r, zeta=zeta, statistic=statistic, test=test).lb)
    b = np.asarray(bounds)
    test_ceiling = claim_bound(np.full(L, r), m, r, zeta=zeta, statistic=statistic, test=test).lb
    return AuditSize(float(np.median(pool)), m, batch_size, r, gamma, L, test, statistic, zeta, simulations, float(np.median(b)),
                     float(np.quantile(b, 0.1)), float(np.quantile(b, 0.9)), perfect_prediction_epsilon_lb(m, r, L, zeta=zeta, statistic=statistic),
                     float(test_ceiling), float(np.mean(b > 0)))
