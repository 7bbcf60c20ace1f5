"""Figures of the neural-network audits."""

from __future__ import annotations

import math
import os
from typing import Mapping

import pandas as pd

from ..schemas import DIAGNOSTIC_FLAGS, REPORTED_ROLES
from .figures import new_figure, new_grid, save_figure
from .tables import diagnostics_row

__all__ = ["FRAME_COLUMNS", "experiment_labels", "epsilon_vs_r_frame", "epsilon_vs_r_figure"]

#: The series each experiment's line shows.
_LINE = ("logit", "mean")

#: Columns of the figure's data (``nn_epsilon_vs_r.csv``): one row per plotted point.  The plotted
#: ``epsilon_lb_claim`` is the point's bound under its experiment's pre-registered ``test`` (BOUNDS
#: ``epsilon_lb_test``), ``ceiling_claim`` that test's perfect-prediction ε_LB of the point's cell
#: (m, r, L) at its ζ and statistic and ``at_ceiling_claim`` whether the point equals it; Theorem
#: 4.2's bound of the same cell, its ceiling and flag stand beside them (``*_theorem42``; the ceilings
#: and flags empty when the bounds carry none); ``guess_fraction`` is the point's mean overlap / r,
#: the share of right guesses (the same number at any audit size).  ``reported`` marks the
#: experiment's level-ζ cell (role ``preregistered`` or ``selected``).
FRAME_COLUMNS = ["dataset", "split", "experiment", "label", "method", "batch_size", "m", "L", "zeta", "score", "statistic",
                 "r", "epsilon_lb_claim", "test", "ceiling_claim", "at_ceiling_claim", "epsilon_lb_theorem42", "ceiling_theorem42",
                 "at_ceiling_theorem42", "guess_fraction", "role", "reported"]
_FLAGS = ("at_ceiling_claim", "at_ceiling_theorem42")

#: The accuracies and flags each point carries when the figure is given diagnostics.
_DIAGNOSTICS = ("retain_acc", "forget_acc", "test_acc", *DIAGNOSTIC_FLAGS)

_MARKERS = ("o", "s", "^", "D", "v", "P", "X", "<", ">", "h", "*", "p")
_CEILING_DASHES = ((0, (6, 3)), (0, (2, 2)), (0, (9, 3, 2, 3)), (0, (4, 1.5, 1, 1.5, 1, 1.5)))
_CEILING_GREYS = ("0.0", "0.3", "0.5", "0.2")


def _number(x) -> str:
    """Short text of a hyperparameter value: ``1e-3``, ``5e-3``, ``0.5``, ``2``."""
    x = float(x)
    if x != 0 and (abs(x) < 0.1 or abs(x) >= 1e4):
        mantissa, exponent = f"{x:.2e}".split("e")
        return f"{mantissa.rstrip('0').rstrip('.')}e{int(exponent)}"
    return f"{x:g}"


def _panel(e: Mapping) -> tuple[str, str]:
    return str(e["dataset"]), str(e["split"])


def experiment_labels(experiments: Mapping[str, Mapping]) -> dict[str, str]:
    """{experiment: legend label}, distinct within each (dataset, split) panel.

    The label is the experiment's ``label`` with its final noise σ (``params.sigma``, e.g. the
    Hessian variants: ``Hessian σ=1e-3``), its batch size B where the panel holds more than one
    B, and, should two still coincide, the experiment's name in brackets."""
    labels: dict[str, str] = {}
    panels: dict[tuple[str, str], list[str]] = {}
    for name, e in experiments.items():
        panels.setdefault(_panel(e), []).append(name)
    for names in panels.values():
        several_b = len({experiments[n].get("batch_size") for n in names}) > 1
        for name in names:
            e = experiments[name]
            text = str(e.get("label") or e.get("method") or name)
            sigma = (e.get("params") or {}).get("sigma")
            if sigma is not None:
                text += f" σ={_number(sigma)}"
            if several_b:
                text += f", B={e.get('batch_size')}"
            labels[name] = text
        taken = [labels[n] for n in names]
        for name in names:
            if taken.count(labels[name]) > 1:
                labels[name] = f"{labels[name]} [{name}]"
    return labels


