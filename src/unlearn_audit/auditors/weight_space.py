"""One weight-space audit of a Gaussian privacy pair (App. H.1, Section 8; docs/calibrations.md §13).

:class:`WeightSpaceAudit` distinguishes, in the sense of Definition H.1, the unlearned release
(non-empty forget set: U(D_f, A(D), S(D)), or β̂⁽¹⁾_{\\M} + b) from its counterpart (empty forget
set: U(∅, A(D_r), S(D_r)), or the retrained β̂_{\\M} + b).  **The sides are in one order
everywhere: the unlearned side first, its counterpart second** — the order of Definition H.1 (the
positive hypothesis first), of Algorithm 1 (S = (+1, −1) when the unlearned draw comes first) and of
:class:`~unlearn_audit.stats.gaussian_release.GaussianRelease`.  A side is any sampler
``f(rng, size) -> (size, d)``; a side of a GaussianRelease also draws the mean of ``size`` draws and
their projections on a direction exactly in distribution, so a projection costs O(d + size).

The audit is built once (sides, seed and :class:`WeightSpaceSettings` checked at its door) and
offers one method per statistic, each computed once:

* :meth:`~WeightSpaceAudit.likelihood_ratio` — App. H.1: a Gaussian N(μ, Σ) (full covariance) fitted
  to Γ draws of each side; 2L fresh draws, each side chosen uniformly at random, predicted
  unlearned iff the log-likelihood ratio is > 0 (ties: counterpart);
* :meth:`~WeightSpaceAudit.projection` — docs/calibrations.md §13: the direction d̂ = mean_unlearned
  − mean_counterpart of fresh calibration draws, 1-d Gaussians fitted to fresh draws projected on
  d̂, and 2L fresh projected draws classified by their likelihood ratio;
* :meth:`~WeightSpaceAudit.two_point` — Algorithm 1 with m = r = 2 through one of the two
  classifiers: each test draw of the likelihood-ratio test one run (one draw per run, App. H.1:
  Table 2's "joint" bound, nothing divided), or fresh pairs through the projection, the unlearned
  draw first iff S = (+1, −1) (two draws per run: the pair's bounds are the run's divided by 2
  and √2).

Both tests return a :class:`~.weight_space_results.LikelihoodRatioTest` (confusion counts, Eq. 3 at
``pairwise_delta`` and μ_LB of the counts), the Algorithm-1 statistic a
:class:`~.weight_space_results.TwoPointAlgorithm1`: each an (ε, μ) pair of Bounds, never halved
(Section 8: the two outputs of one procedure are compared, no transitivity step).

Randomness: the seed is spawned once, at the door, into ten child streams.  Calibration and test
draws never share a stream, so each predictor is independent of the data it is evaluated on, as the
bounds require.  The likelihood-ratio test uses children 0–3 (calibration of the unlearned side, of
the counterpart, the test labels, the test draws); the projection uses 0–3 for the direction and
the fits (counterpart before unlearned in each pair), 4–6 for the test (labels, counterpart,
unlearned) and 7–9 for Algorithm 1's pairs (signs, counterpart, unlearned).  Each statistic's
bounds hold on their own; two statistics of one audit are not independent of each other.

:func:`audit_weight_space`, :func:`audit_release` and :func:`audit_projection` are deprecated
wrappers returning the old shapes of :mod:`.weight_space_legacy`.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from typing import Callable

import numpy as np

from ..checks import check_choice, check_delta, check_int, check_zeta
from ..seeds import SeedLike, as_seed_sequence
from ..stats.gaussian_release import GaussianRelease
from .gaussian_fit import Gaussian, fit_gaussian
from .weight_space_legacy import ProjectionAudit, ProjectionSettings, WeightSpaceAuditResult
from .weight_space_results import LikelihoodRatioTest, TwoPointAlgorithm1, algorithm1_two_point, confusion_bounds

__all__ = [
    "CLASSIFIERS",
    "Sampler",
    "WeightGaussian",
    "WeightSpaceSettings",
    "WeightSpaceAudit",
    "audit_weight_space",
    "audit_release",
    "audit_projection",
]

#: ``sampler(rng, size) -> array (size, d)``: ``size`` independent draws of one side.
Sampler = Callable[[np.random.Generator, int], np.ndarray]

#: A Gaussian fitted to weight vectors (:class:`~.gaussian_fit.Gaussian`; one fit for every auditor).
WeightGaussian = Gaussian

#: The classifiers whose guesses :meth:`WeightSpaceAudit.two_point` can read.
CLASSIFIERS = ("likelihood_ratio", "projection")

#: Child streams spawned from an audit's seed (module docstring).
N_STREAMS = 10


@dataclass(frozen=True)
class WeightSpaceSettings:
    """Sample sizes and levels of a :class:`WeightSpaceAudit`; each statistic reads its own sizes.

    n_calibration : Γ, draws per side for the full-covariance fits of the likelihood-ratio test
        (App. H.1).
    n_test_draws : 2L, test draws of either test, each side chosen uniformly at random.
    zeta : significance level ζ of every bound.
    pairwise_delta : δ of Eq. 3 in either test; ``None`` means the certified δ where the caller
        has one (the convex audits, Section 8), else 0.
    joint_delta : δ of Theorem 4.2 in Algorithm 1 with m = r = 2 (Section 8: 0).
    keep_draws : keep each test draw's label, prediction and log-likelihood ratio.
    n_direction : draws per side for the projection's direction d̂.  The angle between d̂ and the
        true difference has cos ≈ μ/sqrt(μ² + 2p/n_direction), so n_direction ≫ p/μ² is needed for
        a tight bound; a side of a GaussianRelease makes it free, a plain sampler costs
        n_direction·p normals.
    n_fit : draws per side for the 1-d Gaussian fits of the projections.
    n_alg1_runs : runs of Algorithm 1 on fresh pairs through the projection (two draws each).
    chunk_size : rows a plain sampler generates at once in a projection (memory chunk_size·p floats).
    """

    n_calibration: int = 500
    n_test_draws: int = 200_000
    zeta: float = 0.05
    pairwise_delta: float | None = None
    joint_delta: float = 0.0
    keep_draws: bool = True
    n_direction: int = 200_000
    n_fit: int = 5_000
    n_alg1_runs: int = 100_000
    chunk_size: int = 4096

    def __post_init__(self) -> None:
        check_int(self.n_calibration, "n_calibration (Gamma)", 2)
        check_int(self.n_test_draws, "n_test_draws (2L)", 2)
        check_zeta(self.zeta)
        if self.pairwise_delta is not None:
            check_delta(self.pairwise_delta, "pairwise_delta")
        check_delta(self.joint_delta, "joint_delta")
        check_int(self.n_direction, "n_direction", 1)
        check_int(self.n_fit, "n_fit", 2)
        check_int(self.n_alg1_runs, "n_alg1_runs", 1)
        check_int(self.chunk_size, "chunk_size", 1)


@dataclass(frozen=True)
class _Side:
    """One side of the pair as the audit draws it: whole draws, their mean, their projections."""

    sampler: Sampler
    name: str
    chunk_size: int

    def draw(self, rng: np.random.Generator, size: int) -> np.ndarray:
        """``size`` draws as a (size, d) array (a (size,) array is d = 1)."""
        x = np.asarray(self.sampler(rng, size), dtype=float)
        if x.ndim == 1:
            x = x[:, None]
        if x.ndim != 2 or x.shape[0] != size:
            raise ValueError(f"the {self.name} sampler must return an array of shape ({size}, d), got {x.shape}")
        return x

    def mean(self, rng: np.random.Generator, size: int) -> np.ndarray:
        """The mean of ``size`` draws, drawn in chunks unless the side samples it directly."""
        if hasattr(self.sampler, "sample_mean"):
            return np.asarray(self.sampler.sample_mean(rng, size), dtype=float)
        total, done = None, 0
        while done < size:
            k = min(self.chunk_size, size - done)
            s = self.draw(rng, k).sum(axis=0)
            total = s if total is None else total + s
            done += k
        return total / size

    def project(self, rng: np.random.Generator, size: int, direction: np.ndarray) -> np.ndarray:
        """dᵀx of ``size`` draws x, drawn in chunks unless the side samples them directly."""
        if hasattr(self.sampler, "sample_projection"):
            return np.asarray(self.sampler.sample_projection(rng, size, direction), dtype=float)
        out = np.empty(size)
        done = 0
        while done < size:
            k = min(self.chunk_size, size - done)
            out[done : done + k] = self.draw(rng, k) @ direction
            done += k
        return out


@dataclass(frozen=True)
class _Projection:
    """The projection classifier: the calibrated mean difference, its unit direction and the 1-d fits."""

    mean_difference: np.ndarray
    direction: np.ndarray
    fit_unlearned: Gaussian
    fit_counterpart: Gaussian

    def llr(self, u: np.ndarray) -> np.ndarray:
        return self.fit_unlearned.logpdf(u) - self.fit_counterpart.logpdf(u)


def _spawn(seed: SeedLike, n: int) -> tuple[type, tuple[np.random.SeedSequence, ...]]:
    """The bit generator and the ``n`` child SeedSequences that ``seed``'s spawning gives."""
    if isinstance(seed, np.random.Generator):
        return type(seed.bit_generator), tuple(seed.bit_generator.seed_seq.spawn(n))
    try:
        return np.random.PCG64, tuple(as_seed_sequence(seed).spawn(n))
    except ValueError:
        raise ValueError(f"seed must be a numpy Generator, a SeedSequence or an int, got {type(seed).__name__}") from None


