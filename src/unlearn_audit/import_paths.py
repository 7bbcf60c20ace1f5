"""Objects of one's own given by import path, ``package.module:attribute``: unlearning methods
(:func:`unlearn_audit.unlearning.import_method`), models (:func:`unlearn_audit.models.build_model`)
and datasets (:func:`unlearn_audit.data.prepare_audit_data`); docs/configuration.md#your-own-model-and-data.
One resolver, so that every kind fails with the same kind of message: what is wrong and how to fix
it.  Standard library only."""

from __future__ import annotations

import importlib
import inspect
from typing import Any

__all__ = ["ImportPathError", "is_import_path", "import_object", "keyword_binding_error"]


class ImportPathError(ValueError):
    """An import path that names no usable object."""


def is_import_path(name: Any) -> bool:
    """Whether ``name`` is written as an import path (``module:attribute``) rather than a registry name."""
    return isinstance(name, str) and ":" in name


def _dotted(text: str) -> bool:
    return bool(text) and all(part.isidentifier() for part in text.split("."))


def import_object(path: str, what: str, form: str, *, error: type[ValueError] = ImportPathError, kind: str = "function") -> Any:
    """The callable that ``path`` (``package.module:attribute``, attributes dotted) names.

    ``what`` names the config value in messages (``method 'a.b:c'``), ``form`` says how to write
    one, ``kind`` is what the attribute must be: ``"function"`` (a function or other callable
    that is not a class) or ``"callable"`` (a class too).  Raises ``error`` naming the problem and
    its fix: not an import path, a module that cannot be imported (on PYTHONPATH?), a missing
    attribute, an attribute that cannot be called."""
    module_name, _, attr = path.partition(":")
    if not _dotted(module_name) or not _dotted(attr):
        raise error(f"{what} {path!r} is not an import path: write it as {form}")
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name and (module_name == exc.name or module_name.startswith(exc.name + ".")):
            raise error(
                f"{what} {path!r}: cannot import module {module_name!r} ({exc}); make it importable by every job: "
                "put the directory that contains it on PYTHONPATH (an absolute path) or pip install its package"
            ) from None
        raise error(f"{what} {path!r}: importing module {module_name!r} failed ({exc}); install what it imports") from None
    except Exception as exc:  # noqa: BLE001 - any import failure is one message
        raise error(f"{what} {path!r}: importing module {module_name!r} failed ({type(exc).__name__}: {exc}); fix the module") from None
    obj: Any = module
    for i, part in enumerate(attr.split(".")):
        if not hasattr(obj, part):
            where = module_name + "".join("." + p for p in attr.split(".")[:i])
            raise error(f"{what} {path!r}: {where!r} has no attribute {part!r}; check the name after ':' (it names the {kind} in module {module_name!r})")
        obj = getattr(obj, part)
    if not callable(obj) or (kind == "function" and inspect.isclass(obj)):
        found = "a class" if inspect.isclass(obj) else f"an object of type {type(obj).__name__!r}"
        raise error(f"{what} {path!r}: {attr!r} is {found}, not a {kind}; name a {kind} {form}")
    return obj


def keyword_binding_error(fn: Any, arguments: dict[str, Any]) -> str | None:
    """Why ``fn`` cannot be called with ``arguments`` by keyword (the ``TypeError`` that binding
    raises), or ``None`` where it can or where its signature cannot be read."""
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return None
    try:
        sig.bind(**arguments)
    except TypeError as exc:
        return str(exc)
    return None