def epsilon_vs_r_frame(bounds: pd.DataFrame, experiments: Mapping[str, Mapping], diagnostics: pd.DataFrame | None = None) -> pd.DataFrame:
    """The figure's points (:data:`FRAME_COLUMNS`): every logit/mean bound of each experiment, and
    its reported cell when that has another score or statistic.  The ceilings and their flags are the
    bounds' ``epsilon_lb_ceiling_claim``, ``at_ceiling_claim``, ``epsilon_lb_ceiling`` and
    ``at_ceiling`` (see :func:`unlearn_audit.pipeline.nn.with_ceilings`); with ``diagnostics`` each
    point also carries its experiment's accuracies and flags."""
    if "role" not in bounds.columns:
        raise ValueError("bounds have no 'role' column: they were written before cells were pre-registered; rerun the audit")
    has_ceilings = {"epsilon_lb_ceiling", "at_ceiling", "epsilon_lb_ceiling_claim", "at_ceiling_claim"} <= set(bounds.columns)
    labels = experiment_labels(experiments)
    rows = []
    for name, e in experiments.items():
        sub = bounds[bounds.experiment == name]
        line = (sub.score == _LINE[0]) & (sub.statistic == _LINE[1])
        reported = sub.role.isin(REPORTED_ROLES)
        for b in sub[line | reported].sort_values(["score", "statistic", "r"]).itertuples(index=False):
            rows.append({
                "dataset": e["dataset"], "split": e["split"], "experiment": name, "label": labels[name], "method": e.get("method"),
                "batch_size": e.get("batch_size"), "m": int(b.m), "L": int(b.L), "zeta": float(b.zeta), "score": b.score,
                "statistic": b.statistic, "r": int(b.r), "epsilon_lb_claim": float(b.epsilon_lb_test), "test": str(b.test),
                "ceiling_claim": float(b.epsilon_lb_ceiling_claim) if has_ceilings else math.nan,
                "at_ceiling_claim": bool(b.at_ceiling_claim) if has_ceilings else pd.NA,
                "epsilon_lb_theorem42": float(b.epsilon_lb),
                "ceiling_theorem42": float(b.epsilon_lb_ceiling) if has_ceilings else math.nan,
                "at_ceiling_theorem42": bool(b.at_ceiling) if has_ceilings else pd.NA,
                "guess_fraction": float(b.mean_overlap) / int(b.r),
                "role": b.role, "reported": b.role in REPORTED_ROLES,
                **diagnostics_row(diagnostics, name, _DIAGNOSTICS),
            })
    frame = pd.DataFrame(rows, columns=FRAME_COLUMNS + (list(_DIAGNOSTICS) if diagnostics is not None else []))
    return frame.astype({flag: "boolean" for flag in _FLAGS})


def _axes_limits(ax, data: pd.DataFrame, line_rows: pd.DataFrame) -> None:
    """r on a log axis ticked at the panel's r values (small-m designs have small r); ε up to 1.5×
    the largest bound, so a ceiling far above every bound leaves the top rather than flatten them."""
    ticks = sorted({int(r) for r in data.r})
    if not ticks:
        return
    ax.set_xscale("log")
    ax.set_xticks(ticks, labels=[str(t) for t in ticks])
    ax.set_xticks([], minor=True)
    ax.tick_params(axis="x", labelsize=8)
    ax.set_xlim(ticks[0] / 1.15, ticks[-1] * 1.15)
    top_bound = float(data.epsilon_lb_claim.max())
    top_ceiling = float(line_rows.ceiling_claim.max()) if len(line_rows) else math.nan
    top = top_bound * 1.5 if top_bound > 0 else top_ceiling
    if math.isfinite(top_ceiling):
        top = min(top, top_ceiling) if top_bound > 0 else top_ceiling
    if math.isfinite(top) and top > 0:
        ax.set_ylim(-0.03 * top * 1.06, top * 1.06)


