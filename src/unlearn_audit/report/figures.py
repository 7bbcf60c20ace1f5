"""Figure helpers: one function per figure elsewhere; this module saves PNG + PDF atomically.

Saved files are byte-reproducible: the PDF carries no creation date (matplotlib's PNG metadata
holds only ``Software``), so rerunning a figure rule with the same inputs gives the same bytes.

matplotlib is imported on the first figure, not with this module: the report modules are also
imported by table and audit jobs, which draw nothing and should not pay its start-up (≈ 0.7 s).
"""

from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path

from ..io import atomic_path

__all__ = ["save_figure", "new_figure", "new_grid"]

# Per-format metadata that keeps outputs free of timestamps.
_METADATA = {"pdf": {"CreationDate": None}, "png": {}}


@lru_cache(maxsize=1)
def _pyplot():
    """matplotlib.pyplot on the non-interactive Agg backend, with the project's font sizes."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    plt.rcParams.update({"font.size": 11, "axes.titlesize": 12, "axes.labelsize": 11, "legend.fontsize": 9})
    return plt


def new_figure(width: float = 5.5, height: float = 4.0):
    """A figure and axes with the project's default size and a light grid."""
    fig, ax = _pyplot().subplots(figsize=(width, height), constrained_layout=True)
    ax.grid(True, alpha=0.3)
    return fig, ax


def new_grid(nrows: int, ncols: int, width: float, height: float, **subplots_kw):
    """A figure of ``nrows`` x ``ncols`` panels (constrained layout) and its axes as a 2-D array,
    for the small-multiples figures; ``subplots_kw`` go to ``Figure.subplots`` (e.g. ``sharex``)."""
    fig = _pyplot().figure(figsize=(width, height), constrained_layout=True)
    return fig, fig.subplots(nrows, ncols, squeeze=False, **subplots_kw)


def save_figure(fig, stem: str | os.PathLike, data=None) -> list[Path]:
    """Save ``fig`` as ``stem``.png (150 dpi) and ``stem``.pdf (no creation date), and ``data`` (the
    numbers it plots, a DataFrame) as ``stem``.csv; close it; return the paths."""
    stem = Path(stem)
    paths = []
    if data is not None:
        from ..io import write_csv

        write_csv(data, stem.with_suffix(".csv"))
        paths.append(stem.with_suffix(".csv"))
    for suffix in (".png", ".pdf"):
        dest = stem.with_suffix(suffix)
        with atomic_path(dest) as tmp:
            fig.savefig(tmp, format=suffix[1:], dpi=150, metadata=dict(_METADATA[suffix[1:]]))
        paths.append(dest)
    _pyplot().close(fig)
    return paths
