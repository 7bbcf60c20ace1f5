"""The μ-GDP trade-off figures (docs/bounds.md §8); renders only.

A small-multiples grid, one panel per audit: type I error α on the x axis, type II error β on the
y axis, both in [0, 1].  Each panel draws the curves of its rows in ``curves`` (the frame of
:func:`unlearn_audit.pipeline.tradeoff.curves_frame`: ``curve`` ∈ diagonal, claim, true, proven,
audited_point; ``form`` ∈ gdp, dp, point) and writes its ``note``; the figure saves ``curves`` as
its CSV.  The numbers are computed by the pipeline from :mod:`unlearn_audit.stats.tradeoff`.
"""

from __future__ import annotations

import os
import textwrap

import pandas as pd

from .figures import new_grid, save_figure

__all__ = ["CURVE_STYLES", "tradeoff_figure"]

#: (curve, form) → line style and legend label; drawn in this order (the proven curve on top).
CURVE_STYLES = {
    ("diagonal", "gdp"): dict(color="0.55", linestyle=":", linewidth=1.2, label=r"$1-\alpha$: perfect privacy ($\mu = 0$)"),
    ("claim", "dp"): dict(color="tab:blue", linestyle="--", linewidth=1.4, label=r"claim $f_{\varepsilon,\delta}$: $(\varepsilon, \delta)$-DP"),
    ("claim", "gdp"): dict(color="tab:blue", linestyle="-", linewidth=1.4, label=r"claim $G_\mu$: $\mu$-GDP"),
    ("true", "gdp"): dict(color="tab:green", linestyle="-.", linewidth=1.2, label=r"true $G_\mu$ of the audited pair"),
    ("proven", "gdp"): dict(color="tab:red", linestyle="-", linewidth=3.5, alpha=0.55, label=r"proven $G_{\mu_{LB}}$"),
    ("audited_point", "point"): dict(color="tab:red", marker="X", markersize=7, linestyle="none", markeredgecolor="black",
                                     label=r"audited $(\mathrm{FP}_{hi}, \mathrm{FN}_{hi})$: the curve is on or below it"),
}

_PANEL = 2.9  # inches per panel
#: A G_μ with μ above the first number hugs the axes at linear scale (G_3(0.05) ≈ 0.07, G_4(0.05) ≈
#: 0.004); below the second it still shows on a logarithmic α axis down to 1e-12 (G_μ(1e-12) =
#: Φ(7.03 − μ) > 0.01).  A panel with such a curve gets that inset, where the curves separate.
_INSET_MU = (3.0, 9.4)


def _draw_curves(ax, sub: pd.DataFrame, handles: dict | None = None) -> None:
    for key, style in CURVE_STYLES.items():
        part = sub[(sub.curve == key[0]) & (sub.form == key[1])]
        if part.empty:
            continue
        (line,) = ax.plot(part.alpha, part.beta, **style, clip_on=key[0] != "audited_point",
                          zorder={"proven": 2, "audited_point": 5}.get(key[0], 3))
        if handles is not None:
            handles.setdefault(key, line)


def _inset(ax, sub: pd.DataFrame) -> None:
    """The panel's curves again at α ∈ [1e-12, 1] on a logarithmic α axis (α = 0 cannot be shown)."""
    ins = ax.inset_axes((0.40, 0.22, 0.56, 0.42))
    _draw_curves(ins, sub[sub.alpha > 0])
    ins.set_xscale("log")
    ins.set_xlim(1e-12, 1)
    ins.set_ylim(0, 1)
    ins.set_xticks([1e-12, 1e-8, 1e-4, 1])
    ins.tick_params(labelsize=6, length=2, pad=1)
    ins.set_title("α on a log scale", fontsize=6.5, pad=2)
    ins.grid(True, alpha=0.3)


def tradeoff_figure(curves: pd.DataFrame, panels: pd.DataFrame, stem: str | os.PathLike, title: str):
    """Draw one panel per row of ``panels`` (``panel, title, row, col, zeta, note``) at its (row, col),
    with the curves of ``curves`` whose ``panel`` matches; save PNG + PDF and ``curves`` as CSV."""
    if panels.empty:
        raise ValueError("no panel to draw")
    nrows, ncols = int(panels.row.max()) + 1, int(panels.col.max()) + 1
    width = max(_PANEL * ncols + 0.4, 6.5)  # room for the legend and the title when there are few panels
    fig, axes = new_grid(nrows, ncols, width, _PANEL * nrows + 1.3, sharex=True, sharey=True)
    fig.get_layout_engine().set(h_pad=0.06)  # room between a row's x axis and the next row's titles
    used = set()
    handles = {}
    for p in panels.itertuples():
        ax = axes[int(p.row)][int(p.col)]
        used.add((int(p.row), int(p.col)))
        sub = curves[curves.panel == p.panel]
        _draw_curves(ax, sub, handles)
        if ((sub.form == "gdp") & (sub.mu > _INSET_MU[0]) & (sub.mu < _INSET_MU[1])).any():
            _inset(ax, sub)
        ax.set_xlim(0, 1)
        ax.set_ylim(0, 1)
        ax.set_aspect("equal")
        ax.grid(True, alpha=0.3)
        ax.set_title(p.title, fontsize=8.5)
        ax.text(0.97, 0.97, p.note, transform=ax.transAxes, ha="right", va="top", fontsize=7,
                bbox=dict(boxstyle="round,pad=0.3", facecolor="white", edgecolor="0.8", alpha=0.9))
    for r in range(nrows):
        for c in range(ncols):
            if (r, c) not in used:
                axes[r][c].set_axis_off()
            if c == 0:
                axes[r][c].set_ylabel("type II error β")
            if r == nrows - 1 or (r + 1, c) not in used:
                axes[r][c].set_xlabel("type I error α")
                axes[r][c].tick_params(labelbottom=True)
    legend = [handles[key] for key in CURVE_STYLES if key in handles]
    fig.legend(handles=legend, loc="outside lower center", ncol=min(3 if width >= 8 else 2, len(legend)), fontsize=8, frameon=False)
    zetas = sorted(set(panels.zeta))
    level = f" (confidence {1 - zetas[0]:g})" if len(zetas) == 1 else ""
    lines = [title, f"the audit proves{level} that the algorithm is not μ-GDP for any μ < μ_LB"]
    fig.suptitle("\n".join(textwrap.fill(line, int(13 * width)) for line in lines), fontsize=9.5)  # ≈ 13 characters per inch
    return save_figure(fig, stem, data=curves)
