"""Tables and figures of the Gaussian certified-unlearning experiments (DESIGN §7)."""

from __future__ import annotations

import os

import pandas as pd

from .figures import new_figure, save_figure

__all__ = ["AUDIT_COLUMNS", "audit_table", "error_figure"]

AUDIT_COLUMNS = ["mechanism", "claimed_mu", "true_mu", "mu_lb", "mu_lb_alg1", "epsilon_lb", "falsified"]

def audit_table(rows: pd.DataFrame) -> pd.DataFrame:
    """The audit table with the columns of the issue, in the order certified, controls."""
    order = {"certified": 0, "control_tight": 1, "control_undernoised": 2}
    out = rows.sort_values("mechanism", key=lambda s: s.map(order))[AUDIT_COLUMNS].reset_index(drop=True)
    out["falsified"] = out["falsified"].astype(bool)
    return out


def error_figure(raw: pd.DataFrame, x: str, y: str, by: str, stem: str | os.PathLike, title: str):
    """Mean error (GED or UED) against ``x`` on log–log axes, one line per (noise, ``by``)."""
    fig, ax = new_figure(6.0, 4.2)
    for (noise, val), sub in raw.groupby(["noise", by]):
        means = sub.groupby(x)[y].mean()
        ax.plot(means.index, means.values, marker="o" if noise == "gaussian" else "s", linestyle="-" if noise == "gaussian" else "--", label=f"{noise}, {by}={val}")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel({"p": "dimension p (= n)", "epsilon": r"privacy level $\varepsilon$", "m": "removed points m"}[x])
    ax.set_ylabel(f"mean {y.upper()} (log-loss difference)")
    ax.set_title(title)
    ax.legend(fontsize=7, ncol=2)
    return save_figure(fig, stem)
