"""Uncertified unlearning algorithms behind one registry (docs/calibrations.md §0, §11; App. G.4–G.7)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
import torch
from torch import nn

from unlearn_audit.models import build_model, initial_model
from unlearn_audit.training import TrainConfig, loss_fn, shuffle_orders, train_model
from unlearn_audit.unlearning import UNLEARNING_METHODS, get_method, make_params, register, unlearn
from unlearn_audit.unlearning.hessian import HessianParams, lissa_inverse_hvp, regularizer

from synthetic_images import quadrant_images

torch.set_num_threads(1)

PARAMS = {"in_channels": 1, "num_classes": 4, "width": 0.125}

FAST = {
    "retain_finetune": {"epochs": 1, "batch_size": 16, "lr": 0.02},
    "forget_ascent": {"epochs": 1, "batch_size": 16, "lr": 0.02, "ascent_epochs": 2, "ascent_lr": 0.02},
    "ida": {"epochs": 1, "batch_size": 16, "lr": 0.02, "forget_epochs": 1, "q": 1, "lam": 1.0, "interleaved_lr": 0.02, "forget_batch_size": 4},
    "hessian": {"s1": 1, "s2": 20, "scale": 200.0, "batch_size": 8, "sigma": 1e-3},
}


@pytest.fixture(scope="module")
def audit_setup():
    """Retain set, a candidate pool of m = 16 batches of B = 2, a sign vector and the trained model A(D(S))."""
    xr, yr = quadrant_images(96, 0, flip_fraction=0.25)
    pool_x, pool_y = quadrant_images(32, 1, flip_fraction=0.25)
    batch = np.repeat(np.arange(16), 2)
    signs = np.array([1, -1] * 8)
    rows = np.flatnonzero(np.isin(batch, np.flatnonzero(signs > 0)))  # D_f(S)
    ids = np.r_[np.arange(96), 96 + rows]
    model = build_model("tinynet", **PARAMS)
    model.load_state_dict(initial_model("tinynet", PARAMS, 0))
    train_model(model, torch.cat([xr, pool_x[rows]]), torch.cat([yr, pool_y[rows]]), ids, shuffle_orders(128, 6, 0),
                TrainConfig(epochs=6, batch_size=16, lr=0.05), progress=False)
    return {"model": model, "retain": (xr, yr), "pool": (pool_x, pool_y), "rows": rows}


def _state(m: nn.Module) -> dict[str, torch.Tensor]:
    return {k: v.detach().clone() for k, v in m.state_dict().items()}


def _same(a: dict, b: dict) -> bool:
    return all(torch.equal(a[k], b[k]) for k in a)


# --------------------------------------------------------------------------------------- registry


def test_registry_lists_the_uncertified_methods():
    for name in ("retain_finetune", "forget_ascent", "ida", "hessian"):
        method = get_method(name)
        assert method.name == name and not method.certified
        assert dataclasses.is_dataclass(method.params_cls) and method.params_cls.__dataclass_params__.frozen
    assert get_method("forget_ascent").uses_forget and get_method("ida").uses_forget
    assert not get_method("retain_finetune").uses_forget and not get_method("hessian").uses_forget


def test_paper_defaults():
    h = make_params("hessian")
    assert (h.s1, h.s2, h.scale, h.batch_size, h.weight_decay, h.sigma) == (10, 1000, 1000.0, 10, 5e-4, 1e-3)
    i = make_params("ida")
    assert (i.lam, i.forget_epochs, i.interleaved_lr, i.lr, i.schedule) == (0.75, 10, 1e-3, 0.1, "onecycle")
    a = make_params("forget_ascent")
    assert (a.ascent_epochs, a.ascent_lr, a.lr) == (2, 1e-3, 0.1)
    assert make_params("retain_finetune", {"epochs": 3}).epochs == 3


def test_registry_errors():
    with pytest.raises(ValueError, match="unknown unlearning method 'nope'"):
        get_method("nope")
    with pytest.raises(ValueError, match=r"unknown parameter 'lambda'.*'ida'"):
        make_params("ida", {"lambda": 0.5})
    with pytest.raises(ValueError, match="'hessian'.*s2"):
        make_params("hessian", {"s2": 0})
    with pytest.raises(ValueError, match="regularizer"):
        make_params("hessian", {"regularizer": "l1"})
    with pytest.raises(ValueError, match="already registered"):
        register("ida", HessianParams)(lambda *a: None)
    with pytest.raises(TypeError, match="dataclass"):
        register("untyped")(lambda model, retain, forget, params, generator: model)
    assert "untyped" not in UNLEARNING_METHODS
    with pytest.raises(ValueError, match="generator"):
        unlearn("retain_finetune", nn.Linear(2, 2), (torch.zeros(1, 2), torch.zeros(1)), (torch.zeros(0, 2), torch.zeros(0)), {}, None)


@dataclasses.dataclass(frozen=True)
class ScaleParams:
    factor: float = 0.5


def test_a_new_method_can_be_registered():
    try:
        @register("scale_weights", uses_forget=False)  # params class from the annotation
        def scale_weights(model, retain, forget, params: ScaleParams, generator):
            """Multiply every weight by a factor."""
            with torch.no_grad():
                for p in model.parameters():
                    p.mul_(params.factor)
            return model

        base = nn.Linear(2, 1)
        out = unlearn("scale_weights", base, (torch.zeros(1, 2), torch.zeros(1)), (torch.zeros(0, 2), torch.zeros(0)), {"factor": 2.0}, 0)
        torch.testing.assert_close(out.weight, 2 * base.weight)
        assert get_method("scale_weights").description == "Multiply every weight by a factor."
        assert get_method("scale_weights").params_cls is ScaleParams
        with pytest.raises(ValueError, match="unknown parameter 'scale'.*'scale_weights'"):
            unlearn("scale_weights", base, (torch.zeros(1, 2), torch.zeros(1)), (torch.zeros(0, 2), torch.zeros(0)), {"scale": 2.0}, 0)
    finally:
        UNLEARNING_METHODS.pop("scale_weights", None)


# ------------------------------------------------------------------------------------- behaviour


@pytest.mark.parametrize("name", sorted(FAST))
def test_methods_are_seeded_and_leave_the_input_model_alone(audit_setup, name):
    s = audit_setup
    before = _state(s["model"])
    forget = (s["pool"][0][s["rows"]], s["pool"][1][s["rows"]])
    a = _state(unlearn(name, s["model"], s["retain"], forget, FAST[name], generator=torch.Generator().manual_seed(3)))
    b = _state(unlearn(name, s["model"], s["retain"], forget, FAST[name], generator=3))
    c = _state(unlearn(name, s["model"], s["retain"], forget, FAST[name], generator=4))
    assert _same(before, _state(s["model"]))
    assert _same(a, b) and not _same(a, c) and not _same(a, before)


@pytest.mark.parametrize("name", sorted(FAST))
def test_only_the_sampled_forget_set_has_influence(audit_setup, name):
    """Candidate batches outside D_f(S) have zero influence; D_f(S) itself matters iff the method uses forget data."""
    s = audit_setup
    pool_x, pool_y = s["pool"]
    rows = s["rows"]
    out_rows = np.setdiff1d(np.arange(len(pool_x)), rows)

    def run(px: torch.Tensor) -> dict:
        return _state(unlearn(name, s["model"], s["retain"], (px[rows], pool_y[rows]), FAST[name], generator=5))

    ref = run(pool_x)
    others = pool_x.clone()
    others[out_rows] = 100.0 * torch.randn(len(out_rows), 1, 8, 8)
    assert _same(run(others), ref)
    inside = pool_x.clone()
    inside[rows[:2]] += 3.0
    assert _same(run(inside), ref) != get_method(name).uses_forget


def test_ascent_increases_the_forget_loss(audit_setup):
    s = audit_setup
    xf, yf = s["pool"][0][s["rows"]], s["pool"][1][s["rows"]]
    with torch.no_grad():
        before = float(loss_fn(s["model"](xf), yf))
    p = {"epochs": 0, "ascent_epochs": 2, "ascent_lr": 0.05, "batch_size": 8}
    out = unlearn("forget_ascent", s["model"], s["retain"], (xf, yf), p, generator=0)
    with torch.no_grad():
        after = float(loss_fn(out(xf), yf))
    assert after > 1.1 * before


def test_ida_structure(audit_setup):
    s = audit_setup
    xf, yf = s["pool"][0][s["rows"]], s["pool"][1][s["rows"]]
    base = {"epochs": 1, "batch_size": 16, "lr": 0.02}
    # no interleaved phase: IDA is retain fine-tuning
    a = unlearn("ida", s["model"], s["retain"], (xf, yf), {**base, "forget_epochs": 0}, generator=1)
    b = unlearn("retain_finetune", s["model"], s["retain"], (xf, yf), base, generator=1)
    assert _same(_state(a), _state(b))
    # λ = 0: the forget set is never read
    p0 = {**base, "forget_epochs": 1, "lam": 0.0}
    c = unlearn("ida", s["model"], s["retain"], (xf, yf), p0, generator=1)
    d = unlearn("ida", s["model"], s["retain"], (xf + 5.0, yf), p0, generator=1)
    assert _same(_state(c), _state(d))
    # ascent term raises the forget loss compared with λ = 0
    p1 = {**base, "epochs": 0, "forget_epochs": 2, "lam": 2.0, "q": 0, "interleaved_lr": 0.05, "forget_batch_size": 8}
    e = unlearn("ida", s["model"], s["retain"], (xf, yf), p1, generator=1)
    f = unlearn("ida", s["model"], s["retain"], (xf, yf), {**p1, "lam": 0.0}, generator=1)
    with torch.no_grad():
        assert float(loss_fn(e(xf), yf)) > float(loss_fn(f(xf), yf))


# ------------------------------------------------------------------------------------ Hessian / LiSSA


def test_lissa_matches_a_direct_solve_on_ridge_regression():
    g = torch.Generator().manual_seed(0)
    n, d, lam = 200, 6, 0.1
    X = torch.randn(n, d, generator=g, dtype=torch.float64)
    H = X.T @ X / n + lam * torch.eye(d, dtype=torch.float64)  # Hessian of ½ mean (xᵀw − y)² + ½ λ ‖w‖²
    v = torch.randn(d, generator=g, dtype=torch.float64)
    exact = torch.linalg.solve(H, v)
    est = lissa_inverse_hvp([v], lambda h: [H @ h[0]], s1=1, s2=400, scale=5.0)[0]
    assert float((est - exact).norm() / exact.norm()) < 1e-3

    def minibatch_hvp(h):  # minibatches of 50 sampled with replacement, as in the algorithm
        idx = torch.randint(0, n, (50,), generator=g)
        return [X[idx].T @ (X[idx] @ h[0]) / 50 + lam * h[0]]

    est = lissa_inverse_hvp([v], minibatch_hvp, s1=20, s2=400, scale=5.0)[0]
    assert float((est - exact).norm() / exact.norm()) < 5e-2
    with pytest.raises(FloatingPointError, match="scale"):
        lissa_inverse_hvp([v], lambda h: [H @ h[0]], s1=1, s2=2000, scale=0.4)


def _newton_reference(model: nn.Linear, x: torch.Tensor, y: torch.Tensor, coef: float, kind: str) -> list[torch.Tensor]:
    """θ − H̃⁻¹ g by a dense solve: g the unregularised mean-CE gradient, H̃ the Hessian of CE + coef·R."""
    shapes = [p.shape for p in model.parameters()]
    flat = torch.cat([p.detach().reshape(-1) for p in model.parameters()]).double()

    def split(v):
        out, i = [], 0
        for s in shapes:
            out.append(v[i : i + s.numel()].view(s))
            i += s.numel()
        return out

    def ce(v):
        w, b = split(v)
        return nn.functional.cross_entropy(x.double() @ w.T + b, y)

    def objective(v):
        return ce(v) + coef * regularizer(split(v), kind)

    H = torch.autograd.functional.hessian(objective, flat)
    grad = torch.autograd.functional.jacobian(ce, flat)
    return split(flat - torch.linalg.solve(H, grad))


@pytest.mark.parametrize("kind, s2", [("squared", 500), ("norm", 4000)])  # λ_min(H̃) ≈ 0.1 and 0.0036 here
def test_hessian_unlearning_is_the_newton_step(kind, s2):
    torch.manual_seed(0)
    model = nn.Linear(4, 3)
    x1, y1 = torch.randn(1, 4), torch.tensor([2])
    # identical retain examples: every LiSSA minibatch has the full-data Hessian, so the estimate is exact
    retain = (x1.repeat(30, 1), y1.repeat(30))
    forget = (torch.randn(2, 4), torch.tensor([0, 1]))
    p = {"s1": 1, "s2": s2, "scale": 1.3, "batch_size": 5, "weight_decay": 0.05, "gamma": 0.05, "regularizer": kind, "sigma": 0.0}
    out = unlearn("hessian", model, retain, forget, p, generator=0)
    ref = _newton_reference(model, *retain, 0.1, kind)
    for got, want, orig in zip(out.parameters(), ref, model.parameters()):
        step_ref = (orig.detach().double() - want).norm()
        assert float((got.detach().double() - want).norm() / step_ref) < 1e-3
    # the final noise: same generator, σ > 0 adds N(0, σ²) to every parameter after the same LiSSA draws
    noisy = unlearn("hessian", model, retain, forget, {**p, "sigma": 0.01}, generator=0)
    delta = torch.cat([(a - b).detach().reshape(-1) for a, b in zip(noisy.parameters(), out.parameters())])
    assert 0.003 < float(delta.std()) < 0.03 and bool((delta != 0).all())


def test_hessian_grad_regularizer_option_changes_g():
    torch.manual_seed(1)
    model = nn.Linear(3, 2)
    retain = (torch.randn(1, 3).repeat(10, 1), torch.tensor([1]).repeat(10))
    p = {"s1": 1, "s2": 200, "scale": 2.0, "batch_size": 4, "weight_decay": 0.1, "gamma": 0.0, "sigma": 0.0}
    a = unlearn("hessian", model, retain, (retain[0][:0], retain[1][:0]), p, generator=0)
    b = unlearn("hessian", model, retain, (retain[0][:0], retain[1][:0]), {**p, "grad_regularizer": True}, generator=0)
    assert not torch.equal(a.weight, b.weight)
