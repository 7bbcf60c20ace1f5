"""Process-level settings for workflow jobs (thread pools sized to the job:
docs/workflow.md#many-models-per-job-threads-and-precision), their device, and the GPU slot a job
holds on a machine with several GPUs (:func:`gpu_slot`)."""

from __future__ import annotations

import errno
import os
import re
import socket
import sys
import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "GpuSlot",
    "local_cuda_problem",
    "gpu_lock_dir",
    "gpu_slot",
    "gpu_slot_count",
    "jobs_per_gpu",
    "local_gpu_jobs_problem",
    "job_gpu_slot",
    "limit_threads",
    "resolve_device",
    "visible_gpu_count",
]


def limit_threads(n: int) -> None:
    """Cap BLAS/OpenMP (numpy, scipy, torch) thread pools at ``n`` threads for this process.

    numpy and scipy ship separate OpenBLAS pools that otherwise oversubscribe the cores.
    """
    n = max(1, int(n))
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[var] = str(n)
    try:
        from threadpoolctl import threadpool_limits

        threadpool_limits(n)
    except ImportError:  # pragma: no cover - threadpoolctl ships with scikit-learn
        pass
    if "torch" in sys.modules:
        sys.modules["torch"].set_num_threads(n)


def resolve_device(name: str):
    """The ``torch.device`` of the config's ``device``: ``cpu``, ``cuda`` or ``auto`` (cuda when available).

    ``cuda`` without a visible GPU is refused with a message saying how to fix the config.  A CUDA
    device sets ``CUBLAS_WORKSPACE_CONFIG`` (``:4096:8``, unless set already) before the job's first
    cuBLAS call: without it cuBLAS's matrix products are not deterministic, and the deterministic
    kernels a design asks for (``deterministic: true``, the default) only warn.
    """
    import torch

    key = str(name).lower()
    if key not in ("auto", "cpu", "cuda"):
        raise ValueError(f"device must be 'cpu', 'cuda' or 'auto', got {name!r}")
    if key == "cuda" and not torch.cuda.is_available():
        raise RuntimeError("config device is 'cuda' but this job sees no CUDA GPU; set device: cpu or device: auto")
    if key == "cpu" or not torch.cuda.is_available():
        return torch.device("cpu")
    os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", CUBLAS_WORKSPACE)
    return torch.device("cuda")


#: cuBLAS's workspace setting for deterministic matrix products (PyTorch's reproducibility notes).
CUBLAS_WORKSPACE = ":4096:8"


# ----------------------------------------------------------------------------- GPU slots
GPU_SLOTS_ENV = "UNLEARN_AUDIT_GPUS"
GPU_LOCK_DIR_ENV = "UNLEARN_AUDIT_GPU_LOCK_DIR"
GPU_WAIT_ENV = "UNLEARN_AUDIT_GPU_WAIT"
JOBS_PER_GPU_ENV = "UNLEARN_AUDIT_JOBS_PER_GPU"
DEFAULT_GPU_WAIT_S = 86400.0  # a day: longer than any single job of config/paper.yaml


@dataclass(frozen=True)
class GpuSlot:
    """The slot a job holds: its ``index`` among the slots, the ``device`` written to
    ``CUDA_VISIBLE_DEVICES`` and the ``lock`` file whose exclusive lock it holds."""

    index: int
    n_slots: int
    device: str
    lock: Path


def _positive_int(value, what: str) -> int:
    text = str(value).strip()
    if isinstance(value, bool) or not re.fullmatch(r"\+?[0-9]+", text) or int(text) < 1:
        raise ValueError(f"{what} must be a positive integer, got {value!r}")
    return int(text)


def _inherited_devices() -> list[str] | None:
    """The entries of an inherited ``CUDA_VISIBLE_DEVICES`` (``None`` when unset or empty).

    CUDA ignores every entry from the first ``-1`` on, so does this."""
    value = os.environ.get("CUDA_VISIBLE_DEVICES")
    if value is None or not value.strip():
        return None
    devices = []
    for entry in (e.strip() for e in value.split(",")):
        if entry == "-1":
            break
        if entry:
            devices.append(entry)
    return devices


