"""Figure helpers: one function per figure elsewhere; this module saves PNG + PDF atomically."""

from __future__ import annotations

import os
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from ..io import atomic_path  # noqa: E402

__all__ = ["save_figure", "new_figure"]

plt.rcParams.update({"font.size": 11, "axes.titlesize": 12, "axes.labelsize": 11, "legend.fontsize": 9})


def new_figure(width: float = 5.5, height: float = 4.0):
    """A figure and axes with the project's default size and a light grid."""
    fig, ax = plt.subplots(figsize=(width, height), constrained_layout=True)
    ax.grid(True, alpha=0.3)
    return fig, ax


def save_figure(fig, stem: str | os.PathLike) -> list[Path]:
    """Save ``fig`` as ``stem``.png (150 dpi) and ``stem``.pdf; close it; return the paths."""
    stem = Path(stem)
    paths = []
    for suffix in (".png", ".pdf"):
        dest = stem.with_suffix(suffix)
        with atomic_path(dest) as tmp:
            fig.savefig(tmp, format=suffix[1:], dpi=150)
        paths.append(dest)
    plt.close(fig)
    return paths
