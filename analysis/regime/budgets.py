"""The unlearning budget of each digits heuristic, chosen by its utility on calibration runs only.

    .venv/bin/python analysis/regime/budgets.py [--spec FILE] [--design D] [--workdir results/regime_budgets]

Reads the grid and the rule of ``analysis/regime/budgets.yaml`` (or ``--spec``, e.g. the field's
baselines in ``budgets_baselines.yaml``; each committed before it ran) and the designs and
experiments of its config (a spec's own ``experiments``, named ``<design>_<key>`` or as its
``experiment_names`` map says, where the config has none yet).  For each design it prepares the design's data and sign
vectors and trains the base models of its first calibration runs and its retrained model A(D_r)
exactly as the workflow does (``pipeline.nn.prepare_data``, ``sample_signs``, ``nn_runs.train``, the
design's own root seed), then unlearns each base model at every grid point of every method, with the
generator the workflow gives that experiment's run, and measures the retain, forget and test
accuracy of the result.  No evaluation run is trained and no bound is computed: the choice reads
accuracies alone.

Writes ``<spec>.csv`` (``budgets.csv`` for the default spec; one row per design, method and grid point: its parameters, the mean
accuracies over the runs, Retrain's and No unlearning's on the same runs, whether the point meets
the rule, and the chosen point) and ``<spec>.out.txt`` (the same as read, with each choice) beside
this script.  Each point's numbers are cached under the workdir, so ``--design`` runs of the designs
in parallel processes and a last run without it assemble the files.  One thread per process.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import torch
import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import ROOT, load_config  # noqa: E402  (one thread per process)

from unlearn_audit.data import load_audit_data  # noqa: E402
from unlearn_audit.models import build_model  # noqa: E402
from unlearn_audit.pipeline import nn as pnn  # noqa: E402
from unlearn_audit.pipeline import nn_runs  # noqa: E402
from unlearn_audit.pipeline.plan.experiment import design_seed  # noqa: E402
from unlearn_audit.pipeline.plan.paths import base_model, retrain_model  # noqa: E402
from unlearn_audit.scores import model_scores  # noqa: E402
from unlearn_audit.seeds import seed_sequence, torch_seed  # noqa: E402
from unlearn_audit.unlearning import unlearn  # noqa: E402

HERE = Path(__file__).resolve().parent
RULE_FILE = HERE / "budgets.yaml"


def grid_params(method: str, params: dict, budget: float, lr: float) -> dict:
    """The experiment's ``params`` at one grid point: its budget and learning rate mapped onto the
    method's parameters as ``budgets.yaml`` states (the paper's ratios between the phases)."""
    p = dict(params)
    if method == "retain_finetune":
        p.update(epochs=int(budget), lr=float(lr))
    elif method == "forget_ascent":
        p.update(ascent_epochs=2, epochs=int(budget) - 2, lr=float(lr))
    elif method == "ida":
        e_f = int(round(budget / 5))
        p.update(forget_epochs=e_f, epochs=int(budget) - e_f, lr=float(lr))
    elif method == "hessian":
        p.update(s1=1, s2=int(budget), scale=round(1.0 / float(lr), 6))
    elif method in ("neggrad_plus", "random_labels", "salun", "bad_teacher", "gradient_ascent", "gradient_difference", "npo", "simnpo"):
        p.update(epochs=int(budget), lr=float(lr))
    elif method == "scrub":
        p.update(epochs=int(budget), max_steps=min(2, int(budget)), lr=float(lr))
    elif method == "ssd":
        p.update(alpha=round(1.0 / float(budget), 6), lam=round(1.0 / float(lr), 6))
    else:
        raise ValueError(f"no budget grid for method {method!r}")
    return p


def meets(point: dict, rule: dict) -> tuple[bool, bool]:
    """(forget condition, test condition) of the rule at one point's mean accuracies."""
    forget_ok = point["forget_acc"] <= point["retrain_forget_acc"] + float(rule["forget_margin"]) + 1e-12
    test_ok = abs(point["test_acc"] - point["retrain_test_acc"]) <= float(rule["test_margin"]) + 1e-12
    return bool(np.isfinite(point["forget_acc"]) and forget_ok), bool(np.isfinite(point["test_acc"]) and test_ok)


