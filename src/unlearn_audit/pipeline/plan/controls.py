"""The controls' specs (paper §7; docs/workflow.md#neural-network-audits-designs-and-experiments;
docs/development.md#recipes): the base models an experiment starts from, each control as a
:class:`ControlSpec`, and what the plan, the rule steps and the reports ask of an experiment about
them (its base, whether and which control it is).  The controls run the method whose spec is a
control (:data:`unlearn_audit.unlearning.params.METHOD_SPECS`); :mod:`unlearn_audit.pipeline.controls`
adds them to a config.  Torch-free.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

from ...unlearning.params import METHOD_SPECS

__all__ = ["TRAINED", "RETRAIN", "ControlSpec", "CONTROLS", "CONTROL_METHOD", "base_of", "is_control", "control_of", "controls_on"]

#: The base models an experiment starts from (its ``base``): the trained A(D(S)) of each run, or the
#: one retrained A(D_r) of its design, which also names that model's training chunk and run phase.
TRAINED, RETRAIN = "trained", "retrain"

#: The method the controls run: the one built-in method whose spec is a control (``no_unlearning``).
CONTROL_METHOD = next(name for name, spec in METHOD_SPECS.items() if spec.control)


@dataclass(frozen=True)
class ControlSpec:
    """A control: its name (the suffix of the experiment that
    :func:`~unlearn_audit.pipeline.controls.add_controls` adds), its label in the tables' method
    column and the base model it runs :data:`CONTROL_METHOD` on."""

    name: str
    label: str
    base: str


#: The controls, in the order the tables show them.
CONTROLS: dict[str, ControlSpec] = {s.name: s for s in (
    ControlSpec(CONTROL_METHOD, "No unlearning", TRAINED),
    ControlSpec(RETRAIN, "Retrain", RETRAIN),
)}


def base_of(experiment_cfg: Mapping) -> str:
    """The base model an experiment starts from: :data:`TRAINED` (the default) or :data:`RETRAIN`."""
    return experiment_cfg.get("base", TRAINED)


def is_control(experiment_cfg: Mapping) -> bool:
    """Whether an experiment is a control (its method's spec is a control: ``no_unlearning``)."""
    spec = METHOD_SPECS.get(experiment_cfg.get("method"))
    return spec is not None and spec.control


def control_of(experiment_cfg: Mapping) -> ControlSpec | None:
    """The control an experiment is (by its base), or ``None`` for an unlearning experiment."""
    if not is_control(experiment_cfg):
        return None
    return next(spec for spec in CONTROLS.values() if spec.base == base_of(experiment_cfg))


def controls_on(experiments: Mapping[str, Mapping], base: str) -> dict[str, str]:
    """{design: the name of its control on ``base``} (:data:`TRAINED`: No unlearning; :data:`RETRAIN`:
    Retrain), the last in ``experiments``' order where a design has several."""
    return {e["design"]: name for name, e in experiments.items() if is_control(e) and base_of(e) == base}
