"""The precision of ``config/paper.yaml``'s TinyNet designs, chosen by the pre-registered rule of
``analysis/precision/rule.yaml`` on the controls of a reduced run (docs/workflow.md, "Choosing a precision").

    python analysis/precision/effect.py run [--cores N]   # one reduced run per precision, results_precision/<p>/
    python analysis/precision/effect.py report            # the controls side by side, the rule's verdict and choice

``run`` writes one config overlay per precision (the rule's design at that ``precision`` and at the
rule's root seed, into ``results_precision/<precision>``) and runs Snakemake for the rule's
experiments; every run shares the seed, so the runs differ in their arithmetic only.  ``report``
puts each experiment's claim, guess fraction and accuracies beside the reference precision's and
applies the rule: a candidate passes when every control's accuracies are within the margin, No
unlearning's claim within the relative or absolute tolerance, and Retrain's claim stays at most the
rule's; the first passing candidate is the choice, the reference where none passes.  Torch-free.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import yaml

from unlearn_audit.pipeline.provenance import cpu_model, git_state

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
from divergences import experiment_rows  # noqa: E402

REPO = HERE.parents[1]
COLUMNS = ["epsilon_lb_claim", "guess_fraction", "retain_acc", "forget_acc", "test_acc"]
ACCURACIES = ("retain_acc", "forget_acc", "test_acc")


def load_rule(path: Path = HERE / "rule.yaml") -> dict:
    """The pre-registered rule (``rule.yaml``)."""
    return yaml.safe_load(Path(path).read_text())


def precisions(rule: dict) -> list[str]:
    """The reference precision, then the candidates in the rule's order."""
    return [rule["reference"], *rule["candidates"]]


def overlay(rule: dict, precision: str, root: Path) -> dict:
    """The config overlay of one precision's reduced run."""
    return {"results_dir": str(root / precision), "nn": {"designs": {rule["design"]: {"precision": precision, "seed": int(rule["seed"])}}}}


def side_by_side(runs: dict[str, Path], experiments: list[str]) -> pd.DataFrame:
    """One row per (experiment, precision): the method, r and :data:`COLUMNS` of each run."""
    frames = []
    for precision, results in runs.items():
        rows = experiment_rows(results).set_index("experiment").loc[experiments]
        frames.append(rows[["method", "r", *COLUMNS]].assign(precision=precision))
    return pd.concat(frames).reset_index().set_index(["experiment", "precision"]).sort_index(level=0, sort_remaining=False)


def verdict(table: pd.DataFrame, rule: dict) -> dict[str, list[str]]:
    """Per candidate, the reasons it fails the rule (an empty list: it passes)."""
    r, ref = rule["rule"], rule["reference"]
    out = {}
    for cand in rule["candidates"]:
        reasons = []
        for experiment in table.index.get_level_values(0).unique():
            a, b = table.loc[(experiment, ref)], table.loc[(experiment, cand)]
            for acc in ACCURACIES:
                if abs(b[acc] - a[acc]) > r["accuracy_margin"]:
                    reasons.append(f"{experiment} {acc} {a[acc]:.3f} -> {b[acc]:.3f} (margin {r['accuracy_margin']})")
            if a["method"] == "No unlearning":
                tol = max(r["claim_absolute"], r["claim_relative"] * a.epsilon_lb_claim)
                if abs(b.epsilon_lb_claim - a.epsilon_lb_claim) > tol:
                    reasons.append(f"{experiment} claim {a.epsilon_lb_claim:.2f} -> {b.epsilon_lb_claim:.2f} (tolerance {tol:.2f})")
            if a["method"] == "Retrain" and b.epsilon_lb_claim > r["retrain_claim"]:
                reasons.append(f"{experiment} claim {b.epsilon_lb_claim:.2f} against Retrain (at most {r['retrain_claim']})")
        out[cand] = reasons
    return out


def choice(reasons: dict[str, list[str]], rule: dict) -> str:
    """The first candidate without a reason to fail, else the reference."""
    return next((c for c in rule["candidates"] if not reasons[c]), rule["reference"])


def run(rule: dict, root: Path, cores: str) -> int:
    """Each precision's reduced run (module docstring), under ``root`` relative to the repository."""
    (REPO / root / "overlays").mkdir(parents=True, exist_ok=True)
    for precision in precisions(rule):
        path = REPO / root / "overlays" / f"{precision}.yaml"
        path.write_text(yaml.safe_dump(overlay(rule, precision, root), sort_keys=False))
        targets = [str(root / precision / "config.yaml")] + [str(root / precision / e / "bounds.parquet") for e in rule["experiments"]]
        cmd = [sys.executable, "-m", "snakemake", *targets, "--cores", cores, "--configfile", str(REPO / "config" / "config.yaml"), str(path)]
        print("#", " ".join(cmd), flush=True)
        if subprocess.run(cmd, cwd=REPO).returncode:
            return 1
    return 0


def report(rule: dict, root: Path) -> int:
    """The table, each candidate's verdict and the choice."""
    root = REPO / root
    missing = [p for p in precisions(rule) if not (root / p / "config.yaml").exists()]
    if missing:
        print(f"error: no reduced run of {', '.join(missing)} under {root}: run `python analysis/precision/effect.py run` first", file=sys.stderr)
        return 2
    table = side_by_side({p: root / p for p in precisions(rule)}, rule["experiments"])
    reasons = verdict(table, rule)
    state = git_state(REPO)
    print(f"# python analysis/precision/effect.py report at {(state['commit'] or 'unknown')[:7]}{' with uncommitted changes' if state['dirty'] else ''} "
          f"on {cpu_model()} ({os.cpu_count()} cores), runs under {root.relative_to(REPO) if root.is_relative_to(REPO) else root}")
    print(f"# {rule['design']} at root seed {rule['seed']}, each precision's controls (evaluation runs; the claim is the pre-registered test's)")
    with pd.option_context("display.width", 200, "display.float_format", "{:.3f}".format):
        print(table.to_string())
    for cand, why in reasons.items():
        print(f"{cand}: " + ("passes the rule" if not why else "fails: " + "; ".join(why)))
    print(f"choice: {choice(reasons, rule)}")
    return 0


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("action", choices=["run", "report"])
    ap.add_argument("--rule", type=Path, default=HERE / "rule.yaml")
    ap.add_argument("--root", type=Path, default=Path("results_precision"), help="the runs' folder, relative to the repository")
    ap.add_argument("--cores", default="all")
    args = ap.parse_args(argv)
    rule = load_rule(args.rule)
    return run(rule, args.root, args.cores) if args.action == "run" else report(rule, args.root)


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
