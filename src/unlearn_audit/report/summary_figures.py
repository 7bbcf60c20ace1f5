"""The figures that show the audits' findings at a glance, drawn from the tables' CSVs (README,
"Results of the default run"); they compute nothing the tables do not hold but a difference and a ratio.

* :func:`finding_figure` — the paper's point (Section 7): per audited method and split, how far its
  forget accuracy is from Retrain's (x: near 0, the method "looks unlearned" to an accuracy check)
  against its claim as a share of the claim's own ceiling (y: 0, not rejected; 1, every guess right).
  A heuristic near x = 0 and well above y = 0 passes the accuracy check and fails the audit.
  No unlearning and Retrain are marked; the field's baselines (``table_baselines``) and the certified
  methods (Table 6, Figure 1c) have their own markers.
* :func:`audit_size_figure` — why this reproduction's bounds are smaller than the paper's: one
  method and its controls audited at growing m (r/m fixed), the claim growing with m while the share
  of right guesses stays where it is.
"""

from __future__ import annotations

import math
import os
from typing import Mapping

import numpy as np
import pandas as pd

from .figures import new_grid, save_figure

__all__ = ["FINDING_COLUMNS", "finding_frame", "finding_figure", "AUDIT_SIZE_COLUMNS", "audit_size_frame", "audit_size_figure"]

CONTROLS = ("No unlearning", "Retrain")
#: Columns of ``finding.csv``: one row per audited model set.
FINDING_COLUMNS = ["source", "kind", "method", "params", "split", "epsilon", "forget_acc", "retrain_forget_acc", "forget_gap",
                   "test_acc", "epsilon_lb_claim", "test", "epsilon_lb_ceiling_claim", "claim_share", "guess_fraction",
                   "at_chance", "no_op", "not_forgotten"]
_KINDS = ("heuristic", "baseline", "certified", "No unlearning", "Retrain")
#: The table of the field's baselines: its methods are drawn as ``baseline`` points, its controls are Table 1b's.
BASELINES = "table_baselines"


def _kind(method: str, certified: bool, source: str = "") -> str:
    if method in CONTROLS:
        return method
    if source == BASELINES:
        return "baseline"
    return "certified" if certified else "heuristic"


def _rows(table: pd.DataFrame, source: str, certified: bool, epsilon: str | None = None) -> list[dict]:
    """The finding's rows of one table: each row's forget accuracy against its split's Retrain row's."""
    out = []
    where = lambda r: (str(getattr(r, "dataset", "")), str(r.split))  # noqa: E731  (a table without datasets: its splits)
    retrain = {where(r): float(r.forget_acc) for r in table[table.method == "Retrain"].itertuples()}
    ceilings = table["epsilon_lb_ceiling_claim" if "epsilon_lb_ceiling_claim" in table.columns else "ceiling_claim"]  # a table's, a figure CSV's
    for r, ceiling in zip(table.itertuples(), ceilings.astype(float)):
        rt = retrain.get(where(r), math.nan)
        out.append({
            "source": source, "kind": _kind(str(r.method), certified, source), "method": str(r.method),
            "params": str(r.params) if "params" in table.columns and pd.notna(r.params) else "",
            "split": str(r.split), "epsilon": float(getattr(r, epsilon)) if epsilon else math.nan,
            "forget_acc": float(r.forget_acc), "retrain_forget_acc": rt, "forget_gap": float(r.forget_acc) - rt,
            "test_acc": float(r.test_acc), "epsilon_lb_claim": float(r.epsilon_lb_claim), "test": str(r.test),
            "epsilon_lb_ceiling_claim": ceiling, "claim_share": float(r.epsilon_lb_claim) / ceiling if ceiling > 0 else math.nan,
            "guess_fraction": float(getattr(r, "guess_fraction", math.nan)),
            **{flag: bool(getattr(r, flag, False)) if pd.notna(getattr(r, flag, False)) else False for flag in ("at_chance", "no_op", "not_forgotten")},
        })
    return out


def finding_frame(table1b: pd.DataFrame, certified: Mapping[str, pd.DataFrame] | None = None) -> pd.DataFrame:
    """The points of :func:`finding_figure` (:data:`FINDING_COLUMNS`): every row of Table 1b, the
    methods of ``table_baselines`` on Table 1b's datasets where ``certified`` holds it (its controls are Table 1b's), and the
    rows of each certified table or figure CSV in ``certified`` (name → frame with an ``epsilon`` or
    ``target_epsilon`` column; their controls kept once per split), each with its forget accuracy
    minus its split's Retrain row's and its claim over the claim's own ceiling."""
    rows = _rows(table1b, "table1b", False)
    others = dict(certified or {})
    baselines = others.pop(BASELINES, None)
    if baselines is not None:
        if "dataset" in baselines.columns and "dataset" in table1b.columns:
            baselines = baselines[baselines.dataset.isin(set(table1b.dataset))]  # Table 1b's designs: the figure's controls
        rows += [r for r in _rows(baselines, BASELINES, False) if r["kind"] == "baseline"]
    for name, frame in others.items():
        eps = "epsilon" if "epsilon" in frame.columns else "target_epsilon"
        frame = frame[frame.method.isin(CONTROLS) | frame[eps].notna()]
        controls = frame[frame.method.isin(CONTROLS)].drop_duplicates(["method", "split"])
        rows += _rows(pd.concat([frame[~frame.method.isin(CONTROLS)], controls]), name, True, eps)
    return pd.DataFrame(rows, columns=FINDING_COLUMNS)


