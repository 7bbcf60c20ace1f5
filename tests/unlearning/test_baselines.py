"""The image-unlearning baselines: NegGrad+ and SCRUB (Kurmanji et al. 2023), random relabelling
(Graves et al. 2021), SalUn (Fan et al. 2024), Bad Teacher (Chundawat et al. 2023) and SSD (Foster et
al. 2024) — each method's defining behaviour on a tiny model, their determinism, parameter checks,
registration and cost model."""

from __future__ import annotations

import copy

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from unlearn_audit.models import build_model
from unlearn_audit.scores import IGNORE
from unlearn_audit.training.sgd import loss_fn, random_batches, sgd_run
from unlearn_audit.unlearning import get_method, make_params, method_names, unlearn
from unlearn_audit.unlearning.params import BUILTIN_GROUPED, BUILTIN_PARAMS
from unlearn_audit.unlearning.random_labels import wrong_labels
from unlearn_audit.unlearning.salun import saliency_mask
from unlearn_audit.unlearning.scrub import max_epoch
from unlearn_audit.unlearning.teachers import frozen_copy, random_copy, teacher_kl

from linear_passes import counted_linear_passes
from synthetic_images import quadrant_images

torch.set_num_threads(1)

BASELINES = ("neggrad_plus", "scrub", "random_labels", "salun", "bad_teacher", "ssd")

FAST = {
    "neggrad_plus": {"epochs": 2, "batch_size": 16, "lr": 0.05, "alpha": 0.9, "forget_batch_size": 4},
    "scrub": {"epochs": 2, "max_steps": 1, "batch_size": 16, "forget_batch_size": 4, "lr": 0.05},
    "random_labels": {"epochs": 2, "batch_size": 16, "lr": 0.05},
    "salun": {"epochs": 2, "batch_size": 16, "lr": 0.05, "mask_fraction": 0.3},
    "bad_teacher": {"epochs": 2, "batch_size": 16, "lr": 1e-2},
    "ssd": {"alpha": 2.0, "batch_size": 4},
}


def _mlp() -> nn.Module:
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(0)
        return nn.Sequential(nn.Flatten(), nn.Linear(64, 32), nn.ReLU(), nn.Linear(32, 4))


@pytest.fixture(scope="module")
def memorised():
    """A small MLP trained on D_r ∪ D_f whose forget labels are random: it gets them right only by
    memorising them (forget accuracy 1)."""
    retain = quadrant_images(96, 0)
    xf, _ = quadrant_images(16, 1)
    yf = torch.randint(0, 4, (16,), generator=torch.Generator().manual_seed(2))
    model = _mlp()
    x, y = torch.cat([retain[0], xf]), torch.cat([retain[1], yf])
    batches = random_batches(len(x), 16, 30, torch.Generator().manual_seed(3))
    sgd_run(model, x, y, batches, [0.05] * len(batches), momentum=0.9)
    assert _accuracy(model, (xf, yf)) == 1.0
    return {"model": model.eval(), "retain": retain, "forget": (xf, yf)}


def _accuracy(model: nn.Module, data) -> float:
    with torch.no_grad():
        return float((model(data[0]).argmax(-1) == data[1]).float().mean())


def _loss(model: nn.Module, data) -> float:
    with torch.no_grad():
        return float(loss_fn(model(data[0]), data[1]))


def _kl(teacher: nn.Module, student: nn.Module, x: torch.Tensor, temperature: float = 1.0) -> float:
    with torch.no_grad():
        return float(teacher_kl(student(x), teacher(x), temperature))


def _state(m: nn.Module) -> dict[str, torch.Tensor]:
    return {k: v.detach().clone() for k, v in m.state_dict().items()}


def _same(a: dict, b: dict) -> bool:
    return all(torch.equal(a[k], b[k]) for k in a)


# ------------------------------------------------------------------------- all six: registry, params, seeds


def test_the_baselines_are_registered_uncertified_forget_reading_and_per_model():
    for name in BASELINES:
        method = get_method(name)
        assert name in method_names() and method.params_cls is BUILTIN_PARAMS[name]
        assert method.uses_forget and not method.certified and method.noise_release is None
        assert method.final_steps is None and name not in BUILTIN_GROUPED  # none ends with plain retain steps


