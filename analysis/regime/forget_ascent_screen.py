"""Accuracy screen of forget ascent's ascent phase on digits_adversarial (no audit; one core).

Question: the configured forget ascent (2 ascent epochs at 0.01, batch 64, then 8 epochs of
one-cycle retain fine-tuning to 0.1) leaves the forgotten class at forget accuracy ~0.6 (Retrain
~0.11, No unlearning 1.00).  Is that because the ascent phase does nothing at digits scale -- with
|D_f(S)| ~ 72 and batch 64 it is 2 epochs = 4 steps, where the paper (CIFAR-100, G.6) takes 2
epochs over 4,500 images at batch ~128, i.e. ~35 steps per epoch, ~70 in all -- and does the
paper's step structure (ascent batch 2, i.e. ~36 steps per epoch here; also batch 8) change it?

Trains N base models of digits_adversarial (random sign vectors; the design's x0, order and
training config, as snakemake does; cached under --workdir), plus the design's retrained model
A(D_r) once, applies each variant with the library's ``unlearn`` and prints mean / min (and max for
forget) retain, forget and test accuracy over the base models and seconds per unlearning run.  For
every ascent variant it also runs the ascent phase alone (library ``forget_ascent.ascend`` with a
generator seeded as the full run's, so it is exactly the full run's intermediate model) and prints
its forget and test accuracy, mean forget loss, and the parameter displacement |dtheta| against
the bound steps x ascent_lr x grad_clip (the ascent shares ``grad_clip`` with fine-tuning).

test_other: test accuracy on the classes outside the forget pool (the adversarial split's forget
pool is whole classes, so forgetting them costs ~1/10 of plain test accuracy by construction:
Retrain's test is ~0.89).

Variants: No unlearning; retain fine-tune as configured (10 ep); RF 8 ep; forget ascent as
configured; the same with ascent_lr 0 (fine-tuning alone with the identical data order: a paired
control of the ascent -- the ascent draws one permutation per epoch whatever its batch size, so
every 2-ascent-epoch row shares this fine-tuning order); FA + 10 fine-tune epochs (and its
ascent_lr 0 control); ascent_batch_size 2 and 8 at ascent_lr 0.01 and 0.001 (+ 8 fine-tune epochs).  LOCAL VARIANTS (marked "[local: no clip in ascent]"; not a library
option): the ascent with grad_clip None, the fine-tuning phase as configured -- built from the
library's own ``ascend`` and ``finetune`` primitives, nothing in src changed.

    OMP_NUM_THREADS=1 .venv/bin/python analysis/regime/forget_ascent_screen.py [--bases 16] \
        | tee analysis/regime/forget_ascent_screen.out.txt
    OMP_NUM_THREADS=1 .venv/bin/python analysis/regime/forget_ascent_screen.py --design digits_uniform --bases 8 \
        | tee analysis/regime/forget_ascent_screen.uniform.out.txt

Runtime on one shared core: 3.6 min (16 bases, 4-5 s each to train) and 1.9 min (8 bases); base
models cached under results/regime_fa.
"""
from __future__ import annotations

import argparse
import copy
import dataclasses
import sys
import time
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import ROOT, acc, accuracies, design_data, load_config, run_unlearn, train_base  # noqa: E402

from unlearn_audit.pipeline import nn_runs  # noqa: E402
from unlearn_audit.unlearning import make_params  # noqa: E402
from unlearn_audit.unlearning.common import finetune  # noqa: E402
from unlearn_audit.unlearning.forget_ascent import ascend  # noqa: E402

DESIGN = "digits_adversarial"  # --design overrides (e.g. digits_uniform, to check a change on the other split)


def _tensors(data, signs):
    fx, fy = nn_runs.forget_set(data, signs)
    return (torch.as_tensor(data.retain_x), torch.as_tensor(data.retain_y)), (torch.as_tensor(fx), torch.as_tensor(fy))