def visible_gpu_count() -> int:
    """Number of GPUs that ``nvidia-smi -L`` lists (0 when it is missing or fails)."""
    import subprocess

    try:
        proc = subprocess.run(["nvidia-smi", "-L"], check=False, capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return 0
    if proc.returncode != 0:
        return 0
    return sum(1 for line in proc.stdout.splitlines() if line.startswith("GPU "))


def gpu_slot_count(device: str) -> int:
    """How many GPU slots a job on the config's ``device`` shares with the other jobs (0: it uses none).

    ``cpu``: 0.  ``cuda`` and ``auto``: ``$UNLEARN_AUDIT_GPUS`` when set, else the number of
    entries of an inherited ``CUDA_VISIBLE_DEVICES``, else the number of GPUs ``nvidia-smi -L``
    lists; with none found, ``cuda`` takes 1 slot (device 0) and ``auto`` none (it runs on the CPU).
    An inherited ``CUDA_VISIBLE_DEVICES`` that hides every GPU (empty, or ``-1``) gives 0.
    Decided without initialising CUDA, so ``CUDA_VISIBLE_DEVICES`` can still be set afterwards.
    """
    key = str(device).lower()
    if key not in ("cpu", "cuda", "auto"):
        raise ValueError(f"device must be 'cpu', 'cuda' or 'auto', got {device!r}")
    if key == "cpu":
        return 0
    inherited = _inherited_devices()
    if inherited == [] or (inherited is None and os.environ.get("CUDA_VISIBLE_DEVICES") is not None):
        return 0  # CUDA_VISIBLE_DEVICES hides every GPU: resolve_device decides (cuda: one clear error)
    env = os.environ.get(GPU_SLOTS_ENV)
    if env is not None and env.strip():
        return _positive_int(env, GPU_SLOTS_ENV)
    if inherited is not None:
        return len(inherited)
    count = visible_gpu_count()
    return max(count, 1) if key == "cuda" else count


def jobs_per_gpu() -> int:
    """How many jobs share one GPU at once: ``$UNLEARN_AUDIT_JOBS_PER_GPU``, else 1.  A small model's
    step leaves most of a large GPU idle, so several jobs side by side keep it busy."""
    env = os.environ.get(JOBS_PER_GPU_ENV)
    return _positive_int(env, JOBS_PER_GPU_ENV) if env is not None and env.strip() else 1


def local_gpu_jobs_problem(requested, device: str) -> str | None:
    """Why a local run's ``--resources gpu=N`` cannot be honoured (None when it can): more GPU jobs at
    once than the machine's slots (devices × :func:`jobs_per_gpu`) would sit waiting for a slot while
    holding a job slot of Snakemake's."""
    if requested is None:
        return None
    slots = gpu_slot_count(device) * jobs_per_gpu()
    if slots and int(requested) > slots:
        return (f"--resources gpu={requested} lets {requested} GPU jobs run at once, but this machine has {slots} GPU slot(s) "
                f"({gpu_slot_count(device)} device(s) x {jobs_per_gpu()} job(s) per GPU, {JOBS_PER_GPU_ENV}); "
                f"give --resources gpu={slots} or set {JOBS_PER_GPU_ENV}")
    return None


def local_cuda_problem(device: str) -> str | None:
    """Why a local run on ``device: cuda`` would fail in its first neural-network job (None when it
    would not): this machine shows no NVIDIA GPU (``nvidia-smi -L`` lists none) and neither
    ``$UNLEARN_AUDIT_GPUS`` nor ``CUDA_VISIBLE_DEVICES`` names one."""
    if str(device).lower() != "cuda" or os.environ.get(GPU_SLOTS_ENV, "").strip() or _inherited_devices():
        return None
    if visible_gpu_count():
        return None
    return ("device is cuda, but this machine shows no NVIDIA GPU (nvidia-smi lists none): set device: cpu or auto "
            "(e.g. --config device=auto), or send the jobs to GPU nodes (--profile profiles/slurm)")


def _lock_name(device: str, share: int = 0) -> str:
    """The lock file of a device's ``share``-th slot (the first keeps the one-job-per-GPU name)."""
    return "gpu" + re.sub(r"[^A-Za-z0-9_.-]", "_", device) + (f".{share}" if share else "") + ".lock"


def _holder(path: Path) -> str:
    try:
        return path.read_text().strip() or "?"
    except OSError:
        return "?"


@contextmanager
def gpu_slot(n_slots: int, lock_dir, *, timeout: float | None = None, poll: float = 0.5, log=None, per_device: int = 1):
    """Hold one of ``n_slots`` GPU slots for the duration of the ``with`` block; with
    ``per_device`` > 1, each of the ``n_slots`` devices has that many slots (jobs side by side on one
    GPU), filled one per device first.

    Each slot is a file ``gpu<device>.lock`` in ``lock_dir`` (created if missing) and is taken
    with an exclusive, non-blocking ``fcntl.flock``; the first free slot is taken and its device
    is written to ``CUDA_VISIBLE_DEVICES``, so enter before anything initialises CUDA (torch reads
    the variable once, at its first CUDA call).  Slot ``i`` is device ``i``, or the ``i``-th entry
    of an inherited ``CUDA_VISIBLE_DEVICES`` (of which there must be at least ``n_slots``), so jobs
    that inherit different devices never wait for each other.  When every slot is taken it polls
    every ``poll`` seconds for ``timeout`` seconds (default ``$UNLEARN_AUDIT_GPU_WAIT``, else a
    day), saying so once on ``log`` (a text stream), and then raises :class:`TimeoutError`.  On
    exit, error or not, the lock is released and ``CUDA_VISIBLE_DEVICES`` restored; the operating
    system releases the lock of a process that dies, so a crashed job never keeps its slot.
    Yields the :class:`GpuSlot`.
    """
    import fcntl

    n_slots = _positive_int(n_slots, "the number of GPU slots")
    per_device = _positive_int(per_device, "the number of jobs per GPU")
    if timeout is None:
        env = os.environ.get(GPU_WAIT_ENV)
        try:
            timeout = float(env) if env is not None and env.strip() else DEFAULT_GPU_WAIT_S
        except ValueError:
            raise ValueError(f"{GPU_WAIT_ENV} must be a number of seconds >= 0, got {env!r}") from None
    if not timeout >= 0:
        raise ValueError(f"the GPU slot timeout must be a number of seconds >= 0, got {timeout!r}")
    if not poll > 0:
        raise ValueError(f"the GPU slot poll interval must be > 0 seconds, got {poll!r}")
    inherited = _inherited_devices()
    if inherited is not None and n_slots > len(inherited):
        raise ValueError(
            f"{n_slots} GPU slots but CUDA_VISIBLE_DEVICES={os.environ['CUDA_VISIBLE_DEVICES']!r} lists "
            f"{len(inherited)} device(s); set {GPU_SLOTS_ENV} to at most {len(inherited)}"
        )
    devices = inherited[:n_slots] if inherited is not None else [str(i) for i in range(n_slots)]
    slots = [(device, share) for share in range(per_device) for device in devices]
    torch = sys.modules.get("torch")
    if torch is not None and torch.cuda.is_initialized():
        raise RuntimeError("CUDA is already initialised in this process: take the GPU slot before the first CUDA call")

    lock_dir = Path(lock_dir)
    lock_dir.mkdir(parents=True, exist_ok=True)
    deadline = time.monotonic() + timeout
    taken, waiting = None, False
    while taken is None:
        for index, (device, share) in enumerate(slots):
            path = lock_dir / _lock_name(device, share)
            fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o666)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError as error:
                os.close(fd)
                if error.errno in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                    continue
                raise
            taken = GpuSlot(index, len(slots), device, path)
            break
        if taken is None:
            if time.monotonic() >= deadline:
                holders = "; ".join(f"{d}: {_holder(lock_dir / _lock_name(d, share))}" for d, share in slots)
                raise TimeoutError(
                    f"all {len(slots)} GPU slots in {lock_dir} stayed taken for {timeout:g} s ({holders}); "
                    f"run at most {len(slots)} GPU jobs at once (snakemake --resources gpu={len(slots)}), wait for the "
                    f"other run to finish, or set {GPU_WAIT_ENV} (seconds), {GPU_SLOTS_ENV} or {JOBS_PER_GPU_ENV}"
                )
            if not waiting and log is not None:
                print(f"all {len(slots)} GPU slots in {lock_dir} are taken; waiting up to {timeout:g} s", file=log, flush=True)
            waiting = True
            time.sleep(max(0.0, min(poll, deadline - time.monotonic())))

    previous = os.environ.get("CUDA_VISIBLE_DEVICES")
    try:
        os.ftruncate(fd, 0)  # who holds the slot, for the timeout message of the others
        os.write(fd, f"pid {os.getpid()} on {socket.gethostname()}\n".encode())
        os.environ["CUDA_VISIBLE_DEVICES"] = taken.device
        yield taken
    finally:
        if previous is None:
            os.environ.pop("CUDA_VISIBLE_DEVICES", None)
        else:
            os.environ["CUDA_VISIBLE_DEVICES"] = previous
        try:
            fcntl.flock(fd, fcntl.LOCK_UN)
        finally:
            os.close(fd)


