"""Figures of the neural-network audits."""

from __future__ import annotations

import os
from typing import Mapping

import pandas as pd

from .figures import new_figure, save_figure

__all__ = ["epsilon_vs_r_figure"]


def epsilon_vs_r_figure(bounds: pd.DataFrame, experiments: Mapping[str, Mapping], stem: str | os.PathLike):
    """ε_LB (logit score, mean aggregation) against r, one line per experiment (App. F.3)."""
    fig, ax = new_figure(6.5, 4.2)
    sel = bounds[(bounds.score == "logit") & (bounds.statistic == "mean")]
    for name, e in experiments.items():
        sub = sel[sel.experiment == name].sort_values("r")
        ax.plot(sub.r, sub.epsilon_lb, marker="o", label=f"{e['label']} ({e['dataset']}, {e['split']}, B={e['batch_size']})")
    ax.set_xlabel("guess budget r (batches)")
    ax.set_ylabel(r"$\varepsilon_{LB}$ (Theorem 4.2, mean, $\div 2$)")
    ax.set_title("Lower bound on the unlearning parameter vs r")
    ax.legend(loc="best", fontsize=7)
    return save_figure(fig, stem)
