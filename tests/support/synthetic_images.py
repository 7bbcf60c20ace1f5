"""Small synthetic image data for the unlearning tests: 4 classes on 8x8 images."""

from __future__ import annotations

import torch


def quadrant_images(n: int, seed: int, *, flip_fraction: float = 0.0) -> tuple[torch.Tensor, torch.Tensor]:
    """(x, y): class c has a brighter quadrant c; ``flip_fraction`` of the labels are then redrawn at
    random (noisy labels give membership signal)."""
    g = torch.Generator().manual_seed(seed)
    y = torch.randint(0, 4, (n,), generator=g)
    x = torch.randn(n, 1, 8, 8, generator=g)
    for c in range(4):
        r, s = divmod(c, 2)
        x[y == c, :, 4 * r : 4 * r + 4, 4 * s : 4 * s + 4] += 1.0
    if flip_fraction:
        flip = torch.rand(n, generator=g) < flip_fraction
        y[flip] = torch.randint(0, 4, (int(flip.sum()),), generator=g)
    return x, y
