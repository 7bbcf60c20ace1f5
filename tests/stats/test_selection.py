"""One test, one level (stats/selection.py): the protocols ``"preregistered"`` (the cell fixed
before the run, tested at ζ) and ``"bonferroni"`` (every one of K cells at ζ/K, so that by the
union bound the largest bound is a level-ζ test), the tests an audit can pre-register, and the
cell.  How ``bounds_table`` applies them, with the no-signal Monte-Carlo check that the corrected
maximum rejects at rate ≤ ζ, is in tests/auditors/test_batchwise_selection.py."""

import pytest

from unlearn_audit.stats.posterior_tests import METHODS
from unlearn_audit.stats.selection import SELECTIONS, TESTS, Cell, cell_zeta


def test_protocols_and_tests():
    assert SELECTIONS == ("preregistered", "bonferroni")
    assert TESTS == ("theorem4.2", "exact", "mgf", "adaptive", "reference") and set(TESTS) <= set(METHODS) | {"reference"}  # each a method of epsilon_lower_bound


@pytest.mark.parametrize("zeta", [0.05, 0.01, 0.5])
@pytest.mark.parametrize("k", [1, 2, 12, 16, 1000])
def test_cell_zeta_is_zeta_or_zeta_over_k(zeta, k):
    assert cell_zeta(zeta, k, "preregistered") == zeta  # the one pre-registered cell, whatever else was tried
    assert cell_zeta(zeta, k, "bonferroni") == zeta / k
    assert k * cell_zeta(zeta, k, "bonferroni") == pytest.approx(zeta)  # union bound: K · ζ/K = ζ


def test_cell_zeta_bad_input():
    with pytest.raises(ValueError, match=r"selection must be one of \('preregistered', 'bonferroni'\), got 'max'"):
        cell_zeta(0.05, 4, "max")
    for bad in (0.0, 1.0, -0.1, "x"):
        with pytest.raises(ValueError, match="zeta"):
            cell_zeta(bad, 4, "bonferroni")
    for bad in (0, -3, 2.5):
        with pytest.raises(ValueError, match="number of cells must be an integer"):
            cell_zeta(0.05, bad, "bonferroni")
    assert cell_zeta(0.05, 4.0, "bonferroni") == 0.0125  # an integral float is a count


def test_cell_identity():
    cell = Cell(20, "median", "loss")
    assert cell.test == "theorem4.2"  # the paper's test unless another is pre-registered
    assert cell == Cell(20, "median", "loss", "theorem4.2") and hash(cell) == hash(Cell(20, "median", "loss"))
    assert cell != Cell(20, "median", "loss", "exact") and cell != Cell(20, "mean", "loss") and cell != Cell(40, "median", "loss")
    assert len({cell, Cell(20, "median", "loss"), Cell(20, "median", "logit")}) == 2
    with pytest.raises(AttributeError):
        cell.r = 40  # frozen: a pre-registered cell cannot change after the fact
