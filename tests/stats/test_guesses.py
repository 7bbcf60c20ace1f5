"""Scale-free readings of an audit's overlaps (stats/guesses.py; README, "Reading a table"): the mean
fraction of right guesses with its t-interval over the runs, and Theorem 4.2's bound of the same
fractions at another audit size (an extrapolation)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from unlearn_audit.stats.bounds import epsilon_lower_bound
from unlearn_audit.stats.guesses import guess_fraction, theorem42_at_size


def test_guess_fraction_is_the_mean_share_of_right_guesses_with_a_t_interval():
    v = [6, 8, 7, 8, 5, 8, 8, 7, 6, 8]
    mean, low, high = guess_fraction(v, 8)
    f = np.asarray(v) / 8
    half = stats.t.ppf(0.975, 9) * f.std(ddof=1) / math.sqrt(10)
    assert mean == pytest.approx(f.mean()) and low == pytest.approx(f.mean() - half) and high == pytest.approx(min(1.0, f.mean() + half))
    assert 0.5 < low < mean < high <= 1
    wider = guess_fraction(v, 8, level=0.99)
    assert wider[1] < low and wider[0] == mean


def test_guess_fraction_is_clipped_to_zero_one_and_undefined_for_one_run():
    assert guess_fraction([8] * 10, 8) == (1.0, 1.0, 1.0)  # every guess right: no spread
    assert guess_fraction([8, 0], 8)[1:] == (0.0, 1.0)  # two runs far apart: the interval is the whole range
    mean, low, high = guess_fraction([4], 8)
    assert mean == 0.5 and math.isnan(low) and math.isnan(high)
    with pytest.raises(ValueError, match=r"\[0, r\]"):
        guess_fraction([9], 8)


def test_theorem42_at_size_rescales_the_overlaps_and_bounds_them_there():
    v = [6, 8, 7, 8, 5, 8, 8, 7, 6, 8]
    want = epsilon_lower_bound(np.rint(np.asarray(v) / 8 * 3000), 4500, 3000, zeta=0.05).epsilon_lb
    assert theorem42_at_size(v, 8, 4500, 3000, zeta=0.05) == want > epsilon_lower_bound(v, 24, 8).epsilon_lb
    # the same size reproduces the audit's own Theorem 4.2 bound, the median too
    assert theorem42_at_size(v, 8, 24, 8, zeta=0.05) == epsilon_lower_bound(v, 24, 8).epsilon_lb
    assert theorem42_at_size(v, 8, 24, 8, zeta=0.05, statistic="median") == epsilon_lower_bound(v, 24, 8, statistic="median").epsilon_lb
    # half the guesses right is what a guess blind to S scores: no bound at any size
    assert theorem42_at_size([4] * 10, 8, 4500, 3000, zeta=0.05) == 0.0
