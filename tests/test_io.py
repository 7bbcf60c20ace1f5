"""Atomic writes: permissions of the moved file, byte-reproducible state dicts, progress lines."""

from __future__ import annotations

import io
import os
import stat

import pytest
import torch

from unlearn_audit.io import atomic_path, default_file_mode, write_bytes_atomic, write_text_atomic
from unlearn_audit.torch_utils import ProgressLog, save_state_dict


@pytest.fixture
def umask():
    """``os.umask`` for one test; the previous umask is restored afterwards."""
    previous = os.umask(0o022)
    try:
        yield os.umask
    finally:
        os.umask(previous)


def _mode(path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


@pytest.mark.parametrize(("mask", "expected"), [(0o022, 0o644), (0o077, 0o600), (0o002, 0o664)])
def test_atomic_outputs_get_umask_permissions(tmp_path, umask, mask, expected):
    umask(mask)
    assert default_file_mode() == expected
    write_text_atomic(tmp_path / "a.txt", "hello")
    write_bytes_atomic(tmp_path / "sub" / "b.bin", b"\x00\x01")
    with atomic_path(tmp_path / "c.csv") as tmp:
        tmp.write_text("x\n1\n")
    for name in ("a.txt", "sub/b.bin", "c.csv"):
        assert _mode(tmp_path / name) == expected, name
    # the same as a file created the ordinary way under this umask
    (tmp_path / "plain.txt").write_text("plain")
    assert _mode(tmp_path / "plain.txt") == expected


def test_atomic_path_leaves_no_temporary_file_on_error(tmp_path):
    with pytest.raises(RuntimeError):
        with atomic_path(tmp_path / "out.txt") as tmp:
            tmp.write_text("partial")
            raise RuntimeError("interrupted")
    assert list(tmp_path.iterdir()) == []


def test_reading_the_umask_does_not_change_it(umask):
    umask(0o027)
    default_file_mode()
    assert os.umask(0o027) == 0o027


def test_umask_fallback_without_proc(umask, monkeypatch):
    import unlearn_audit.io as io_module

    def no_proc(*args, **kwargs):
        raise OSError("no /proc here")

    monkeypatch.setattr(io_module, "open", no_proc, raising=False)
    umask(0o037)
    assert default_file_mode() == 0o640
    assert os.umask(0o037) == 0o037  # restored after reading


def test_save_state_dict_is_byte_identical_across_paths_and_loads_back(tmp_path):
    gen = torch.Generator().manual_seed(0)
    state = {"w": torch.randn(3, 4, generator=gen), "b": torch.arange(4, dtype=torch.int64), "s": torch.tensor(2.5)}
    first, second = tmp_path / "one" / "model.pt", tmp_path / "another_name.pt"
    save_state_dict(state, first)
    save_state_dict(state, second)
    assert first.read_bytes() == second.read_bytes()
    loaded = torch.load(second, map_location="cpu", weights_only=True)
    assert set(loaded) == set(state)
    for key, value in state.items():
        assert loaded[key].dtype == value.dtype
        assert torch.equal(loaded[key], value), key


class FakeClock:
    def __init__(self, times):
        self.times = list(times)

    def __call__(self) -> float:
        return self.times.pop(0)


def test_progress_log_lines_report_run_elapsed_and_remaining():
    out = io.StringIO()
    log = ProgressLog(25, "nn_train digits_uniform calib", stream=out, clock=FakeClock([0.0, 4.2, 8.3]))
    first = log.step(7)
    second = log.step(3)
    assert first == "nn_train digits_uniform calib: run 7 (1/25) done in 4.2 s, elapsed 4.2 s, about 101 s left"
    # 8.3 s for 2 runs -> 4.15 s per run, 23 runs left -> 95.45 s
    assert second == "nn_train digits_uniform calib: run 3 (2/25) done in 4.1 s, elapsed 8.3 s, about 95 s left"
    assert out.getvalue() == first + "\n" + second + "\n"


def test_progress_log_last_run_has_nothing_left_and_writes_to_current_stderr(monkeypatch):
    err = io.StringIO()
    monkeypatch.setattr("sys.stderr", err)  # like a workflow script redirecting stderr after import
    log = ProgressLog(2, "nn_unlearn exp eval", clock=FakeClock([10.0, 11.0, 13.5]))
    log.step(0)
    log.step(1)
    lines = err.getvalue().splitlines()
    assert lines == [
        "nn_unlearn exp eval: run 0 (1/2) done in 1.0 s, elapsed 1.0 s, about 1 s left",
        "nn_unlearn exp eval: run 1 (2/2) done in 2.5 s, elapsed 3.5 s, about 0 s left",
    ]


def test_progress_log_refuses_negative_total():
    with pytest.raises(ValueError):
        ProgressLog(-1, "x", stream=io.StringIO())
