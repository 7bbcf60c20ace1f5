"""Parquet and CSV I/O, every output written atomically (docs/schemas.md#outputs) through :mod:`.atomic`, whose
names this module re-exports."""

from __future__ import annotations

import os
from typing import Callable, Mapping

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from .atomic import atomic_path, default_file_mode, write_bytes_atomic, write_text_atomic

__all__ = ["atomic_path", "default_file_mode", "write_text_atomic", "write_bytes_atomic", "write_csv", "write_parquet", "set_parquet_stamp", "read_parquet", "read_concat", "empty_frame"]


def write_csv(df: pd.DataFrame, path: str | os.PathLike) -> None:
    """Write ``df`` as CSV (no index) atomically."""
    with atomic_path(path) as tmp:
        df.to_csv(tmp, index=False)


#: What :func:`write_parquet` adds to every file's schema metadata: None (nothing) unless a workflow
#: job set its provenance stamp (:func:`set_parquet_stamp`).
_STAMP: Callable[[], Mapping[bytes, bytes]] | None = None


def set_parquet_stamp(stamp: Callable[[], Mapping[bytes, bytes]] | None) -> None:
    """Have :func:`write_parquet` add ``stamp()``'s keys to the schema metadata of every file it writes
    from now on (None: add nothing); a workflow job's provenance stamp
    (:mod:`unlearn_audit.pipeline.job_stamp`, docs/schemas.md#provenance)."""
    global _STAMP
    _STAMP = stamp


def write_parquet(df: pd.DataFrame, path: str | os.PathLike, schema: pa.Schema | None = None) -> None:
    """Write ``df`` as Parquet atomically, cast to ``schema`` (column order and types) if given, with
    the stamp set by :func:`set_parquet_stamp` in its schema metadata where one is set."""
    if schema is not None:
        missing = [n for n in schema.names if n not in df.columns]
        if missing:
            raise ValueError(f"cannot write {path}: missing columns {missing} required by its schema")
        table = pa.Table.from_pandas(df[schema.names], schema=schema, preserve_index=False)
    else:
        table = pa.Table.from_pandas(df, preserve_index=False)
    if _STAMP is not None:
        table = table.replace_schema_metadata({**(table.schema.metadata or {}), **_STAMP()})
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
