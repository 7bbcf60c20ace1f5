"""Atomic output writing (docs/schemas.md#outputs: every output is written atomically); standard library only, so
that the modules a Snakemake start imports (the dataset registry among them) load no pandas.

A file is first written next to its destination under a temporary name and then moved
into place with ``os.replace``, so an interrupted job never leaves a truncated output
that a rerun would mistake for a finished one.  The temporary file is created owner-only
(``tempfile.mkstemp``); before the move it gets the permissions a normally created file would
have under the current umask (``0o666 & ~umask``).
"""

from __future__ import annotations

import os
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

__all__ = ["atomic_path", "default_file_mode", "write_text_atomic", "write_bytes_atomic"]


def _current_umask() -> int:
    """The process umask, read without changing it where the OS allows (Linux: /proc).

    Elsewhere it is read by setting and immediately restoring it (``os.umask`` has no getter).
    """
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    mask = os.umask(0o077)
    os.umask(mask)
    return mask


def default_file_mode() -> int:
    """Permission bits of a file created now with ``open(path, "w")``: ``0o666 & ~umask``."""
    return 0o666 & ~_current_umask()


#: The name of :func:`atomic_path`'s temporary file for a destination named ``name``: ``.<name>.<random>.tmp``.
TMP_PREFIX, TMP_SUFFIX = ".", ".tmp"


def is_unfinished_write(path: str | os.PathLike) -> bool:
    """Whether ``path`` is a temporary file :func:`atomic_path` leaves behind when its process is
    killed mid-write (never a finished output)."""
    name = Path(path).name
    return name.startswith(TMP_PREFIX) and name.endswith(TMP_SUFFIX) and name.count(".") >= 3


@contextmanager
def atomic_path(path: str | os.PathLike) -> Iterator[Path]:
    """Yield a temporary path in the destination's directory; move it to ``path`` on success.

    The moved file has mode ``0o666 & ~umask``, like any normally created file.
    """
    dest = Path(path)
    dest.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f"{TMP_PREFIX}{dest.name}.", suffix=TMP_SUFFIX, dir=dest.parent)
    os.close(fd)
    tmp_path = Path(tmp)
    try:
        yield tmp_path
        os.chmod(tmp_path, default_file_mode())
        os.replace(tmp_path, dest)
    finally:
        if tmp_path.exists():
            tmp_path.unlink()


def write_text_atomic(path: str | os.PathLike, text: str) -> None:
    """Write ``text`` to ``path`` atomically."""
    with atomic_path(path) as tmp:
        tmp.write_text(text)


def write_bytes_atomic(path: str | os.PathLike, data: bytes) -> None:
    """Write ``data`` to ``path`` atomically."""
    with atomic_path(path) as tmp:
        tmp.write_bytes(data)