def gpu_lock_dir(results_dir) -> Path:
    """Where the GPU slot locks of this machine live: ``$UNLEARN_AUDIT_GPU_LOCK_DIR`` (to share
    slots between runs with different ``results_dir``), else ``<results_dir>/.gpu_slots``; one
    subfolder per host, so jobs on different machines of a shared filesystem never wait for each other."""
    env = os.environ.get(GPU_LOCK_DIR_ENV)
    base = Path(env) if env is not None and env.strip() else Path(results_dir) / ".gpu_slots"
    return base / socket.gethostname()


@contextmanager
def job_gpu_slot(device: str, results_dir, *, log=None):
    """The GPU slot of a workflow job on the config's ``device`` (see :func:`gpu_slot_count`; each
    device holds :func:`jobs_per_gpu` jobs at once):
    yields the held :class:`GpuSlot`, or ``None`` without locking anything when the job uses no GPU.
    ``log`` (a text stream) gets one line naming the slot taken (and one if it has to wait)."""
    n_slots = gpu_slot_count(device)
    if n_slots == 0:
        yield None
        return
    lock_dir = gpu_lock_dir(results_dir)
    with gpu_slot(n_slots, lock_dir, log=log, per_device=jobs_per_gpu()) as slot:
        if log is not None:
            print(f"GPU slot {slot.index + 1} of {slot.n_slots} ({slot.lock}): CUDA_VISIBLE_DEVICES={slot.device}", file=log, flush=True)
        yield slot
