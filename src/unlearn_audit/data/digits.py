"""scikit-learn's bundled 8x8 handwritten digits: the default configuration's offline image dataset.

1,797 grey-scale images with 10 classes and pixel values 0-16; no download.  There is no official
test set, so :func:`unlearn_audit.data.splits.split_image_source` holds out ``test_fraction`` (20%)
of the images, then ``val_fraction`` (10%) of the rest, and builds the forget pool from the
remaining training portion as for CIFAR-100 (App. D.1).
"""

from __future__ import annotations

import numpy as np

from .splits import ImageSource

__all__ = ["load_digits_source"]


def load_digits_source() -> ImageSource:
    """The digits as an :class:`ImageSource`: x float32 ``(1797, 1, 8, 8)`` in [0, 16], ids 0..1796."""
    from sklearn.datasets import load_digits

    bunch = load_digits()
    x = np.asarray(bunch.images, dtype=np.float32)[:, None, :, :]
    y = np.asarray(bunch.target, dtype=np.int64)
    return ImageSource(
        name="digits",
        x=x,
        y=y,
        ids=np.arange(len(y), dtype=np.int64),
        num_classes=10,
        class_names=tuple(str(c) for c in range(10)),
        meta={"source": "sklearn.datasets.load_digits", "n_images": int(len(y))},
    )
