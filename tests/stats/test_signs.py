"""Balanced sign vectors, guesses and overlaps (stats/signs.py; paper Section 4, Algorithm 1):
S_m (⌊m/2⌋ entries +1, ⌈m/2⌉ entries −1) enumerated, ranked and sampled uniformly; the guess of
Algorithm 2 (+1 on the r/2 highest scores, −1 on the r/2 lowest, ties by index); the overlap
V = Σ_j max(0, Ŝ_j S_j); and the checks of m and r (r even, 0 < r ≤ m, Theorem 4.2)."""

import math

import numpy as np
import pytest

from unlearn_audit.stats import signs


@pytest.mark.parametrize("m", range(1, 11))
def test_enumeration_is_all_balanced_vectors(m):
    all_s = signs.enumerate_sign_vectors(m)
    assert all_s.shape == (math.comb(m, m // 2), m)
    assert len({tuple(s) for s in all_s}) == len(all_s)
    for s in all_s:
        assert signs.is_balanced(s)
        assert 0 <= np.sum(s == -1) - np.sum(s == 1) <= 1


@pytest.mark.parametrize("m", [1, 2, 5, 8, 9])
def test_rank_unrank_roundtrip(m):
    all_s = signs.enumerate_sign_vectors(m)
    for i, s in enumerate(all_s):
        assert signs.sign_vector_rank(s) == i
        np.testing.assert_array_equal(signs.sign_vector_unrank(i, m), s)


def test_rank_large_m_roundtrip():
    rng = np.random.default_rng(0)
    s = signs.sample_sign_vectors(300, 1, rng)[0]
    idx = signs.sign_vector_rank(s)
    assert 0 <= idx < signs.num_sign_vectors(300)
    np.testing.assert_array_equal(signs.sign_vector_unrank(idx, 300), s)


def test_sampling_is_uniform_over_sm():
    rng = np.random.default_rng(1)
    m = 5
    draws = signs.sample_sign_vectors(m, 20000, rng)
    assert all(signs.is_balanced(s) for s in draws[:200])
    counts = np.bincount([signs.sign_vector_rank(s) for s in draws], minlength=10)
    expected = 20000 / 10
    chi2 = float(np.sum((counts - expected) ** 2 / expected))
    assert chi2 < 27.9  # 99.9% quantile of chi^2 with 9 dof


def test_guess_top_and_bottom_with_deterministic_ties():
    scores = np.array([0.5, 3.0, -1.0, 3.0, 0.0, -1.0])
    g = signs.guess_from_scores(scores, 4)
    np.testing.assert_array_equal(g, [0, 1, -1, 1, 0, -1])
    g2 = signs.guess_from_scores(np.zeros(6), 2)  # all tied: first gets +1, last gets -1
    np.testing.assert_array_equal(g2, [1, 0, 0, 0, 0, -1])
    batch = signs.guess_from_scores(np.stack([scores, -scores]), 2)
    assert batch.shape == (2, 6)
    assert (batch == 1).sum(axis=1).tolist() == [1, 1] and (batch == -1).sum(axis=1).tolist() == [1, 1]


def test_overlap_counts_correct_nonzero_guesses():
    s = np.array([1, -1, 1, -1, -1])
    g = np.array([1, 1, 0, -1, 0])
    assert signs.overlap(g, s) == 2
    assert signs.overlap(np.stack([g, -g]), np.stack([s, s])).tolist() == [2, 1]


@pytest.mark.parametrize(
    "m,r,msg",
    [(6, 3, "even"), (6, 8, "<= m"), (6, 0, "> 0"), (6, -2, "> 0")],
)
def test_bad_r_is_refused(m, r, msg):
    with pytest.raises(ValueError, match="r \\(guess budget\\)") as e:
        signs.guess_from_scores(np.arange(m, dtype=float), r)
    assert msg in str(e.value)


def test_nan_scores_refused():
    with pytest.raises(ValueError, match="NaN"):
        signs.guess_from_scores(np.array([1.0, np.nan, 0.0, 2.0]), 2)


def test_counts_of_s_m():
    for m in range(1, 15):
        assert signs.num_plus(m) == m // 2
        assert signs.num_sign_vectors(m) == math.comb(m, m // 2)
    assert signs.num_sign_vectors(300) == math.comb(300, 150)  # an exact Python integer, far beyond float range
    assert isinstance(signs.num_sign_vectors(300), int)


def test_iteration_order_is_the_rank_order():
    for m in (3, 6):
        it = list(signs.iter_sign_vectors(m))
        np.testing.assert_array_equal(np.stack(it), signs.enumerate_sign_vectors(m))
        assert [signs.sign_vector_rank(s) for s in it] == list(range(len(it)))
    # lexicographic order of the +1 positions: rank 0 puts the +1's first
    np.testing.assert_array_equal(signs.sign_vector_unrank(0, 5), [1, 1, -1, -1, -1])
    np.testing.assert_array_equal(signs.sign_vector_unrank(9, 5), [-1, -1, -1, 1, 1])
    with pytest.raises(ValueError, match="too many to enumerate"):
        signs.enumerate_sign_vectors(30)
    assert signs.enumerate_sign_vectors(6, max_count=20).shape == (20, 6)


def test_sampled_vectors_are_balanced_int8():
    rng = np.random.default_rng(2)
    draws = signs.sample_sign_vectors(7, 50, rng)
    assert draws.shape == (50, 7) and draws.dtype == np.int8
    assert np.all((draws == 1).sum(axis=1) == 3) and np.all((draws == -1).sum(axis=1) == 4)
    assert signs.sample_sign_vectors(4, 0, rng).shape == (0, 4)
    with pytest.raises(ValueError, match="size must be >= 0"):
        signs.sample_sign_vectors(4, -1, rng)


def test_is_balanced_and_rank_refuse_other_vectors():
    assert signs.is_balanced([1, -1]) and signs.is_balanced([1, -1, -1]) and signs.is_balanced([-1])
    for bad in ([1, 1, -1], [1], [], [1, 0, -1, -1], [[1, -1], [-1, 1]], [2, -2]):
        assert not signs.is_balanced(bad), bad
    with pytest.raises(ValueError, match="not a balanced sign vector"):
        signs.sign_vector_rank([1, 1, -1])
    with pytest.raises(ValueError, match=r"index must lie in \[0, 20\) for m=6, got 20"):
        signs.sign_vector_unrank(20, 6)
    with pytest.raises(ValueError, match="index must lie"):
        signs.sign_vector_unrank(-1, 6)


@pytest.mark.parametrize("m,r,message", [(0, None, "m \\(number of candidate batches\\) must be an integer >= 1"),
                                          (True, None, "m \\(number"), (4.0, None, "m \\(number"),
                                          (6, 2.0, "r \\(guess budget\\) must be an integer"), (6, True, "must be an integer")])
def test_check_m_r_types(m, r, message):
    with pytest.raises(ValueError, match=message):
        signs.check_m_r(m, r)


def test_check_m_r_accepts_numpy_integers_and_r_equal_m():
    signs.check_m_r(np.int64(8), np.int32(8))
    signs.check_m_r(1)


def test_overlap_and_guess_shapes():
    with pytest.raises(ValueError, match=r"same shape, got \(3,\) and \(4,\)"):
        signs.overlap([1, 0, -1], [1, -1, 1, -1])
    with pytest.raises(ValueError, match="scores must be 1-d or 2-d"):
        signs.guess_from_scores(np.zeros((2, 2, 4)), 2)
    assert isinstance(signs.overlap([1, -1], [1, -1]), int)
    # a perfect guess at r = m has overlap m; its negation 0
    s = signs.sign_vector_unrank(7, 6)
    assert signs.overlap(s, s) == 6 and signs.overlap(-s, s) == 0
    np.testing.assert_array_equal(signs.guess_from_scores(s.astype(float), 6), s)