def _same_dim(d_unlearned: int, d_counterpart: int) -> None:
    if d_unlearned != d_counterpart:
        raise ValueError(f"the two sides have different dimensions ({d_unlearned} vs {d_counterpart})")


def _labels(rng: np.random.Generator, n: int) -> np.ndarray:
    """Each test draw's side, unlearned (True) or counterpart, uniformly at random; both must occur."""
    labels = rng.integers(0, 2, size=n).astype(bool)
    if labels.all() or not labels.any():
        raise ValueError(f"all {n} test draws fell on one side; increase n_test_draws")
    return labels


def _read_only(x: np.ndarray) -> np.ndarray:
    x.flags.writeable = False
    return x


class WeightSpaceAudit:
    """A weight-space audit of one pair of sides, the unlearned one first (module docstring).

    Build it from two samplers, or from a :class:`~unlearn_audit.stats.gaussian_release.GaussianRelease`
    with :meth:`of_release`; ``seed`` (a Generator, SeedSequence or int) is spawned once.  Each
    statistic is computed on first use and kept.
    """

    def __init__(self, unlearned: Sampler, counterpart: Sampler, seed: SeedLike, settings: WeightSpaceSettings = WeightSpaceSettings()):
        if not isinstance(settings, WeightSpaceSettings):
            raise TypeError(f"settings must be WeightSpaceSettings, got {type(settings).__name__}")
        for name, side in (("unlearned", unlearned), ("counterpart", counterpart)):
            if not callable(side):
                raise TypeError(f"the {name} side must be a sampler f(rng, size) -> (size, d), got {type(side).__name__}")
        if hasattr(unlearned, "dim") and hasattr(counterpart, "dim"):
            _same_dim(unlearned.dim, counterpart.dim)
        self.settings = settings
        self._unlearned = _Side(unlearned, "unlearned", settings.chunk_size)
        self._counterpart = _Side(counterpart, "counterpart", settings.chunk_size)
        self._bit_generator, self._children = _spawn(seed, N_STREAMS)
        self._pairwise_delta = 0.0 if settings.pairwise_delta is None else settings.pairwise_delta
        self._results: dict = {}

    @classmethod
    def of_release(cls, release: GaussianRelease, seed: SeedLike, settings: WeightSpaceSettings = WeightSpaceSettings()) -> "WeightSpaceAudit":
        """The audit of a GaussianRelease: its ``unlearned`` side against its ``counterpart``."""
        return cls(release.unlearned, release.counterpart, seed, settings)

    def likelihood_ratio(self) -> LikelihoodRatioTest:
        """App. H.1's test: full-covariance Gaussians fitted to Γ = ``n_calibration`` draws of each side
        classify ``n_test_draws`` fresh draws; Eq. 3 at ``pairwise_delta`` and μ_LB of the counts."""
        return self._once("likelihood_ratio", self._likelihood_ratio)

    def projection(self) -> LikelihoodRatioTest:
        """The projection test (docs/calibrations.md §13): 1-d Gaussians on the draws projected on the
        calibrated mean difference classify ``n_test_draws`` fresh draws; Eq. 3 and μ_LB of the counts."""
        return self._once("projection", self._projection)

    def two_point(self, classifier: str) -> TwoPointAlgorithm1:
        """Algorithm 1 with m = r = 2 at δ = ``joint_delta`` through ``classifier``'s guesses:
        "likelihood_ratio" reads each of its test draws as one run (one draw per run, App. H.1);
        "projection" presents ``n_alg1_runs`` fresh pairs, the unlearned draw first iff
        S = (+1, −1), and guesses first the draw of larger likelihood ratio (two draws per run;
        ties: the second)."""
        check_choice(classifier, CLASSIFIERS, "classifier")
        compute = self._two_point_likelihood_ratio if classifier == "likelihood_ratio" else self._two_point_projection
        return self._once(f"two_point:{classifier}", compute)

    def _once(self, key: str, compute: Callable[[], object]):
        if key not in self._results:
            self._results[key] = compute()
        return self._results[key]

    def _streams(self, *indices: int) -> list[np.random.Generator]:
        """Fresh generators of the given child streams."""
        return [np.random.Generator(self._bit_generator(self._children[i])) for i in indices]

    def _test(self, labels: np.ndarray, llr: np.ndarray, fit_unlearned: Gaussian, fit_counterpart: Gaussian,
              mean_difference: np.ndarray | None = None) -> LikelihoodRatioTest:
        """The confusion counts of the test draws (unlearned iff llr > 0) and their bounds."""
        if np.any(np.isnan(llr)):  # pragma: no cover - finite draws and floored covariances
            raise ValueError("NaN log-likelihood ratio: check the samplers for non-finite draws")
        predictions = llr > 0
        fp = int(np.count_nonzero(predictions & ~labels))
        fn = int(np.count_nonzero(~predictions & labels))
        n_pos = int(labels.sum())
        n_neg = int(labels.size) - n_pos
        epsilon, mu = confusion_bounds(fp, n_neg, fn, n_pos, zeta=self.settings.zeta, delta=self._pairwise_delta)
        kept = [_read_only(x) if self.settings.keep_draws else None for x in (labels, predictions, llr)]
        return LikelihoodRatioTest(fp, n_neg, fn, n_pos, epsilon, mu, fit_unlearned, fit_counterpart, mean_difference, *kept)

    def _likelihood_ratio(self) -> LikelihoodRatioTest:
        s = self.settings
        rng_unlearned, rng_counterpart, rng_labels, rng_test = self._streams(0, 1, 2, 3)
        fit_unlearned = fit_gaussian(self._unlearned.draw(rng_unlearned, s.n_calibration))
        fit_counterpart = fit_gaussian(self._counterpart.draw(rng_counterpart, s.n_calibration))
        _same_dim(fit_unlearned.dim, fit_counterpart.dim)
        labels = _labels(rng_labels, s.n_test_draws)
        draws = np.empty((labels.size, fit_unlearned.dim))
        draws[labels] = self._unlearned.draw(rng_test, int(labels.sum()))
        draws[~labels] = self._counterpart.draw(rng_test, int((~labels).sum()))
        return self._test(labels, fit_unlearned.logpdf(draws) - fit_counterpart.logpdf(draws), fit_unlearned, fit_counterpart)

    def _classifier(self) -> _Projection:
        return self._once("projection:classifier", self._fit_projection)

    def _fit_projection(self) -> _Projection:
        """The direction from calibration draws only, then 1-d fits on fresh calibration draws."""
        s = self.settings
        rng_dir_counterpart, rng_dir_unlearned, rng_fit_counterpart, rng_fit_unlearned = self._streams(0, 1, 2, 3)
        mean_counterpart = self._counterpart.mean(rng_dir_counterpart, s.n_direction)
        mean_unlearned = self._unlearned.mean(rng_dir_unlearned, s.n_direction)
        _same_dim(mean_unlearned.size, mean_counterpart.size)
        difference = mean_unlearned - mean_counterpart
        norm = float(np.linalg.norm(difference))
        if not (math.isfinite(norm) and norm > 0):
            raise ValueError("the calibrated mean difference is zero or not finite; cannot project")
        direction = difference / norm
        return _Projection(
            difference, direction,
            fit_unlearned=fit_gaussian(self._unlearned.project(rng_fit_unlearned, s.n_fit, direction)),
            fit_counterpart=fit_gaussian(self._counterpart.project(rng_fit_counterpart, s.n_fit, direction)),
        )

    def _projection(self) -> LikelihoodRatioTest:
        c = self._classifier()
        rng_labels, rng_counterpart, rng_unlearned = self._streams(4, 5, 6)
        labels = _labels(rng_labels, self.settings.n_test_draws)
        llr = np.empty(labels.size)
        llr[~labels] = c.llr(self._counterpart.project(rng_counterpart, int((~labels).sum()), c.direction))
        llr[labels] = c.llr(self._unlearned.project(rng_unlearned, int(labels.sum()), c.direction))
        return self._test(labels, llr, c.fit_unlearned, c.fit_counterpart, c.mean_difference)

    def _two_point_likelihood_ratio(self) -> TwoPointAlgorithm1:
        # only the number of right guesses enters Theorem 4.2's mean and the accuracy
        t = self.likelihood_ratio()
        return algorithm1_two_point(np.arange(t.n_test_draws) < t.correct, zeta=self.settings.zeta, delta=self.settings.joint_delta)

    def _two_point_projection(self) -> TwoPointAlgorithm1:
        c = self._classifier()
        runs = self.settings.n_alg1_runs
        rng_signs, rng_counterpart, rng_unlearned = self._streams(7, 8, 9)
        first_is_unlearned = rng_signs.integers(0, 2, size=runs).astype(bool)
        llr_counterpart = c.llr(self._counterpart.project(rng_counterpart, runs, c.direction))
        llr_unlearned = c.llr(self._unlearned.project(rng_unlearned, runs, c.direction))
        first = np.where(first_is_unlearned, llr_unlearned, llr_counterpart)
        second = np.where(first_is_unlearned, llr_counterpart, llr_unlearned)
        return algorithm1_two_point((first > second) == first_is_unlearned, zeta=self.settings.zeta,
                                    delta=self.settings.joint_delta, draws_per_run=2)