_STYLE = {"heuristic": ("o", None), "baseline": ("D", None), "certified": ("^", None), "No unlearning": ("s", "black"), "Retrain": ("X", "0.45")}
_SPLIT_COLOURS = {"uniform": "tab:blue", "adversarial": "tab:orange"}


def _draw_points(ax, data: pd.DataFrame, legend: bool) -> None:
    """The finding's points on ``ax``: a marker per kind, coloured by split, hollow where the models are at chance."""
    for kind in _KINDS:
        marker, colour = _STYLE[kind]
        for split, sub in data[data.kind == kind].groupby("split", sort=False):
            c = colour or _SPLIT_COLOURS.get(split, "tab:gray")
            label = (f"{kind}, {split}" if kind in ("heuristic", "baseline", "certified") else (kind if split == "uniform" else None)) if legend else None
            for chance, part in sub.groupby("at_chance"):
                ax.scatter(part.forget_gap, part.claim_share, marker=marker, s=70 if kind == "heuristic" else 60,
                           color="none" if chance else c, edgecolors=c if chance else ("black" if kind != "Retrain" else "none"),
                           linewidths=1.2 if chance else 0.6, label=None if chance else label, zorder=3)
    ax.axhline(0.0, color="0.6", lw=0.8)
    ax.grid(True, alpha=0.3)


def finding_figure(table1b: pd.DataFrame, stem: str | os.PathLike, certified: Mapping[str, pd.DataFrame] | None = None):
    """Forget accuracy minus Retrain's (x) against the claim's share of its own ceiling (y), one point
    per audited model set (:func:`finding_frame`, saved as ``stem``.csv): heuristics as circles,
    certified methods as triangles (coloured by split; hollow: models at chance), No unlearning as
    black squares, Retrain as grey crosses (Table 1b's; a certified design's controls are in the CSV:
    a joint design's No unlearning sits on its ceiling by construction); the band |x| <= 0.05, where
    an accuracy check calls the forget set forgotten, shaded.  The right panel zooms on the heuristics
    inside the band, where the claims are small beside the ceiling, each labelled; the field's baselines as diamonds."""
    data = finding_frame(table1b, certified)
    shown = data[(data.source == "table1b") | data.kind.isin(["baseline", "certified"])]
    fig, axes = new_grid(1, 2, 13.0, 5.4, gridspec_kw={"width_ratios": [1.15, 1.0]})
    full, zoom = axes[0]
    for ax in (full, zoom):
        ax.axvspan(-0.05, 0.05, color="tab:green", alpha=0.10, lw=0, label="looks unlearned (|gap| <= 0.05)" if ax is full else None)
        _draw_points(ax, shown, legend=ax is full)
    for r in shown[shown.kind.isin(CONTROLS) | (shown.claim_share > 0.2)].itertuples():
        text = r.split[0].upper() if r.kind in CONTROLS else f"{r.method} ({r.split[0].upper()})"
        full.annotate(text, (r.forget_gap, r.claim_share), textcoords="offset points", xytext=(5, 4), fontsize=7)
    full.set_xlabel("forget accuracy minus Retrain's (0: an accuracy check calls it forgotten)")
    full.set_ylabel("claim / its own ceiling (0: not rejected; 1: every guess right)")
    full.set_ylim(-0.05, 1.05)
    gaps = shown.forget_gap.to_numpy(dtype=float)
    lo, hi = float(np.nanmin(gaps, initial=0.0)), float(np.nanmax(gaps, initial=0.0))
    pad = 0.05 * max(hi - lo, 0.2)
    full.set_xlim(min(lo, -0.1) - pad, max(hi, 0.1) + pad)
    full.set_title("Methods that look unlearned, audited", fontsize=10)
    full.legend(loc="upper left", fontsize=7, framealpha=0.9)
    methods = shown[shown.kind.isin(["heuristic", "baseline"])]
    near = methods[(methods.forget_gap.abs() <= 0.2) & (methods.claim_share <= 0.2)]
    top = max(float(near.claim_share.max()) if len(near) else 0.0, 0.005)
    # every method the zoom's frame shows is labelled, a point above 0.2 inside it too
    near = methods[methods.forget_gap.between(-0.1, 0.25) & (methods.claim_share <= 1.25 * top)]
    counts = {True: 0, False: 0}
    for r in near.sort_values(["claim_share", "forget_gap"]).itertuples():
        at_zero = bool(r.claim_share <= 0)
        k = counts[at_zero]
        counts[at_zero] += 1
        high = not at_zero and r.claim_share > 0.5 * top  # the few high points: labels beside them, alternating up and down
        offset = (6, -11 - 9 * (k % 4)) if at_zero else ((12, 6 if k % 2 else -8) if high else (8 + 40 * (k % 2), 4 + 9 * (k % 3)))
        zoom.annotate(f"{r.method} ({r.split[0].upper()})", (r.forget_gap, r.claim_share), textcoords="offset points",
                      xytext=offset, fontsize=7, arrowprops={"arrowstyle": "-", "lw": 0.4, "color": "0.5"})
    zoom.set_xlim(-0.1, 0.25)
    zoom.set_ylim(-0.3 * top, 1.25 * top)
    zoom.set_xlabel("forget accuracy minus Retrain's")
    zoom.set_title("zoom: the heuristics and baselines near Retrain's forget accuracy\n(inside the band and above 0: passes the accuracy check, fails the audit)",
                   fontsize=9)
    return save_figure(fig, stem, data=data)


