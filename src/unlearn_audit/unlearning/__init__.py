"""Unlearning algorithms behind one registry (paper §7, App. G; docs/calibrations.md §0).

Every algorithm is a function ``fn(model, retain, forget, params, generator) -> model`` registered
under a name usable from config, together with a frozen dataclass of its hyperparameters (the
paper's values as defaults where the paper gives them).  ``retain`` is the retain set D_r and
``forget`` is **only** D_f(S), the forget set sampled by the sign vector S — never the whole
candidate pool, never the whole training set — each an ``(x, y)`` pair of arrays or tensors::

    model = unlearn("forget_ascent", base_model, (xr, yr), (xf, yf), {"ascent_epochs": 2}, generator=seed)

Built in: the control ``no_unlearning`` (the trained model as is); uncertified (G.3–G.7): ``retain_finetune``, ``forget_ascent``, ``ida``, ``hessian``;
certified (G.1, G.2): ``model_clipping`` (Koloskova et al., Eq. 14) and ``rewind_to_delete``
(Mu & Klabjan); the image-unlearning baselines ``neggrad_plus`` and ``scrub`` (Kurmanji et al.
2023), ``random_labels`` (Graves et al. 2021), ``salun`` (Fan et al. 2024), ``bad_teacher``
(Chundawat et al. 2023) and ``ssd`` (Foster et al. 2024); the language-model objectives
``gradient_ascent``, ``gradient_difference``, ``npo`` and ``simnpo`` (:mod:`.preference`).  A new
algorithm registers itself with :func:`register` and becomes available to the workflow by name.

An algorithm outside this package needs no registration: wherever a method name is accepted, an
import path ``package.module:function`` names a function with the signature above
(:func:`import_method`).  Its hyperparameters are the dataclass its ``params`` argument is
annotated with (as :func:`register` reads it); a function whose ``params`` is unannotated (or
annotated ``dict``/``Mapping``) receives the config's ``params`` as a plain ``dict``, unchecked.
A bad path raises :class:`MethodPathError`, which says what is wrong and how to fix it.

A method whose function accepts a ``monitor`` keyword (:class:`Monitor`) reports intermediate
models and the numbers of its calibration (noisy steps, σ, …) through it; :func:`unlearn` passes
a monitor only to such methods.

A method that ends with a Gaussian release (``hessian``: θ − H̃⁻¹g + ξ; ``rewind_to_delete``:
θ''_K + ξ) registers the two parts separately (:class:`NoiseRelease`): experiments that differ only
in the release's hyperparameters (Table 7's σ, Figure 1c's target ε) then share the noiseless part
of each run (:func:`unlearn_variants`), and each still draws its own noise.

This module does not import torch: the names, hyperparameter dataclasses and specs of the built-in
algorithms (:mod:`.params`; :func:`method_spec`, docs/development.md#add-an-unlearning-method) are
known without it, so a config is validated and priced before any job runs and without torch; the
implementations are imported on first use (:func:`get_method`).
"""

from __future__ import annotations

import copy
import dataclasses
import importlib
import inspect
import typing
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Sequence

from typing import TYPE_CHECKING

from ..import_paths import ImportPathError, import_object, is_import_path
from ..checks import check_choice, dataclass_from_mapping
from .params import METHOD_SPECS
from .spec import MethodSpec
from .registry import UNLEARNING_METHODS, Monitor, NoiseRelease, UnlearnFn, UnlearningMethod, _accepts_monitor, register

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np
    import torch
    from torch import nn

__all__ = [
    "Data",
    "MethodPathError",
    "Monitor",
    "NoiseRelease",
    "UnlearningMethod",
    "UNLEARNING_METHODS",
    "register",
    "get_method",
    "import_method",
    "is_import_path",
    "make_params",
    "method_names",
    "method_spec",
    "MethodSpec",
    "unlearn",
    "unlearn_many",
    "unlearn_variants",
    "unlearn_variants_many",
    "release_key",
]

Data = tuple[Any, Any]
"""An ``(x, y)`` pair: numpy arrays or CPU tensors (images: float ``(N, C, H, W)`` and int ``(N,)``;
text: int ``(N, T)`` inputs and int ``(N, T)`` next-character targets)."""

_BUILTINS_LOADED = False


def _load_builtins() -> None:
    """Import the built-in implementations (torch) once; they register themselves.  Each lives in
    the module of its name, so :data:`.params.METHOD_SPECS` is the one list of them."""
    global _BUILTINS_LOADED
    if not _BUILTINS_LOADED:
        _BUILTINS_LOADED = True
        for name in METHOD_SPECS:
            importlib.import_module(f".{name}", __name__)