def choose(points: pd.DataFrame) -> tuple[int, bool]:
    """(index of the chosen point, whether it meets the rule) among one method's points on one design,
    by the rule of ``budgets.yaml``: the first point in (budget, lr) order meeting both conditions;
    else, among those meeting the test condition, the smallest forget accuracy (ties in that order);
    else the first point."""
    ordered = points.sort_values(["budget", "lr"], kind="stable")
    both = ordered[ordered.meets_forget & ordered.meets_test]
    if len(both):
        return int(both.index[0]), True
    kept = ordered[ordered.meets_test]
    if len(kept):
        return int(kept.forget_acc.idxmin()) if kept.forget_acc.notna().any() else int(kept.index[0]), False
    return int(ordered.index[0]), False


def _accuracies(model, data, signs) -> dict:
    fx, fy = nn_runs.forget_set(data, signs)

    def acc(x, y):
        return float(np.mean(model_scores(model, x, y, kind=data.kind)["correct"])) if len(x) else float("nan")

    return {"retain_acc": acc(data.retain_x, data.retain_y), "forget_acc": acc(fx, fy), "test_acc": acc(data.test_x, data.test_y)}


class DesignRuns:
    """A design's data, its first calibration runs' sign vectors and base models, and A(D_r), as the workflow makes them."""

    def __init__(self, cfg: dict, design: str, runs: int, work: Path):
        self.design = design
        self.dcfg = cfg["nn"]["designs"][design]
        self.seed = design_seed(self.dcfg, int(cfg["seed"]))
        root = work / design
        root.mkdir(parents=True, exist_ok=True)
        data_path, signs_path = root / "data.npz", root / "signs.parquet"
        if not data_path.exists():
            pnn.prepare_data(design, self.dcfg, self.seed, str(ROOT / cfg.get("resources_dir", "resources")), data_path, root / "split.parquet")
        if not signs_path.exists():
            pnn.sample_signs(design, self.dcfg, self.seed, signs_path)
        self.data = load_audit_data(data_path)
        table = pd.read_parquet(signs_path)
        calib = table[table.phase == "calib"].sort_values("run")
        self.runs = [int(r) for r in calib.run.iloc[:runs]]
        self.signs = {int(r): np.asarray(s, dtype=np.int8) for r, s in zip(calib.run, calib.signs)}
        models = [base_model(str(work), design, f"calib0-{runs - 1}", "calib", r) for r in self.runs]
        retrain = retrain_model(str(work), design)
        t0 = time.perf_counter()
        for outputs in (models, [retrain]):
            if not all(Path(p).exists() for p in outputs):
                nn_runs.train(design, self.dcfg, self.seed, data_path, signs_path, outputs)
        print(f"[{design}] seed {self.seed}: {len(models)} base models and A(D_r) ready in {time.perf_counter() - t0:.1f} s", flush=True)
        self.models = {r: self._load(p) for r, p in zip(self.runs, models)}
        self.retrain = self._load(retrain)

    def _load(self, path) -> torch.nn.Module:
        m = dict(self.dcfg["model"])
        model = build_model(m["name"], **m.get("params", {}))
        model.load_state_dict(torch.load(path, map_location="cpu", weights_only=True))
        return model.eval()

    def controls(self) -> dict:
        """Mean accuracies of No unlearning (the base models) and Retrain (A(D_r)) over the runs."""
        nu = [_accuracies(self.models[r], self.data, self.signs[r]) for r in self.runs]
        rt = [_accuracies(self.retrain, self.data, self.signs[r]) for r in self.runs]
        mean = lambda rows, k: float(np.mean([x[k] for x in rows]))  # noqa: E731
        return {"no_unlearning_forget_acc": mean(nu, "forget_acc"), "no_unlearning_test_acc": mean(nu, "test_acc"),
                "retrain_forget_acc": mean(rt, "forget_acc"), "retrain_test_acc": mean(rt, "test_acc")}

    def unlearned(self, experiment: str, method: str, params: dict) -> dict:
        """Mean accuracies over the runs after unlearning each base model with ``params`` (each run's
        generator: the workflow's for that experiment and calibration run), seconds a run, and
        whether it diverged."""
        rows, seconds = [], []
        retain = (torch.as_tensor(self.data.retain_x), torch.as_tensor(self.data.retain_y))
        for r in self.runs:
            fx, fy = nn_runs.forget_set(self.data, self.signs[r])
            gen = torch.Generator().manual_seed(torch_seed(seed_sequence(self.seed, experiment, "unlearn", "calib", r)))
            t0 = time.perf_counter()
            try:
                out = unlearn(method, self.models[r], retain, (torch.as_tensor(fx), torch.as_tensor(fy)), params, gen)
            except FloatingPointError as why:
                return {"retain_acc": np.nan, "forget_acc": np.nan, "forget_acc_sd": np.nan, "test_acc": np.nan, "diverged": True,
                        "seconds_per_run": np.nan, "note": str(why)[:80]}
            seconds.append(time.perf_counter() - t0)
            rows.append(_accuracies(out.eval(), self.data, self.signs[r]))
        a = {k: np.array([x[k] for x in rows]) for k in rows[0]}
        finite = all(np.isfinite(v).all() for v in a.values())
        return {"retain_acc": float(a["retain_acc"].mean()), "forget_acc": float(a["forget_acc"].mean()),
                "forget_acc_sd": float(a["forget_acc"].std(ddof=1)), "test_acc": float(a["test_acc"].mean()),
                "diverged": not finite, "seconds_per_run": float(np.mean(seconds)), "note": ""}


