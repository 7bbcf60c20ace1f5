"""Unlearning algorithms behind one registry (paper §7, App. G; DESIGN §6).

Every algorithm is a function ``fn(model, retain, forget, params, generator) -> model`` registered
under a name usable from config, together with a frozen dataclass of its hyperparameters (the
paper's values as defaults where the paper gives them).  ``retain`` is the retain set D_r and
``forget`` is **only** D_f(S), the forget set sampled by the sign vector S — never the whole
candidate pool, never the whole training set — each an ``(x, y)`` pair of arrays or tensors::

    model = unlearn("forget_ascent", base_model, (xr, yr), (xf, yf), {"ascent_epochs": 2}, generator=seed)

Built in (uncertified, G.3–G.7): ``retain_finetune``, ``forget_ascent``, ``ida``, ``hessian``;
certified (G.1, G.2): ``model_clipping`` (Koloskova et al., Eq. 14) and ``rewind_to_delete``
(Mu & Klabjan).  A new algorithm registers itself with :func:`register` and becomes available to
the workflow by name.

A method whose function accepts a ``monitor`` keyword (:class:`Monitor`) reports intermediate
models and the numbers of its calibration (noisy steps, σ, …) through it; :func:`unlearn` passes
a monitor only to such methods.

This module does not import torch: the names and hyperparameter dataclasses of the built-in
algorithms (:mod:`.params`) are known without it, so a config is validated before any job runs
and without torch; the implementations are imported on first use (:func:`get_method`).
"""

from __future__ import annotations

import copy
import dataclasses
import inspect
import typing
from dataclasses import dataclass
from typing import Any, Callable, Mapping

from typing import TYPE_CHECKING

from .params import BUILTIN_PARAMS

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np
    import torch
    from torch import nn

__all__ = [
    "Data",
    "Monitor",
    "UnlearningMethod",
    "UNLEARNING_METHODS",
    "register",
    "get_method",
    "make_params",
    "method_names",
    "unlearn",
]

Data = tuple[Any, Any]
"""An ``(x, y)`` pair: numpy arrays or CPU tensors (images: float ``(N, C, H, W)`` and int ``(N,)``;
text: int ``(N, T)`` inputs and int ``(N, T)`` next-character targets)."""

UnlearnFn = Callable[..., Any]
"""``fn(model, retain, forget, params, generator) -> model`` (torch modules and tensors); optionally
with a ``monitor`` keyword (:class:`Monitor`)."""


class Monitor:
    """Receiver of what an unlearning run reports (torch-free base; every method is a no-op).

    Subclass it and override what you need.

    ``checkpoint(step, model)``
        Called by ``model_clipping`` after noisy step ``step`` for every step in
        ``checkpoint_steps``.  ``model`` is the **live** module being unlearned, not a copy (for
        speed): score it synchronously inside ``checkpoint`` and keep no reference to it — it
        changes as soon as ``checkpoint`` returns.  Do not modify it.
    ``record(**values)``
        Named numbers of the run (e.g. ``noisy_steps``, ``total_steps`` of model clipping;
        ``lipschitz``, ``grad_bound``, ``sensitivity``, ``sigma``, ``n``, ``m_f`` of R2D); called
        once per run, after the unlearning.
    """

    def checkpoint(self, step: int, model: Any) -> None:  # noqa: D401 - protocol method
        """Score the model after noisy step ``step`` synchronously (see the class docstring)."""

    def record(self, **values: float | int | bool) -> None:
        """Receive named numbers of the run (floats, ints, bools)."""


@dataclass(frozen=True)
class UnlearningMethod:
    """A registered unlearning algorithm.

    Attributes
    ----------
    name
        Registry name (used in config).
    fn
        ``fn(model, retain, forget, params, generator) -> model``; receives tensors, a validated
        ``params`` instance and a ``torch.Generator``; may modify ``model`` in place.
    params_cls
        Frozen dataclass of the hyperparameters.
    certified
        Whether the algorithm carries an (ε, δ) unlearning certificate.
    uses_forget
        Whether the algorithm reads D_f(S) at all.
    monitors
        Whether ``fn`` accepts a ``monitor`` keyword (:class:`Monitor`); set by :func:`register`.
    """

    name: str
    fn: UnlearnFn
    params_cls: type
    certified: bool = False
    uses_forget: bool = True
    description: str = ""
    monitors: bool = False


UNLEARNING_METHODS: dict[str, UnlearningMethod] = {}


def register(
    name: str, params_cls: type | None = None, *, certified: bool = False, uses_forget: bool = True, description: str = ""
) -> Callable[[UnlearnFn], UnlearnFn]:
    """Decorator registering ``fn`` under ``name``.

    ``params_cls`` is the frozen dataclass of the hyperparameters; by default the type annotation
    of ``fn``'s ``params`` argument.  ``description`` defaults to the first line of the docstring.
    """

    def deco(fn: UnlearnFn) -> UnlearnFn:
        cls = params_cls
        if cls is None:
            cls = fn.__annotations__.get("params")
            if isinstance(cls, str):
                try:
                    cls = typing.get_type_hints(fn).get("params")
                except NameError:
                    cls = None
        if cls is None or not dataclasses.is_dataclass(cls):
            raise TypeError(f"unlearning method {name!r}: params_cls must be a dataclass (give it or annotate fn's params argument)")
        if name in UNLEARNING_METHODS:
            raise ValueError(f"unlearning method {name!r} is already registered")
        doc = description or next(iter((fn.__doc__ or "").strip().splitlines()), "")
        UNLEARNING_METHODS[name] = UnlearningMethod(name, fn, cls, certified, uses_forget, doc, _accepts_monitor(fn))
        return fn

    return deco


