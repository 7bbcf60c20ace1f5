"""The forward passes of every ``torch.nn.Linear`` while a method runs, for the tests that check the
cost model's steps and rows against a real run (the method works on a copy of the model it is
given, so the passes are counted by a global hook, not on the model)."""

from __future__ import annotations

import contextlib
from typing import Iterator

import torch


class LinearPasses:
    """Training-mode calls and the rows they carry, and the calls and rows of eval-mode calls (a frozen
    reference model's or teacher's)."""

    def __init__(self) -> None:
        self.calls = self.rows = self.eval_calls = self.eval_rows = 0

    def __call__(self, module, args, out) -> None:
        if isinstance(module, torch.nn.Linear):
            if module.training:
                self.calls += 1
                self.rows += len(args[0])
            else:
                self.eval_calls += 1
                self.eval_rows += len(args[0])


@contextlib.contextmanager
def counted_linear_passes() -> Iterator[LinearPasses]:
    """Within the block, every ``torch.nn.Linear`` forward pass is counted."""
    counter = LinearPasses()
    handle = torch.nn.modules.module.register_module_forward_hook(counter)
    try:
        yield counter
    finally:
        handle.remove()