def method_names() -> list[str]:
    """Every known method name: the built-in ones and those registered so far (no torch import)."""
    return sorted(set(METHOD_SPECS) | set(UNLEARNING_METHODS))


def method_spec(name: str) -> MethodSpec:
    """The :class:`~.spec.MethodSpec` of method ``name`` (docs/development.md#add-an-unlearning-method):
    a built-in one's (:data:`.params.METHOD_SPECS`, no torch import), a registered one's, or that of
    the function an import path names (imported; the defaults where it is not registered)."""
    if name in METHOD_SPECS:
        return METHOD_SPECS[name]
    return get_method(name).spec


class MethodPathError(ImportPathError):
    """A method is neither a known name nor a usable import path ``package.module:function``."""


#: How an import path is written, shown in every :class:`MethodPathError`.
_PATH_FORM = "'package.module:function' naming fn(model, retain, forget, params, generator) -> model"

_IMPORTED: dict[str, UnlearningMethod] = {}


def _unknown_name(name: str) -> MethodPathError:
    return MethodPathError(
        f"unknown unlearning method {name!r}; known: {', '.join(method_names())}; "
        f"or give your own algorithm as an import path {_PATH_FORM}"
    )


def _plain_dict_annotation(annotation: Any) -> bool:
    """Unannotated, ``Any`` or a mapping type: the function takes its params as a plain dict."""
    if annotation is inspect.Parameter.empty or annotation is Any:
        return True
    origin = typing.get_origin(annotation) or annotation
    return isinstance(origin, type) and issubclass(origin, Mapping)


def import_method(path: str) -> UnlearningMethod:
    """The method named by the import path ``package.module:function`` (imported once, then cached).

    The function must take ``(model, retain, forget, params, generator)`` positionally (optionally a
    ``monitor`` keyword).  Its hyperparameters dataclass is the annotation of its ``params`` argument;
    unannotated (or ``dict``/``Mapping``), the params are passed as a plain ``dict``.  A function that
    is itself registered with :func:`register` keeps its registration (dataclass, noise release, …).
    Anything else raises :class:`MethodPathError` saying what is wrong and how to fix it.
    """
    if path in _IMPORTED:
        return _IMPORTED[path]
    fn = import_object(path, "method", _PATH_FORM, error=MethodPathError)
    module_name, _, attr = path.partition(":")
    for method in UNLEARNING_METHODS.values():
        if method.fn is fn:
            _IMPORTED[path] = dataclasses.replace(method, name=path)
            return _IMPORTED[path]
    expected = "an unlearning method is fn(model, retain, forget, params, generator) -> model, optionally with a monitor keyword"
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        raise MethodPathError(f"method {path!r}: the signature of {attr!r} cannot be read; {expected}") from None
    try:
        sig.bind(*range(5))
    except TypeError:
        raise MethodPathError(f"method {path!r}: {attr}{sig} does not take (model, retain, forget, params, generator); {expected}") from None
    positional = [p for p in sig.parameters.values() if p.kind in (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)]
    params_arg = positional[3] if len(positional) > 3 else None
    annotation: Any = inspect.Parameter.empty
    if params_arg is not None and params_arg.annotation is not inspect.Parameter.empty:
        try:
            annotation = typing.get_type_hints(fn).get(params_arg.name, params_arg.annotation)
        except Exception as exc:  # noqa: BLE001 - an unresolvable annotation
            raise MethodPathError(f"method {path!r}: the annotation {params_arg.annotation!r} of argument {params_arg.name!r} cannot be resolved ({exc}); import its dataclass in module {module_name!r}") from None
    if dataclasses.is_dataclass(annotation) and isinstance(annotation, type):
        params_cls: type = annotation
    elif _plain_dict_annotation(annotation):
        params_cls = dict
    else:
        raise MethodPathError(
            f"method {path!r}: argument {params_arg.name!r} is annotated {annotation!r}, which is not a dataclass; "
            "annotate it with the hyperparameters' dataclass, or leave it unannotated to receive the params as a plain dict"
        )
    doc = next(iter((fn.__doc__ or "").strip().splitlines()), "")
    _IMPORTED[path] = UnlearningMethod(path, fn, params_cls, description=doc, monitors=_accepts_monitor(fn), spec=MethodSpec(path, params_cls))
    return _IMPORTED[path]


def _params_class(name: str) -> type:
    if name in UNLEARNING_METHODS:
        return UNLEARNING_METHODS[name].params_cls
    if name in METHOD_SPECS:
        return METHOD_SPECS[name].params
    if is_import_path(name):
        return import_method(name).params_cls
    raise _unknown_name(name)


