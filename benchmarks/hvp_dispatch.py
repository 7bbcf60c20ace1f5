"""Operations one Hessian-vector product of the Hessian method (App. G.4) dispatches on the paper's
CharLSTM, counted on PyTorch's ``meta`` device (docs/workflow.md, "Model clipping on a GPU"), beside
the forward-over-reverse route (``torch.func.jvp`` of ``torch.func.grad``).

    python benchmarks/hvp_dispatch.py [--hidden 256] [--window 80] [--batch 256]

On ``meta`` the LSTM runs PyTorch's own kernels, one cell per character and layer, as the method
runs it on a GPU with cuDNN off; every dispatched operation there is a kernel launch on a GPU.  The
product is the library's own (``unlearning.hessian._minibatch_hvp``, reverse over reverse).  Prints
one line per route.  Seconds; not part of the test suite.
"""

from __future__ import annotations

import argparse

import torch
from torch.func import functional_call, grad, jvp
from torch.utils._python_dispatch import TorchDispatchMode

from unlearn_audit.models import CharLSTM
from unlearn_audit.training.sgd import loss_fn
from unlearn_audit.unlearning.hessian import _minibatch_hvp
from unlearn_audit.unlearning.params import HessianParams


class _Count(TorchDispatchMode):
    """Counts the operations dispatched inside it."""

    def __init__(self) -> None:
        super().__init__()
        self.ops = 0

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.ops += 1
        return func(*args, **(kwargs or {}))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--hidden", type=int, default=256)
    ap.add_argument("--window", type=int, default=80)
    ap.add_argument("--batch", type=int, default=256, help="the product's minibatch (Shakespeare: 256)")
    args = ap.parse_args()
    meta = torch.device("meta")
    model = CharLSTM(hidden_size=args.hidden).to(meta).eval()
    x = torch.zeros(4 * args.batch, args.window, dtype=torch.long, device=meta)
    y = torch.zeros_like(x)
    params = [p for p in model.parameters()]
    h = [torch.empty_like(p) for p in params]
    p = HessianParams(s1=1, s2=1, batch_size=args.batch)
    hvp = _minibatch_hvp(model, (x, y), p, torch.Generator().manual_seed(0))
    names = [n for n, _ in model.named_parameters()]
    idx = torch.zeros(args.batch, dtype=torch.long, device=meta)

    def forward_over_reverse():
        def loss(ps):
            return loss_fn(functional_call(model, dict(zip(names, ps)), (x.index_select(0, idx),)), y.index_select(0, idx))
        return jvp(grad(loss), (tuple(params),), (tuple(h),))[1]

    for label, product in (("reverse over reverse (the method's)", lambda: hvp(h)), ("forward over reverse", forward_over_reverse)):
        count = _Count()
        with count:
            product()
        print(f"{label}: {count.ops:,} operations a product (CharLSTM {args.hidden} units, {args.window} characters, minibatch {args.batch})")


if __name__ == "__main__":
    main()