# --------------------------------------------------------------------------------------
# deprecated wrappers (one version): the old functions, their argument orders and result shapes
# --------------------------------------------------------------------------------------
def _deprecated(name: str, instead: str) -> None:
    warnings.warn(f"{name} is deprecated and will be removed in the next version; use {instead}", DeprecationWarning, stacklevel=3)


def _likelihood_ratio_result(unlearned: Sampler, counterpart: Sampler, rng: SeedLike, *, n_calibration: int = 500,
                             n_test_draws: int = 200_000, zeta: float = 0.05, delta: float = 0.0, joint_delta: float = 0.0,
                             keep_draws: bool = True) -> WeightSpaceAuditResult:
    settings = WeightSpaceSettings(n_calibration=n_calibration, n_test_draws=n_test_draws, zeta=zeta, pairwise_delta=delta,
                                   joint_delta=joint_delta, keep_draws=keep_draws)
    audit = WeightSpaceAudit(unlearned, counterpart, rng, settings)
    return WeightSpaceAuditResult.of(audit.likelihood_ratio(), audit.two_point("likelihood_ratio"))


def audit_weight_space(sample_unlearned: Sampler, sample_counterpart: Sampler, rng: SeedLike, **kwargs) -> WeightSpaceAuditResult:
    """Deprecated: :meth:`WeightSpaceAudit.likelihood_ratio` and ``two_point("likelihood_ratio")``,
    in the old shape.  ``kwargs``: ``n_calibration``, ``n_test_draws``, ``zeta``, ``delta`` (Eq. 3's),
    ``joint_delta``, ``keep_draws``."""
    _deprecated("audit_weight_space", "WeightSpaceAudit(unlearned, counterpart, seed, settings).likelihood_ratio() and "
                ".two_point('likelihood_ratio')")
    return _likelihood_ratio_result(sample_unlearned, sample_counterpart, rng, **kwargs)


def audit_release(release: GaussianRelease, rng: SeedLike, **kwargs) -> WeightSpaceAuditResult:
    """Deprecated: :func:`audit_weight_space` on a release's two sides."""
    _deprecated("audit_release", "WeightSpaceAudit.of_release(release, seed, settings)")
    return _likelihood_ratio_result(release.sample_unlearned, release.sample_counterpart, rng, **kwargs)


def audit_projection(sample_retrained: Sampler, sample_unlearned: Sampler, seed: SeedLike,
                     settings: ProjectionSettings = ProjectionSettings()) -> ProjectionAudit:
    """Deprecated (its sides in the other order): :meth:`WeightSpaceAudit.projection` and
    ``two_point("projection")`` of ``WeightSpaceAudit(sample_unlearned, sample_retrained, ...)``,
    in the old shape."""
    _deprecated("audit_projection", "WeightSpaceAudit(unlearned, counterpart, seed, settings).projection() and "
                ".two_point('projection')")
    audit = WeightSpaceAudit(sample_unlearned, sample_retrained, seed, WeightSpaceSettings(**settings.weight_space()))
    return ProjectionAudit.of(audit.projection(), audit.two_point("projection"))
