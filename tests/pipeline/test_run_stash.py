"""The stash of a chunk job's finished runs (unlearn_audit.pipeline.run_stash; docs/cluster.md,
"Failed and preempted jobs"): kept across attempts under one fingerprint, discarded under another,
moved whole into the output folder when the job is done."""

import os
from pathlib import Path

import pytest

from unlearn_audit.pipeline.run_stash import STASH_DIR, RunStash, chunk_stash, job_fingerprint


def _chunk(tmp_path: Path) -> tuple[Path, Path]:
    results = tmp_path / "results"
    return results, results / "designs" / "d" / "base" / "calib0-3"


def test_a_retry_under_the_same_fingerprint_finds_the_runs_an_earlier_attempt_finished(tmp_path):
    results, chunk = _chunk(tmp_path)
    outputs = [str(chunk / "calib" / f"{r}.pt") for r in range(4)]
    first = RunStash(chunk, results, "fp")
    assert first.root == results / STASH_DIR / "designs" / "d" / "base" / "calib0-3"
    for out in outputs[:2]:
        Path(first.path(out)).parent.mkdir(parents=True, exist_ok=True)
        Path(first.path(out)).write_bytes(out.encode())
    retry = RunStash(chunk, results, "fp")
    assert [retry.finished([o]) for o in outputs] == [True, True, False, False]
    assert not retry.finished(outputs[1:3])  # a run is finished only with all its files
    assert not chunk.exists()  # nothing in the output folder before the job is done


def test_another_fingerprint_discards_the_stash(tmp_path):
    results, chunk = _chunk(tmp_path)
    out = str(chunk / "calib" / "0.pt")
    stash = RunStash(chunk, results, "fp")
    Path(stash.path(out)).parent.mkdir(parents=True)
    Path(stash.path(out)).write_bytes(b"old")
    assert not RunStash(chunk, results, "other").finished([out])
    assert not RunStash(chunk, results, "fp").finished([out])  # and the old run is gone for good


def test_commit_moves_every_file_into_the_output_folder_and_leaves_no_stash(tmp_path):
    results, chunk = _chunk(tmp_path)
    outputs = [str(chunk / "eval" / str(r) / name) for r in range(2) for name in ("scores.parquet", "metrics.parquet")]
    stash = RunStash(chunk, results, "fp")
    neighbour = RunStash(results / "designs" / "d" / "base" / "eval0-1", results, "fp")  # another chunk's stash stays
    for out in outputs:
        Path(stash.path(out)).parent.mkdir(parents=True, exist_ok=True)
        Path(stash.path(out)).write_text(out)
    stash.commit()
    assert [Path(o).read_text() for o in outputs] == outputs
    assert sorted(p.relative_to(chunk).as_posix() for p in chunk.rglob("*") if p.is_file()) == sorted(
        Path(o).relative_to(chunk).as_posix() for o in outputs)
    assert not stash.root.exists() and neighbour.root.exists()
    neighbour.commit()
    assert not (results / STASH_DIR).exists()  # the emptied folders go too


def test_paths_outside_the_chunk_or_the_results_are_refused(tmp_path):
    results, chunk = _chunk(tmp_path)
    with pytest.raises(ValueError, match="not inside results_dir"):
        RunStash(tmp_path / "elsewhere" / "calib0-3", results, "fp")
    with pytest.raises(ValueError, match="not inside the chunk folder"):
        RunStash(chunk, results, "fp").path(results / "designs" / "d" / "base" / "eval0-1" / "eval" / "0.pt")


def test_the_fingerprint_changes_with_the_parameters_the_device_and_the_inputs(tmp_path):
    data = tmp_path / "data.npz"
    data.write_bytes(b"12345")
    base = job_fingerprint({"job": {"lr": 0.1}, "seed": 1}, [data], "cpu")
    assert job_fingerprint({"seed": 1, "job": {"lr": 0.1}}, [data], "cpu") == base  # the same job
    assert job_fingerprint({"job": {"lr": 0.2}, "seed": 1}, [data], "cpu") != base
    assert job_fingerprint({"job": {"lr": 0.1}, "seed": 2}, [data], "cpu") != base
    assert job_fingerprint({"job": {"lr": 0.1}, "seed": 1}, [data], "cuda") != base
    st = data.stat()
    os.utime(data, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))  # an input written again
    assert job_fingerprint({"job": {"lr": 0.1}, "seed": 1}, [data], "cpu") != base


def test_a_one_file_output_has_its_stash_and_training_states_never_reach_the_output(tmp_path):
    """The retrained model A(D_r) is one file: its stash holds that file and the state of its
    training; commit moves the model to its path and drops any state left behind."""
    results = tmp_path / "results"
    out = results / "designs" / "d" / "base" / "retrain.pt"
    stash = chunk_stash(str(out), results, {}, [], "cpu")
    assert stash.path(out) == str(results / STASH_DIR / "designs" / "d" / "base" / "retrain.pt" / "retrain.pt")
    with pytest.raises(ValueError, match="not inside"):
        stash.path(out.parent / "other.pt")
    Path(stash.checkpoint_path(out)).parent.mkdir(parents=True)
    Path(stash.checkpoint_path(out)).write_bytes(b"state")
    assert not stash.finished([out])  # a saved state is not a finished run
    Path(stash.path(out)).write_bytes(b"model")
    stash.commit()
    assert out.read_bytes() == b"model" and sorted(p.name for p in out.parent.iterdir()) == ["retrain.pt"]
    assert not (results / STASH_DIR).exists()


def _job(results: Path, chunk: Path, runs: range, kill_in: int | None = None) -> None:
    """A chunk job that writes each run's file atomically into its stash, skipping finished runs; with
    ``kill_in`` its process dies in the middle of that run's write (the temporary file left behind)."""
    import subprocess
    import sys

    script = f"""
import os, sys
from pathlib import Path
from unlearn_audit.atomic import atomic_path
from unlearn_audit.pipeline.run_stash import RunStash
stash = RunStash({str(chunk)!r}, {str(results)!r}, "fp")
for r in {list(runs)!r}:
    out = {str(chunk)!r} + f"/eval/{{r}}/scores.parquet"
    if stash.finished([out]):
        continue
    with atomic_path(stash.path(out)) as tmp:
        tmp.write_bytes(b"run %d" % r)
        if r == {kill_in!r}:
            os._exit(9)   # killed mid-write: the temporary file stays
if {kill_in!r} is None:
    stash.commit()
"""
    subprocess.run([sys.executable, "-c", script], check=False)


def test_a_killed_write_leaves_nothing_in_the_finished_chunk_folder(tmp_path):
    """Killed in the middle of run 2's write and retried, the chunk folder equals an uninterrupted job's."""
    results, chunk = _chunk(tmp_path / "killed")
    _job(results, chunk, range(4), kill_in=2)
    stash = results / STASH_DIR / chunk.relative_to(results)
    assert any(p.name.endswith(".tmp") for p in stash.rglob("*"))  # the killed write's temporary file
    _job(results, chunk, range(4))
    clean_results, clean = _chunk(tmp_path / "clean")
    _job(clean_results, clean, range(4))

    def files(folder: Path) -> dict[str, bytes]:
        return {p.relative_to(folder).as_posix(): p.read_bytes() for p in folder.rglob("*") if p.is_file()}

    assert files(chunk) == files(clean) and len(files(clean)) == 4
    assert not (results / STASH_DIR).exists()
