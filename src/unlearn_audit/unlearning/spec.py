"""What an unlearning method is, apart from its implementation: :class:`MethodSpec`
(docs/development.md#add-an-unlearning-method).

A method's spec says what the config check, the plan and the cost model ask of it: its
hyperparameter dataclass, whether it is certified or a control, what it reads, which of its
hyperparameters only its final Gaussian release reads, whether its final retain steps can be
grouped, and its work for the cost model — optimizer steps and training-image equivalents (one
forward and backward pass of one example; a forward-only pass counts :data:`FORWARD`, a
Hessian–vector product :data:`HVP`) and the parts of a run a per-unit row prices on its own
(:class:`RunPart`) — as functions of its validated hyperparameters and a design's sizes.  The
built-in methods' specs are :data:`.params.METHOD_SPECS`; a method of one's own (registered, or
named by import path) gets a spec with the defaults here.  Standard library only.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable, Mapping

__all__ = ["FORWARD", "HVP", "RunPart", "Work", "MethodSpec", "forget_rows", "epochs_work"]

FORWARD = 1.0 / 3.0   # a forward-only pass, in training-image units
HVP = 2.0             # a Hessian-vector product (double backward), in training-image units

#: (optimizer steps, training-image equivalents) of one run's noiseless part.
Work = tuple[float, float]


@dataclass(frozen=True)
class RunPart:
    """Work of a run that a per-unit row prices on its own (:func:`unlearn_audit.pipeline.plan.cost.throughput.read_unit_costs`):
    ``units`` (Hessian–vector products, noisy steps, micro-batches) over ``examples`` rows, counted
    in the run's steps and training-image equivalents as ``steps`` and ``images``."""

    units: float
    examples: float
    steps: float
    images: float

    def __add__(self, other: "RunPart") -> "RunPart":
        return RunPart(self.units + other.units, self.examples + other.examples, self.steps + other.steps, self.images + other.images)

    def scaled(self, factor: float) -> "RunPart":
        return RunPart(self.units * factor, self.examples * factor, self.steps * factor, self.images * factor)


def forget_rows(batches: int, batch_size: int, n_forget: float) -> float:
    """Rows of ``batches`` mini-batches cycling through D_f(S) in passes of ceil(n/batch_size) batches."""
    if not n_forget:
        return 0.0
    per_pass = math.ceil(n_forget / batch_size)
    full, rest = divmod(batches, per_pass)
    return full * n_forget + min(rest * batch_size, n_forget)


def epochs_work(p: Any, n_retain: float, n_forget: float) -> Work:
    """The default work: ``epochs`` passes over D_r in batches of ``batch_size`` (a method without a
    batch size: one step a pass), and ``ascent_epochs`` passes over D_f(S) in batches of
    ``ascent_batch_size`` (default ``batch_size``) where the hyperparameters have them."""
    epochs = getattr(p, "epochs", 1)
    images = epochs * n_retain + getattr(p, "ascent_epochs", 0) * n_forget
    batch = getattr(p, "batch_size", None)
    if not batch:
        return float(epochs), images
    steps = epochs * math.ceil(n_retain / batch)
    if getattr(p, "ascent_epochs", 0) and n_forget:
        steps += p.ascent_epochs * math.ceil(n_forget / (getattr(p, "ascent_batch_size", None) or batch))
    return float(steps), images


#: A spec's config check: ``check(params, design, key=, design_key=, n_retain=)`` → (config key,
#: message) pairs; ``key`` is the experiment's config key, ``design_key`` its design's, ``n_retain``
#: the design's retain size where its dataset knows it exactly (else ``None``).
ConfigCheck = Callable[..., "list[tuple[str, str]]"]


@dataclass(frozen=True)
class MethodSpec:
    """An unlearning method as the config check, the plan and the cost model see it.

    Attributes
    ----------
    name
        The config's ``method``.
    params
        The frozen dataclass of its hyperparameters (``dict``: a function of one's own that takes
        them as a plain mapping).
    certified
        Whether it carries an (ε, δ) unlearning certificate.
    reads
        What it reads besides the model: ``retain`` (D_r) and ``forget`` (D_f(S)).
    control
        Whether it is a control rather than an unlearning method (``no_unlearning``: the trained or
        retrained model as is; :mod:`unlearn_audit.pipeline.controls`).
    release_params
        The hyperparameters only its final Gaussian release reads
        (:class:`~unlearn_audit.unlearning.registry.NoiseRelease`).
    grouped
        Whether it ends with plain retain steps that ``unlearn_many`` can group (its registered
        ``final_steps``).
    training_loop
        Whether its runs take steps of the library's training loops (the first imports
        ``torch._inductor`` and ``torch._dynamo`` once a job process).
    work
        ``work(params, n_retain, n_forget)`` → (steps, training-image equivalents) of one run's
        noiseless part (the noise release is free); default :func:`epochs_work`.
    hvps
        ``hvps(params)`` → (Hessian–vector products, their examples) of one run, or ``None``.
    parts
        ``parts(params, n_retain)`` → the parts of one run a per-unit row prices on its own
        (:class:`RunPart` by the case of ``benchmarks/gpu_cases.py`` that measures it), or ``None``.
    check
        ``check(params, design, key=, design_key=, n_retain=)`` → what the config must fix, known
        before any job (:data:`ConfigCheck`), or ``None``.
    """

    name: str
    params: type
    certified: bool = False
    reads: tuple[str, ...] = ("retain", "forget")
    control: bool = False
    release_params: tuple[str, ...] = ()
    grouped: bool = False
    training_loop: bool = True
    work: Callable[[Any, float, float], Work] = epochs_work
    hvps: Callable[[Any], tuple[float, float]] | None = None
    parts: Callable[[Any, float], "dict[str, RunPart]"] | None = None
    check: ConfigCheck | None = None

    @property
    def uses_forget(self) -> bool:
        """Whether it reads D_f(S) at all."""
        return "forget" in self.reads

    def hessian_vector_products(self, params: Any) -> tuple[float, float]:
        """(Hessian–vector products, their examples) of one run; none without :attr:`hvps`."""
        return self.hvps(params) if self.hvps is not None else (0.0, 0.0)

    def run_parts(self, params: Any, n_retain: float) -> "dict[str, RunPart]":
        """:attr:`parts` of one run on ``n_retain`` retain examples; none without them."""
        return self.parts(params, n_retain) if self.parts is not None else {}

    def config_problems(self, params: Any, design: Mapping, *, key: str, design_key: str, n_retain: float | None) -> list[tuple[str, str]]:
        """:attr:`check` of an experiment (config key ``key``) on ``design`` (``design_key``)."""
        if self.check is None:
            return []
        return self.check(params, design, key=key, design_key=design_key, n_retain=n_retain)
