"""Figure helpers: one function per figure elsewhere; this module saves PNG + PDF atomically.

Saved files are byte-reproducible: the PDF carries no creation date (matplotlib's PNG metadata
holds only ``Software``), so rerunning a figure rule with the same inputs gives the same bytes.
"""

from __future__ import annotations

import os
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from ..io import atomic_path  # noqa: E402

__all__ = ["save_figure", "new_figure"]

# Per-format metadata that keeps outputs free of timestamps.
_METADATA = {"pdf": {"CreationDate": None}, "png": {}}

plt.rcParams.update({"font.size": 11, "axes.titlesize": 12, "axes.labelsize": 11, "legend.fontsize": 9})


def new_figure(width: float = 5.5, height: float = 4.0):
    """A figure and axes with the project's default size and a light grid."""
    fig, ax = plt.subplots(figsize=(width, height), constrained_layout=True)
    ax.grid(True, alpha=0.3)
    return fig, ax


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
    plt.close(fig)
    return paths