#: Columns of ``nn_epsilon_vs_m.csv``: one row per audited model set of the growing-m series.
AUDIT_SIZE_COLUMNS = ["method", "split", "m", "r", "L", "epsilon_lb_claim", "test", "epsilon_lb_ceiling_claim", "guess_fraction",
                      "guess_fraction_low", "guess_fraction_high", "epsilon_lb_theorem42", "epsilon_lb_theorem42_at_paper_size",
                      "forget_acc", "test_acc", "not_forgotten", "no_op", "at_chance"]


def audit_size_frame(table: pd.DataFrame) -> pd.DataFrame:
    """The points of :func:`audit_size_figure`: the audit-size table's rows (:data:`AUDIT_SIZE_COLUMNS`), by method and m."""
    missing = sorted(set(AUDIT_SIZE_COLUMNS) - set(table.columns))
    if missing:
        raise ValueError(f"the audit-size table lacks the columns {missing}")
    return table[AUDIT_SIZE_COLUMNS].sort_values(["method", "m"], kind="stable").reset_index(drop=True)


def audit_size_figure(table: pd.DataFrame, stem: str | os.PathLike):
    """Left: each method's claim against m (log scale), the claim's ceiling of each m dotted; right: its share of
    right guesses with its 95 % interval against m.  The numbers (:func:`audit_size_frame`) are saved as
    ``stem``.csv."""
    data = audit_size_frame(table)
    fig, axes = new_grid(1, 2, 11.0, 4.4)
    left, right = axes[0]
    for ax in (left, right):
        ax.grid(True, alpha=0.3)
        ax.set_xscale("log")
        ticks = sorted(int(m) for m in data.m.unique())
        ax.set_xticks(ticks, labels=[str(t) for t in ticks])
        ax.set_xticks([], minor=True)
        ax.set_xlabel("candidate batches m (r/m fixed; log scale)")
    styles = {"No unlearning": ("s", "black"), "Retrain": ("X", "0.45")}
    methods = list(dict.fromkeys(data.method))
    for k, method in enumerate(methods):
        sub = data[data.method == method].sort_values("m")
        marker, colour = styles.get(method, ("o", f"C{k}"))
        left.plot(sub.m, sub.epsilon_lb_claim, marker=marker, color=colour, label=method)
        err = np.vstack([sub.guess_fraction - sub.guess_fraction_low, sub.guess_fraction_high - sub.guess_fraction])
        shift = 1.0 + 0.04 * (k - (len(methods) - 1) / 2)  # side by side on the log axis
        right.errorbar(sub.m * shift, sub.guess_fraction, yerr=np.nan_to_num(err), marker=marker, color=colour, capsize=3, label=method)
    ceiling = data.drop_duplicates("m").sort_values("m")
    left.plot(ceiling.m, ceiling.epsilon_lb_ceiling_claim, linestyle=":", color="0.4", lw=1.2, label="the claim's ceiling")
    left.legend(loc="upper left", fontsize=8)
    tests = sorted(set(data.test))
    left.set_ylabel(r"$\varepsilon_{LB}$, the claim" + (f" ({tests[0]} test)" if len(tests) == 1 else ""))
    left.set_yscale("symlog", linthresh=0.1, linscale=0.5)  # a claim of 0 and one of 50 on one axis
    left.set_title("the bound grows with m (symmetric-log scale: linear below 0.1)", fontsize=10)
    right.axhline(0.5, color="0.6", lw=0.8, linestyle="--")
    right.set_ylabel("share of right guesses (overlap / r), 95 % interval")
    right.set_ylim(min(0.4, float(np.nanmin(data.guess_fraction_low.to_numpy(dtype=float), initial=1.0)) - 0.02), 1.02)
    right.set_title("at a fixed share of right guesses", fontsize=10)
    right.legend(loc="lower right", fontsize=8)
    return save_figure(fig, stem, data=data)