def grid_rows(cfg: dict, spec: dict, design: str, work: Path) -> list[dict]:
    """Every grid point of every method on ``design`` (cached per point under ``work``)."""
    runs = DesignRuns(cfg, design, int(spec["calibration_runs"]), work)
    controls = runs.controls()
    out = []
    for key, grid in spec["grids"].items():
        experiment = (spec.get("experiment_names") or {}).get(key, f"{design}_{key}")
        exp = cfg["nn"]["experiments"].get(experiment) or spec["experiments"][key]
        for budget in grid["budget"]:
            for lr in grid["lr"]:
                params = grid_params(exp["method"], exp["params"], budget, lr)
                cache = work / design / "points" / f"{key}_b{budget}_lr{lr}.json"
                if cache.exists():
                    point = json.loads(cache.read_text())
                else:
                    point = runs.unlearned(experiment, exp["method"], params)
                    cache.parent.mkdir(parents=True, exist_ok=True)
                    cache.write_text(json.dumps(point))
                row = {"design": design, "method": key, "experiment": experiment, "budget": budget, "lr": lr,
                       "params": json.dumps(params, sort_keys=True), "runs": len(runs.runs), **point, **controls}
                print(f"[{design}] {key:16s} budget {budget:>4} lr {lr:<8g} forget {row['forget_acc']:.3f} "
                      f"test {row['test_acc']:.3f} (Retrain {controls['retrain_forget_acc']:.3f} / {controls['retrain_test_acc']:.3f})"
                      f" {row['seconds_per_run']:.2f} s/run" + (" diverged" if row["diverged"] else ""), flush=True)
                out.append(row)
    return out


