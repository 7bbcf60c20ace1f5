"""Certified unlearning: model clipping (G.1, Eq. 14) and rewind-to-delete (G.2); docs/calibrations.md §3–8."""

from __future__ import annotations

import copy
import math
import subprocess
import sys

import pytest
import torch
from torch import nn

from unlearn_audit.models import build_model, initial_model
from unlearn_audit.stats.accountants import r2d_sensitivity
from unlearn_audit.stats.gaussian_mechanism import gaussian_sigma
from unlearn_audit.training import loss_fn
from unlearn_audit.unlearning import Monitor, get_method, make_params, release_key, unlearn, unlearn_variants
from unlearn_audit.unlearning import common as common_module
from unlearn_audit.unlearning import model_clipping as mc_module
from unlearn_audit.unlearning.params import HessianParams, model_clipping_plan
from unlearn_audit.unlearning.rewind_to_delete import lipschitz_estimate

from synthetic_images import quadrant_images

torch.set_num_threads(1)

PARAMS = {"in_channels": 1, "num_classes": 4, "width": 0.125}


@pytest.fixture(scope="module")
def setup():
    model = build_model("tinynet", **PARAMS)
    model.load_state_dict(initial_model("tinynet", PARAMS, 0))
    return {"model": model, "retain": quadrant_images(96, 0), "forget": quadrant_images(8, 1)}


class Recorder(Monitor):
    def __init__(self) -> None:
        self.steps: list[int] = []
        self.norms: list[float] = []
        self.states: list[dict] = []
        self.values: dict[str, float] = {}

    def checkpoint(self, step, model):
        self.steps.append(step)
        self.norms.append(_norm(model))
        self.states.append(_state(model))

    def record(self, **values):
        self.values.update(values)


def _norm(m: nn.Module) -> float:
    return math.sqrt(sum(float(p.detach().double().pow(2).sum()) for p in m.parameters()))


def _state(m: nn.Module) -> dict[str, torch.Tensor]:
    return {k: v.detach().clone() for k, v in m.state_dict().items()}


def _flat(state: dict) -> torch.Tensor:
    return torch.cat([v.reshape(-1).double() for v in state.values()])


def _same(a: dict, b: dict) -> bool:
    return all(torch.equal(a[k], b[k]) for k in a)


# 96 retain examples, batch 16: 6 steps per epoch
FIXED = {"epochs": 3, "batch_size": 16, "lr": 0.02, "noisy_batch_size": 16, "noisy_lr": 0.05, "C2": 0.5, "sigma": 0.01, "noisy_steps": 7}


# ------------------------------------------------------------------------------------ registry / params


def test_registry_and_params():
    mc, r2d = get_method("model_clipping"), get_method("rewind_to_delete")
    assert mc.certified and mc.monitors and not mc.uses_forget
    assert r2d.certified and r2d.monitors
    assert not get_method("retain_finetune").monitors
    p = make_params("model_clipping")
    assert (p.epochs, p.lr, p.schedule, p.weight_decay, p.C0, p.delta, p.noisy_lr, p.noisy_batch_size, p.noisy_weight_decay) == (
        50, 0.1, "onecycle", 5e-4, 30.0, 1e-5, 1e-3, 128, 0.0)
    assert p.certified and p.noisy_steps is None and p.noisy_step_count() == 40
    assert model_clipping_plan(p, 40500) == (40, 50 * 317)
    r = make_params("rewind_to_delete")
    assert (r.T, r.K, r.lr, r.delta, r.lipschitz_samples, r.lipschitz_std, r.micro_batch) == (40, 5, 0.01, 1e-3, 100, 0.01, 1024)
    u = make_params("model_clipping", {"C2": 5.0, "sigma": 1e-4, "noisy_steps": 3170, "epsilon": None, "delta": None, "checkpoint_steps": [5, 1, 5]})
    assert not u.certified and u.noisy_step_count() == 3170 and u.checkpoint_steps == (1, 5)


