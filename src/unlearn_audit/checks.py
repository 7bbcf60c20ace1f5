"""Every argument check of the library, one function each (the ground floor: pure Python).

Each check returns the validated (converted) value or raises ``ValueError`` with one message
that names the argument and the range it must lie in.  :func:`dataclass_from_mapping` builds a
parameter dataclass from a config mapping and refuses unknown keys, listing the known ones.
"""

from __future__ import annotations

import dataclasses
import math
import numbers
import types
import typing
from typing import Any, Mapping, TypeVar

__all__ = [
    "check_zeta",
    "check_delta",
    "check_probability",
    "check_count",
    "check_int",
    "check_positive_int",
    "check_nonneg",
    "check_positive",
    "check_epsilon",
    "check_error_counts",
    "check_choice",
    "dataclass_from_mapping",
]

T = TypeVar("T")


def _is_int(value: Any) -> bool:
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def check_zeta(zeta: Any, name: str = "zeta") -> float:
    """Significance level ζ ∈ (0, 1)."""
    try:
        value = float(zeta)
    except (TypeError, ValueError):
        raise ValueError(f"{name} (significance level) must be a number in (0, 1), got {zeta!r}") from None
    if not (0.0 < value < 1.0):
        raise ValueError(f"{name} (significance level) must lie in (0, 1), got {zeta!r}")
    return value


def check_delta(delta: Any, name: str = "delta", *, positive: bool = False) -> float:
    """δ ∈ [0, 1), or δ ∈ (0, 1) with ``positive`` (a certified δ of the Gaussian mechanism)."""
    interval = "(0, 1)" if positive else "[0, 1)"
    try:
        value = float(delta)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a number in {interval}, got {delta!r}") from None
    if not ((0.0 < value) if positive else (0.0 <= value)) or not value < 1.0:
        raise ValueError(f"{name} must lie in {interval}, got {delta!r}")
    return value


def check_probability(value: Any, name: str, *, allow_zero: bool = False) -> float:
    """A probability in (0, 1], or in [0, 1] with ``allow_zero`` (e.g. a δ_t of an accountant, δ_0 = 1)."""
    interval = "[0, 1]" if allow_zero else "(0, 1]"
    try:
        number = float(value)
    except (TypeError, ValueError):
        number = math.nan
    if isinstance(value, bool) or not ((number >= 0.0 if allow_zero else number > 0.0) and number <= 1.0):
        raise ValueError(f"{name} must be a number in {interval}, got {value!r}")
    return number


def check_int(value: Any, name: str, minimum: int | None = None) -> int:
    """An integer (a float with an integral value is accepted) that is at least ``minimum``."""
    if isinstance(value, bool):
        raise ValueError(f"{name} must be an integer, got {value!r}")
    try:
        ivalue = int(value)
    except (TypeError, ValueError, OverflowError):
        raise ValueError(f"{name} must be an integer, got {value!r}") from None
    if ivalue != value:
        raise ValueError(f"{name} must be an integer, got {value!r}")
    if minimum is not None and ivalue < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")
    return ivalue


def check_count(value: Any, name: str) -> int:
    """A non-negative integer count."""
    try:
        return check_int(value, name, 0)
    except ValueError:
        raise ValueError(f"{name} must be a non-negative integer, got {value!r}") from None


def check_positive_int(value: Any, name: str, *, allow_zero: bool = False) -> int:
    """A positive (or, with ``allow_zero``, non-negative) integer; floats are refused."""
    ok = _is_int(value) and (value >= 0 if allow_zero else value >= 1)
    if not ok:
        raise ValueError(f"{name} must be a {'non-negative' if allow_zero else 'positive'} integer, got {value!r}")
    return int(value)


