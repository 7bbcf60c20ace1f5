"""The statistics of the audit, numpy and scipy only (never torch, never pandas).

* :mod:`.signs` — S_m, guesses, overlaps (Section 4, Algorithm 1);
* :mod:`.bounds` — Theorem 4.2 (mean, median), Lemma C.1, Eq. 3, μ-GDP (Section 4, App. A.3, C), and
  their forms for an (ε, δ) unlearning claim (Lemma 4.1 with δ, by group privacy);
* :mod:`.posterior_tests` — tighter δ = 0 tests from the same overlaps, ``method="exact"`` and
  ``method="mgf"`` of :func:`epsilon_lower_bound` (docs/bounds.md §1–5);
* :mod:`.gdp_overlaps` — :func:`mu_lower_bound`, a μ-GDP bound from the overlaps via Lemma C.1 or
  the trade-off function (docs/bounds.md §6, §6a);
* :mod:`.reference` — :func:`reference_epsilon_lower_bound`, the ε of an (ε, 0) unlearning claim
  against the retrained model, without Lemma 4.1's halving (docs/bounds.md §6b);
* :mod:`.gaussian_mechanism` — hockey-stick δ(ε; μ) and the analytic Gaussian σ;
* :mod:`.gaussian_release` — the Gaussian privacy pair a weight-space audit distinguishes (the convex
  mechanisms' and Gaussian certified unlearning's releases, Definition H.1);
* :mod:`.tradeoff` — trade-off curves: G_μ of μ-GDP, f_{ε,δ} of (ε, δ)-DP (Dong, Roth & Su), the
  μ of a calibrated Gaussian mechanism and an audit's proven (α, β) point;
* :mod:`.accountants` — model clipping's noisy-step accountant (Koloskova et al. Thm 4.2) and
  rewind-to-delete's sensitivity (Mu & Klabjan Thm 3.1);
* :mod:`.perfect_prediction` — App. F attainable bounds;
* :mod:`.guesses` — scale-free readings of overlaps: the fraction of right guesses, Theorem 4.2 at another size;
* :mod:`.selection` — the pre-registered cell and the Bonferroni-corrected best cell;
* :mod:`.simulation` — mechanisms with known ε, for validity tests.
"""

from .._lazy import lazy_exports

#: public name -> the submodule that defines it (imported on first use)
_EXPORTS = {
    "Bound": ".bounds",
    "epsilon_lower_bound": ".bounds",
    "GaussianRelease": ".gaussian_release",
    "GaussianSide": ".gaussian_release",
    "mu_lower_bound": ".gdp_overlaps",
    "METHODS": ".posterior_tests",
    "posterior_tail_bound": ".posterior_tests",
    "reference_epsilon_lower_bound": ".reference",
    "dp_tradeoff": ".tradeoff",
    "gdp_tradeoff": ".tradeoff",
}

__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
