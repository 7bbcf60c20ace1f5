"""Session resources made once per test session, however many pytest-xdist workers ask for them.

The first worker to ask makes the resource in a folder that every worker of the session sees (the
parent of the workers' base temporary folders), holding an exclusive ``fcntl`` lock while it does;
a worker that asks meanwhile waits on the lock and then reads what was made.  A failed build
leaves its error beside the folder, so that the other workers fail with it rather than build again.
"""

from __future__ import annotations

import fcntl
import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest


def session_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The folder of this test session that all its workers share."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


def build_once(tmp_path_factory: pytest.TempPathFactory, name: str, build: Callable[[Path], None]) -> Path:
    """``<session root>/<name>``, made by ``build(folder)`` in the first worker that asks for it."""
    root = session_root(tmp_path_factory)
    folder, done, failed = root / name, root / f"{name}.done", root / f"{name}.failed"
    with open(root / f"{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if failed.exists():
            pytest.fail(f"{name} could not be made (in another worker): {failed.read_text()}")
        if not done.exists():
            shutil.rmtree(folder, ignore_errors=True)
            folder.mkdir(parents=True)
            try:
                build(folder)
            except BaseException as error:
                failed.write_text(str(error)[-5000:] or type(error).__name__)
                raise
            done.touch()
    return folder
