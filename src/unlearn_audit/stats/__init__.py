"""The statistics of the audit, numpy and scipy only (never torch, never pandas).

* :mod:`.signs` — S_m, guesses, overlaps (Section 4, Algorithm 1);
* :mod:`.bounds` — Theorem 4.2 (mean, median), Lemma C.1, Eq. 3, μ-GDP (Section 4, App. A.3, C);
* :mod:`.gaussian_mechanism` — hockey-stick δ(ε; μ) and the analytic Gaussian σ;
* :mod:`.perfect_prediction` — App. F attainable bounds;
* :mod:`.selection` — the pre-registered cell and the Bonferroni-corrected best cell;
* :mod:`.simulation` — mechanisms with known ε, for validity tests.
"""
