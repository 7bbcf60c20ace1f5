"""Atomic output writing and Parquet I/O (DESIGN §4: every output is written atomically).

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

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

__all__ = ["atomic_path", "default_file_mode", "write_text_atomic", "write_bytes_atomic", "write_csv", "write_parquet", "read_parquet", "read_concat", "empty_frame"]


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


@contextmanager
def atomic_path(path: str | os.PathLike) -> Iterator[Path]:
    """Yield a temporary path in the destination's directory; move it to ``path`` on success.

    The moved file has mode ``0o666 & ~umask``, like any normally created file.
    """
    dest = Path(path)
    dest.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{dest.name}.", suffix=".tmp", dir=dest.parent)
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


def write_csv(df: pd.DataFrame, path: str | os.PathLike) -> None:
    """Write ``df`` as CSV (no index) atomically."""
    with atomic_path(path) as tmp:
        df.to_csv(tmp, index=False)


def write_parquet(df: pd.DataFrame, path: str | os.PathLike, schema: pa.Schema | None = None) -> None:
    """Write ``df`` as Parquet atomically, cast to ``schema`` (column order and types) if given."""
    if schema is not None:
        missing = [n for n in schema.names if n not in df.columns]
        if missing:
            raise ValueError(f"cannot write {path}: missing columns {missing} required by its schema")
        table = pa.Table.from_pandas(df[schema.names], schema=schema, preserve_index=False)
    else:
        table = pa.Table.from_pandas(df, preserve_index=False)
    with atomic_path(path) as tmp:
        pq.write_table(table, tmp)


def read_parquet(path: str | os.PathLike, schema: pa.Schema | None = None) -> pd.DataFrame:
    """Read a Parquet file; if ``schema`` is given, check that its columns are present."""
    df = pd.read_parquet(path)
    if schema is not None:
        missing = [n for n in schema.names if n not in df.columns]
        if missing:
            raise ValueError(f"{path}: missing columns {missing}; was it written by another version?")
    return df


def empty_frame(schema: pa.Schema) -> pd.DataFrame:
    """A frame with no rows and the columns (and dtypes) of ``schema``."""
    return schema.empty_table().to_pandas()


def read_concat(paths, schema: pa.Schema | None = None) -> pd.DataFrame:
    """Read several Parquet files (checked against ``schema`` if given) into one frame; no paths
    give :func:`empty_frame` of ``schema`` (an empty frame without columns if none is given)."""
    frames = [read_parquet(p, schema) for p in paths]
    if frames:
        return pd.concat(frames, ignore_index=True)
    return empty_frame(schema) if schema is not None else pd.DataFrame()
