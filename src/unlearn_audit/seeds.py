"""One seed source: SeedSequence spawn keys from (design, phase, run, stream) (DESIGN §3, §9).

Calibration and evaluation runs must be independent (Section 5: "Calibration runs and
evaluation runs are drawn independently, which is required for the audit's lower bound to
be valid").  Every random stream of a run is a SeedSequence whose spawn key contains the
phase code, so calibration and evaluation streams can never coincide.
"""

from __future__ import annotations

import hashlib

import numpy as np

__all__ = ["PHASES", "STREAMS", "name_key", "seed_sequence", "generator", "torch_seed", "check_phase_separation"]

PHASES: dict[str, int] = {"calib": 1, "eval": 2}
STREAMS: dict[str, int] = {"signs": 1, "train": 2, "unlearn": 3, "noise": 4, "init": 5, "order": 6, "data": 7, "audit": 8}


def name_key(name: str) -> int:
    """A stable 64-bit integer for a name (design or experiment), independent of Python's hash seed."""
    return int.from_bytes(hashlib.sha256(name.encode()).digest()[:8], "little")


def seed_sequence(root: int, design: str, stream: str, phase: str | None = None, run: int | None = None) -> np.random.SeedSequence:
    """The SeedSequence of one random stream.

    ``phase``/``run`` are omitted for per-design streams (x0, π, data split); both are given
    for per-run streams (sign vector, unlearning randomness, noise).
    """
    if stream not in STREAMS:
        raise ValueError(f"unknown random stream {stream!r}; known: {sorted(STREAMS)}")
    key = [name_key(design), STREAMS[stream]]
    if phase is not None:
        if phase not in PHASES:
            raise ValueError(f"phase must be one of {sorted(PHASES)}, got {phase!r}")
        if run is None or run < 0:
            raise ValueError("a per-run stream needs a run index >= 0")
        key += [PHASES[phase], int(run)]
    return np.random.SeedSequence(entropy=int(root), spawn_key=tuple(key))


def generator(root: int, design: str, stream: str, phase: str | None = None, run: int | None = None) -> np.random.Generator:
    """numpy Generator of :func:`seed_sequence`."""
    return np.random.default_rng(seed_sequence(root, design, stream, phase, run))


def torch_seed(seq: np.random.SeedSequence) -> int:
    """A 63-bit integer seed for torch derived from a SeedSequence."""
    return int(seq.generate_state(2, dtype=np.uint32).astype(np.uint64) @ np.array([1, 2**31], dtype=np.uint64)) & (2**63 - 1)


def check_phase_separation(calib_seeds, eval_seeds) -> None:
    """Raise if any calibration seed is reused in the evaluation phase."""
    shared = set(map(int, calib_seeds)) & set(map(int, eval_seeds))
    if shared:
        raise ValueError(f"calibration and evaluation runs share seeds {sorted(shared)[:5]}; audits would be invalid")