def decide(frame: pd.DataFrame, rule: dict) -> pd.DataFrame:
    """``frame`` with ``meets_forget``, ``meets_test``, ``chosen`` and ``not_forgotten`` (per design and method)."""
    frame = frame.reset_index(drop=True).copy()
    checks = [meets(r, rule) if not r["diverged"] else (False, False) for r in frame.to_dict("records")]
    frame["meets_forget"] = [c[0] for c in checks]
    frame["meets_test"] = [c[1] for c in checks]
    frame["chosen"] = False
    frame["not_forgotten"] = False
    for _, points in frame.groupby(["design", "method"], sort=False):
        i, ok = choose(points)
        frame.loc[i, "chosen"] = True
        frame.loc[points.index, "not_forgotten"] = not ok
    return frame


def report(frame: pd.DataFrame, spec: dict, name: str = "budgets.yaml") -> str:
    """The grid as read, each design's controls first, then each method's points and its choice."""
    lines = [f"Budget grid (analysis/regime/{name}): first {spec['calibration_runs']} calibration runs per design, "
             f"mean accuracies; rule: forget <= Retrain + {spec['rule']['forget_margin']}, |test - Retrain| <= "
             f"{spec['rule']['test_margin']}; the smallest budget, then the smallest lr.", ""]
    for design, sub in frame.groupby("design", sort=False):
        c = sub.iloc[0]
        lines.append(f"## {design}: No unlearning forget {c.no_unlearning_forget_acc:.3f} test {c.no_unlearning_test_acc:.3f}; "
                     f"Retrain forget {c.retrain_forget_acc:.3f} test {c.retrain_test_acc:.3f}")
        lines.append(f"{'method':16s} {'budget':>6s} {'lr':>8s} {'retain':>7s} {'forget':>7s} {'(sd)':>6s} {'test':>7s} {'s/run':>6s}  rule")
        for r in sub.itertuples():
            verdict = "diverged" if r.diverged else ("meets" if r.meets_forget and r.meets_test else
                                                     ("forget too high" if not r.meets_forget else "test off"))
            mark = "  <- chosen" + (" (not_forgotten)" if r.not_forgotten else "") if r.chosen else ""
            lines.append(f"{r.method:16s} {r.budget:>6} {r.lr:>8g} {r.retain_acc:7.3f} {r.forget_acc:7.3f} {r.forget_acc_sd:6.3f} "
                         f"{r.test_acc:7.3f} {r.seconds_per_run:6.2f}  {verdict}{mark}")
        lines.append("")
    lines.append(f"Chosen ({spec['config']}'s params of each experiment):")
    for r in frame[frame.chosen].itertuples():
        lines.append(f"  {r.experiment}: {r.params}" + ("   # not_forgotten" if r.not_forgotten else ""))
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--spec", default=str(RULE_FILE), help="the grid and rule (default: budgets.yaml)")
    ap.add_argument("--design", action="append", help="only these designs (repeatable); the files are written only when every design ran")
    ap.add_argument("--workdir", default=str(ROOT / "results" / "regime_budgets"))
    ap.add_argument("--out", default=str(HERE), help="folder of budgets.csv and budgets.out.txt")
    args = ap.parse_args(argv)
    spec_file = Path(args.spec)
    spec = yaml.safe_load(spec_file.read_text())
    cfg = load_config(ROOT / spec["config"])
    designs = args.design or spec["designs"]
    unknown = sorted(set(designs) - set(spec["designs"]))
    if unknown:
        ap.error(f"--design {unknown}: not in {spec_file.name}'s designs {spec['designs']}")
    work = Path(args.workdir)
    rows = [row for design in designs for row in grid_rows(cfg, spec, design, work)]
    if set(designs) != set(spec["designs"]):
        return 0
    frame = decide(pd.DataFrame(rows), spec["rule"])
    out = Path(args.out)
    frame.to_csv(out / f"{spec_file.stem}.csv", index=False)
    text = report(frame, spec, spec_file.name)
    (out / f"{spec_file.stem}.out.txt").write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