def test_defaults_are_the_papers():
    n = make_params("neggrad_plus")
    assert (n.alpha, n.epochs, n.lr, n.weight_decay, n.schedule) == (0.9999, 5, 0.01, 5e-4, "constant")
    s = make_params("scrub")
    assert (s.alpha, s.gamma, s.temperature, s.lr, s.max_steps, s.epochs) == (0.001, 0.99, 4.0, 5e-4, 2, 3)
    assert (make_params("salun").mask_fraction, make_params("salun").epochs, make_params("random_labels").epochs) == (0.5, 10, 10)
    b = make_params("bad_teacher")
    assert (b.epochs, b.batch_size, b.lr, b.temperature, b.retain_fraction) == (1, 256, 1e-4, 1.0, 0.3)
    d = make_params("ssd")
    assert (d.alpha, d.lam, d.batch_size) == (10.0, 1.0, 1)


@pytest.mark.parametrize(("name", "bad", "message"), [
    ("neggrad_plus", {"alpha": 1.5}, r"'neggrad_plus': alpha \(the weight of the retain loss\) must be a number in \[0, 1\], got 1.5"),
    ("scrub", {"epochs": 2, "max_steps": 3}, r"'scrub': max_steps must be <= epochs .* got max_steps=3, epochs=2"),
    ("scrub", {"temperature": 0.0}, r"'scrub': temperature must be a finite number > 0"),
    ("random_labels", {"epochs": -1}, r"'random_labels': epochs must be a non-negative integer, got -1"),
    ("salun", {"mask_fraction": 0.0}, r"'salun': mask_fraction must be a number in \(0, 1\], got 0.0"),
    ("bad_teacher", {"retain_fraction": 2}, r"'bad_teacher': retain_fraction must be a number in \[0, 1\], got 2"),
    ("ssd", {"alpha": -1.0}, r"'ssd': alpha must be a finite non-negative number, got -1.0"),
    ("ssd", {"lambda": 1.0}, r"unknown parameter 'lambda' for unlearning method 'ssd'"),
])
def test_params_refuse_bad_values_clearly(name, bad, message):
    with pytest.raises(ValueError, match=message):
        make_params(name, bad)


@pytest.mark.parametrize("name", BASELINES)
def test_same_seed_same_weights_and_the_input_model_untouched(memorised, name):
    s = memorised
    before = _state(s["model"])
    a = _state(unlearn(name, s["model"], s["retain"], s["forget"], FAST[name], generator=3))
    b = _state(unlearn(name, s["model"], s["retain"], s["forget"], FAST[name], generator=torch.Generator().manual_seed(3)))
    assert _same(a, b) and not _same(a, before) and _same(before, _state(s["model"]))
    if name != "ssd":  # SSD draws only the batch order of its importances
        assert not _same(a, _state(unlearn(name, s["model"], s["retain"], s["forget"], FAST[name], generator=4)))


# ------------------------------------------------------------------------------------------- SSD


def _squared_gradients(model: nn.Module, x: torch.Tensor, y: torch.Tensor) -> list[torch.Tensor]:
    """Σ over the rows of each row's squared loss gradient (float64), one row at a time."""
    params = list(model.parameters())
    out = [torch.zeros_like(p, dtype=torch.float64) for p in params]
    for i in range(len(x)):
        grads = torch.autograd.grad(F.cross_entropy(model(x[i : i + 1]), y[i : i + 1]), params)
        for acc, g in zip(out, grads):
            acc += g.double() ** 2
    return out


