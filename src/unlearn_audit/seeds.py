"""One seed source: SeedSequence spawn keys from (design, phase, run, stream) (docs/workflow.md#the-dag-step-by-step).

Calibration and evaluation runs must be independent (Section 5: "Calibration runs and
evaluation runs are drawn independently, which is required for the audit's lower bound to
be valid").  Every random stream of a run is a SeedSequence whose spawn key contains the
phase code, so calibration and evaluation streams can never coincide.
"""

from __future__ import annotations

import hashlib
from typing import Union

import numpy as np

#: What the library accepts wherever randomness is needed: a Generator, a SeedSequence or an int seed.
SeedLike = Union[np.random.Generator, np.random.SeedSequence, int]

__all__ = [
    "PHASES",
    "REPLICATION",
    "STREAMS",
    "SeedLike",
    "name_key",
    "seed_sequence",
    "generator",
    "as_seed_sequence",
    "as_generator",
    "spawn_generators",
    "named_generator",
    "child_generator",
    "torch_seed",
    "torch_seed_of",
    "check_phase_separation",
]

PHASES: dict[str, int] = {"calib": 1, "eval": 2}
#: The spawn-key code of a replication index (:func:`seed_sequence`), distinct from every phase code.
REPLICATION = 3
STREAMS: dict[str, int] = {"signs": 1, "train": 2, "unlearn": 3, "noise": 4, "init": 5, "order": 6, "data": 7, "audit": 8}


def name_key(name: str) -> int:
    """A stable 64-bit integer for a name (design or experiment), independent of Python's hash seed."""
    return int.from_bytes(hashlib.sha256(name.encode()).digest()[:8], "little")


def seed_sequence(root: int, design: str, stream: str, phase: str | None = None, run: int | None = None, *,
                  replication: int | None = None) -> np.random.SeedSequence:
    """The SeedSequence of one random stream.

    ``phase``/``run`` are omitted for per-design streams (x0, π, data split); both are given
    for per-run streams of an audit (sign vector, unlearning randomness, noise).  ``replication``
    keys the independent replications of an experiment that has no calibration and evaluation
    phases (the Gaussian-unlearning figures), under a code of its own (:data:`REPLICATION`), so a
    replication never shares a stream with an audit run.
    """
    if stream not in STREAMS:
        raise ValueError(f"unknown random stream {stream!r}; known: {sorted(STREAMS)}")
    key = [name_key(design), STREAMS[stream]]
    if phase is not None and replication is not None:
        raise ValueError("a stream is per audit run (phase, run) or per replication, not both")
    if phase is not None:
        if phase not in PHASES:
            raise ValueError(f"phase must be one of {sorted(PHASES)}, got {phase!r}")
        if run is None or run < 0:
            raise ValueError("a per-run stream needs a run index >= 0")
        key += [PHASES[phase], int(run)]
    if replication is not None:
        if int(replication) < 0:
            raise ValueError(f"a replication index must be >= 0, got {replication}")
        key += [REPLICATION, int(replication)]
    return np.random.SeedSequence(entropy=int(root), spawn_key=tuple(key))


def generator(root: int, design: str, stream: str, phase: str | None = None, run: int | None = None) -> np.random.Generator:
    """numpy Generator of :func:`seed_sequence`."""
    return np.random.default_rng(seed_sequence(root, design, stream, phase, run))


def named_generator(seed: int, *names: str) -> np.random.Generator:
    """A numpy Generator of ``SeedSequence(seed, spawn_key=(name_key(n) for n in names))``: one stream per
    tuple of names (the dataset splits: ``(dataset, "holdout")``, ``(dataset, "forget", split)``, ...)."""
    return np.random.default_rng(np.random.SeedSequence(entropy=int(seed), spawn_key=tuple(name_key(k) for k in names)))


def child_generator(root: np.random.SeedSequence, *key: int) -> np.random.Generator:
    """A numpy Generator of the SeedSequence ``root`` extended by the integer ``key`` (a sub-stream of
    ``root``, e.g. one replication's data, test points and removal sets)."""
    return np.random.default_rng(np.random.SeedSequence(root.entropy, spawn_key=tuple(root.spawn_key) + tuple(key)))


def as_seed_sequence(seed: SeedLike) -> np.random.SeedSequence:
    """A SeedSequence from a SeedSequence (returned as is) or an int seed; the one coercion of the library."""
    if isinstance(seed, np.random.SeedSequence):
        return seed
    if isinstance(seed, (int, np.integer)) and not isinstance(seed, bool):
        return np.random.SeedSequence(int(seed))
    raise ValueError(f"seed must be a numpy SeedSequence or an int, got {type(seed).__name__}")


def as_generator(seed: SeedLike) -> np.random.Generator:
    """A numpy Generator from a Generator (returned as is), a SeedSequence or an int seed."""
    if isinstance(seed, np.random.Generator):
        return seed
    return np.random.default_rng(as_seed_sequence(seed))


def spawn_generators(seed: SeedLike, n: int) -> list[np.random.Generator]:
    """``n`` independent child generators (SeedSequence spawning) of a Generator, SeedSequence or int."""
    if isinstance(seed, np.random.Generator):
        return list(seed.spawn(n))
    if isinstance(seed, (np.random.SeedSequence, int, np.integer)) and not isinstance(seed, bool):
        return [np.random.default_rng(s) for s in as_seed_sequence(seed).spawn(n)]
    raise ValueError(f"rng must be a numpy Generator, a SeedSequence or an int seed, got {type(seed).__name__}")


def torch_seed(seq: np.random.SeedSequence) -> int:
    """A 63-bit integer seed for torch derived from a SeedSequence."""
    return int(seq.generate_state(2, dtype=np.uint32).astype(np.uint64) @ np.array([1, 2**31], dtype=np.uint64)) & (2**63 - 1)


def torch_seed_of(seed: SeedLike) -> int:
    """The 63-bit torch seed of a SeedSequence (:func:`torch_seed`), a numpy Generator (one draw) or an int."""
    if isinstance(seed, np.random.SeedSequence):
        return torch_seed(seed)
    if isinstance(seed, np.random.Generator):
        return int(seed.integers(0, 2**63 - 1))
    if isinstance(seed, (int, np.integer)) and not isinstance(seed, bool):
        return int(seed)
    raise ValueError(f"seed must be a SeedSequence, a numpy Generator or an int, got {type(seed).__name__}")


def check_phase_separation(calib_seeds, eval_seeds) -> None:
    """Raise if any calibration seed is reused in the evaluation phase."""
    shared = set(map(int, calib_seeds)) & set(map(int, eval_seeds))
    if shared:
        raise ValueError(f"calibration and evaluation runs share seeds {sorted(shared)[:5]}; audits would be invalid")
