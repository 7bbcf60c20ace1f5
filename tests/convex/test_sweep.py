"""App. H.4's sweeps (unlearn_audit.convex.sweep): Lemma 3's ratio ρ over a grid, refused instances
kept with their reason, and the logistic construction's per-dimension forget points (Remark H.2)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from unlearn_audit.convex.experiments import CubicNewtonParams, LogisticNewtonParams, build_cubic_newton, logistic_boundary_data
from unlearn_audit.convex.sweep import CUBIC_GRID, largest, rho_sweep

CUBIC_BASE = {"n_retain": 1000, "n_forget": 50}


def test_the_cubic_grid_of_app_h41_has_its_largest_ratio_at_the_table_2a_instance():
    rows = rho_sweep("cubic_newton", CUBIC_BASE, CUBIC_GRID)
    assert len(rows) == 3 * 3 * 7 * 5
    best = largest(rows)
    assert (best["M"], best["B"], best["R"], best["lam"]) == (0.001, 2.5, 10.0, 0.2)
    assert best["rho"] == pytest.approx(0.2235, abs=1e-4)  # the paper: 0.22 at B = 2.5, R = 10
    # every ratio is the instance's own: distance over Lemma 3's gamma
    one = build_cubic_newton(CubicNewtonParams(lam=0.12, M=0.002, B=3.0, R=6.0, **CUBIC_BASE))
    row = next(r for r in rows if (r["M"], r["B"], r["R"], r["lam"]) == (0.002, 3.0, 6.0, 0.12))
    assert row["rho"] == pytest.approx(one.distance / one.gamma) and row["feasible"]


def test_refused_instances_stay_in_the_table_with_their_reason():
    rows = rho_sweep("cubic_newton", CUBIC_BASE, {"M": [0.005], "B": [2.5], "R": [10.0], "lam": [0.1, 0.2]})
    refused, kept = rows
    assert not refused["feasible"] and math.isnan(refused["rho"]) and "outside the box" in refused["reason"]
    assert kept["feasible"] and kept["rho"] == pytest.approx(0.2112, abs=1e-4)
    with pytest.raises(ValueError, match="no parameter"):
        rho_sweep("cubic_newton", CUBIC_BASE, {"nope": [1]})
    with pytest.raises(ValueError, match="no sweep of"):
        rho_sweep("output_perturbation", {}, {"d": [2]})
    with pytest.raises(ValueError, match="no point of the sweep is feasible"):
        largest([refused])


def test_per_dimension_forget_points_lie_one_axis_each_against_theta():
    params = LogisticNewtonParams(d=3, n_forget=7, forget_norm=4.0, forget_directions="per_dimension")
    rng = np.random.default_rng(params.data_seed)
    retain, forget = logistic_boundary_data(params, rng)
    x = forget.X
    assert x.shape == (7, 3) and (np.count_nonzero(x, axis=1) == 1).all()
    assert np.allclose(np.abs(x).sum(axis=1), 4.0)
    assert [int(np.flatnonzero(row)[0]) for row in x] == [0, 1, 2, 0, 1, 2, 0]
    one = logistic_boundary_data(LogisticNewtonParams(d=3, n_forget=7, forget_norm=4.0), np.random.default_rng(params.data_seed))[1].X
    assert np.allclose(np.linalg.norm(one, axis=1), 4.0) and (one == one[0]).all()
    # the same retain data either way; the forget points oppose theta* on their axis
    assert np.array_equal(retain.X, logistic_boundary_data(LogisticNewtonParams(d=3, n_forget=7, forget_norm=4.0), np.random.default_rng(params.data_seed))[0].X)
    assert (np.sign(x.sum(axis=0)) == np.sign(one[0])).all()
    with pytest.raises(ValueError, match="forget_directions must be one of"):
        LogisticNewtonParams(forget_directions="diagonal")
