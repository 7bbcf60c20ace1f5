"""Tables and figures of the Gaussian certified-unlearning experiments (docs/calibrations.md §13)."""

from __future__ import annotations

import os

import pandas as pd

from .figures import new_grid, save_figure

__all__ = ["AUDIT_COLUMNS", "audit_table", "error_figure", "clip_figure"]

AUDIT_COLUMNS = ["mechanism", "claimed_mu", "true_mu", "mu_lb", "mu_lb_alg1", "epsilon_lb", "falsified"]

def audit_table(rows: pd.DataFrame) -> pd.DataFrame:
    """The audit table with the columns of the issue, in the order certified, controls."""
    order = {"certified": 0, "control_tight": 1, "control_undernoised": 2}
    out = rows.sort_values("mechanism", key=lambda s: s.map(order))[AUDIT_COLUMNS].reset_index(drop=True)
    out["falsified"] = out["falsified"].astype(bool)
    return out


_X_LABELS = {"p": "dimension p", "epsilon": r"certified $\varepsilon$", "m": "removed points m"}
_NOISE_STYLE = {"gaussian": ("-", "o", "Gaussian"), "laplace": ("--", "s", r"$\ell_2$-Laplace")}


def _ratio_text(ratio: float) -> str:
    if ratio == 1:
        return "n = p"
    inverse = 1 / ratio
    return f"n = p/{inverse:g}" if abs(inverse - round(inverse)) < 1e-9 else f"n = {ratio:g}·p"


def _steps_text(steps: int) -> str:
    return "one Newton step" if int(steps) == 1 else f"{int(steps)} Newton steps"


def error_figure(curves: pd.DataFrame, stem: str | os.PathLike, title: str):
    """Mean GED or UED against x on log–log axes (the rows of
    :func:`unlearn_audit.gaussian_unlearning.experiments.error_curves`): one panel per (accuracy
    loss, n/p, Newton steps), one line per (noise, line value); the rows are saved as CSV beside the
    figure."""
    x_name, line_name, y = curves["x_name"].iloc[0], curves["line_name"].iloc[0], curves["y"].iloc[0]
    panels = list(dict.fromkeys(zip(curves["error_loss"], curves["n_over_p"], curves["newton_steps"])))
    ncols = min(len(panels), 2)
    nrows = -(-len(panels) // ncols)
    fig, axes = new_grid(nrows, ncols, 6.2 * ncols, 4.6 * nrows)
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    values = sorted(curves["line"].unique())
    colours = {v: f"C{i % 10}" for i, v in enumerate(values)}
    # earlier lines drawn wider, so that lines which coincide (ℓ2-Laplace GED does not depend on
    # p) stay visible as a line inside a wider one
    widths = {v: max(1.3, 2.8 - 0.75 * i) for i, v in enumerate(values)}
    plain = FuncFormatter(lambda v, _: f"{v:g}")
    for ax, (loss, ratio, steps) in zip(axes.flat, panels):
        sub = curves[(curves["error_loss"] == loss) & (curves["n_over_p"] == ratio) & (curves["newton_steps"] == steps)]
        for (noise, line), pts in sub.groupby(["noise", "line"], sort=False):
            style, marker, name = _NOISE_STYLE.get(noise, (":", "^", noise))
            ax.plot(pts["x"], pts["mean"], linestyle=style, marker=marker, markersize=2 + widths[line], color=colours[line],
                    linewidth=widths[line], label=f"{name}, {line_name} = {line:g}")
        ax.set_xscale("log")
        ax.set_yscale("log")
        xs = sorted(sub["x"].unique())
        ax.set_xticks(xs, [f"{v:g}" for v in xs])
        ax.tick_params(axis="x", which="minor", bottom=False, labelbottom=False)
        ax.yaxis.set_major_locator(LogLocator(base=10.0, subs=(1.0, 2.0, 5.0), numticks=12))
        ax.yaxis.set_major_formatter(plain)
        ax.yaxis.set_minor_formatter(NullFormatter())
        ax.grid(True, which="major", alpha=0.3)
        ax.grid(True, which="minor", axis="y", alpha=0.12)
        ax.set_xlabel(_X_LABELS.get(x_name, x_name))
        ax.set_ylabel(f"mean {y.upper()} (log scale)")
        ax.set_title(f"{loss}; {_ratio_text(ratio)}; {_steps_text(steps)}", fontsize=10)
        ax.legend(fontsize=7, ncol=2, loc="best")
    used = list(axes.flat)[: len(panels)]
    low, high = min(ax.get_ylim()[0] for ax in used), max(ax.get_ylim()[1] for ax in used)
    for ax in used:  # one y range: panels (n/p, one or two Newton steps) compare at a glance
        ax.set_ylim(low, high)
    for ax in list(axes.flat)[len(panels):]:
        ax.set_visible(False)
    fig.suptitle(title)
    return save_figure(fig, stem, data=curves)


def clip_figure(slopes: pd.DataFrame, stem: str | os.PathLike, title: str):
    """The fitted slope of GED (or UED) against m for each clip c of the accuracy loss (the rows of
    :func:`unlearn_audit.gaussian_unlearning.experiments.clip_sensitivity`): one line per (noise, p,
    n/p) against c on a log axis, the unclipped log-loss's slope as a horizontal line of the same
    style; the rows are saved as CSV beside the figure."""
    fig, axes = new_grid(1, 1, 6.4, 4.4)
    ax = axes.flat[0]
    groups = list(dict.fromkeys(zip(slopes["noise"], slopes["p"], slopes["n_over_p"])))
    for i, (noise, p, ratio) in enumerate(groups):
        style, marker, name = _NOISE_STYLE.get(noise, (":", "^", noise))
        sub = slopes[(slopes["noise"] == noise) & (slopes["p"] == p) & (slopes["n_over_p"] == ratio)]
        clipped = sub[sub["prob_clip"].notna()].sort_values("prob_clip")
        colour = f"C{i % 10}"
        label = f"{name}, p = {p:g}" + ("" if ratio == 1 else f", {_ratio_text(ratio)}")
        ax.errorbar(clipped["prob_clip"], clipped["slope"], yerr=clipped["slope_se"], linestyle=style, marker=marker, color=colour,
                    capsize=2, label=f"{label}, clipped at c")
        for value in sub.loc[sub["prob_clip"].isna(), "slope"]:  # named in the legend: the lines lie close together
            ax.axhline(value, color=colour, linestyle=style, linewidth=0.9, alpha=0.6, label=f"{label}, unclipped log-loss: {value:.2f}")
    ax.set_xscale("log")
    ax.set_xlabel("clip c of the predicted probability in the accuracy loss (loss at most log(1/c))")
    ax.set_ylabel("fitted log-log slope against m")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=7, loc="best")
    ax.set_title(title, fontsize=10)
    return save_figure(fig, stem, data=slopes)