def test_ssd_dampens_exactly_the_parameters_more_important_to_the_forget_set(memorised):
    """θ_i ← min(λ I_D,i / I_f,i, 1)·θ_i where I_f,i > α I_D,i, with I the per-example Fisher diagonals
    computed here row by row; every other weight keeps its bits."""
    s, alpha, lam = memorised, 4.0, 0.5
    (xr, yr), (xf, yf) = s["retain"], s["forget"]
    sq_r, sq_f = _squared_gradients(s["model"], xr, yr), _squared_gradients(s["model"], xf, yf)
    n = len(xr) + len(xf)
    full = [(a + b) / n for a, b in zip(sq_r, sq_f)]
    forget = [b / len(xf) for b in sq_f]
    out = unlearn("ssd", s["model"], s["retain"], s["forget"], {"alpha": alpha, "lam": lam, "batch_size": 1}, generator=0)
    selected_total = 0
    for before, after, d, f in zip(s["model"].parameters(), out.parameters(), full, forget):
        selected = f > alpha * d
        margin = (f - alpha * d).abs() / (f + alpha * d)
        assert bool((margin[f > 0] > 1e-6).all())  # no weight so near the threshold that rounding could flip it
        assert torch.equal(after[~selected], before[~selected])
        expected = before.detach().double() * torch.clamp(lam * d / f, max=1.0)
        torch.testing.assert_close(after[selected].double(), expected[selected], rtol=1e-5, atol=0)
        selected_total += int(selected.sum())
    n_weights = sum(p.numel() for p in s["model"].parameters())
    assert 0 < selected_total < n_weights / 2
    assert not _same(_state(out), _state(s["model"]))


# ------------------------------------------------------------------------------------------- SalUn


def test_salun_moves_only_the_salient_fraction_of_the_weights(memorised):
    s = memorised
    params = {"epochs": 2, "batch_size": 16, "lr": 0.05, "mask_fraction": 0.3}  # momentum 0.9, weight decay 5e-4
    masks = saliency_mask(copy.deepcopy(s["model"]), s["forget"], make_params("salun", params))
    flat = torch.cat([m.flatten() for m in masks])
    assert int(flat.sum()) == int(0.3 * flat.numel() + 0.5)
    # the kept weights are those with the largest |∇ mean CE(D_f)|
    xf, yf = s["forget"]
    grads = torch.autograd.grad(F.cross_entropy(s["model"](xf), yf), list(s["model"].parameters()))
    saliency = torch.cat([g.abs().flatten() for g in grads])
    assert float(saliency[flat].min()) >= float(saliency[~flat].max())
    out = unlearn("salun", s["model"], s["retain"], s["forget"], params, generator=1)
    changed = 0
    for before, after, m in zip(s["model"].parameters(), out.parameters(), masks):
        assert torch.equal(after[~m], before[~m])  # momentum and weight decay included
        changed += int((after[m] != before[m]).sum())
    assert changed > 0.9 * int(flat.sum())
    # with every weight kept, SalUn is random relabelling
    whole = unlearn("salun", s["model"], s["retain"], s["forget"], {**params, "mask_fraction": 1.0}, generator=1)
    plain = unlearn("random_labels", s["model"], s["retain"], s["forget"], {k: v for k, v in params.items() if k != "mask_fraction"}, generator=1)
    for a, b in zip(whole.parameters(), plain.parameters()):
        torch.testing.assert_close(a, b, rtol=1e-6, atol=1e-7)


# ------------------------------------------------------------------------------------------- NegGrad+


def test_neggrad_plus_is_retain_sgd_at_alpha_one_and_ascends_the_forget_loss_below(memorised):
    s = memorised
    sgd = {"epochs": 3, "batch_size": 16, "lr": 0.1, "momentum": 0.9, "weight_decay": 5e-4, "schedule": "constant"}
    one = unlearn("neggrad_plus", s["model"], s["retain"], s["forget"], {**sgd, "alpha": 1.0, "forget_batch_size": 4}, generator=2)
    plain = unlearn("retain_finetune", s["model"], s["retain"], s["forget"], sgd, generator=2)
    assert _same(_state(one), _state(plain))
    onecycle = {**sgd, "schedule": "onecycle"}
    assert _same(_state(unlearn("neggrad_plus", s["model"], s["retain"], s["forget"], {**onecycle, "alpha": 1.0}, generator=2)),
                 _state(unlearn("retain_finetune", s["model"], s["retain"], s["forget"], onecycle, generator=2)))
    ascent = unlearn("neggrad_plus", s["model"], s["retain"], s["forget"], {**sgd, "alpha": 0.3, "forget_batch_size": 4}, generator=2)
    assert _loss(ascent, s["forget"]) > 2 * _loss(one, s["forget"])


