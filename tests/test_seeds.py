"""seeds.py: one spawn key per stream; audit runs and replications never share one."""

import numpy as np
import pytest

from unlearn_audit.seeds import PHASES, REPLICATION, seed_sequence


def _state(seq: np.random.SeedSequence) -> tuple:
    return tuple(seq.generate_state(4))


def test_every_run_phase_and_replication_has_its_own_stream():
    streams = [seed_sequence(7, "d", "data")]
    streams += [seed_sequence(7, "d", "data", phase, run) for phase in PHASES for run in range(5)]
    streams += [seed_sequence(7, "d", "data", replication=rep) for rep in range(5)]
    assert len({_state(s) for s in streams}) == len(streams) == 16
    assert len({s.spawn_key for s in streams}) == 16


def test_replication_key_is_its_own_code():
    assert REPLICATION not in PHASES.values()
    seq = seed_sequence(7, "d", "data", replication=3)
    assert seq.spawn_key[-2:] == (REPLICATION, 3) and seq.entropy == 7
    assert _state(seq) == _state(seed_sequence(7, "d", "data", replication=3))  # deterministic
    assert _state(seq) != _state(seed_sequence(7, "d", "data", "eval", 3))


def test_bad_keys_are_refused():
    with pytest.raises(ValueError, match="per audit run .* or per replication, not both"):
        seed_sequence(7, "d", "data", "eval", 0, replication=0)
    with pytest.raises(ValueError, match="replication index must be >= 0"):
        seed_sequence(7, "d", "data", replication=-1)
    with pytest.raises(ValueError, match="phase must be one of"):
        seed_sequence(7, "d", "data", "test", 0)
    with pytest.raises(ValueError, match="unknown random stream"):
        seed_sequence(7, "d", "weights")
