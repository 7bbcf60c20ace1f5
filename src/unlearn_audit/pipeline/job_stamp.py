"""The provenance stamp of a workflow job's Parquet outputs (docs/schemas.md#provenance).

:func:`install` (called by :func:`.job_log.start_job_log`, which every script of
``workflow/scripts`` runs first) gives :func:`unlearn_audit.io.write_parquet` a stamp to put into
the schema metadata of every Parquet file the job writes, under :data:`KEY`: a JSON object of the
library that computed it, the host and its devices, the workflow checkout's commit, the versions of
the distributions the job has imported and the sources of the user modules the config names by
import path.  It holds nothing that changes when one job runs twice on one machine (no time, no
process id, no temporary path), so a rerun writes the same bytes.  The fixed part is computed once a
process; the imported distributions, the user modules and the CUDA devices when a file is written.
Outside a workflow job nothing is installed and the library writes no stamp.
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import sys
from functools import lru_cache
from importlib import metadata
from pathlib import Path
from typing import Any, Mapping

from .provenance import cpu_model, git_state, package_versions

__all__ = ["KEY", "FORMAT", "library_sha256", "config_import_paths", "job_checkout", "fixed_part", "stamp", "install"]

#: The Parquet schema-metadata key of the stamp.
KEY = b"unlearn_audit.provenance"
#: The stamp's layout version (its ``format`` field): raised when a field changes meaning or goes.
FORMAT = 1


def _sha256_file(path: str | os.PathLike) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def library_sha256(package_dir: str | os.PathLike | None = None) -> str:
    """sha256 over the ``.py`` files of the installed package (``package_dir``, by default the
    folder of ``unlearn_audit``), sorted by path relative to it: each file adds its relative POSIX
    path, a NUL byte, its own sha256 (hex) and a newline."""
    root = Path(package_dir) if package_dir is not None else Path(__file__).resolve().parents[1]
    digest = hashlib.sha256()
    for rel in sorted(p.relative_to(root).as_posix() for p in root.rglob("*.py")):
        digest.update(f"{rel}\0{_sha256_file(root / rel)}\n".encode())
    return digest.hexdigest()


def config_import_paths(config: Mapping[str, Any]) -> list[str]:
    """The import paths ``package.module:attribute`` a workflow config names where it accepts one:
    an nn experiment's ``method``, an nn design's ``dataset`` and ``model.name``
    (docs/configuration.md#your-own-model-and-data), sorted and unique."""
    from ..import_paths import is_import_path

    nn = config.get("nn") or {}
    names = [exp.get("method") for exp in (nn.get("experiments") or {}).values()]
    for design in (nn.get("designs") or {}).values():
        names += [design.get("dataset"), (design.get("model") or {}).get("name")]
    return sorted({n for n in names if is_import_path(n)})


def job_checkout(scriptdir: str | os.PathLike | None) -> Path | None:
    """The workflow checkout of a job whose script lies in ``scriptdir`` (``<checkout>/workflow/scripts``:
    the Snakefile's ``REPO_DIR``, which the ``provenance`` rule names), or None where that is not a
    local folder (a workflow read from a URL)."""
    if not scriptdir or "://" in str(scriptdir):
        return None
    return Path(scriptdir).resolve().parents[1]


def fixed_part(config: Mapping[str, Any], checkout: str | os.PathLike | None) -> dict:
    """What a job's stamp holds that does not change while the job runs: the library digest, the host,
    the CPU, the checkout's commit and dirty flag, and the import paths of ``config``."""
    return {
        "format": FORMAT,
        "library_sha256": library_sha256(),
        "host": platform.node(),
        "cpu": cpu_model(),
        "workflow": git_state(checkout) if checkout is not None else {"commit": None, "dirty": None},
        "import_paths": config_import_paths(config),
    }


def _top_level_names(dist: metadata.Distribution) -> set[str]:
    """The top-level modules of ``dist``: its ``top_level.txt``, else the first parts of the paths its
    ``RECORD`` lists (as :func:`importlib.metadata.packages_distributions` infers them)."""
    declared = dist.read_text("top_level.txt")
    if declared is not None:
        return set(declared.split())
    names = set()
    for line in (dist.read_text("RECORD") or "").splitlines():
        path = line.split(",", 1)[0]
        if path.endswith(".py"):
            head, sep, _ = path.partition("/")
            names.add(head if sep else head[: -len(".py")])
    return names


@lru_cache(maxsize=None)
def _distributions() -> Mapping[str, list[str]]:
    """{top-level module: the distributions providing it}: what
    :func:`importlib.metadata.packages_distributions` returns, read from the RECORD files' text
    rather than their parsed entries (a tenth of the time: a job pays it once)."""
    out: dict[str, list[str]] = {}
    for dist in metadata.distributions():
        for name in _top_level_names(dist):
            out.setdefault(name, []).append(dist.metadata["Name"])
    return out


def _imported_versions() -> dict:
    """Python's version and that of every distribution providing a top-level module imported now."""
    tops = {name for name in list(sys.modules) if "." not in name}
    return _versions(tuple(sorted({d for top in tops for d in _distributions().get(top, ())})))


@lru_cache(maxsize=None)
def _versions(dists: tuple[str, ...]) -> dict:
    """:func:`.provenance.package_versions` of ``dists``, read once a process for each set of
    distributions (a job writes many files; what is installed does not change while it runs)."""
    return package_versions(dists)


def _cuda_devices() -> list[str] | None:
    """The CUDA devices torch sees, where this process has imported torch (None where it has not:
    the stamp never imports it)."""
    torch = sys.modules.get("torch")
    if torch is None:
        return None
    return [torch.cuda.get_device_name(i) for i in range(torch.cuda.device_count())] if torch.cuda.is_available() else []


def _user_modules(paths: list[str]) -> dict:
    """{import path: sha256 of its module's source file} for the paths whose module is imported."""
    out = {}
    for path in paths:
        module = sys.modules.get(path.partition(":")[0])
        source = getattr(module, "__file__", None)
        if source and Path(source).is_file():
            out[path] = _sha256_file(source)
    return out


def stamp(fixed: Mapping[str, Any]) -> bytes:
    """The stamp as written, canonical JSON: ``fixed`` with the device (its CPU and the CUDA devices
    of now), the imported distributions' versions and the imported user modules' source hashes in
    place of the CPU and the import paths (the fields: docs/schemas.md#provenance)."""
    record = {k: v for k, v in fixed.items() if k not in ("cpu", "import_paths")}
    record.update(device={"cpu": fixed["cpu"], "cuda": _cuda_devices()}, versions=_imported_versions(),
                  user_modules=_user_modules(list(fixed["import_paths"])))
    return json.dumps(record, sort_keys=True, separators=(",", ":")).encode()


def install(config: Mapping[str, Any], checkout: str | os.PathLike | None) -> None:
    """Stamp every Parquet file this process writes from now on (:func:`unlearn_audit.io.set_parquet_stamp`)."""
    from ..io import set_parquet_stamp

    fixed = fixed_part(config, checkout)
    set_parquet_stamp(lambda: {KEY: stamp(fixed)})