def get_method(name: str) -> UnlearningMethod:
    """The method ``name``: a registered name or an import path ``package.module:function``
    (:func:`import_method`); :class:`MethodPathError` (a ``ValueError``) otherwise."""
    if name not in UNLEARNING_METHODS and name in METHOD_SPECS:
        _load_builtins()
    if name in UNLEARNING_METHODS:
        return UNLEARNING_METHODS[name]
    if is_import_path(name):
        return import_method(name)
    raise _unknown_name(name)


def make_params(name: str, params: Mapping[str, Any] | Any | None = None) -> Any:
    """Validated hyperparameters of method ``name`` from a mapping (or an instance, returned as is).

    Unknown parameter names raise ``ValueError`` naming the parameter and the method; invalid
    values raise the dataclass's own ``ValueError``.
    """
    params_cls = _params_class(name)
    if params_cls is dict:  # an imported function with unannotated params: a plain dict, unchecked
        if params is not None and not isinstance(params, Mapping):
            raise ValueError(f"unlearning method {name!r} takes its params as a mapping, got {type(params).__name__}")
        return dict(params or {})
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
        return dataclass_from_mapping(params_cls, values, "parameter")
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
    result = method.fn(*args, monitor=monitor) if method.monitors and monitor is not None else method.fn(*args)
    return _checked_model(name, result)


def _checked_model(name: str, result: Any) -> "nn.Module":
    """``result`` if it is a torch module; else one error naming the method and what it must return."""
    from torch import nn

    if not isinstance(result, nn.Module):
        raise TypeError(f"unlearning method {name!r} returned {type(result).__name__} ({result!r:.60}), not the unlearned model: "
                        "make it return the model (a torch.nn.Module), e.g. end it with 'return model'")
    return result


def unlearn_many(
    name: str,
    models: Sequence[nn.Module],
    retain: Data,
    forgets: Sequence[Data],
    params: Mapping[str, Any] | Any | None,
    generators: Sequence[Any],
    make_grouped: Callable[[int], nn.Module] | None = None,
    monitors: Sequence[Monitor | None] | None = None,
    *,
    group_size: int | None = None,
    group_mode: str = "grouped",
) -> list[nn.Module]:
    """:func:`unlearn` of K runs (model k with forget set k and generator k), the runs' final retain
    steps batched where the method declares them (``final_steps``: retain fine-tune, forget ascent,
    IDA, model clipping) and they have one shape (the same retain set, schedule and batch size: every
    run of one experiment) — as one grouped network ``make_grouped(K)`` (``group_mode="grouped"``)
    or by ``torch.func.vmap`` (``"vmap"``: any model, no ``make_grouped``); otherwise one run
    after another.  Each model is its :func:`unlearn` result up to the floating-point evaluation
    order of the grouped kernels (each run draws exactly the batches and noise it draws alone).
    ``group_size`` pads the network (:func:`~.common.run_grouped`), so that a run computes the same
    whichever runs share its group.  The models are not modified."""
    from ..torch_utils import as_torch_generator, model_device
    from ..training.vmapped import GROUP_MODES
    from .common import groupable, run_grouped

    k = len(models)
    if not (len(forgets) == len(generators) == k) or (monitors is not None and len(monitors) != k):
        raise ValueError(f"unlearn_many needs one forget set, generator (and monitor) per model: {k} models, "
                         f"{len(forgets)} forget sets, {len(generators)} generators")
    monitors = list(monitors) if monitors is not None else [None] * k
    check_choice(group_mode, GROUP_MODES, "group_mode")
    method = get_method(name)
    if method.final_steps is None or (make_grouped is None and group_mode != "vmap") or max(k, group_size or 1) < 2:
        return [unlearn(name, m, retain, f, params, g, monitor=mon) for m, f, g, mon in zip(models, forgets, generators, monitors)]
    p = make_params(name, params)
    outs = [copy.deepcopy(m) for m in models]
    device = model_device(outs[0])
    retain_t = _as_data(retain, "retain", device)
    steps = []
    for out, forget, g, mon in zip(outs, forgets, generators, monitors):
        if g is None:
            raise ValueError(f"unlearning method {name!r} needs a generator (or seed) for its randomness")
        args = (out, retain_t, _as_data(forget, "forget", device), p, as_torch_generator(g))
        steps.append(method.final_steps(*args, monitor=mon) if method.monitors and mon is not None else method.final_steps(*args))
    if groupable(steps, group_size):
        return run_grouped(outs, retain_t, steps, make_grouped, group_size=group_size, mode=group_mode)
    return [out if s is None else s.run(out, retain_t) for out, s in zip(outs, steps)]


