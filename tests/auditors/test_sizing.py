"""Sizing an audit (auditors/sizing.py, `unlearn-audit size`): the expected bound grows with the signal,
is 0 without one, matches what an audit of the modelled scores gives, and refuses sizes it cannot simulate."""

from __future__ import annotations

import json

import numpy as np
import pytest

from unlearn_audit.auditors.sizing import MAX_SIMULATED_SCORES, expected_bound
from unlearn_audit.stats.perfect_prediction import perfect_prediction_epsilon_lb


def test_no_signal_no_bound_and_the_bound_grows_with_the_signal_below_its_ceiling():
    none = expected_bound(0.0, 24, 12, 20, 6, simulations=40, seed=1)
    assert none.median == 0.0 and none.rejected_share <= 0.2  # a level-0.05 test rejects rarely at chance
    sizes = [expected_bound(d, 24, 12, 20, 6, test="theorem4.2", simulations=20, seed=2) for d in (1.0, 2.0, 4.0)]
    medians = [s.median for s in sizes]
    assert medians == sorted(medians) and medians[-1] > medians[0] > 0
    top = sizes[-1]
    assert top.ceiling == pytest.approx(perfect_prediction_epsilon_lb(24, 12, 6)) and top.median <= top.ceiling + 1e-9
    assert top.q10 <= top.median <= top.q90 and top.test_ceiling == pytest.approx(top.ceiling)
    # the reference test (the default) expects more than Theorem 4.2 on the same audits
    assert expected_bound(2.0, 24, 12, 20, 6, simulations=20, seed=2).median > medians[1]


def test_a_pilots_spread_of_signals_is_resampled_and_batches_add_up():
    flat = expected_bound(0.2, 24, 12, 20, 6, test="theorem4.2", simulations=20, seed=3)
    spread = expected_bound(np.array([0.2, 0.2, 0.2, 3.4]), 24, 12, 20, 6, test="theorem4.2", simulations=20, seed=3)
    # the pilot's median d' is 0.2, but its few strong examples are what a guess of r picks: more than 0.2 everywhere gives
    assert spread.d_prime == pytest.approx(0.2) and spread.median > flat.median
    b4 = expected_bound(1.0, 12, 12, 20, 10, batch_size=4, test="theorem4.2", simulations=20, seed=4)
    b1 = expected_bound(1.0, 12, 12, 20, 10, batch_size=1, test="theorem4.2", simulations=20, seed=4)
    assert b4.median > 2 * b1.median > 0  # a batch of 4 sums four examples' evidence


def test_sizes_beyond_the_simulation_are_refused_with_the_numbers():
    with pytest.raises(ValueError, match="scores per simulated audit"):
        expected_bound(1.0, 10**6, 100, 30, 10)
    with pytest.raises(ValueError, match="d_prime"):
        expected_bound(float("nan"), 24, 12, 20, 6)
    with pytest.raises(ValueError, match="calibration_runs"):
        expected_bound(1.0, 24, 12, 2, 6)
    assert MAX_SIMULATED_SCORES >= 40 * 4500  # the paper's CIFAR-100 audit (m = 4,500, Γ + L = 60) can be sized


def test_the_size_command(capsys):
    from unlearn_audit.cli import main

    assert main(["size", "--d-prime", "2", "--m", "24", "--r", "12", "--calibration-runs", "20", "--evaluation-runs", "6",
                 "--simulations", "10"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["test"] == "reference" and out["median"] > 0 and out["d_prime_from"] == "--d-prime"
    # d' measured on score files (the shipped example scores)
    from pathlib import Path

    scores = Path(__file__).resolve().parents[2] / "examples" / "scores"
    assert main(["size", "--scores", str(scores), "--m", "60", "--r", "60", "--calibration-runs", "30", "--evaluation-runs", "10",
                 "--simulations", "5", "--test", "theorem4.2"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert "examples' d'" in out["d_prime_from"] and out["d_prime"] > 0
    assert main(["size", "--m", "24", "--r", "12", "--calibration-runs", "20", "--evaluation-runs", "6"]) == 2
    assert "exactly one of --d-prime or --scores" in capsys.readouterr().err