@pytest.mark.parametrize("name, bad, match", [
    ("model_clipping", {"C1": 1.0}, "unknown parameter 'C1'"),
    ("rewind_to_delete", {"k": 5}, "unknown parameter 'k'"),
    ("rewind_to_delete", {"K": 0}, "K"),
    ("rewind_to_delete", {"K": 6, "T": 5}, "K must be <= T"),
    ("model_clipping", {"epsilon": None}, "epsilon and delta are required"),
    ("model_clipping", {"sigma": 0.0}, "sigma"),
    ("model_clipping", {"checkpoint_steps": [0]}, "checkpoint_steps"),
    ("model_clipping", {"noisy_steps": -1}, "noisy_steps"),
    ("model_clipping", {"noisy_steps": "most"}, "noisy_steps must be null, a number of steps or 'all'"),
])
def test_make_params_refuses(name, bad, match):
    with pytest.raises(ValueError, match=match):
        make_params(name, bad)


def test_budget_refusals(setup):
    s = setup
    row2 = make_params("model_clipping", {"epsilon": 10.0, "C2": 0.1, "sigma": 0.02, "epochs": 50})
    with pytest.raises(ValueError, match=r"T = 48004.*50 epochs x 317 steps = 15850"):
        model_clipping_plan(row2, 40500)
    assert model_clipping_plan(row2, 40500, strict=False) == (None, 15850)
    with pytest.raises(ValueError, match=r"T = 40 noisy steps.*3 epochs x 6 steps = 18"):  # certified T = 40 > 18
        unlearn("model_clipping", s["model"], s["retain"], s["forget"], {"epochs": 3, "batch_size": 16}, generator=0)
    with pytest.raises(ValueError, match="noisy_steps = 19 exceeds.*18 steps"):
        unlearn("model_clipping", s["model"], s["retain"], s["forget"], {**FIXED, "noisy_steps": 19}, generator=0)
    with pytest.raises(ValueError, match=r"checkpoint_steps \[8\].*T = 7"):
        unlearn("model_clipping", s["model"], s["retain"], s["forget"], {**FIXED, "checkpoint_steps": (3, 8)}, generator=0)


# -------------------------------------------------------------------------------------- model clipping


def test_certified_run_stays_in_the_ball(setup):
    s = setup
    rec = Recorder()
    p = {"epochs": 8, "batch_size": 16, "lr": 0.02, "noisy_batch_size": 16, "checkpoint_steps": (1, 20, 40)}  # C2 0.2, σ 0.1, ε 1
    unlearn("model_clipping", s["model"], s["retain"], s["forget"], p, generator=0, monitor=rec)
    v = rec.values
    assert (v["noisy_steps"], v["total_steps"], v["finetune_steps"], v["certified"]) == (40, 48, 8, 1.0)
    assert v["max_pre_noise_norm"] <= 0.2 + 1e-6 and v["max_pre_noise_norm"] > 0.19
    assert v["delta_T"] == pytest.approx(1.9301e-6, rel=1e-3)
    assert rec.steps == [1, 20, 40]
    n_params = sum(q.numel() for q in s["model"].parameters())
    for norm in rec.norms:  # noise after projection: ‖x_t‖² ≈ ‖Π(·)‖² + dσ² > C2²
        assert norm == pytest.approx(math.sqrt(0.2**2 + n_params * 0.1**2), rel=0.05)


def test_projection_every_step_without_noise(setup):
    s = setup
    assert _norm(s["model"]) > 5.0  # the projection has work to do
    rec = Recorder()
    p = {**FIXED, "sigma": 0.0, "noisy_steps": 6, "checkpoint_steps": tuple(range(1, 7))}
    unlearn("model_clipping", s["model"], s["retain"], s["forget"], p, generator=0, monitor=rec)
    assert rec.steps == list(range(1, 7))
    for norm in rec.norms:  # σ = 0: the iterate is the projected one
        assert norm <= 0.5 + 1e-6 and norm > 0.49


