"""GPU slots (unlearn_audit.pipeline.runtime.gpu_slot) with fake slots on the CPU: real processes
compete for real fcntl locks; no CUDA is touched (CUDA_VISIBLE_DEVICES is only an environment
variable to these processes)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from unlearn_audit.pipeline.runtime import (
    GPU_LOCK_DIR_ENV,
    GPU_SLOTS_ENV,
    GPU_WAIT_ENV,
    gpu_lock_dir,
    gpu_slot,
    gpu_slot_count,
    job_gpu_slot,
)

# One competing job: take a slot, record what it saw, hold the slot until told to release it.
HOLDER = r"""
import json, os, sys, time
from pathlib import Path
from unlearn_audit.pipeline.runtime import gpu_slot

name, n_slots, lock_dir, work, timeout = sys.argv[1], int(sys.argv[2]), sys.argv[3], Path(sys.argv[4]), float(sys.argv[5])
(work / f"{name}.started").write_text(str(time.time()))
try:
    with gpu_slot(n_slots, lock_dir, timeout=timeout, poll=0.05) as slot:
        record = {"device": os.environ["CUDA_VISIBLE_DEVICES"], "slot": slot.index, "acquired": time.time()}
        (work / f"{name}.acquired.tmp").write_text(json.dumps(record))
        os.replace(work / f"{name}.acquired.tmp", work / f"{name}.acquired")
        while not (work / f"{name}.release").exists() and not (work / "all.release").exists():
            time.sleep(0.02)
        released = time.time()
    after = os.environ.get("CUDA_VISIBLE_DEVICES")
    (work / f"{name}.done").write_text(json.dumps({"released": released, "after": after}))
except TimeoutError as error:
    (work / f"{name}.timeout").write_text(str(error))
    sys.exit(3)
