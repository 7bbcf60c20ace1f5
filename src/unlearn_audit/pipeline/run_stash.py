"""Finished runs of a chunk job, kept where a failed or preempted job cannot lose them
(docs/cluster.md, "Failed and preempted jobs").

Snakemake deletes the output folder of a failed job, and a job the queue ends never finishes it, so
a retry would start again from its first run.  A chunk job therefore writes each run's files into
its *stash*, ``<results_dir>/.partial/<the folder's path below results_dir>``, and moves them into
its output folder only once every run is done.  A retry finds the runs its stash holds and starts at
the first one missing.  The stash carries a fingerprint of what its runs depend on: the job's
parameters, the root seed, the device, every input's size and modification time, and the library's
source; a retry under any other fingerprint discards the stash, so a run computed otherwise is
never reused.  Each file is written atomically, so a run is in the stash whole or not at all.  The
stash also holds the saved state of the training in progress (:meth:`RunStash.checkpoint_path`,
:mod:`unlearn_audit.training.resume`), so a retry resumes that run where it stopped.  A one-file
output (the retrained model A(D_r)) has a stash too: its one training resumes the same way.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from functools import lru_cache
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

from ..atomic import is_unfinished_write, write_text_atomic

__all__ = ["STASH_DIR", "RunStash", "job_fingerprint", "chunk_stash"]

#: The folder below ``results_dir`` that holds the stashes of unfinished chunk jobs.
STASH_DIR = ".partial"
_KEY = "fingerprint.json"
_IN_PROGRESS = ".in_progress"  # the saved states of unfinished trainings, never moved into the output


@lru_cache(maxsize=1)
def _library_source_digest() -> str:
    """SHA-256 of the package's Python sources (paths and bytes, in path order): a changed library
    never reuses a run the old one computed."""
    root = Path(__file__).resolve().parents[1]
    digest = hashlib.sha256()
    for path in sorted(root.rglob("*.py")):
        digest.update(path.relative_to(root).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def job_fingerprint(params: Mapping[str, Any], inputs: Iterable[str | os.PathLike], device: str) -> str:
    """A digest of what a chunk job's runs depend on: ``params`` (the job's parameters and root seed),
    the ``device``, each input's path, size and modification time, and the library's source."""
    stats = []
    for path in inputs:
        st = os.stat(path)
        stats.append([os.fspath(path), st.st_size, st.st_mtime_ns])
    text = json.dumps({"params": params, "device": device, "inputs": stats, "library": _library_source_digest()},
                      sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()


class RunStash:
    """The stash of one chunk job's output folder ``output_dir`` (or one-file output) below ``results_dir``."""

    def __init__(self, output_dir: str | os.PathLike, results_dir: str | os.PathLike, fingerprint: str):
        out, results = Path(os.path.abspath(output_dir)), Path(os.path.abspath(results_dir))
        if results not in out.parents:
            raise ValueError(f"the chunk folder {output_dir} is not inside results_dir {results_dir}")
        self.output_dir = out
        self.one_file = bool(out.suffix)  # a chunk folder's name has no suffix (calib0-29_eval0-9)
        self.root = results / STASH_DIR / out.relative_to(results)
        key = self.root / _KEY
        if key.exists() and json.loads(key.read_text()).get("fingerprint") != fingerprint:
            shutil.rmtree(self.root)  # computed under other parameters, inputs or code: never reused
        if not key.exists():
            self.root.mkdir(parents=True, exist_ok=True)
            write_text_atomic(key, json.dumps({"fingerprint": fingerprint, "output": str(output_dir)}) + "\n")

    def path(self, output: str | os.PathLike) -> str:
        """Where the job writes ``output`` (a file inside its output folder) until the job is done."""
        return str(self.root / self._relative(output))

    def checkpoint_path(self, output: str | os.PathLike) -> str:
        """Where the training of ``output``'s run keeps its state until the run is done."""
        return str(self.root / _IN_PROGRESS / self._relative(output))

    def _relative(self, output: str | os.PathLike) -> Path:
        target = Path(os.path.abspath(output))
        if self.one_file and target == self.output_dir:
            return Path(target.name)
        if self.one_file or self.output_dir not in target.parents:
            raise ValueError(f"{output} is not inside the chunk folder {self.output_dir}")
        return target.relative_to(self.output_dir)

    def finished(self, outputs: Sequence[str | os.PathLike]) -> bool:
        """Whether every one of a run's ``outputs`` is in the stash (the run need not be computed again)."""
        return all(os.path.exists(self.path(o)) for o in outputs)

    def commit(self) -> None:
        """Move every stashed file into the output folder and remove the stash (the job is done); the
        temporary file of a write an earlier attempt was killed in is not an output and is left behind
        with the stash."""
        for path in sorted(p for p in self.root.rglob("*") if p.is_file() and p.name != _KEY):
            rel = path.relative_to(self.root)
            if rel.parts[0] == _IN_PROGRESS or is_unfinished_write(path):
                continue
            dest = self.output_dir if self.one_file else self.output_dir / rel
            dest.parent.mkdir(parents=True, exist_ok=True)
            os.replace(path, dest)
        shutil.rmtree(self.root)
        for parent in self.root.parents:  # the emptied folders above it, up to and with .partial itself
            if not _remove_if_empty(parent) or parent.name == STASH_DIR:
                break


def _remove_if_empty(folder: Path) -> bool:
    try:
        folder.rmdir()
        return True
    except OSError:  # not empty (another chunk's stash), or gone
        return False


def chunk_stash(output: str | os.PathLike, results_dir: str | os.PathLike, params: Mapping[str, Any],
                inputs: Iterable[str | os.PathLike], device: str) -> RunStash:
    """The stash of the job whose output (a chunk folder, or one file) is ``output``, under the
    fingerprint of its ``params``, ``inputs`` and ``device``."""
    return RunStash(output, results_dir, job_fingerprint(params, inputs, device))
