"""No method's step waits on the host: the loops of the methods a GPU runs step by step (retain
fine-tuning, IDA, model clipping's noisy phase, rewind-to-delete's full-batch steps, LiSSA), run on
the ``meta`` device (tests/support/meta_device.py) at two budgets, make the same number of host
reads and host-to-device copies: none a step, only their set-up and the final reads."""

from __future__ import annotations

import pytest
import torch

from meta_device import META, host_copies_counted, host_reads_answered
from unlearn_audit.models import build_model
from unlearn_audit.unlearning import unlearn

torch.set_num_threads(1)

PARAMS = {"in_channels": 3, "num_classes": 10, "width": 0.25}

#: Each method at a small and a larger budget (the second takes more steps of the same kind).
BUDGETS = {
    "retain_finetune": ({"epochs": 1, "batch_size": 16}, {"epochs": 3, "batch_size": 16}),
    "ida": ({"epochs": 1, "forget_epochs": 1, "q": 1, "lam": 1.0, "batch_size": 16, "forget_batch_size": 4},
            {"epochs": 1, "forget_epochs": 3, "q": 1, "lam": 1.0, "batch_size": 16, "forget_batch_size": 4}),
    "model_clipping": ({"epochs": 2, "batch_size": 16, "noisy_batch_size": 16, "noisy_steps": 2, "C2": 1.0, "sigma": 0.01},
                       {"epochs": 2, "batch_size": 16, "noisy_batch_size": 16, "noisy_steps": 6, "C2": 1.0, "sigma": 0.01}),
    "rewind_to_delete": ({"T": 10, "K": 2, "lipschitz_samples": 1, "epsilon": 10.0, "delta": 1e-3},
                         {"T": 10, "K": 5, "lipschitz_samples": 1, "epsilon": 10.0, "delta": 1e-3}),
    "hessian": ({"s1": 1, "s2": 2, "scale": 500.0, "batch_size": 16}, {"s1": 1, "s2": 6, "scale": 500.0, "batch_size": 16}),
}


def _transfers(method: str, params: dict) -> tuple[int, int]:
    model = build_model("tinynet", **PARAMS).to(META)
    retain = (torch.empty(64, 3, 32, 32, device=META), torch.empty(64, dtype=torch.long, device=META))
    forget = (torch.empty(8, 3, 32, 32, device=META), torch.empty(8, dtype=torch.long, device=META))
    extra = {"epsilon": None, "delta": None} if method == "model_clipping" else {}
    with host_reads_answered() as reads, host_copies_counted() as copies:
        unlearn(method, model, retain, forget, {**params, **extra}, generator=0)
    return reads.count, copies.count


@pytest.mark.parametrize("method", sorted(BUDGETS))
def test_more_steps_make_no_more_host_reads_or_copies(method):
    small, large = (_transfers(method, p) for p in BUDGETS[method])
    assert large == small, f"{method}: (host reads, copies) {small} at the small budget, {large} at the larger one"
