"""Lazy package exports (PEP 562): a package's public names import their module on first use.

A job imports the one step it runs (a training chunk needs torch, not scipy.optimize; the
Snakefile needs the plan, not the auditors), so a package's ``__init__`` must not import every
submodule: each of the workflow's jobs, and each Snakemake start, would pay for all of them.
"""

from __future__ import annotations

import importlib
import sys
from typing import Callable, Mapping


def lazy_exports(package: str, exports: Mapping[str, str]) -> tuple[Callable[[str], object], Callable[[], list[str]]]:
    """``(__getattr__, __dir__)`` for ``package``, whose public name ``n`` lives in the submodule
    ``exports[n]`` (relative, e.g. ``".bounds"``); any other attribute is tried as a submodule."""

    def __getattr__(name: str) -> object:
        namespace = vars(sys.modules[package])
        if name in exports:
            value = getattr(importlib.import_module(exports[name], package), name)
        else:
            try:
                value = importlib.import_module(f"{package}.{name}")
            except ModuleNotFoundError as error:
                if error.name != f"{package}.{name}":
                    raise
                raise AttributeError(f"module {package!r} has no attribute {name!r}") from None
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted(set(vars(sys.modules[package])) | set(exports))

    return __getattr__, __dir__