def check_nonneg(value: Any, name: str) -> float:
    """A finite number ≥ 0."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not (value >= 0 and math.isfinite(value)):
        raise ValueError(f"{name} must be a finite non-negative number, got {value!r}")
    return float(value)


def check_positive(value: Any, name: str) -> float:
    """A finite number > 0 (anything ``float()`` accepts, except a bool)."""
    try:
        number = float(value)
    except (TypeError, ValueError):
        number = math.nan
    if isinstance(value, bool) or not (math.isfinite(number) and number > 0):
        raise ValueError(f"{name} must be a finite number > 0, got {value!r}")
    return number


def check_epsilon(epsilon: Any, name: str = "epsilon") -> float:
    """A privacy level ε: a finite number ≥ 0."""
    try:
        value = float(epsilon)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a finite number >= 0, got {epsilon!r}") from None
    if not (math.isfinite(value) and value >= 0):
        raise ValueError(f"{name} must be a finite number >= 0, got {epsilon!r}")
    return value


def check_error_counts(errors: Any, total: Any, err_name: str, total_name: str) -> tuple[int, int]:
    """(errors, total) with 0 ≤ errors ≤ total and total > 0."""
    total = check_count(total, total_name)
    errors = check_count(errors, err_name)
    if total == 0:
        raise ValueError(f"{total_name} must be > 0")
    if errors > total:
        raise ValueError(f"{err_name} = {errors} exceeds {total_name} = {total}")
    return errors, total


def check_choice(value: Any, choices, name: str):
    """``value`` if it is one of ``choices``."""
    if value not in tuple(choices):
        raise ValueError(f"{name} must be one of {tuple(choices)}, got {value!r}")
    return value


def dataclass_from_mapping(cls: type[T], values: Mapping[str, Any] | None, what: str) -> T:
    """``cls(**values)``, refusing unknown keys with one message that lists the known ones.

    ``what`` names the mapping in the message (e.g. ``"training parameter"`` or a config key).
    Lists are turned into tuples for tuple-typed fields of frozen dataclasses.
    """
    if not dataclasses.is_dataclass(cls):
        raise TypeError(f"{cls!r} is not a dataclass")
    values = dict(values or {})
    known = {f.name for f in dataclasses.fields(cls)}
    unknown = sorted(set(values) - known)
    if unknown:
        raise ValueError(f"unknown {what} {', '.join(map(repr, unknown))}; known: {', '.join(sorted(known))}")
    values = {k: tuple(v) if isinstance(v, list) else v for k, v in values.items()}
    try:
        hints = typing.get_type_hints(cls)
    except Exception:  # noqa: BLE001 - an annotation that does not resolve is not checked
        hints = {}
    for name, value in values.items():
        wanted = type_mismatch(value, hints.get(name))
        if wanted:
            raise TypeError(f"{what} {name!r} must be {wanted}, got {value!r}")
    return cls(**values)


def type_mismatch(value: Any, annotation: Any) -> str | None:
    """What ``annotation`` wants (e.g. "a number") when ``value`` (as read from YAML) does not fit
    it, else None; annotations other than int, float, bool, str, tuple, None and their unions are
    not checked."""
    expected = _expected_types(annotation)
    if expected is None or _is_instance(value, expected):
        return None
    return _describe(expected)


def _expected_types(annotation: Any) -> tuple | None:
    """The Python types a field annotated ``annotation`` accepts from YAML, or None (not checked)."""
    if annotation is None or annotation is Any:
        return None
    origin = typing.get_origin(annotation)
    if origin in (typing.Union, types.UnionType):
        parts = [_expected_types(a) for a in typing.get_args(annotation)]
        if any(p is None for p in parts):
            return None
        return tuple(t for p in parts for t in p)
    if origin is typing.Literal:
        return None
    if origin is tuple or annotation is tuple:
        return (tuple,)
    if annotation is type(None):
        return (type(None),)
    if annotation in (int, float, bool, str):
        return (annotation,)
    return None


def _is_instance(value: Any, expected: tuple) -> bool:
    if isinstance(value, bool):
        return bool in expected
    if isinstance(value, numbers.Integral):
        return int in expected or float in expected
    if isinstance(value, numbers.Real):
        return float in expected
    return isinstance(value, expected)


def _describe(expected: tuple) -> str:
    words = {int: "an integer", float: "a number", bool: "true or false", str: "a string", tuple: "a list", type(None): "null"}
    return " or ".join(dict.fromkeys(words.get(t, t.__name__) for t in expected))