def test_step_counts_checkpoints_and_phase2(setup, monkeypatch):
    s = setup
    calls: list[int] = []
    real, real_noisy = common_module.sgd_run, mc_module._noisy_phase

    def counting(model, x, y, batches, lrs, **kw):
        calls.append(len(batches))
        return real(model, x, y, batches, lrs, **kw)

    def noisy(model, x, y, batches, *args):
        calls.append(("noisy", len(batches)))
        return real_noisy(model, x, y, batches, *args)

    monkeypatch.setattr(mc_module, "_noisy_phase", noisy)  # the noisy steps, one phase
    monkeypatch.setattr(common_module, "sgd_run", counting)  # Phase 2's RetainSteps
    rec = Recorder()
    out = unlearn("model_clipping", s["model"], s["retain"], s["forget"], {**FIXED, "checkpoint_steps": (1, 3, 7)}, generator=2, monitor=rec)
    assert calls == [("noisy", 7), 11]  # 7 noisy steps, then 18 − 7 fine-tuning steps
    assert rec.steps == [1, 3, 7]
    assert (rec.values["noisy_steps"], rec.values["total_steps"], rec.values["finetune_steps"], rec.values["certified"]) == (7, 18, 11, 0.0)
    assert "delta_T" not in rec.values
    assert not _same(_state(out), rec.states[-1])  # phase 2 moved the model
    # no phase 2 when the budget equals the noisy steps: the output is the checkpoint after step T
    rec2 = Recorder()
    out2 = unlearn("model_clipping", s["model"], s["retain"], s["forget"], {**FIXED, "epochs": 1, "noisy_steps": 6, "checkpoint_steps": (6,)}, generator=2, monitor=rec2)
    assert rec2.values["finetune_steps"] == 0 and _same(_state(out2), rec2.states[-1])


def test_table6_row2_runs_its_whole_budget_noisy_and_records_the_steps_it_needed(setup):
    """noisy_steps: all (Table 6 row 2: eps = 10, C2 = 0.1, sigma = 0.02 needs 48,004 noisy steps): every
    step of the budget is noisy, there is no fine-tuning, the run is uncertified and records what the
    accountant would have needed."""
    s = setup
    p = make_params("model_clipping", {**FIXED, "noisy_steps": "all", "epsilon": 10.0, "delta": 1e-5, "C2": 0.1, "sigma": 0.02,
                                       "checkpoint_steps": [1, 18]})
    assert not p.certified and p.claim is None and model_clipping_plan(p, 96) == (18, 18)
    rec = Recorder()
    out = unlearn("model_clipping", s["model"], s["retain"], s["forget"], p, generator=3, monitor=rec)
    v = rec.values
    assert (v["noisy_steps"], v["total_steps"], v["finetune_steps"], v["certified"], v["accountant_steps"]) == (18, 18, 0, 0.0, 48004)
    assert rec.steps == [1, 18] and _same(_state(out), rec.states[-1])  # the output is the last noisy iterate
    with pytest.raises(ValueError, match="whole budget: give max_steps"):
        p.noisy_step_count()


def test_model_clipping_determinism(setup):
    s = setup
    before = _state(s["model"])
    a = _state(unlearn("model_clipping", s["model"], s["retain"], s["forget"], FIXED, generator=torch.Generator().manual_seed(3)))
    b = _state(unlearn("model_clipping", s["model"], s["retain"], s["forget"], FIXED, generator=3))
    c = _state(unlearn("model_clipping", s["model"], s["retain"], s["forget"], FIXED, generator=4))
    assert _same(before, _state(s["model"]))
    assert _same(a, b) and not _same(a, c)
    # D_f(S) is never read
    xf, yf = s["forget"]
    d = _state(unlearn("model_clipping", s["model"], s["retain"], (xf + 7.0, yf), FIXED, generator=3))
    assert _same(a, d)


# ------------------------------------------------------------------------------------------------ R2D

R2D = {"T": 6, "K": 2, "lr": 0.05, "epsilon": 1.0, "delta": 1e-3, "lipschitz_samples": 5}


def _gd_reference(model: nn.Module, retain, K: int, lr: float) -> tuple[dict, float]:
    """K full-batch GD steps (one forward over the whole retain set) and G = max pre-step gradient norm."""
    import copy

    m = copy.deepcopy(model)
    params = list(m.parameters())
    G = 0.0
    for _ in range(K):
        grads = torch.autograd.grad(loss_fn(m(retain[0]), retain[1]), params)
        G = max(G, math.sqrt(sum(float(g.double().pow(2).sum()) for g in grads)))
        with torch.no_grad():
            for p, g in zip(params, grads):
                p.sub_(lr * g)
    return _state(m), G