def _draw_panel(ax, data: pd.DataFrame, colours) -> None:
    """One (dataset, split) panel: a line per experiment (its claim), its reported cell filled, the
    claim's ceiling of each distinct (m, L) (and ζ and test, where the panel holds several) dashed,
    drawn over the lines so that a line running on its ceiling shows dashes."""
    for k, (name, sub) in enumerate(data.groupby("experiment", sort=False)):
        colour, marker = colours[k % len(colours)], _MARKERS[k % len(_MARKERS)]
        line = sub[(sub.score == _LINE[0]) & (sub.statistic == _LINE[1])].sort_values("r")
        ax.plot(line.r, line.epsilon_lb_claim, color=colour, marker=marker, markersize=6, markerfacecolor="white",
                markeredgecolor=colour, linewidth=1.4, label=sub.label.iloc[0], zorder=3)
        for b in sub[sub.reported].itertuples(index=False):
            ax.plot([b.r], [b.epsilon_lb_claim], linestyle="none", marker=marker, markersize=11, color=colour,
                    markeredgecolor="black", zorder=4)
            if (b.score, b.statistic) != _LINE:
                ax.annotate(f"{b.score}/{b.statistic}", (b.r, b.epsilon_lb_claim), textcoords="offset points", xytext=(6, 6), fontsize=7)
    line_rows = data[(data.score == _LINE[0]) & (data.statistic == _LINE[1])].dropna(subset=["ceiling_claim"])
    several_zeta, several_tests = line_rows.zeta.nunique() > 1, line_rows.test.nunique() > 1
    cells = line_rows[["m", "L", "zeta", "test"]].drop_duplicates().sort_values(["m", "L", "zeta", "test"], ascending=[False, True, True, True])
    for k, cell in enumerate(cells.itertuples(index=False)):
        pts = line_rows[(line_rows.m == cell.m) & (line_rows.L == cell.L) & (line_rows.zeta == cell.zeta) & (line_rows.test == cell.test)]
        pts = pts.drop_duplicates("r").sort_values("r")
        label = f"ceiling m={cell.m}, L={cell.L}" + (f", ζ={cell.zeta:g}" if several_zeta else "") + (f", {cell.test} test" if several_tests else "")
        ax.plot(pts.r, pts.ceiling_claim, color=_CEILING_GREYS[k % len(_CEILING_GREYS)], linestyle=_CEILING_DASHES[k % len(_CEILING_DASHES)],
                linewidth=1.2, label=label, zorder=3.5)  # above the lines: a bound on its ceiling shows the dashes
    _axes_limits(ax, data, line_rows)
    ax.set_xlabel("guess budget r (batches, log scale)")
    tests = sorted(set(data.test))
    ax.set_ylabel(r"$\varepsilon_{LB}$, the claim" + (f" ({tests[0]} test, mean)" if len(tests) == 1 else " (pre-registered test, mean)"))
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0, fontsize=8, frameon=False)


def epsilon_vs_r_figure(bounds: pd.DataFrame, experiments: Mapping[str, Mapping], stem: str | os.PathLike,
                        diagnostics: pd.DataFrame | None = None):
    """The claim, each experiment's ε_LB under its pre-registered test (logit score, mean aggregation),
    against r (App. F.3): one panel per (dataset, split), one line per experiment (distinct colour and
    marker), and the claim's perfect-prediction ceiling of each (m, L) of the panel as a dashed line,
    so that a reader sees which cells sit on it; Theorem 4.2's bounds are in the CSV beside them.

    Each experiment's reported cell (role ``preregistered``, or ``selected`` under Bonferroni) is a
    large filled marker, annotated with its score/statistic when that is not logit/mean; the other
    points are hollow: exploratory, not level-ζ claims on their own.  The plotted numbers
    (:func:`epsilon_vs_r_frame`) are saved as ``stem``.csv beside the PNG and PDF.
    """
    data = epsilon_vs_r_frame(bounds, experiments, diagnostics)
    panels = list(dict.fromkeys(_panel(e) for e in experiments.values()))
    if not panels:
        fig, first = new_figure(10.0, 4.3)
        first.text(0.5, 0.5, "no batchwise-audited experiments", ha="center", va="center", transform=first.transAxes)
        return save_figure(fig, stem, data=data)
    fig, axes = new_grid(len(panels), 1, 10.0, 0.7 + 3.6 * len(panels))
    axes = axes[:, 0]

    from matplotlib import colormaps  # configured by new_grid

    for ax, (dataset, split) in zip(axes, panels):
        sub = data[(data.dataset == dataset) & (data.split == split)]
        n = sub.experiment.nunique()
        colours = colormaps["tab10" if n <= 10 else "tab20"].colors
        ax.grid(True, alpha=0.3)
        _draw_panel(ax, sub, colours)
        ax.set_title(f"{dataset}, {split} split", fontsize=11)
    fig.suptitle("Lower bound on the unlearning parameter vs guess budget r, under each experiment's pre-registered test\n"
                 "filled: pre-registered (or Bonferroni-selected) cell, the level-ζ result; hollow: exploratory, "
                 "not level-ζ on its own;\ndashed: the test's perfect-prediction ceiling of (m, L), every guess right", fontsize=9)
    return save_figure(fig, stem, data=data)
