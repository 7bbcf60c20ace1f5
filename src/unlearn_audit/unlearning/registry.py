"""The registry of unlearning methods: what a method is (:class:`UnlearningMethod`, its optional
:class:`NoiseRelease` split and the :class:`Monitor` it reports to) and :func:`register`, with which
each built-in algorithm module and a user's own registers itself (paper §7, App. G).  A built-in
method's dataclass, certificate and what it reads come from its spec (:data:`.params.METHOD_SPECS`,
docs/development.md#add-an-unlearning-method); a method of one's own gets a spec from its
registration.  The package (:mod:`unlearn_audit.unlearning`) re-exports every name; torch-free."""

from __future__ import annotations

import dataclasses
import inspect
import typing
from dataclasses import dataclass
from typing import Any, Callable

from .params import METHOD_SPECS
from .spec import MethodSpec

__all__ = ["UnlearnFn", "Monitor", "NoiseRelease", "UnlearningMethod", "UNLEARNING_METHODS", "register"]

#: The package whose modules hold the built-in algorithms (a built-in name is theirs alone).
_PACKAGE = __name__.rpartition(".")[0]

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
        once per run, once the numbers are known (model clipping: at the end of its noisy phase).
    """

    def checkpoint(self, step: int, model: Any) -> None:  # noqa: D401 - protocol method
        """Score the model after noisy step ``step`` synchronously (see the class docstring)."""

    def record(self, **values: float | int | bool) -> None:
        """Receive named numbers of the run (floats, ints, bools)."""


@dataclass(frozen=True)
class NoiseRelease:
    """A method's split into a noiseless part and a final Gaussian release.

    ``prepare(model, retain, forget, params, generator) -> state`` modifies ``model`` in place (all
    of the method's randomness except the release noise comes from ``generator``);
    ``release(model, state, params, generator, monitor) -> model`` adds the noise (and records what
    the method reports).  ``params`` names the hyperparameters that only ``release`` reads.  The
    registered ``fn`` must equal ``release(prepare(...))`` with one generator for both.  An optional
    ``prepare_many(models, retain, forgets, params, generators) -> states`` is ``prepare`` of K runs
    at once, each up to rounding what ``prepare`` gives it (:func:`unlearn_variants_many`).
    """

    prepare: Callable[..., Any]
    release: Callable[..., Any]
    params: tuple[str, ...]
    prepare_many: Callable[..., Any] | None = None


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
    noise_release
        The method's :class:`NoiseRelease` split, or None.
    final_steps
        ``final_steps(model, retain, forget, params, generator[, monitor]) -> RetainSteps | None``:
        everything of ``fn`` before its final plain SGD steps on the retain set (in place), returning
        those steps drawn from the same generator (:class:`~.common.RetainSteps`); ``fn`` must equal
        it followed by the steps.  Lets :func:`unlearn_many` run K runs' final steps as one grouped
        network.  None: the method has no such phase.
    spec
        Its :class:`~.spec.MethodSpec` (a built-in method's :data:`.params.METHOD_SPECS` entry; one
        of one's own: the defaults, with what its registration says).
    """

    name: str
    fn: UnlearnFn
    params_cls: type
    certified: bool = False
    uses_forget: bool = True
    description: str = ""
    monitors: bool = False
    noise_release: NoiseRelease | None = None
    final_steps: UnlearnFn | None = None
    spec: MethodSpec | None = None


UNLEARNING_METHODS: dict[str, UnlearningMethod] = {}


def register(
    name: str, params_cls: type | None = None, *, certified: bool = False, uses_forget: bool = True, description: str = "",
    noise_release: NoiseRelease | None = None, final_steps: UnlearnFn | None = None,
) -> Callable[[UnlearnFn], UnlearnFn]:
    """Decorator registering ``fn`` under ``name``.

    ``params_cls`` is the frozen dataclass of the hyperparameters; by default the type annotation
    of ``fn``'s ``params`` argument.  ``description`` defaults to the first line of the docstring.
    ``noise_release`` declares the method's split into a noiseless part and a Gaussian release;
    ``final_steps`` its split before its final retain steps (:class:`UnlearningMethod`).  A built-in
    method (a module of this package registering a name of :data:`.params.METHOD_SPECS`) takes its
    dataclass, certificate and what it reads from its spec, and its release parameters and
    ``final_steps`` must agree with it.
    """

    def deco(fn: UnlearnFn) -> UnlearnFn:
        builtin = METHOD_SPECS.get(name) if fn.__module__.startswith(f"{_PACKAGE}.") else None
        if name in UNLEARNING_METHODS or (builtin is None and name in METHOD_SPECS):  # a built-in name is taken before its module loads
            raise ValueError(f"unlearning method {name!r} is already registered")
        cls = builtin.params if builtin is not None else (params_cls or _annotated_params(fn))
        if cls is None or not dataclasses.is_dataclass(cls):
            raise TypeError(f"unlearning method {name!r}: params_cls must be a dataclass (give it or annotate fn's params argument)")
        doc = description or next(iter((fn.__doc__ or "").strip().splitlines()), "")
        if noise_release is not None:
            unknown = sorted(set(noise_release.params) - {f.name for f in dataclasses.fields(cls)})
            if unknown:
                raise TypeError(f"unlearning method {name!r}: release parameters {unknown} are not fields of {cls.__name__}")
        spec = builtin or MethodSpec(name, cls, certified=certified, reads=("retain", "forget") if uses_forget else ("retain",),
                                     release_params=noise_release.params if noise_release is not None else (), grouped=final_steps is not None)
        if builtin is not None:
            _check_against_spec(builtin, noise_release, final_steps)
        UNLEARNING_METHODS[name] = UnlearningMethod(name, fn, cls, spec.certified, spec.uses_forget, doc, _accepts_monitor(fn), noise_release,
                                                    final_steps, spec)
        return fn

    return deco


def _annotated_params(fn: UnlearnFn) -> type | None:
    """The type annotation of ``fn``'s ``params`` argument (None where it has none that resolves)."""
    cls = fn.__annotations__.get("params")
    if isinstance(cls, str):
        try:
            cls = typing.get_type_hints(fn).get("params")
        except NameError:
            cls = None
    return cls


def _check_against_spec(spec: MethodSpec, noise_release: NoiseRelease | None, final_steps: UnlearnFn | None) -> None:
    """A built-in implementation's release split and final steps are the ones its spec declares."""
    released = tuple(noise_release.params) if noise_release is not None else ()
    if released != spec.release_params or (final_steps is not None) != spec.grouped:
        raise TypeError(f"unlearning method {spec.name!r}: its implementation's release parameters {list(released)} and final steps "
                        f"({final_steps is not None}) disagree with its spec's ({list(spec.release_params)}, grouped {spec.grouped})")


def _accepts_monitor(fn: UnlearnFn) -> bool:
    try:
        param = inspect.signature(fn).parameters.get("monitor")
    except (TypeError, ValueError):
        return False
    return param is not None and param.kind in (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
