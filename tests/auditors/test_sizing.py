"""Sizing an audit (auditors/sizing.py, `unlearn-audit size`): the expected bound grows with the signal,
is 0 without one, matches what an audit of the modelled scores gives, and refuses sizes it cannot simulate;
a pilot's d' is deconvolved of its sampling noise (auditors/signal.py) and its batch correlation measured."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from unlearn_audit.auditors.signal import pilot_signal
from unlearn_audit.auditors.sizing import MAX_SIGN_DRAWS, MAX_SIMULATED_SCORES, expected_bound
from unlearn_audit.stats.perfect_prediction import perfect_prediction_epsilon_lb
from unlearn_audit.stats.signs import sample_sign_vectors


def _pilot(d_prime, m: int, batch_size: int, runs: int, rho: float = 0.0, seed: int = 0) -> pd.DataFrame:
    """SCORES rows of ``runs`` pilot runs: each example's logit is its own level plus its own spread times
    (noise + its d' when in the forget set), the noise of one batch's examples correlated by ``rho``."""
    rng = np.random.default_rng(seed)
    n, batch = m * batch_size, np.repeat(np.arange(m), batch_size)
    inside = sample_sign_vectors(m, runs, rng)[:, batch] == 1
    level, spread = rng.normal(0.0, 3.0, n), rng.uniform(0.5, 2.0, n)
    noise = np.sqrt(1 - rho) * rng.standard_normal((runs, n)) + np.sqrt(rho) * rng.standard_normal((runs, m))[:, batch]
    values = level + spread * (noise + np.broadcast_to(d_prime, n) * inside)
    run, example = np.meshgrid(np.arange(runs), np.arange(n), indexing="ij")
    return pd.DataFrame({"phase": "calib", "run": run.ravel(), "batch": batch[example.ravel()], "example": example.ravel(),
                         "in_forget": inside.ravel(), "score_logit": values.ravel()})


def test_no_signal_no_bound_and_the_bound_grows_with_the_signal_below_its_ceiling():
    none = expected_bound(0.0, 24, 12, 20, 6, simulations=40, seed=1)
    assert none.median == 0.0 and none.rejected_share <= 0.2  # a level-0.05 test rejects rarely at chance
    sizes = [expected_bound(d, 24, 12, 20, 6, test="theorem4.2", simulations=20, seed=2) for d in (1.0, 2.0, 4.0)]
    medians = [s.median for s in sizes]
    assert medians == sorted(medians) and medians[-1] > medians[0] > 0
    top = sizes[-1]
    assert top.ceiling == pytest.approx(perfect_prediction_epsilon_lb(24, 12, 6)) and top.median <= top.ceiling + 1e-9
    assert top.q10 <= top.median <= top.q90 and top.test_ceiling == pytest.approx(top.ceiling)
    # the simulated bounds the summary is made of, kept beside it but out of its record
    assert top.bounds.shape == (20,) and top.median == np.median(top.bounds) and top.q90 == np.quantile(top.bounds, 0.9)
    assert "bounds" not in top.record() and top.record()["median"] == top.median
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


@pytest.mark.parametrize("m, batch_size, r, runs", [(144, 1, 100, 30), (40, 4, 20, 20)], ids=["digits", "shakespeare"])
def test_a_null_pilot_expects_nothing_once_its_noise_is_deconvolved(m, batch_size, r, runs):
    # the default's designs, sized on a pilot of as many runs whose scores carry no signal at all
    pilot = pilot_signal(_pilot(0.0, m, batch_size, runs, seed=3))
    size = dict(m=m, r=r, calibration_runs=runs, evaluation_runs=10, batch_size=batch_size, simulations=15)
    assert expected_bound(pilot.d_prime, **size).median <= 0.1
    # the measured d' as they are read their sampling noise (about ±0.4 at 30 runs) as signal
    assert np.sqrt(np.mean(pilot.measured ** 2)) > 0.3 and expected_bound(pilot.measured, **size).median > 0.3


def test_a_strong_pilot_predicts_what_its_known_signal_gives():
    # half the examples memorised (d' = 1.8), half not; the pilot measures them on 30 runs
    truth = np.where(np.random.default_rng(7).random(144) < 0.5, 0.0, 1.8)
    pilot = pilot_signal(_pilot(truth, 144, 1, 30, seed=1))
    known, deconvolved, measured = (expected_bound(d, 144, 100, 30, 10, test="theorem4.2", simulations=20, seed=1).median
                                    for d in (truth, pilot.d_prime, pilot.measured))
    assert known > 3 and abs(deconvolved - known) <= 0.15 * known  # no collapse: the signal survives the deconvolution
    assert abs(deconvolved - known) < abs(measured - known)  # and the noise the measured values carry is gone
    assert np.sqrt(np.mean(pilot.d_prime ** 2)) == pytest.approx(np.sqrt(np.mean(truth ** 2)), rel=0.1)


def test_the_batch_correlation_is_measured_and_costs_a_batch_its_evidence():
    pilot = pilot_signal(_pilot(1.0, 40, 4, 20, rho=0.4, seed=2))
    assert pilot.batch_correlation == pytest.approx(0.4, abs=0.06)
    assert pilot_signal(_pilot(1.0, 40, 4, 20, seed=2)).batch_correlation == pytest.approx(0.0, abs=0.05)
    size = dict(m=40, r=20, calibration_runs=20, evaluation_runs=10, batch_size=4, test="theorem4.2", simulations=20, seed=5)
    independent, correlated = (expected_bound(0.8, **size, batch_correlation=rho) for rho in (0.0, 0.4))
    assert correlated.batch_correlation == 0.4 and 0 < correlated.median < 0.8 * independent.median
    with pytest.raises(ValueError, match="batch_correlation"):
        expected_bound(0.8, **size, batch_correlation=-0.5)  # below -1/(B - 1): no correlation matrix


def test_an_unfittable_draw_of_calibration_signs_is_drawn_again_from_a_child_seed():
    # 8 calibration runs over 12 batches: seed 0's first draw leaves a batch with fewer than 2 runs in or out
    first = sample_sign_vectors(12, 8, np.random.default_rng(0))
    inside = (first == 1).sum(axis=0)
    assert np.any(inside < 2) or np.any(8 - inside < 2)
    size = dict(test="theorem4.2", simulations=5, seed=0)
    once, again = expected_bound(1.5, 12, 6, 8, 4, **size), expected_bound(1.5, 12, 6, 8, 4, **size)
    assert once.redraws >= 1 and once.record() == again.record()  # deterministic: the same children of the seed
    assert expected_bound(1.5, 12, 6, 30, 4, **size).redraws == 0
    # 4 runs over 144 batches: every batch exactly twice in, never drawn; refused after a bounded number of draws
    with pytest.raises(ValueError, match=rf"calibration_runs = 4 .* in {MAX_SIGN_DRAWS} draws"):
        expected_bound(1.5, 144, 100, 4, 4, **size)


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
    assert "examples' d'" in out["d_prime_from"] and out["d_prime"] > 0 and out["d_prime_measured"] > 0
    assert out["redraws"] >= 0 and -1 <= out["batch_correlation"] <= 1
    assert main(["size", "--d-prime", "1", "--m", "12", "--batch-size", "2", "--r", "6", "--calibration-runs", "20", "--evaluation-runs", "4",
                 "--batch-correlation", "0.3", "--simulations", "3", "--test", "theorem4.2"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["batch_correlation"] == 0.3 and out["d_prime_measured"] is None
    assert main(["size", "--m", "24", "--r", "12", "--calibration-runs", "20", "--evaluation-runs", "6"]) == 2
    assert "exactly one of --d-prime or --scores" in capsys.readouterr().err
