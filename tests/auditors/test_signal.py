"""The membership signal of a set of runs' scores (auditors/signal.py): the in-minus-out gap, the
run-to-run spread and d' recover the values of simulated Gaussian scores."""

import numpy as np
import pandas as pd

from unlearn_audit.auditors import membership_signal


def _scores(gap: float, spread: float, runs: int = 400, examples: int = 30, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    inside = rng.random((runs, examples)) < 0.5
    base = rng.normal(0.0, 3.0, size=examples)  # each example its own level: d' reads the gap per example
    values = base + gap * inside + rng.normal(0.0, spread, size=(runs, examples))
    run, example = np.meshgrid(np.arange(runs), np.arange(examples), indexing="ij")
    return pd.DataFrame({"run": run.ravel(), "example": example.ravel(), "in_forget": inside.ravel(),
                         "score_logit": values.ravel(), "score_loss": -values.ravel()})


def test_gap_spread_and_d_prime_of_simulated_scores():
    got = membership_signal(_scores(gap=0.8, spread=0.4))
    assert abs(got["gap"] - 0.8) < 0.05 and abs(got["spread"] - 0.4) < 0.03 and abs(got["d_prime"] - 2.0) < 0.2
    none = membership_signal(_scores(gap=0.0, spread=0.4))
    assert abs(none["d_prime"]) < 0.15
    # the loss score is the negative logit here: the same spread, the gap and d' change sign
    loss = membership_signal(_scores(gap=0.8, spread=0.4), score="loss")
    assert abs(loss["d_prime"] + 2.0) < 0.2


def test_examples_seen_on_one_side_only_are_left_out():
    frame = _scores(gap=1.0, spread=0.5, runs=50)
    one_sided = frame.assign(in_forget=True)
    got = membership_signal(one_sided)
    assert np.isnan(got["d_prime"]) and np.isfinite(got["median_score"])
    mixed = pd.concat([frame, one_sided.assign(example=frame.example + 1000)], ignore_index=True)
    assert abs(membership_signal(mixed)["d_prime"] - membership_signal(frame)["d_prime"]) < 1e-12
