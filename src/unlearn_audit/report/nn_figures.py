"""Figures of the neural-network audits."""

from __future__ import annotations

import os
from typing import Mapping

import pandas as pd

from .figures import new_figure, save_figure

__all__ = ["epsilon_vs_r_figure"]

#: Roles (BOUNDS ``role``) of the row an experiment reports: its one level-ζ claim.
_REPORTED = ("preregistered", "selected")


def epsilon_vs_r_figure(bounds: pd.DataFrame, experiments: Mapping[str, Mapping], stem: str | os.PathLike):
    """ε_LB (logit score, mean aggregation) against r, one line per experiment (App. F.3).

    Each experiment's reported cell (role ``preregistered``, or ``selected`` under Bonferroni) is a
    large filled marker, annotated with its score/statistic when that is not logit/mean; the other
    points are hollow: exploratory, not level-ζ claims on their own.
    """
    if "role" not in bounds.columns:
        raise ValueError("bounds have no 'role' column: they were written before cells were pre-registered; rerun the audit")
    fig, ax = new_figure(6.5, 4.2)
    sel = bounds[(bounds.score == "logit") & (bounds.statistic == "mean")]
    for name, e in experiments.items():
        sub = sel[sel.experiment == name].sort_values("r")
        (line,) = ax.plot(sub.r, sub.epsilon_lb, marker="o", markerfacecolor="none",
                          label=f"{e['label']} ({e['dataset']}, {e['split']}, B={e['batch_size']})")
        reported = bounds[(bounds.experiment == name) & bounds.role.isin(_REPORTED)]
        for _, b in reported.iterrows():
            ax.plot([b.r], [b.epsilon_lb], linestyle="none", marker="o", markersize=10, color=line.get_color(),
                    markeredgecolor="black", zorder=3)
            if (b.score, b.statistic) != ("logit", "mean"):
                ax.annotate(f"{b.score}/{b.statistic}", (b.r, b.epsilon_lb), textcoords="offset points", xytext=(6, 6), fontsize=7)
    ax.plot([], [], linestyle="none", marker="o", markersize=10, color="gray", markeredgecolor="black",
            label="pre-registered (or Bonferroni-selected) cell: the level-ζ result")
    ax.plot([], [], linestyle="none", marker="o", markerfacecolor="none", color="gray", label="exploratory (not level-ζ on its own)")
    ax.set_xlabel("guess budget r (batches)")
    ax.set_ylabel(r"$\varepsilon_{LB}$ (Theorem 4.2, mean, $\div 2$)")
    ax.set_title("Lower bound on the unlearning parameter vs r\n"
                 "filled: pre-registered cell; hollow: exploratory, not level-ζ claims on their own", fontsize=9)
    ax.legend(loc="best", fontsize=7)
    return save_figure(fig, stem)