def _accepts_monitor(fn: UnlearnFn) -> bool:
    try:
        param = inspect.signature(fn).parameters.get("monitor")
    except (TypeError, ValueError):
        return False
    return param is not None and param.kind in (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)


_BUILTINS_LOADED = False


def _load_builtins() -> None:
    """Import the built-in implementations (torch) once; they register themselves."""
    global _BUILTINS_LOADED
    if not _BUILTINS_LOADED:
        _BUILTINS_LOADED = True
        from . import forget_ascent, hessian, ida, model_clipping, retain_finetune, rewind_to_delete  # noqa: F401


def method_names() -> list[str]:
    """Every known method name: the built-in ones and those registered so far (no torch import)."""
    return sorted(set(BUILTIN_PARAMS) | set(UNLEARNING_METHODS))


def _params_class(name: str) -> type:
    if name in UNLEARNING_METHODS:
        return UNLEARNING_METHODS[name].params_cls
    if name in BUILTIN_PARAMS:
        return BUILTIN_PARAMS[name]
    raise ValueError(f"unknown unlearning method {name!r}; known: {', '.join(method_names())}")


def get_method(name: str) -> UnlearningMethod:
    """The registered method ``name``; ``ValueError`` listing the known names otherwise."""
    if name not in UNLEARNING_METHODS and name in BUILTIN_PARAMS:
        _load_builtins()
    try:
        return UNLEARNING_METHODS[name]
    except KeyError:
        raise ValueError(f"unknown unlearning method {name!r}; known: {', '.join(method_names())}") from None


def make_params(name: str, params: Mapping[str, Any] | Any | None = None) -> Any:
    """Validated hyperparameters of method ``name`` from a mapping (or an instance, returned as is).

    Unknown parameter names raise ``ValueError`` naming the parameter and the method; invalid
    values raise the dataclass's own ``ValueError``.
    """
    params_cls = _params_class(name)
    if isinstance(params, params_cls):
        return params
    if params is not None and dataclasses.is_dataclass(params):
        raise ValueError(f"parameters of type {type(params).__name__} given for unlearning method {name!r} (expects {params_cls.__name__})")
    values = dict(params or {})
    allowed = {f.name for f in dataclasses.fields(params_cls)}
    unknown = sorted(set(values) - allowed)
    if unknown:
        raise ValueError(f"unknown parameter {unknown[0]!r} for unlearning method {name!r}" + (f" (also {unknown[1:]})" if len(unknown) > 1 else "") + f"; allowed: {sorted(allowed)}")
    try:
        return params_cls(**values)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"unlearning method {name!r}: {exc}") from exc


def _as_data(data: Data, what: str, device) -> tuple:
    from ..torch_utils import check_xy

    try:
        x, y = data
    except (TypeError, ValueError):
        raise ValueError(f"{what} must be an (x, y) pair") from None
    return check_xy(x, y, what=what, device=device)


def unlearn(
    name: str,
    model: nn.Module,
    retain: Data,
    forget: Data,
    params: Mapping[str, Any] | Any | None = None,
    generator: torch.Generator | np.random.Generator | np.random.SeedSequence | int | None = None,
    monitor: Monitor | None = None,
) -> nn.Module:
    """Unlearn D_f(S) from a trained model with the registered algorithm ``name``.

    Parameters
    ----------
    model
        The trained model A(D(S)); it is not modified (the algorithm works on a deep copy).
    retain
        The retain set D_r as ``(x, y)``.
    forget
        **Only** the sampled forget set D_f(S) as ``(x, y)`` (the candidate batches with S_j = +1).
    params
        Hyperparameters (mapping or the method's dataclass); defaults are the paper's values.
    generator
        Source of all randomness of the algorithm (data order, LiSSA minibatches, noise): a
        ``torch.Generator`` or anything :func:`unlearn_audit.torch_utils.as_torch_generator` accepts
        (e.g. the run's ``unlearn`` SeedSequence).
    monitor
        Receives checkpoints and recorded numbers (:class:`Monitor`); passed only to methods that
        accept one (``UnlearningMethod.monitors``), ignored otherwise.

    Returns
    -------
    The unlearned model (a new module).
    """
    from ..torch_utils import as_torch_generator, model_device

    method = get_method(name)
    p = make_params(name, params)
    if generator is None:
        raise ValueError(f"unlearning method {name!r} needs a generator (or seed) for its randomness")
    g = as_torch_generator(generator)
    out = copy.deepcopy(model)
    device = model_device(out)
    args = (out, _as_data(retain, "retain", device), _as_data(forget, "forget", device), p, g)
    if method.monitors and monitor is not None:
        return method.fn(*args, monitor=monitor)
    return method.fn(*args)