def test_r2d_release_is_gd_plus_fresh_noise(setup):
    s = setup
    ref, G = _gd_reference(s["model"], s["retain"], R2D["K"], R2D["lr"])
    residuals, recs = [], []
    for seed in (1, 2):
        rec = Recorder()
        out = unlearn("rewind_to_delete", s["model"], s["retain"], s["forget"], R2D, generator=seed, monitor=rec)
        v = rec.values
        assert (v["n"], v["m_f"]) == (104, 8)
        assert v["grad_bound"] == pytest.approx(G, rel=1e-5)
        assert v["lipschitz"] > 0 and math.isfinite(v["lipschitz"])
        delta_s = r2d_sensitivity(R2D["K"], R2D["lr"], v["lipschitz"], v["grad_bound"], 104, 8, R2D["T"])
        assert v["sensitivity"] == pytest.approx(delta_s, rel=1e-12)
        assert v["sigma"] == pytest.approx(gaussian_sigma(1.0, 1e-3, delta_s), rel=1e-12) and v["sigma"] > 0
        res = _flat(_state(out)) - _flat(ref)
        assert float(res.std()) == pytest.approx(v["sigma"], rel=0.05) and abs(float(res.mean())) < 0.1 * v["sigma"]
        residuals.append(res)
        recs.append(v)
    corr = float(torch.corrcoef(torch.stack(residuals))[0, 1])
    assert abs(corr) < 0.1  # every run draws its own noise (the same draw rescaled would give corr = 1)


def test_r2d_forget_set_enters_only_through_its_size(setup):
    s = setup
    xf, yf = s["forget"]
    a = _state(unlearn("rewind_to_delete", s["model"], s["retain"], (xf, yf), R2D, generator=5))
    b = _state(unlearn("rewind_to_delete", s["model"], s["retain"], (xf * 3.0 + 1.0, yf), R2D, generator=5))
    assert _same(a, b)
    # no forget data: Δ = 0, σ = 0, the release is θ''_K itself
    rec = Recorder()
    c = unlearn("rewind_to_delete", s["model"], s["retain"], (xf[:0], yf[:0]), R2D, generator=5, monitor=rec)
    ref, _ = _gd_reference(s["model"], s["retain"], R2D["K"], R2D["lr"])
    assert rec.values["sigma"] == 0.0 and rec.values["m_f"] == 0
    assert float((_flat(_state(c)) - _flat(ref)).abs().max()) < 1e-5


def test_r2d_micro_batch_does_not_matter(setup):
    s = setup
    recs = [Recorder(), Recorder()]
    a = unlearn("rewind_to_delete", s["model"], s["retain"], s["forget"], R2D, generator=7, monitor=recs[0])
    b = unlearn("rewind_to_delete", s["model"], s["retain"], s["forget"], {**R2D, "micro_batch": 7}, generator=7, monitor=recs[1])
    assert float((_flat(_state(a)) - _flat(_state(b))).abs().max()) < 1e-5
    for key in ("lipschitz", "grad_bound", "sigma"):
        assert recs[0].values[key] == pytest.approx(recs[1].values[key], rel=1e-4)


def test_lipschitz_estimate_restores_the_model(setup):
    s = setup
    import copy

    m = copy.deepcopy(s["model"])
    m.train()
    before = _state(m)
    L = lipschitz_estimate(m, s["retain"], 3, 0.01, torch.Generator().manual_seed(0), chunk=32)
    assert L > 0 and _same(before, _state(m)) and m.training


# ------------------------------------------------------------------ shared noiseless part (variants)
HESSIAN = {"s1": 1, "s2": 10, "scale": 200.0, "batch_size": 8, "sigma": 1e-3}


