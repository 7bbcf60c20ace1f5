"""The shared run's Parquet files carry their job's provenance stamp (docs/schemas.md#provenance):
a per-run scores file of the experiment whose method is given by import path, and a BOUNDS file,
each naming the run's commit (its provenance.json's)."""

from __future__ import annotations

import json

import pyarrow.parquet as pq

from unlearn_audit.pipeline.job_stamp import FORMAT, KEY
from workflow_utils import REPO

FIELDS = {"format", "library_sha256", "host", "device", "workflow", "versions", "user_modules"}
#: The example method of .test/all.yaml's noisy_ft, given by import path, and its source.
METHOD = "noisy_finetune.algorithm:noisy_finetune"
METHOD_SOURCE = REPO / "examples" / "noisy_finetune" / "noisy_finetune" / "algorithm.py"


def _stamp(path) -> dict:
    return json.loads(pq.read_schema(path).metadata[KEY])


def test_scores_and_bounds_files_carry_the_stamp_with_the_runs_commit(shared_run):
    import hashlib

    run = json.loads((shared_run.results / "provenance.json").read_text())["workflow"]
    scores = _stamp(shared_run.run_file("noisy_ft", "calib", 0, "scores.parquet"))
    bounds = _stamp(shared_run.results / "noisy_ft" / "bounds.parquet")
    for stamp in (scores, bounds):
        assert set(stamp) == FIELDS and stamp["format"] == FORMAT
        assert stamp["workflow"]["commit"] == run["commit"] is not None
        assert len(stamp["library_sha256"]) == 64 and stamp["host"]
        assert stamp["device"]["cpu"] and {"python", "pyarrow", "pandas"} <= set(stamp["versions"])
    # the unlearning job ran the config's own method; its source is named by its hash
    assert scores["user_modules"] == {METHOD: hashlib.sha256(METHOD_SOURCE.read_bytes()).hexdigest()}
    assert scores["device"]["cuda"] == [] and "torch" in scores["versions"]