"""


def _env() -> dict:
    env = dict(os.environ)
    for key in ("CUDA_VISIBLE_DEVICES", GPU_SLOTS_ENV, GPU_WAIT_ENV, GPU_LOCK_DIR_ENV):
        env.pop(key, None)
    return env


def _start(name: str, n_slots: int, lock_dir: Path, work: Path, timeout: float = 60.0) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-c", HOLDER, name, str(n_slots), str(lock_dir), str(work), str(timeout)],
        env=_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )


def _wait_for(predicate, timeout: float = 60.0, what: str = "condition"):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


def _acquired(work: Path, names) -> dict[str, dict]:
    return {n: json.loads((work / f"{n}.acquired").read_text()) for n in names if (work / f"{n}.acquired").exists()}


def _all_acquired(work: Path, names):
    got = _acquired(work, names)
    return got if len(got) == len(names) else None


@pytest.fixture
def procs():
    started: list[subprocess.Popen] = []
    yield started
    for proc in started:
        if proc.poll() is None:
            proc.kill()
        proc.wait(timeout=30)


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch):
    for key in ("CUDA_VISIBLE_DEVICES", GPU_SLOTS_ENV, GPU_WAIT_ENV, GPU_LOCK_DIR_ENV):
        monkeypatch.delenv(key, raising=False)


@pytest.mark.parametrize("n_slots", [1, 3])
def test_n_processes_on_n_slots_each_get_a_distinct_device(tmp_path, procs, n_slots):
    locks, work = tmp_path / "locks", tmp_path / "work"
    work.mkdir()
    names = [f"job{i}" for i in range(n_slots)]
    procs.extend(_start(n, n_slots, locks, work) for n in names)
    got = _wait_for(lambda: _all_acquired(work, names), what="every job to take a slot")
    # all hold their slot at the same time (none has been told to release yet)
    assert sorted(r["device"] for r in got.values()) == [str(i) for i in range(n_slots)]
    assert sorted(r["slot"] for r in got.values()) == list(range(n_slots))
    (work / "all.release").touch()
    for proc in procs:
        assert proc.wait(timeout=60) == 0, proc.stderr.read()
    for n in names:  # the variable is restored on exit (it was unset before)
        assert json.loads((work / f"{n}.done").read_text())["after"] is None
    assert sorted(p.name for p in locks.iterdir()) == [f"gpu{i}.lock" for i in range(n_slots)]


def test_one_process_more_than_slots_waits_until_a_slot_frees(tmp_path, procs):
    locks, work = tmp_path / "locks", tmp_path / "work"
    work.mkdir()
    first = ["job0", "job1"]
    procs.extend(_start(n, 2, locks, work) for n in first)
    held = _wait_for(lambda: _all_acquired(work, first), what="two jobs to take both slots")
    procs.append(_start("job2", 2, locks, work))
    _wait_for(lambda: (work / "job2.started").exists(), what="the third job to start")
    time.sleep(0.5)  # it polls every 0.05 s (ten times), but both slots stay taken
    assert not (work / "job2.acquired").exists()
    assert procs[2].poll() is None

    (work / "job1.release").touch()
    assert procs[1].wait(timeout=60) == 0, procs[1].stderr.read()
    waiter = _wait_for(lambda: _acquired(work, ["job2"]).get("job2"), what="the third job to take the freed slot")
    released = json.loads((work / "job1.done").read_text())["released"]
    assert waiter["device"] == held["job1"]["device"]  # the freed slot, not job0's
    assert waiter["acquired"] >= released
    assert not (work / "job0.done").exists()  # job0 still holds the other slot
    (work / "all.release").touch()
    for proc in (procs[0], procs[2]):
        assert proc.wait(timeout=60) == 0, proc.stderr.read()


def test_a_crashed_holder_frees_its_slot(tmp_path, procs):
    locks, work = tmp_path / "locks", tmp_path / "work"
    work.mkdir()
    procs.append(_start("holder", 1, locks, work))
    _wait_for(lambda: _acquired(work, ["holder"]), what="the holder to take the slot")
    procs.append(_start("next", 1, locks, work))
    _wait_for(lambda: (work / "next.started").exists(), what="the second job to start")
    time.sleep(0.5)  # ten polls
    assert not (work / "next.acquired").exists()

    os.kill(procs[0].pid, signal.SIGKILL)  # dies inside the with block, without releasing anything
    assert procs[0].wait(timeout=30) == -signal.SIGKILL
    got = _wait_for(lambda: _acquired(work, ["next"]).get("next"), what="the slot of the killed holder")
    assert got["device"] == "0"
    (work / "all.release").touch()
    assert procs[1].wait(timeout=60) == 0, procs[1].stderr.read()


def test_timeout_when_every_slot_stays_taken(tmp_path, procs, monkeypatch):
    locks, work = tmp_path / "locks", tmp_path / "work"
    work.mkdir()
    procs.append(_start("holder", 1, locks, work))
    _wait_for(lambda: _acquired(work, ["holder"]), what="the holder to take the slot")
    procs.append(_start("late", 1, locks, work, timeout=0.5))
    assert procs[1].wait(timeout=60) == 3, procs[1].stderr.read()
    message = (work / "late.timeout").read_text()
    assert message.startswith(f"all 1 GPU slots in {locks} stayed taken for 0.5 s")
    assert f"pid {procs[0].pid} on" in message  # names the holder
    assert "--resources gpu=1" in message and GPU_WAIT_ENV in message

    # the same from this process, with the timeout from the environment; the wait is logged once
    import io

    monkeypatch.setenv(GPU_WAIT_ENV, "0.2")
    log = io.StringIO()
    start = time.monotonic()
    with pytest.raises(TimeoutError, match=r"all 1 GPU slots .* stayed taken for 0\.2 s"), gpu_slot(1, locks, poll=0.05, log=log):
        pass
    assert 0.2 <= time.monotonic() - start < 10
    assert log.getvalue() == f"all 1 GPU slots in {locks} are taken; waiting up to 0.2 s\n"
    (work / "all.release").touch()
    assert procs[0].wait(timeout=60) == 0


def test_slot_is_released_and_env_restored_on_error(tmp_path, monkeypatch):
    import fcntl

    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "4,7")
    with pytest.raises(KeyError), gpu_slot(2, tmp_path, timeout=0) as slot:
        assert os.environ["CUDA_VISIBLE_DEVICES"] == "4" and slot.device == "4" and slot.index == 0
        assert slot.lock == tmp_path / "gpu4.lock"
        raise KeyError("job failed")
    assert os.environ["CUDA_VISIBLE_DEVICES"] == "4,7"
    with gpu_slot(2, tmp_path, timeout=0) as again:  # released: the first slot is free again
        assert again.device == "4"
    # another holder of device 4 (an open file of its own): the next free slot is the second device
    with open(tmp_path / "gpu4.lock", "a") as other:
        fcntl.flock(other, fcntl.LOCK_EX | fcntl.LOCK_NB)
        with gpu_slot(2, tmp_path, timeout=0) as slot:
            assert os.environ["CUDA_VISIBLE_DEVICES"] == "7" and slot.index == 1 and slot.lock.name == "gpu7.lock"


def test_bad_input_is_one_clear_error(tmp_path, monkeypatch):
    for bad in (0, -1, "two", 1.5, True):
        with pytest.raises(ValueError, match="number of GPU slots must be a positive integer"), gpu_slot(bad, tmp_path):
            pass
    with pytest.raises(ValueError, match="timeout must be a number of seconds >= 0"), gpu_slot(1, tmp_path, timeout=-1):
        pass
    monkeypatch.setenv(GPU_WAIT_ENV, "soon")
    with pytest.raises(ValueError, match=f"{GPU_WAIT_ENV} must be a number of seconds"), gpu_slot(1, tmp_path):
        pass
    monkeypatch.delenv(GPU_WAIT_ENV)
    monkeypatch.setenv(GPU_SLOTS_ENV, "many")
    with pytest.raises(ValueError, match=f"{GPU_SLOTS_ENV} must be a positive integer, got 'many'"):
        gpu_slot_count("cuda")
    monkeypatch.setenv(GPU_SLOTS_ENV, "3")
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "0,1")
    with pytest.raises(ValueError, match="3 GPU slots but CUDA_VISIBLE_DEVICES='0,1' lists 2 device"), gpu_slot(3, tmp_path):
        pass
    with pytest.raises(ValueError, match="device must be"):
        gpu_slot_count("tpu")


def _fake_nvidia_smi(tmp_path: Path, n_gpus: int) -> str:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    lines = "".join(f"echo 'GPU {i}: NVIDIA Fake (UUID: GPU-{i:08d})'\n" for i in range(n_gpus))
    script = bin_dir / "nvidia-smi"
    script.write_text(f"#!/bin/sh\n[ \"$1\" = -L ] || exit 9\n{lines}")
    script.chmod(0o755)
    return str(bin_dir)


def test_slot_count_from_device_env_and_nvidia_smi(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", _fake_nvidia_smi(tmp_path, 3) + os.pathsep + os.environ["PATH"])
    assert gpu_slot_count("cpu") == 0
    assert gpu_slot_count("cuda") == 3  # every GPU nvidia-smi -L lists
    assert gpu_slot_count("auto") == 3
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "2,5")
    assert gpu_slot_count("cuda") == 2  # the inherited devices
    monkeypatch.setenv(GPU_SLOTS_ENV, "1")
    assert gpu_slot_count("cuda") == 1  # the variable wins
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "")
    assert gpu_slot_count("cuda") == 0 and gpu_slot_count("auto") == 0  # every GPU hidden
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES")
    monkeypatch.delenv(GPU_SLOTS_ENV)
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))  # no nvidia-smi
    assert gpu_slot_count("cuda") == 1
    assert gpu_slot_count("auto") == 0


def test_job_gpu_slot_locks_only_for_gpu_jobs(tmp_path, monkeypatch):
    import io
    import socket

    monkeypatch.setenv("PATH", str(tmp_path / "empty"))  # no nvidia-smi: cuda gets one slot
    with job_gpu_slot("cpu", tmp_path / "results") as slot:
        assert slot is None and "CUDA_VISIBLE_DEVICES" not in os.environ
    assert not (tmp_path / "results").exists()
    log = io.StringIO()
    with job_gpu_slot("cuda", tmp_path / "results", log=log) as slot:
        assert os.environ["CUDA_VISIBLE_DEVICES"] == "0"
        assert slot.lock == tmp_path / "results" / ".gpu_slots" / socket.gethostname() / "gpu0.lock"
    assert "GPU slot 1 of 1" in log.getvalue() and "CUDA_VISIBLE_DEVICES=0" in log.getvalue()
    monkeypatch.setenv(GPU_LOCK_DIR_ENV, str(tmp_path / "shared"))
    assert gpu_lock_dir(tmp_path / "results") == tmp_path / "shared" / socket.gethostname()


def test_several_jobs_share_a_gpu_with_jobs_per_gpu(tmp_path):
    """UNLEARN_AUDIT_JOBS_PER_GPU = 2: two jobs hold the one device at once, a third waits; with two
    devices the slots fill one per device first."""
    with gpu_slot(1, tmp_path, timeout=0, per_device=2) as a, gpu_slot(1, tmp_path, timeout=0, per_device=2) as b:
        assert a.device == b.device == "0" and a.lock != b.lock and {a.index, b.index} == {0, 1}
        assert a.n_slots == b.n_slots == 2
        with pytest.raises(TimeoutError, match=r"all 2 GPU slots .*UNLEARN_AUDIT_JOBS_PER_GPU"), gpu_slot(1, tmp_path, timeout=0, per_device=2):
            pass
    # two devices (each holder here is in this one process: the variable a slot sets is dropped before
    # the next is taken, as a separate job process would not see it)
    two = tmp_path / "two"
    with gpu_slot(2, two, timeout=0, per_device=2) as a:
        os.environ.pop("CUDA_VISIBLE_DEVICES")
        with gpu_slot(2, two, timeout=0, per_device=2) as b:
            os.environ.pop("CUDA_VISIBLE_DEVICES")
            with gpu_slot(2, two, timeout=0, per_device=2) as c:
                assert (a.device, b.device, c.device) == ("0", "1", "0") and c.lock != a.lock
    with pytest.raises(ValueError, match="number of jobs per GPU must be a positive integer"), gpu_slot(1, tmp_path, per_device=0):
        pass


def test_job_slots_follow_jobs_per_gpu_and_a_local_run_may_not_ask_for_more(tmp_path, monkeypatch):
    from unlearn_audit.pipeline.runtime import JOBS_PER_GPU_ENV, jobs_per_gpu, local_gpu_jobs_problem

    monkeypatch.setenv(GPU_SLOTS_ENV, "1")
    assert jobs_per_gpu() == 1
    monkeypatch.setenv(JOBS_PER_GPU_ENV, "3")
    assert jobs_per_gpu() == 3
    with job_gpu_slot("cuda", tmp_path) as a, job_gpu_slot("cuda", tmp_path) as b, job_gpu_slot("cuda", tmp_path) as c:
        assert {a.device, b.device, c.device} == {"0"} and len({a.lock, b.lock, c.lock}) == 3
    assert local_gpu_jobs_problem(3, "cuda") is None and local_gpu_jobs_problem(None, "cuda") is None
    problem = local_gpu_jobs_problem(4, "cuda")
    assert "--resources gpu=4" in problem and "3 GPU slot(s)" in problem and "give --resources gpu=3" in problem
    assert local_gpu_jobs_problem(4, "cpu") is None  # a CPU run holds no GPU slot
    monkeypatch.setenv(JOBS_PER_GPU_ENV, "two")
    with pytest.raises(ValueError, match=f"{JOBS_PER_GPU_ENV} must be a positive integer, got 'two'"):
        jobs_per_gpu()


def test_a_local_cuda_run_on_a_machine_without_a_gpu_is_refused_with_the_fix(monkeypatch, tmp_path):
    """device: cuda where nvidia-smi lists no GPU (a PATH without it here) and nothing names one:
    one line with the fix; a named GPU, or another device, passes."""
    from unlearn_audit.pipeline import runtime

    monkeypatch.setenv("PATH", str(tmp_path))  # no nvidia-smi
    monkeypatch.delenv(GPU_SLOTS_ENV, raising=False)
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    problem = runtime.local_cuda_problem("cuda")
    assert problem and "no NVIDIA GPU" in problem and "device: cpu or auto" in problem
    assert runtime.local_cuda_problem("cpu") is None and runtime.local_cuda_problem("auto") is None
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "0")
    assert runtime.local_cuda_problem("cuda") is None
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES")
    fake = tmp_path / "nvidia-smi"
    fake.write_text("#!/bin/sh\necho 'GPU 0: NVIDIA H100 (UUID: GPU-x)'\n")
    fake.chmod(0o755)
    assert runtime.local_cuda_problem("cuda") is None