@pytest.mark.parametrize("name, params, release", [("hessian", HESSIAN, {"sigma": 1e-2}), ("rewind_to_delete", R2D, {"epsilon": 50.0})])
def test_variants_share_the_noiseless_part_and_draw_their_own_noise(setup, name, params, release):
    s = setup
    before = _state(s["model"])
    # one generator for both parts is exactly unlearn()
    g = torch.Generator().manual_seed(11)
    (alone,) = unlearn_variants(name, s["model"], s["retain"], s["forget"], [(params, g, None)], g)
    assert _same(_state(alone), _state(unlearn(name, s["model"], s["retain"], s["forget"], params, generator=11)))
    # two variants: the same noiseless part (prepare stream 5), noise from their own streams
    recs = [Recorder(), Recorder()]
    other = {**params, **release}
    a, b = unlearn_variants(name, s["model"], s["retain"], s["forget"],
                            [(params, torch.Generator().manual_seed(1), recs[0]), (other, torch.Generator().manual_seed(2), recs[1])],
                            torch.Generator().manual_seed(5))
    assert _same(before, _state(s["model"]))
    method = get_method(name)
    noiseless = copy.deepcopy(s["model"])
    state = method.noise_release.prepare(noiseless, s["retain"], s["forget"], make_params(name, params), torch.Generator().manual_seed(5))
    for out, p, seed in ((a, params, 1), (b, other, 2)):
        ref = method.noise_release.release(copy.deepcopy(noiseless), state, make_params(name, p), torch.Generator().manual_seed(seed))
        assert _same(_state(out), _state(ref))
    assert not _same(_state(a), _state(b))
    if name == "rewind_to_delete":  # the same descent, G and L, a noise scale per target epsilon
        assert recs[0].values["lipschitz"] == recs[1].values["lipschitz"] and recs[0].values["sigma"] > recs[1].values["sigma"] > 0
    with pytest.raises(ValueError, match="may differ only in"):
        unlearn_variants(name, s["model"], s["retain"], s["forget"],
                         [(params, torch.Generator(), None), ({**params, "K": 3} if name == "rewind_to_delete" else {**params, "s2": 5}, torch.Generator(), None)],
                         torch.Generator())


