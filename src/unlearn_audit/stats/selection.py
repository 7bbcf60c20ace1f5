"""One test, one level: the pre-registered cell, and the Bonferroni-corrected best cell.

An audit computes a bound for every cell (r, statistic, score) it tries.  Each bound is a
level-ζ test, but the largest of K of them is not: in no-signal runs the chance that at least one
of 12 cells rejects was measured at 0.060 for ζ = 0.05.  Two valid protocols:

* ``"preregistered"`` (default): the cell is fixed in the config before the run; only that cell
  is reported, at level ζ; the others are exploratory.
* ``"bonferroni"``: every cell is tested at ζ/K (K = number of cells tried) and the largest bound
  is reported.  By the union bound, P(any of the K tests rejects a true null) ≤ K · ζ/K = ζ, so
  the reported maximum is a level-ζ bound whatever the dependence between the cells (they share
  the same runs).

numpy-free and torch-free.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..catalogue import SCORE_NAMES
from ..checks import check_int, check_zeta

__all__ = ["SELECTIONS", "TESTS", "DELTA_TESTS", "Cell", "cell_zeta"]

SELECTIONS = ("preregistered", "bonferroni")

#: The tests an audit can pre-register as its claim (docs/bounds.md): Theorem 4.2 (the paper's),
#: the exact convolution test, the max-MGF and the adaptive tests of the mean (a median cell under
#: "mgf" or "adaptive" is tested by the exact binomial tail, the one test of the median besides
#: Theorem 4.2), and the reference test of the unlearning claim against the retrained model (§6b:
#: no Lemma 4.1 halving, δ paid once per run; never weaker than the others).  Every row also
#: carries Theorem 4.2's and the exact test's bounds beside the claim, never instead of it; the
#: exact, max-MGF and adaptive tests hold at δ = 0 only, Theorem 4.2 and the reference test at any δ.
TESTS = ("theorem4.2", "exact", "mgf", "adaptive", "reference")
#: The tests valid for an (ε, δ) claim with δ > 0.
DELTA_TESTS = ("theorem4.2", "reference")


#: The pre-registered cell's statistic, score and test when the config names none: the paper's
#: statistic and score, and the reference test (never weaker than the others, valid at any δ;
#: README, "One test, one level"); Theorem 4.2's bound stands beside the claim in every table.
DEFAULT_CELL = {"statistic": "mean", "score": "logit", "test": "reference"}


@dataclass(frozen=True)
class Cell:
    """A cell of an audit: the guess budget r, the statistic (mean/median), the score and the test."""

    r: int
    statistic: str
    score: str
    test: str = "theorem4.2"


def cell_zeta(zeta: float, n_cells: int, selection: str) -> float:
    """The level at which each cell is tested: ζ (pre-registered) or ζ/K (Bonferroni)."""
    zeta = check_zeta(zeta)
    n_cells = check_int(n_cells, "number of cells", 1)
    if selection == "preregistered":
        return zeta
    if selection == "bonferroni":
        return zeta / n_cells
    raise ValueError(f"selection must be one of {SELECTIONS}, got {selection!r}")
