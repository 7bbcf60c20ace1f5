"""A base training that a test stops with a real SIGTERM: ``python resumable_training.py STATE OUT EPOCHS``
trains a TinyNet on synthetic images with its state at STATE (unlearn_audit.training.resume), prints
``training`` when its loop starts, and saves the weights to OUT when done."""

import sys

import numpy as np
import torch

from synthetic_images import quadrant_images
from unlearn_audit.models import build_model
from unlearn_audit.torch_utils import save_state_dict
from unlearn_audit.training import TrainConfig, shuffle_orders, train_model
from unlearn_audit.training.resume import TrainingCheckpoint, stop_on_sigterm


class _Announced(TrainingCheckpoint):
    def __enter__(self):
        entered = super().__enter__()
        print("training", flush=True)
        return entered


def main(state: str, out: str, epochs: int) -> None:
    stop_on_sigterm()
    x, y = quadrant_images(512, 3, flip_fraction=0.2)
    torch.manual_seed(0)
    model = build_model("tinynet", in_channels=1, num_classes=4, width=0.25)
    cfg = TrainConfig.from_dict({"epochs": epochs, "batch_size": 16, "lr": 0.05, "momentum": 0.9, "schedule": "onecycle"})
    train_model(model, x.numpy(), y.numpy(), np.arange(len(x)), shuffle_orders(len(x), epochs, 1), cfg, checkpoint=_Announced(state))
    save_state_dict(model.state_dict(), out)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], int(sys.argv[3]))
