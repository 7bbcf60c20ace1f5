"""Nothing lost to a failed or preempted chunk job (docs/cluster.md, "Failed and preempted jobs"):
a chunk job killed after k of its n runs keeps those k runs, and its retry computes only the
others, with the bytes of an uninterrupted job."""

import os
import signal
import subprocess
import sys
import time

import pandas as pd
import psutil
import pytest

from unlearn_audit.pipeline.plan import paths
from unlearn_audit.pipeline.run_stash import STASH_DIR, RunStash
from workflow_utils import REPO, SNAKEFILE


def _models(folder) -> dict[str, bytes]:
    """The base models of a training chunk's folder (not Snakemake's timestamp file), by path."""
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*.pt"))}


def test_a_killed_training_chunk_is_retried_from_its_first_missing_run(shared_run, tmp_path):
    """The tiny design's one training chunk (23 runs) run again by Snakemake with one retry; its job
    process is killed (SIGKILL, as a preemption or a lost node ends it) once two runs are in its
    stash; Snakemake's retry trains only the runs missing, and the chunk is byte for byte the one
    an uninterrupted job wrote."""
    run = shared_run.copy(tmp_path / "run")
    keys = run.plan.nn.run_keys("tiny")
    chunk = run.workdir / paths.base_chunk_dir("results", "tiny", paths.chunk_name(keys))
    expected = _models(chunk)
    assert len(expected) == len(keys) == 23
    stash = run.workdir / "results" / STASH_DIR / chunk.relative_to(run.workdir / "results")
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1", PYTHONPATH=str(REPO / "examples" / "noisy_finetune"))
    cmd = [sys.executable, "-m", "snakemake", "-s", str(SNAKEFILE), "-d", str(run.workdir), "--configfile", str(run.configfile),
           "--cores", "1", "--retries", "1", "--force", str(chunk.relative_to(run.workdir))]
    proc = subprocess.Popen(cmd, cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    killed = None
    deadline = time.monotonic() + 300
    while proc.poll() is None and killed is None and time.monotonic() < deadline:
        if len(list(stash.glob("*/*.pt"))) >= 2:
            jobs = [p for p in psutil.Process(proc.pid).children(recursive=True) if "nn_train" in " ".join(p.cmdline())]
            for p in jobs:
                p.send_signal(signal.SIGKILL)
            killed = len(jobs)
        time.sleep(0.01)
    out, _ = proc.communicate(timeout=600)
    assert killed == 1, out[-3000:]
    assert proc.returncode == 0, out[-3000:]
    assert "Trying to restart job" in out or "retry" in out.lower(), out[-3000:]
    log = (run.workdir / "results" / "logs" / "nn" / "tiny" / f"train_{chunk.name}.log").read_text()
    kept = int(log.split(" runs kept from an earlier attempt")[0].rsplit(": ", 1)[1].split(" of ")[0])
    assert 2 <= kept < 23, log  # the retry started at run kept + 1
    assert _models(chunk) == expected
    assert not (run.workdir / "results" / STASH_DIR).exists()


def test_an_unlearning_chunk_that_fails_keeps_its_finished_runs_unless_its_fingerprint_changed(shared_run, tmp_path, monkeypatch):
    """nn_runs.unlearn with a stash: a failure at the second of three runs leaves the first run's files
    in the stash and none in the chunk's folder; the retry unlearns runs 1 and 2 only and writes the
    scores of an uninterrupted job; a retry under another fingerprint unlearns all three."""
    from unlearn_audit.pipeline import nn_runs

    monkeypatch.chdir(shared_run.workdir)
    res, config = shared_run.results, shared_run.config
    design, exp = config["nn"]["designs"]["tiny"], config["nn"]["experiments"]["tiny_ft"]
    chunk = tmp_path / "results" / "tiny_ft" / "runs" / "eval0-2"
    outputs = {k: [str(chunk / "tiny_ft" / "eval" / str(r) / f"{k}.parquet") for r in range(3)] for k in ("scores", "metrics")}
    unlearned = []
    real = nn_runs.unlearn_many

    def failing_second(*args, **kwargs):
        unlearned.append(len(args[1]))
        if len(unlearned) == 2 and fail:
            raise RuntimeError("preempted")
        return real(*args, **kwargs)

    monkeypatch.setattr(nn_runs, "unlearn_many", failing_second)

    def step(fingerprint):
        nn_runs.unlearn("tiny_ft", design, exp["method"], exp["params"], config["seed"], res / "designs" / "tiny" / "data.npz",
                        res / "designs" / "tiny" / "signs.parquet", [str(shared_run.base_model("tiny", "eval", r)) for r in range(3)],
                        outputs["scores"], outputs["metrics"], stash=RunStash(chunk, tmp_path / "results", fingerprint))

    fail = True
    with pytest.raises(RuntimeError, match="preempted"):
        step("fp")
    assert not chunk.exists() and len(list((tmp_path / "results" / STASH_DIR).rglob("*.parquet"))) == 2
    fail, unlearned[:] = False, []
    step("fp")
    assert unlearned == [1, 1]  # runs 1 and 2 only
    for r in range(3):
        for name in ("scores", "metrics"):
            pd.testing.assert_frame_equal(pd.read_parquet(outputs[name][r]), pd.read_parquet(shared_run.run_file("tiny_ft", "eval", r, f"{name}.parquet")))
    assert not (tmp_path / "results" / STASH_DIR).exists()

    # a stash of another fingerprint (other parameters, inputs or code) is never reused
    stale = RunStash(chunk, tmp_path / "results", "old")
    for name in ("scores", "metrics"):
        target = stale.path(outputs[name][0])
        os.makedirs(os.path.dirname(target), exist_ok=True)
        pd.read_parquet(outputs[name][1]).to_parquet(target)  # another run's numbers
    unlearned[:] = []
    step("new")
    assert unlearned == [1, 1, 1]
    pd.testing.assert_frame_equal(pd.read_parquet(outputs["scores"][0]), pd.read_parquet(shared_run.run_file("tiny_ft", "eval", 0, "scores.parquet")))
