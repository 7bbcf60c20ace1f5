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