# ------------------------------------------------------------------------------------------- SCRUB


def test_scrub_without_max_steps_and_kl_is_cross_entropy_fine_tuning(memorised):
    s = memorised
    p = {"epochs": 2, "batch_size": 16, "lr": 0.05, "momentum": 0.9, "weight_decay": 5e-4}
    out = unlearn("scrub", s["model"], s["retain"], s["forget"], {**p, "max_steps": 0, "alpha": 0.0, "gamma": 1.0}, generator=5)
    plain = unlearn("retain_finetune", s["model"], s["retain"], s["forget"], {**p, "schedule": "constant"}, generator=5)
    assert _same(_state(out), _state(plain))


def test_scrub_max_epoch_moves_the_student_away_from_the_teacher_on_the_forget_set(memorised):
    s = memorised
    teacher = frozen_copy(s["model"])
    student = copy.deepcopy(s["model"])
    g = torch.Generator().manual_seed(0)
    with torch.no_grad():  # a student that already differs a little (at the teacher the KL's gradient is 0)
        for p in student.parameters():
            p.add_(0.01 * torch.randn(p.shape, generator=g))
    xf = s["forget"][0]
    before = _kl(teacher, student, xf, 4.0)
    max_epoch(student, teacher, s["forget"], make_params("scrub", {"lr": 0.05, "batch_size": 4}), torch.Generator().manual_seed(1))
    assert _kl(teacher, student, xf, 4.0) > 2 * before > 0


# ------------------------------------------------------------------------------------------- random labels


def test_random_labels_are_always_wrong_and_uniform_over_the_other_classes():
    y = torch.arange(4).repeat(3000)
    new = wrong_labels(y, 4, torch.Generator().manual_seed(0))
    assert bool((new != y).all())
    counts = torch.zeros(4, 4)
    counts.index_put_((y, new), torch.ones(len(y)), accumulate=True)
    off_diagonal = counts[~torch.eye(4, dtype=torch.bool)]
    assert float(off_diagonal.min()) > 900 and float(off_diagonal.max()) < 1100  # 1000 expected each


def test_random_labels_redraw_every_target_of_a_sequence_and_keep_the_unscored_ones():
    """A next-character model's targets: each character is a label and gets a wrong one; a target
    set to IGNORE (a question's token) is left unscored."""
    y = torch.randint(0, 60, (50, 20), generator=torch.Generator().manual_seed(1))
    y[:, :5] = IGNORE
    new = wrong_labels(y, 60, torch.Generator().manual_seed(2))
    assert new.shape == y.shape
    assert bool((new[:, :5] == IGNORE).all())
    assert bool((new[:, 5:] != y[:, 5:]).all()) and bool(((new[:, 5:] >= 0) & (new[:, 5:] < 60)).all())


@pytest.mark.parametrize("name", BASELINES)
def test_each_baseline_unlearns_a_next_character_model(name):
    """All six need only the model's cross-entropy, so they apply to Table 1a's CharLSTM: each runs on
    windows of characters, stays finite and moves the model."""
    g = torch.Generator().manual_seed(0)
    text = torch.randint(0, 40, (40, 12), generator=g)
    retain, forget = (text[:32], torch.roll(text[:32], -1, 1)), (text[32:], torch.roll(text[32:], -1, 1))
    model = build_model("charlstm", hidden_size=8)
    before = _state(model)
    params = {**FAST[name], **({"batch_size": 8} if name != "ssd" else {})}
    out = unlearn(name, model, retain, forget, params, generator=1)
    after = _state(out)
    assert all(torch.isfinite(v).all() for v in after.values())
    assert not _same(before, after)


