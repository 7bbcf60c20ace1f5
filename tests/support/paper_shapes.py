"""config/paper.yaml at its real model and input shapes with its counts cut to a step or two: what
the meta-device test (tests/training/test_paper_shapes.py) and the paper-shapes Snakemake run
(tests/workflow/test_paper_shapes_run.py) run.

What stays the paper's: each design's dataset, split, model and its parameters, forget batch size
B, auditor, base training's batch size, schedule, learning rate and clipping, and each method's
hyperparameters but the counts below.  What is cut: epochs (one a phase), LiSSA's s1 x s2,
rewind-to-delete's Lipschitz probes and its T - K = 1 base epoch and K = 1 unlearning epoch, model clipping's noisy steps (the accountant's T, thousands,
is CPU arithmetic tested on its own); in the Snakemake run also the number of candidate batches m
(so the pool is m·B of the paper's B), the guess budgets r, the runs, and the retain set."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[2]
PAPER = REPO / "config" / "paper.yaml"

#: The counts made smaller, each the same step repeated: one epoch of every phase, LiSSA's s1 x s2
#: Hessian-vector products, rewind-to-delete's Lipschitz probes and epochs (T = 2, K = 1), and model clipping's noisy steps
#: (uncertified at a given sigma), its checkpoint steps at step 1.
FEWER = {"hessian": {"s1": 1, "s2": 2}, "rewind_to_delete": {"lipschitz_samples": 2, "T": 2, "K": 1},
         "model_clipping": {"noisy_steps": 1, "epsilon": None, "delta": None}}
EPOCHS = ("epochs", "ascent_epochs", "forget_epochs")


def fewer_params(method: str, params: dict) -> dict:
    """A paper experiment's hyperparameters with the counts of :data:`FEWER` and one epoch a phase."""
    out = {**params, **FEWER.get(method, {})}
    out.update({k: min(int(v), 1) for k, v in out.items() if k in EPOCHS})
    if out.get("checkpoint_steps"):
        out["checkpoint_steps"] = [1]
    return out


#: The designs the Snakemake run takes, one of each kind of job: a batchwise audit of B = 1 on the
#: adversarial (whole-class) split, a joint certified audit of B = 750 with model clipping, the
#: full-batch rewind-to-delete of B = 750 (its pairwise baseline, the same jobs at m = 2, runs in
#: the workflow tests' shared run), and the CharLSTM of 256 units on text; each with
#: one experiment of its own (the paper's first of that method on the design).  The Hessian
#: method's products on the CharLSTM (seconds each on a CPU core at 256 windows) are left to the
#: meta-device test and benchmarks/gpu.sh.
RUN_EXPERIMENTS = {"cifar_adversarial": "ida", "cifar_joint_uniform": "model_clipping",
                   "cifar_r2d_uniform": "rewind_to_delete", "shakespeare": "retain_finetune"}
#: Candidate batches of the run (B stays the paper's): a joint design needs two for a pair.
RUN_M = 2
#: Retain examples (images; text windows) a base training sees beside half the pool.
RUN_RETAIN = 128


def paper_shapes_run_config(plays: Path) -> dict:
    """config/paper.yaml cut for a Snakemake run on CPU: the designs of :data:`RUN_EXPERIMENTS` with
    one experiment each at :func:`fewer_params`, m = :data:`RUN_M`, r = m, one epoch of base training,
    two calibration runs (a joint design's, per candidate; four of a batchwise design) and one evaluation run, a retain set of :data:`RUN_RETAIN`; the sections
    other than the neural-network audits and the controls off; CIFAR-100 read from
    ``resources/cifar-100-python`` (no download) and the plays from ``plays``; on the CPU."""
    paper = yaml.safe_load(PAPER.read_text())
    cfg = {k: v for k, v in paper.items() if k not in ("perfect_prediction", "convex", "gaussian_unlearning", "nn", "cluster")}
    cfg.update({"results_dir": "results", "resources_dir": "resources", "device": "cpu",
                "perfect_prediction": {"enabled": False}, "convex": {"enabled": False}, "gaussian_unlearning": {"enabled": False}})
    designs, experiments = {}, {}
    for name, method in RUN_EXPERIMENTS.items():
        design = copy.deepcopy(paper["nn"]["designs"][name])
        # a batchwise design's Gaussian fits need two runs on each side of every candidate batch
        calibration, evaluation = (2, 1) if design.get("auditor") == "joint" else (4, 1)
        design.update({"m": RUN_M, "calibration_runs": calibration, "evaluation_runs": evaluation,
                       "chunk_size": calibration + evaluation, "runtime_minutes_per_run": 1})
        design["train"] = {**design["train"], "epochs": 1}
        params = dict(design.get("dataset_params", {}))
        if design["dataset"] == "cifar100":
            params.update({"download": False, "max_retain": RUN_RETAIN})
        else:  # the generated plays have fewer roles than the corpus; their windows kept few
            params.update({"source": str(plays), "num_roles": 12, "forget_stride": 40,
                           "max_retain_windows": RUN_RETAIN, "max_eval_windows": 64})
        design["dataset_params"] = params
        designs[name] = design
        exp_name, exp = next((n, e) for n, e in paper["nn"]["experiments"].items() if e["design"] == name and e["method"] == method)
        exp = copy.deepcopy(exp)
        exp["params"] = fewer_params(method, exp.get("params", {}))
        for key in ("r", "report_r"):
            if key in exp:
                exp[key] = [RUN_M] if isinstance(exp[key], list) else RUN_M
        experiments[exp_name] = exp
    cfg["nn"] = {"enabled": True, "controls": False, "designs": designs, "experiments": json.loads(json.dumps(experiments))}
    return cfg
