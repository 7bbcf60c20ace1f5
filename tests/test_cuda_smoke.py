"""benchmarks/cuda_smoke.py, the first step of benchmarks/gpu.sh, as far as a CPU checks it: its
config plans every neural-network rule kind of the workflow, and its determinism check fails on two
runs whose data differ in one value.  (``python benchmarks/cuda_smoke.py --device cpu --out DIR
--quick`` runs its four cases on the CPU in a few minutes; not part of the suite.)"""

from __future__ import annotations

import re
import subprocess
import sys

import pandas as pd

from workflow_utils import REPO, script_module

cuda_smoke = script_module("benchmarks/cuda_smoke.py", "cuda_smoke")

#: The rules of the workflow that run a neural network (load torch) or audit its scores.
NN_RULES = {"nn_prepare_data", "nn_sample_signs", "nn_train", "nn_train_retrain", "nn_unlearn", "nn_fit", "nn_audit",
            "nn_membership", "nn_table", "nn_checkpoint_audit", "certified_joint_audit", "certified_table6"}


def test_the_smoke_config_plans_every_neural_network_rule_kind(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "snakemake", "-n", "--cores", "2", "--configfile", str(cuda_smoke.CONFIG),
                           "--config", "device=cpu", f"results_dir={tmp_path / 'r'}"], cwd=REPO, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    planned = set(re.findall(r"^\s*(\w+)\s+\d+\s*$", proc.stdout, flags=re.MULTILINE))
    assert NN_RULES <= planned, sorted(NN_RULES - planned)


def _write(root, value):
    for e in cuda_smoke.CHECKED:
        (root / e).mkdir(parents=True, exist_ok=True)
        for name in cuda_smoke.PARQUETS:
            pd.DataFrame({"run": [0, 1], "x": [0.25, value]}).to_parquet(root / e / name)


def test_the_determinism_check_names_a_file_whose_data_differ(tmp_path):
    _write(tmp_path / "a", 0.5)
    _write(tmp_path / "b", 0.5)
    assert cuda_smoke.differences(tmp_path / "a", tmp_path / "b", cuda_smoke.CHECKED) == []
    pd.DataFrame({"run": [0, 1], "x": [0.25, 0.5 + 1e-12]}).to_parquet(tmp_path / "b" / "tiny_ft" / "bounds.parquet")
    (tmp_path / "b" / "plays_hessian" / "fit.parquet").unlink()
    diff = cuda_smoke.differences(tmp_path / "a", tmp_path / "b", cuda_smoke.CHECKED)
    assert len(diff) == 2 and diff[0].startswith("tiny_ft/bounds.parquet") and diff[1] == "plays_hessian/fit.parquet missing"