def test_random_labels_unlearn_a_memorised_forget_set(memorised):
    s = memorised
    out = unlearn("random_labels", s["model"], s["retain"], s["forget"], {"epochs": 5, "batch_size": 16, "lr": 0.05}, generator=0)
    assert _accuracy(out, s["forget"]) < 0.5
    assert _accuracy(out, s["retain"]) > 0.9


# ------------------------------------------------------------------------------------------- Bad Teacher


def test_bad_teacher_follows_the_random_teacher_on_forget_data_and_the_trained_one_on_retain_data(memorised):
    s = memorised
    (xr, _), (xf, _) = s["retain"], s["forget"]
    incompetent = random_copy(s["model"], torch.Generator().manual_seed(9))  # the method's first draw: its teacher
    out = unlearn("bad_teacher", s["model"], s["retain"], s["forget"], {"epochs": 10, "batch_size": 16, "lr": 1e-2, "retain_fraction": 1.0}, generator=9)
    assert _kl(incompetent, out, xf) < 0.2 * _kl(incompetent, s["model"], xf)
    assert _kl(s["model"], out, xr) < 0.2 * _kl(s["model"], out, xf)
    assert _accuracy(out, s["retain"]) > 0.9 and _accuracy(out, s["forget"]) < 0.5


def test_the_random_teacher_is_a_fresh_seeded_copy_of_the_architecture(memorised):
    model = memorised["model"]
    a, b, c = (random_copy(model, torch.Generator().manual_seed(k)) for k in (1, 1, 2))
    assert _same(_state(a), _state(b)) and not _same(_state(a), _state(c)) and not _same(_state(a), _state(model))
    state = torch.random.get_rng_state()
    random_copy(model, torch.Generator().manual_seed(1))
    assert torch.equal(state, torch.random.get_rng_state())  # the global RNG is left alone
    assert not any(p.requires_grad for p in a.parameters())


# ------------------------------------------------------------------------------------------- cost model


@pytest.mark.parametrize("name", BASELINES)
def test_the_cost_model_counts_a_baselines_rows_and_steps(name):
    """run cost's steps and images against the forward passes of a real run: training passes
    (NegGrad+: two a step), and eval passes that are a teacher's (1/3 each) or a gradient's."""
    from unlearn_audit.pipeline.plan.cost.runs import FORWARD, unlearning_images, unlearning_steps

    g = torch.Generator().manual_seed(0)
    retain = (torch.randn(100, 5, generator=g), torch.randint(0, 3, (100,), generator=g))
    forget = (torch.randn(10, 5, generator=g), torch.randint(0, 3, (10,), generator=g))
    params = {**FAST[name], **({"retain_fraction": 0.3} if name == "bad_teacher" else {})}
    with counted_linear_passes() as counter:
        unlearn(name, nn.Linear(5, 3), retain, forget, params, generator=1)
    p = make_params(name, params)
    probe = 1 if name in ("random_labels", "salun") else 0  # the one-row look at the model's number of classes
    teacher_rows = counter.eval_rows if name in ("scrub", "bad_teacher") else 0
    gradient_rows = counter.eval_rows - probe - teacher_rows
    assert counter.rows + FORWARD * teacher_rows + gradient_rows == pytest.approx(unlearning_images(name, p, 100, 10))
    if name == "ssd":
        assert counter.calls == 0 and unlearning_steps(name, p, 100, 10) == 28 + 3  # batches of 4 of 110 rows, then of 10
    else:
        # a step counts each pass over a batch: NegGrad+'s retain and forget passes, and a teacher's
        # forward pass FORWARD (SCRUB's one teacher, Bad Teacher's two); SalUn's saliency: one batch, in eval mode
        steps = unlearning_steps(name, p, 100, 10) - (1 if name == "salun" else 0)
        teacher_calls = counter.eval_calls if name in ("scrub", "bad_teacher") else 0
        if name == "bad_teacher":
            # both teachers priced on every batch; a batch of one part's rows runs one of them
            assert steps == pytest.approx(counter.calls * (1 + 2 * FORWARD))
            assert counter.calls <= teacher_calls <= 2 * counter.calls
        else:
            assert counter.calls + FORWARD * teacher_calls == pytest.approx(steps)
