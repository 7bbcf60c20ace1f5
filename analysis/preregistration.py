"""The pre-registration record of every neural-network design, proved from git: what each design's
audit reports and the commit that fixed it (docs/workflow.md, "Pre-registration").

    python analysis/preregistration.py [CONFIG]        (default: config/config.yaml)

For each design of the config it prints its root seed and the commit since which its own settings
(data, split, model, training, runs, seed) have not changed, and for each of its experiments the
pre-registered cell (r, statistic, score, test and how r was fixed), the method's hyperparameters
(the budget) and the commit since which they have not changed: the oldest commit of the config's
history, walking back from HEAD, at which they read exactly as now.  A result computed after that
commit was governed by settings fixed before it; a design whose settings, or whose experiments'
settings, changed after its results were seen carries a fresh seed, and its record names the commit
that gave it.  An experiment added to a design later is a new pre-registration of its own (its
commit precedes its results); it changes nothing the design's earlier experiments report.  Needs the
repository's history (a shallow clone cannot prove anything: the script says so and exits 2).
"""

from __future__ import annotations

import functools
import subprocess
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
#: The keys of an experiment that fix what it reports (its pre-registered cell) and what it runs.
CELL_KEYS = ("method", "params", "r", "report_r", "statistic", "score", "test", "selection", "auditor", "base")


def _git(*args: str) -> str:
    return subprocess.run(["git", "-C", str(ROOT), *args], capture_output=True, text=True, check=True).stdout


@functools.lru_cache(maxsize=None)
def _config_at(commit: str, path: str) -> dict:
    """The config at ``path`` as of ``commit``, parsed once (read, never modified)."""
    return yaml.safe_load(_git("show", f"{commit}:{path}"))


def own_settings(config: dict, design: str) -> dict:
    """What fixes a design's base models: its own settings and the root seed in effect."""
    nn = config.get("nn", {})
    settings = {k: v for k, v in nn["designs"][design].items() if k != "seed"}  # the seed in effect, not where it is written
    return {"seed": nn["designs"][design].get("seed", config.get("seed")), "design": settings}


def experiment_settings(config: dict, name: str) -> dict:
    """What fixes an experiment's audit: its design and its cell and budget (:data:`CELL_KEYS`)."""
    e = config.get("nn", {}).get("experiments", {})[name]
    return {"design": e.get("design"), **{k: e.get(k) for k in CELL_KEYS}}


def design_settings(config: dict, design: str) -> dict:
    """What fixes a design's audit: its own settings (seed included) and its experiments' cells and budgets."""
    exps = {n: {k: e.get(k) for k in CELL_KEYS} for n, e in config.get("nn", {}).get("experiments", {}).items() if e.get("design") == design}
    return {**own_settings(config, design), "experiments": exps}


def fixed_since(path: str, read, current, history: list[str]) -> str | None:
    """The oldest commit of ``history`` (newest first) from which ``read(config)`` equals ``current`` at
    every commit up to HEAD: the commit that fixed it."""
    fixed = None
    for commit in history:
        try:
            same = read(_config_at(commit, path)) == current
        except (subprocess.CalledProcessError, yaml.YAMLError, KeyError, AttributeError, TypeError):
            same = False
        if not same:
            break
        fixed = commit
    return fixed


def records(config_path: str = "config/config.yaml") -> list[dict]:
    """One record per design of the config at HEAD: seed, fixing commit and each experiment's cell and budget."""
    path = Path(config_path)
    rel = str(path.resolve().relative_to(ROOT)) if path.is_absolute() else config_path
    config = yaml.safe_load(_git("show", f"HEAD:{rel}"))
    history = _git("log", "--format=%H", "--", rel).split()
    def subject(commit: str | None) -> str:
        return _git("log", "-1", "--format=%h %cs", commit).strip() if commit else "not in the history"

    out = []
    for design in config.get("nn", {}).get("designs", {}):
        current = design_settings(config, design)
        if not current["experiments"]:
            continue
        own = fixed_since(rel, lambda cfg, d=design: own_settings(cfg, d), own_settings(config, design), history)
        exps = {}
        for name, cell in current["experiments"].items():
            commit = fixed_since(rel, lambda cfg, n=name: experiment_settings(cfg, n), experiment_settings(config, name), history)
            exps[name] = {**cell, "fixed_by": subject(commit)}
        out.append({"design": design, "seed": current["seed"], "fixed_by": subject(own), "experiments": exps})
    return out


def main(argv: list[str]) -> int:
    if _git("rev-parse", "--is-shallow-repository").strip() == "true":
        print("error: a shallow clone holds too little history to prove when settings were fixed: git fetch --unshallow", file=sys.stderr)
        return 2
    config = argv[1] if len(argv) > 1 else "config/config.yaml"
    for r in records(config):
        print(f"{r['design']}: seed {r['seed']}, the design fixed by {r['fixed_by']}")
        for name, e in r["experiments"].items():
            cell = f"r={e['report_r'] or 'max'} of {e['r']}, {e['statistic'] or 'mean'}, {e['score'] or 'logit'}, {e['test'] or 'reference'} test"
            print(f"  {name} (fixed by {e['fixed_by']}): {e['method']} {cell}; params {e['params']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