def release_key(name: str, params: Mapping[str, Any] | Any | None = None) -> str | None:
    """What the noiseless part of ``name`` with ``params`` depends on, as a string, or None when the
    method has no :class:`NoiseRelease`: experiments with equal keys (on one design) can share it.

    The hyperparameters other than the release's, defaults filled in, in a canonical order; torch is
    imported only for methods that are not built in.
    """
    if name in METHOD_SPECS and name not in UNLEARNING_METHODS:  # known without importing the implementation (torch)
        release_params = METHOD_SPECS[name].release_params or None
    else:
        spec = get_method(name).noise_release  # the one error for an unknown name or a bad path
        release_params = None if spec is None else spec.params
    if release_params is None:
        return None
    p = make_params(name, params)
    shared = {f.name: getattr(p, f.name) for f in dataclasses.fields(p) if f.name not in release_params}
    return f"{name}:{sorted(shared.items())!r}"


def unlearn_variants(
    name: str,
    model: nn.Module,
    retain: Data,
    forget: Data,
    variants: "list[tuple[Mapping[str, Any] | Any, torch.Generator, Monitor | None]]",
    prepare_generator: torch.Generator,
) -> list[nn.Module]:
    """One unlearned model per ``(params, generator, monitor)`` variant, sharing the noiseless part.

    The variants' parameters may differ only in the method's release parameters
    (:class:`NoiseRelease`); the noiseless part runs once with ``prepare_generator`` and each
    variant then draws its release noise from its own generator.  Each variant's model is
    distributed exactly as :func:`unlearn` would give it; the variants are dependent through the
    shared part (never audit them as one experiment).  ``model`` is not modified.
    """
    return unlearn_variants_many(name, [model], retain, [forget], [variants], [prepare_generator])[0]


def unlearn_variants_many(
    name: str,
    models: Sequence[nn.Module],
    retain: Data,
    forgets: Sequence[Data],
    variants: "Sequence[list[tuple[Mapping[str, Any] | Any, torch.Generator, Monitor | None]]]",
    prepare_generators: Sequence[torch.Generator],
    *,
    group_size: int | None = None,
) -> list[list[nn.Module]]:
    """:func:`unlearn_variants` of K runs (model k with forget set k, its variants and its prepare
    generator): the runs' noiseless parts at once where the method has a ``prepare_many``
    (rewind-to-delete's full-batch steps by ``vmap``), else one after another; each run's models
    are :func:`unlearn_variants`' up to the batched kernels' rounding.  ``group_size`` pads the
    batch with copies of the last run (their results dropped), so that a run computes the same
    whichever runs share its batch.  The models are not modified."""
    from ..torch_utils import model_device

    method = get_method(name)
    spec = method.noise_release
    if spec is None:
        raise ValueError(f"unlearning method {name!r} has no noise release to share; run each experiment with unlearn()")
    if not (len(models) == len(forgets) == len(variants) == len(prepare_generators)):
        raise ValueError(f"{len(models)} models, {len(forgets)} forget sets, {len(variants)} variant lists and "
                         f"{len(prepare_generators)} generators: one each per run")
    if not models or not variants[0]:
        return [[] for _ in models]
    plist = [make_params(name, p) for p, _, _ in variants[0]]
    if any([make_params(name, p) for p, _, _ in run] != plist for run in variants[1:]):
        raise ValueError(f"every run's variants of {name!r} must have the same parameters")
    if len({release_key(name, p) for p in plist}) != 1:
        raise ValueError(f"variants of {name!r} may differ only in {list(spec.params)}; got different other parameters")
    shared = [copy.deepcopy(m) for m in models]
    device = model_device(shared[0])
    retain_t = _as_data(retain, "retain", device)
    forgets_t = [_as_data(f, "forget", device) for f in forgets]
    if spec.prepare_many is not None and max(len(shared), group_size or 1) > 1:
        pad = max((group_size or 0) - len(shared), 0)
        generators = list(prepare_generators) + [_generator_copy(prepare_generators[-1]) for _ in range(pad)]
        states = spec.prepare_many(shared + [copy.deepcopy(shared[-1]) for _ in range(pad)], retain_t, forgets_t + [forgets_t[-1]] * pad,
                                   plist[0], generators)[: len(shared)]
    else:
        states = [spec.prepare(m, retain_t, f, plist[0], g) for m, f, g in zip(shared, forgets_t, prepare_generators)]
    out = []
    for model, state, run in zip(shared, states, variants):
        released = []
        for i, (p, (_, g, mon)) in enumerate(zip(plist, run)):
            m = model if i == len(run) - 1 else copy.deepcopy(model)
            released.append(spec.release(m, state, p, g, mon if mon is not None else Monitor()))
        out.append(released)
    return out


def _generator_copy(generator: "torch.Generator") -> "torch.Generator":
    """A generator in the state of ``generator`` (a padded run's draws leave the real run's stream alone)."""
    import torch

    out = torch.Generator(device=generator.device)
    out.set_state(generator.get_state())
    return out