def local_fa_noclip(model, data, signs, params: dict, seed: int):
    """[local: no clip in ascent] forget ascent with the ascent phase unclipped (grad_clip None), the
    fine-tuning phase as given; the library's ascend + finetune, one generator, as forget_ascent does."""
    retain, forget = _tensors(data, signs)
    p = make_params("forget_ascent", params)
    gen = torch.Generator().manual_seed(int(seed))
    out = copy.deepcopy(model)
    t0 = time.perf_counter()
    ascend(out, forget, dataclasses.replace(p, grad_clip=None), gen)
    finetune(out, retain, p, gen)
    return out, time.perf_counter() - t0


def after_ascent(model, data, signs, params: dict, seed: int, noclip: bool = False) -> dict:
    """The model right after the ascent phase (same generator seed as the full run)."""
    _, forget = _tensors(data, signs)
    p = make_params("forget_ascent", params)
    if noclip:
        p = dataclasses.replace(p, grad_clip=None)
    gen = torch.Generator().manual_seed(int(seed))
    out = copy.deepcopy(model)
    ascend(out, forget, p, gen)
    with torch.no_grad():
        disp = float(torch.sqrt(sum(((a - b) ** 2).sum() for a, b in zip(out.parameters(), model.parameters()))))
    out.eval()
    with torch.no_grad():
        loss = float(F.cross_entropy(out(forget[0]), forget[1]))
    n_f = len(forget[0])
    bs = p.ascent_batch_size or p.batch_size
    steps = p.ascent_epochs * -(-n_f // bs)
    bound = steps * p.ascent_lr * (p.grad_clip if p.grad_clip is not None else float("inf"))
    return {"forget": acc(out, forget[0].numpy(), forget[1].numpy()), **test_accs(out, data),
            "loss": loss, "disp": disp, "steps": steps, "bound": bound}


def test_accs(model, data) -> dict:
    """Test accuracy, and on the test examples of the classes outside the forget pool (test_other)."""
    other = ~np.isin(data.test_y, np.unique(data.forget_y))
    return {"test": acc(model, data.test_x, data.test_y), "test_other": acc(model, data.test_x[other], data.test_y[other])}


def all_accs(model, data, signs) -> dict:
    return {**accuracies(model, data, signs), "test_other": test_accs(model, data)["test_other"]}


def variants(cfg: dict):
    exps = cfg["experiments"] if "experiments" in cfg else cfg["nn"]["experiments"]
    rf = dict(exps[f"{DESIGN}_retain_finetune"]["params"])
    fa = dict(exps[f"{DESIGN}_forget_ascent"]["params"])
    # (label, method, params, ascent?, local-noclip?)
    out = [
        ("No unlearning", "no_unlearning", {}, False, False),
        (f"RF as configured ({rf['epochs']} ep)", "retain_finetune", rf, False, False),
        ("RF 8 ep", "retain_finetune", {**rf, "epochs": 8}, False, False),
        ("FA as configured (asc bs64 lr0.01, 8 ep)", "forget_ascent", fa, True, False),
        ("FA asc lr 0 (= FT alone, same order)", "forget_ascent", {**fa, "ascent_lr": 0.0}, False, False),
        ("FA configured + 10 ft ep", "forget_ascent", {**fa, "epochs": 10}, True, False),
        ("FA asc lr 0 + 10 ft ep (= FT alone, paired)", "forget_ascent", {**fa, "epochs": 10, "ascent_lr": 0.0}, False, False),
    ]
    for lr in (0.01, 0.001):
        for bs in (2, 8):
            out.append((f"FA asc bs{bs} lr{lr:g}, 8 ep", "forget_ascent", {**fa, "ascent_batch_size": bs, "ascent_lr": lr}, True, False))
    out.append(("[local: no clip in ascent] FA bs64 lr0.01", "forget_ascent", fa, True, True))
    out.append(("[local: no clip in ascent] FA bs2 lr0.001", "forget_ascent", {**fa, "ascent_batch_size": 2, "ascent_lr": 0.001}, True, True))
    out.append(("[local: no clip in ascent] FA bs2 lr0.01", "forget_ascent", {**fa, "ascent_batch_size": 2, "ascent_lr": 0.01}, True, True))
    return out


def main() -> None:
    global DESIGN
    ap = argparse.ArgumentParser()
    ap.add_argument("--bases", type=int, default=16)
    ap.add_argument("--design", default=DESIGN, help="a digits design with a <design>_forget_ascent and _retain_finetune experiment")
    ap.add_argument("--workdir", default=str(ROOT / "results" / "regime_fa"))
    args = ap.parse_args()
    DESIGN = args.design
    cfg = load_config()
    work = Path(args.workdir)
    data = design_data(cfg, DESIGN, work)
    m = int(cfg["nn"]["designs"][DESIGN]["m"])
    rng = np.random.default_rng(12345)
    bases = []
    for b in range(args.bases):
        signs = rng.choice(np.array([-1, 1], dtype=np.int8), size=m)
        model, sec = train_base(cfg, DESIGN, data, signs, work / f"{DESIGN}_base{b}.pt")
        print(f"[{DESIGN}] base {b}: |D_f(S)| = {int((signs[data.forget_batch] == 1).sum())}, trained in {sec:.1f} s", flush=True)
        bases.append((model, signs))
    retrain, sec = train_base(cfg, DESIGN, data, -np.ones(m, dtype=np.int8), work / f"{DESIGN}_retrain.pt")
    print(f"[{DESIGN}] retrained A(D_r) trained in {sec:.1f} s; |D_r| = {len(data.retain_x)}", flush=True)
    rt = [all_accs(retrain, data, s) for _, s in bases]

    classes = sorted(int(c) for c in np.unique(data.forget_y))
    print(f"forget pool classes {classes}; test examples of other classes: {int((~np.isin(data.test_y, classes)).sum())} of {len(data.test_y)}")
    hdr = f"{'variant':44s} {'retain':>13s} {'forget':>19s} {'test':>13s} {'test_other':>13s} {'s/run':>6s}"
    print(f"\n{DESIGN}: over {len(bases)} base models; mean/min (forget: mean/min/max)\n{hdr}")

    def row(label, rows, secs):
        a = {k: np.array([r[k] for r in rows]) for k in rows[0]}
        s = f"{np.mean(secs):6.2f}" if secs else f"{'-':>6s}"
        print(f"{label:44s} {a['retain'].mean():6.3f}/{a['retain'].min():.3f} "
              f"{a['forget'].mean():6.3f}/{a['forget'].min():.3f}/{a['forget'].max():.3f} "
              f"{a['test'].mean():6.3f}/{a['test'].min():.3f} {a['test_other'].mean():6.3f}/{a['test_other'].min():.3f} {s}", flush=True)

    row("Retrain A(D_r) (one model; forget sets vary)", rt, [])
    asc_lines = []
    for label, method, params, has_ascent, noclip in variants(cfg):
        rows, secs, post = [], [], []
        for b, (model, signs) in enumerate(bases):
            seed = 1000 + b
            if noclip:
                out, sec = local_fa_noclip(model, data, signs, params, seed)
            else:
                out, sec = run_unlearn(method, model, data, signs, params, seed=seed)
            rows.append(all_accs(out, data, signs))
            secs.append(sec)
            if has_ascent:
                post.append(after_ascent(model, data, signs, params, seed, noclip))
        row(label, rows, secs)
        if post:
            a = {k: np.array([r[k] for r in post]) for k in post[0]}
            asc_lines.append(f"{label:44s} {a['forget'].mean():6.3f}/{a['forget'].min():.3f}/{a['forget'].max():.3f} "
                             f"{a['test'].mean():6.3f}/{a['test'].min():.3f} {a['test_other'].mean():6.3f}/{a['test_other'].min():.3f} {a['loss'].mean():8.3f} "
                             f"{a['disp'].mean():7.4f} {a['steps'].mean():5.1f} {a['bound'].mean():7.3f}")
    print(f"\nRight after the ascent phase (before fine-tuning), mean/min(/max):\n"
          f"{'variant':44s} {'forget':>19s} {'test':>13s} {'test_other':>13s} {'fgt loss':>8s} {'|dθ|':>7s} {'steps':>5s} {'bound':>7s}")
    print("\n".join(asc_lines))
    print("bound = steps x ascent_lr x grad_clip: the largest |dθ| the clipped ascent can make (inf: unclipped).")


if __name__ == "__main__":
    main()
