"""Quick accuracy screen of heuristic-unlearning regimes on digits (no audit; one core).

Trains N base models per split (digits_uniform, digits_adversarial; random sign vectors; the
design's x0, order and training config, as snakemake does), applies each variant and prints
retain / forget / test accuracy (means over the base models) and seconds per unlearning run.
It picks which variants go into heuristics.yaml (the audit: epsilon_lb).

    OMP_NUM_THREADS=1 .venv/bin/python analysis/regime/screen_heuristics.py [--bases 2]
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import ROOT, accuracies, design_data, load_config, run_unlearn, train_base  # noqa: E402

FT = {"batch_size": 64, "weight_decay": 5e-4, "schedule": "onecycle"}


def _three_methods(lr: float, mom: float) -> list[tuple[str, str, dict]]:
    """Retain fine-tune, forget ascent and IDA q = 1 with a fine-tuning phase at peak ``lr``, momentum ``mom``."""
    tag = f"lr{lr:g} m{mom:g}"
    return [
        (f"RF 10ep {tag}", "retain_finetune", {**FT, "epochs": 10, "lr": lr, "momentum": mom}),
        (f"FA 2asc@0.01 + 8ep {tag}", "forget_ascent", {**FT, "ascent_epochs": 2, "ascent_lr": 0.01, "epochs": 8, "lr": lr, "momentum": mom}),
        (f"IDA q1 2fe@0.01 + 8ep {tag}", "ida",
         {**FT, "q": 1, "lam": 0.75, "forget_epochs": 2, "interleaved_lr": 0.01, "epochs": 8, "lr": lr, "momentum": mom}),
    ]


def variants():
    out = [("none (epochs 0)", "retain_finetune", {"epochs": 0})]
    for lr in (0.1, 0.3):
        for mom in (0.9, 0.0):
            out += _three_methods(lr, mom)
    out.append(("RF 5ep lr0.1 m0.9", "retain_finetune", {**FT, "epochs": 5, "lr": 0.1, "momentum": 0.9}))
    out.append(("RF 10ep lr0.01 m0.9 (default-like)", "retain_finetune", {**FT, "epochs": 10, "lr": 0.01, "momentum": 0.9}))
    return out


def edge_variants():
    """Second screen: the stability edge (effective LR lr/(1-momentum) around 2-5x training's 0.1)."""
    out = [("none (epochs 0)", "retain_finetune", {"epochs": 0})]
    for lr, mom in ((0.2, 0.0), (0.3, 0.0), (0.5, 0.0), (0.05, 0.9), (0.1, 0.5)):
        out += _three_methods(lr, mom)
    out.append(("RF 10ep lr0.3 m0 clip1", "retain_finetune", {**FT, "epochs": 10, "lr": 0.3, "momentum": 0.0, "grad_clip": 1.0}))
    out.append(("RF 10ep lr0.1 m0.9 clip1", "retain_finetune", {**FT, "epochs": 10, "lr": 0.1, "momentum": 0.9, "grad_clip": 1.0}))
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--bases", type=int, default=2)
    ap.add_argument("--grid", choices=("first", "edge"), default="first", help="first: the 10x/30x grid; edge: the stability edge")
    ap.add_argument("--workdir", default=str(ROOT / "results" / "regime_screen"))
    args = ap.parse_args()
    cfg = load_config()
    work = Path(args.workdir)
    rng = np.random.default_rng(12345)
    for design in ("digits_uniform", "digits_adversarial"):
        data = design_data(cfg, design, work)
        m = int(cfg["nn"]["designs"][design]["m"])
        bases = []
        for b in range(args.bases):
            signs = rng.choice(np.array([-1, 1], dtype=np.int8), size=m)
            model, sec = train_base(cfg, design, data, signs, work / f"{design}_base{b}.pt")
            print(f"[{design}] base {b}: |D_f(S)| = {int((signs[data.forget_batch] == 1).sum())}, trained in {sec:.1f} s", flush=True)
            bases.append((model, signs))
        print(f"\n{design}: mean over {len(bases)} base models")
        print(f"{'variant':42s} {'retain':>7s} {'forget':>7s} {'test':>7s} {'s/run':>6s}")
        for label, method, params in (variants() if args.grid == "first" else edge_variants()):
            rows, secs = [], []
            for b, (model, signs) in enumerate(bases):
                out, sec = run_unlearn(method, model, data, signs, params, seed=1000 + b)
                rows.append(accuracies(out, data, signs))
                secs.append(sec)
            mean = {k: np.mean([r[k] for r in rows]) for k in rows[0]}
            print(f"{label:42s} {mean['retain']:7.3f} {mean['forget']:7.3f} {mean['test']:7.3f} {np.mean(secs):6.2f}", flush=True)
        print()


if __name__ == "__main__":
    main()
