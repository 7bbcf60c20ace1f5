"""The membership signal in a set of runs' scores: how far apart an example's score is when it is
in the forget set and when it is not, against the run-to-run spread (docs/workflow.md, "A
memorising regime").

Per candidate example, over the given runs: ``gap`` = mean score when in D_f(S) minus mean score
when not, ``spread`` = the root mean square of the two sides' standard deviations, and
``d_prime`` = gap / spread, the separation a per-example Gaussian test sees (Algorithm 2 fits
exactly these two Gaussians).  The medians over examples summarise a design: d′ near 0 means
no per-example guess can beat chance, whatever the audit's size.  Torch-free.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..catalogue import score_column

__all__ = ["SIGNAL_COLUMNS", "membership_signal", "per_example_d_prime"]

#: The columns :func:`membership_signal` returns, in order.
SIGNAL_COLUMNS = ("gap", "spread", "d_prime", "median_score")


def _per_example(scores: pd.DataFrame, score: str) -> pd.DataFrame:
    """Per example seen on both sides: ``gap``, ``spread`` and ``d_prime`` (NaN where the spread is 0)."""
    col = score_column(score)
    by = scores.groupby(["example", "in_forget"])[col].agg(["mean", "std"]).unstack("in_forget").dropna()
    if by.empty or ("mean", True) not in by.columns or ("mean", False) not in by.columns:
        return pd.DataFrame(columns=["gap", "spread", "d_prime"])
    gap = by[("mean", True)] - by[("mean", False)]
    spread = np.sqrt((by[("std", True)] ** 2 + by[("std", False)] ** 2) / 2)
    return pd.DataFrame({"gap": gap, "spread": spread, "d_prime": gap / spread.replace(0, np.nan)})


def per_example_d_prime(scores: pd.DataFrame, score: str = "logit") -> np.ndarray:
    """Each candidate example's d′ (those seen on both sides with a positive spread), for sizing an
    audit on a pilot's own spread of signals (:func:`~.sizing.expected_bound`)."""
    d = _per_example(scores, score)["d_prime"].to_numpy(float)
    return d[np.isfinite(d)]


def membership_signal(scores: pd.DataFrame, score: str = "logit") -> dict[str, float]:
    """Median in-minus-out ``gap``, run-to-run ``spread`` and their ratio ``d_prime`` over the
    candidate examples of ``scores`` (SCORES rows of any runs: ``example``, ``in_forget`` and the
    score's column), and the ``median_score`` of all rows.  Examples seen on one side only are
    left out; with none left, every value but ``median_score`` is NaN."""
    col = score_column(score)
    median_score = float(scores[col].median()) if len(scores) else float("nan")
    per = _per_example(scores, score)
    if per.empty:
        return {"gap": float("nan"), "spread": float("nan"), "d_prime": float("nan"), "median_score": median_score}
    return {"gap": float(per.gap.median()), "spread": float(per.spread.median()), "d_prime": float(per.d_prime.median()),
            "median_score": median_score}