def test_release_key_names_the_shared_part_without_torch():
    code = (
        "import sys; from unlearn_audit.unlearning import release_key as k; "
        "a = k('hessian', {'sigma': 1e-3, 's2': 200}); b = k('hessian', {'sigma': 1e-2, 's2': 200}); "
        "c = k('hessian', {'sigma': 1e-3, 's2': 100}); d = k('rewind_to_delete', {'epsilon': 1.0}); "
        "e = k('rewind_to_delete', {'epsilon': 1e4, 'delta': 1e-3}); "
        "assert a == b != c and d == e and k('retain_finetune', {}) is None, (a, b, c, d, e); "
        "assert 'torch' not in sys.modules"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
    with pytest.raises(ValueError, match="unknown unlearning method"):
        release_key("no_such_method", {})


def _reference_noisy_phase(model, x, y, batches, params, generator):
    """Phase 1 as it was written before it ran on the device: one sgd_run per step, the projection's
    norm read to the host, the noise drawn on the host (the bits the CPU path must keep)."""
    import math

    from unlearn_audit.training.sgd import sgd_run

    plist = list(model.parameters())
    for rows in batches:
        sgd_run(model, x, y, [rows], [params.noisy_lr], weight_decay=params.noisy_weight_decay, show_progress=False)
        with torch.no_grad():
            norm = math.sqrt(sum(float(p.detach().double().pow(2).sum()) for p in plist))
            if norm > params.C2:
                for p in plist:
                    p.mul_(params.C2 / norm)
            for p in plist:
                p.add_(torch.randn(p.shape, generator=generator, dtype=p.dtype), alpha=params.sigma)
    return model


def test_the_noisy_steps_read_nothing_to_the_host_and_keep_the_cpu_bits(setup):
    """docs/workflow.md, "Model clipping on a GPU": Phase 1 runs on the parameters' device with no host
    read per step (counted by a dispatch mode: ``_local_scalar_dense`` is every .item()/float()/bool() of a
    tensor; 36 per step before, for this network's 18 tensors) and, on the CPU, gives the weights of the
    host-side loop bit for bit (the run's generator draws the same noise in the same order)."""
    import copy

    from torch.utils._python_dispatch import TorchDispatchMode

    from unlearn_audit.training.sgd import random_batches

    class HostReads(TorchDispatchMode):
        def __init__(self):
            super().__init__()
            self.reads = 0

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            if func is torch.ops.aten._local_scalar_dense.default:
                self.reads += 1
            return func(*args, **(kwargs or {}))

    s = setup
    x, y = s["retain"]
    p = make_params("model_clipping", {**FIXED, "C2": 1.0, "sigma": 1e-3})
    reads = {}
    for T in (2, 8):
        batches = random_batches(len(x), p.noisy_batch_size, 4, torch.Generator().manual_seed(5))[:T]
        model = copy.deepcopy(s["model"])
        with HostReads() as counter:
            mc_module._noisy_phase(model, x, y, batches, p, torch.Generator().manual_seed(9), set(), Recorder())
        reads[T] = counter.reads
        if T == 8:
            ref = _reference_noisy_phase(copy.deepcopy(s["model"]), x, y, batches, p, torch.Generator().manual_seed(9))
            assert _same(_state(model), _state(ref))  # the CPU's bits are the host loop's
    assert reads[8] == reads[2] <= 1  # no read per step: one at the end (the largest norm)


class _KernelOps:
    """A dispatch mode counting the operations a step dispatches, autograd's own ``detach`` (no
    kernel: the engine's bookkeeping of saved and accumulated tensors) left out."""

    def __init__(self):
        from torch.utils._python_dispatch import TorchDispatchMode

        counter = self

        class _Mode(TorchDispatchMode):
            def __torch_dispatch__(self, func, types, args=(), kwargs=None):
                if func.overloadpacket is not torch.ops.aten.detach:
                    counter.ops += 1
                return func(*args, **(kwargs or {}))

        self.ops, self.mode = 0, _Mode()

    def __enter__(self):
        self.mode.__enter__()
        return self

    def __exit__(self, *exc):
        return self.mode.__exit__(*exc)


def test_a_noisy_step_off_the_cpu_dispatches_few_more_ops_than_a_plain_step():
    """On a device (here ``meta``, the device path at the paper's TinyNet shapes: 3x32x32 images, 100
    classes, batches of 128), Π_{C2} and ξ act on one buffer holding every parameter: a noisy step
    dispatches at most 80 operations, a few more than a plain SGD step (253 before, for this
    network's 18 parameter tensors)."""
    from meta_device import META, host_reads_answered

    from unlearn_audit.training.sgd import MomentumSGD

    paper = {"in_channels": 3, "num_classes": 100, "width": 1.0}
    x = torch.empty(256, 3, 32, 32, device=META)
    y = torch.empty(256, dtype=torch.long, device=META)
    p = make_params("model_clipping", {**FIXED, "C2": 1.0, "sigma": 1e-3})
    batches = [torch.arange(128), torch.arange(128, 256), torch.arange(128)]
    ops = {}
    for T in (1, 3):
        model = build_model("tinynet", **paper).to(META)
        with host_reads_answered(), _KernelOps() as count:
            mc_module._noisy_phase(model, x, y, batches[:T], p, torch.Generator().manual_seed(0), set(), Recorder())
        ops[T] = count.ops
    per_step = (ops[3] - ops[1]) / 2
    model = build_model("tinynet", **paper).to(META)
    opt = MomentumSGD(list(model.parameters()))
    with _KernelOps() as plain:
        opt.zero_grad()
        loss_fn(model(x[:128]), y[:128]).backward()
        opt.step(0.1)
    assert per_step <= 80 and per_step <= plain.ops + 15, (per_step, plain.ops)


def test_the_flat_buffer_path_is_the_per_tensor_path_up_to_rounding(setup):
    """The device path run on the CPU: without noise its weights after six steps are the per-tensor
    path's to float rounding; with noise, one step's difference from the noiseless step is one
    N(0, σ²) draw per weight (C2 large: no projection)."""
    from unlearn_audit.training.sgd import random_batches

    s = setup
    x, y = s["retain"]
    batches = random_batches(len(x), 16, 2, torch.Generator().manual_seed(5))[:6]

    def run(flat, sigma, steps, C2):
        p = make_params("model_clipping", {**FIXED, "C2": C2, "sigma": sigma} if sigma else
                        {**FIXED, "C2": C2, "sigma": 0.0, "epsilon": None, "delta": None})
        model = copy.deepcopy(s["model"])
        norm = mc_module._noisy_phase(model, x, y, steps, p, torch.Generator().manual_seed(9), set(), Recorder(), flat=flat)
        return _state(model), norm

    (a, na), (b, nb) = run(False, 0.0, batches, 1.0), run(True, 0.0, batches, 1.0)
    assert all(torch.allclose(a[k], b[k], atol=1e-6) for k in a) and math.isclose(na, nb, rel_tol=1e-6)
    assert not _same(a, _state(copy.deepcopy(s["model"])))  # it trained
    (noisy, _), (clean, _) = run(True, 0.05, batches[:1], 1.0e3), run(True, 0.0, batches[:1], 1.0e3)
    xi = torch.cat([(noisy[k] - clean[k]).reshape(-1) for k in a if a[k].is_floating_point()])
    assert xi.numel() > 1000 and abs(float(xi.std()) / 0.05 - 1) < 0.1 and abs(float(xi.mean())) < 0.01


def test_the_newton_step_turns_cudnn_off_for_a_recurrent_model_on_a_gpu_only():
    """cuDNN's LSTM refuses the Newton step's backward in eval mode and its double backward: on a GPU the
    step runs a recurrent model on PyTorch's own kernels; a CNN, or any model on the CPU, is untouched."""
    from unlearn_audit.models import build_model
    from unlearn_audit.unlearning.hessian import _without_cudnn_rnn

    lstm = build_model("charlstm", vocab_size=30, embed_dim=4, hidden_size=8, num_layers=1)
    cnn = build_model("tinynet", in_channels=1, num_classes=10, width=0.25)
    before = torch.backends.cudnn.enabled
    with _without_cudnn_rnn(lstm, torch.device("cuda")):
        assert torch.backends.cudnn.enabled is False
    assert torch.backends.cudnn.enabled == before
    for model, device in ((cnn, "cuda"), (lstm, "cpu")):
        with _without_cudnn_rnn(model, torch.device(device)):
            assert torch.backends.cudnn.enabled == before


@pytest.mark.parametrize("precision", ["fp32", "tf32", "bf16"])
def test_the_charlstm_newton_step_runs_inside_each_precision_regions_cuda_branch(precision, monkeypatch):
    """Table 1a's Hessian step inside the precision region a workflow job on a GPU enters
    (``compute_precision(p, "cuda")``: for fp32 and tf32 the new fp32_precision flags, global, so set on
    a CPU too; for bf16 CUDA autocast), with the cuDNN switch taking its GPU branch: no mix of the legacy
    and new TF32 APIs, cuDNN off inside the step and restored after, the step the same as outside it."""
    import warnings

    from unlearn_audit.models import build_model
    from unlearn_audit.torch_utils import compute_precision
    from unlearn_audit.unlearning import hessian

    g = torch.Generator().manual_seed(2)
    text = torch.randint(0, 30, (40, 12), generator=g)
    retain, forget = (text[:32], torch.roll(text[:32], -1, 1)), (text[32:], torch.roll(text[32:], -1, 1))
    params = HessianParams(s1=1, s2=3, scale=500.0, batch_size=8)
    lstm = build_model("charlstm", vocab_size=30, embed_dim=4, hidden_size=8, num_layers=1)
    outside = copy.deepcopy(lstm)
    hessian.hessian_step(outside, retain, forget, params, torch.Generator().manual_seed(5))
    seen = []
    real = hessian._without_cudnn_rnn
    monkeypatch.setattr(hessian, "_without_cudnn_rnn", lambda model, device: real(model, torch.device("cuda")))
    monkeypatch.setattr(hessian, "retain_gradient", _recording(hessian.retain_gradient, seen))
    before = torch.backends.cudnn.enabled
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # CUDA autocast on a machine without CUDA warns and stays off
        with compute_precision(precision, "cuda"):
            hessian.hessian_step(lstm, retain, forget, params, torch.Generator().manual_seed(5))
    assert seen == [False] and torch.backends.cudnn.enabled == before
    assert _same(_state(lstm), _state(outside))


def _recording(fn, seen: list):
    def wrapped(*args, **kwargs):
        seen.append(torch.backends.cudnn.enabled)
        return fn(*args, **kwargs)
    return wrapped


def test_lissa_draws_its_minibatches_up_front_as_one_call_per_product_would():
    """The Newton step's s1·s2 minibatches are drawn in one call and sent to the device once; the CPU
    generator gives the same indices in the same order as one draw per product (so the step's bits are
    those of the per-product draws), which this checks at the default's sizes."""
    for n, batch, calls in ((300, 32, 20), (200, 64, 200)):
        one = torch.randint(0, n, (calls, batch), generator=torch.Generator().manual_seed(7))
        g = torch.Generator().manual_seed(7)
        each = torch.stack([torch.randint(0, n, (batch,), generator=g) for _ in range(calls)])
        assert torch.equal(one, each)
