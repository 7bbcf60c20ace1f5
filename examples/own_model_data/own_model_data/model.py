"""A model of one's own: a multilayer perceptron for tabular rows, built by a factory of the design's
``model.params`` (docs/configuration.md#your-own-model-and-data).  The workflow draws its initial
weights x0 under a fixed seed, so the factory only builds a fresh module."""

from __future__ import annotations

from torch import nn


def mlp(in_features: int = 20, hidden: int = 64, num_classes: int = 4) -> nn.Module:
    """Two hidden ReLU layers of ``hidden`` units and a linear read-out to ``num_classes`` logits."""
    return nn.Sequential(nn.Linear(in_features, hidden), nn.ReLU(), nn.Linear(hidden, hidden), nn.ReLU(), nn.Linear(hidden, num_classes))
