"""The controls every neural-network audit stands beside (paper §7;
docs/workflow.md#neural-network-audits-designs-and-experiments); their specs are
:data:`unlearn_audit.catalogue.CONTROLS` (re-exported here, with what an experiment is of them).

* **No unlearning** — the trained model A(D(S)) audited as is (``method: no_unlearning``): the
  design's own leakage, the level an unlearning method must fall below to have done anything.
* **Retrain** — A(D_r), trained on the retain set alone from the design's x0 and order π
  (``base: retrain``): exact unlearning.  Its induced mechanism does not depend on S, so its ε_LB
  is 0 with probability at least 1 − ζ; a positive bound here would mean the audit is broken.

With ``nn.controls: true`` (the default) :func:`add_controls` adds both, as ordinary experiments
named ``<design>_no_unlearning`` and ``<design>_retrain``, for every design an experiment uses,
to every table and figure the design's experiments appear in, with the pre-registered cell (and
auditor) of the design's first experiment in config order.  An experiment the user already wrote
under such a name, or one with ``method: no_unlearning`` on the design, is kept and not duplicated.
"""

from __future__ import annotations

from typing import Any

from ..catalogue import CONTROL_METHOD, CONTROLS, RETRAIN, TRAINED, ControlSpec, base_of, control_of, controls_on, is_control

__all__ = ["TRAINED", "RETRAIN", "ControlSpec", "CONTROLS", "CONTROL_METHOD", "CONTROL_LABELS", "CONTROL_KEYS", "base_of", "is_control",
           "control_of", "controls_on", "control_experiments", "add_controls"]

#: The method-column label and base of each control (:data:`CONTROLS`).
CONTROL_LABELS = {name: (spec.label, spec.base) for name, spec in CONTROLS.items()}
#: The keys of the design's first experiment a control copies: its auditor and pre-registered cell.
CONTROL_KEYS = ("auditor", "r", "report_r", "statistic", "score", "test", "selection")


def control_experiments(experiments: dict[str, dict]) -> dict[str, dict]:
    """The control experiments missing from ``experiments`` (name → config), design by design."""
    first: dict[str, dict] = {}
    shown: dict[str, tuple[list[str], list[str]]] = {}
    present: set[tuple[str, str]] = set()
    for exp in experiments.values():
        design = exp.get("design")
        if is_control(exp):
            present.add((design, base_of(exp)))
            continue
        first.setdefault(design, exp)
        tables, figures = shown.setdefault(design, ([], []))
        tables += [t for t in exp.get("tables", []) if t not in tables]
        figures += [f for f in exp.get("figures", []) if f not in figures]
    out: dict[str, dict] = {}
    for design, exp in first.items():
        tables, figures = shown[design]
        if not tables and not figures:
            continue
        for suffix, control in CONTROLS.items():
            name = f"{design}_{suffix}"
            if (design, control.base) in present or name in experiments:
                continue
            ctl: dict[str, Any] = {"design": design, "method": CONTROL_METHOD, "base": control.base, "params": {}, "label": control.label,
                                   "tables": list(tables), "figures": list(figures)}
            ctl.update({k: exp[k] for k in CONTROL_KEYS if k in exp})
            out[name] = ctl
    return out


def add_controls(config: dict) -> dict:
    """Add :func:`control_experiments` to ``config['nn']['experiments']`` in place (after each
    design's last experiment) when the section is enabled and ``nn.controls`` is true; return it."""
    nn = config.get("nn", {})
    if not nn.get("enabled") or not nn.get("controls", True):
        return config
    experiments = nn.get("experiments", {})
    controls = control_experiments(experiments)
    if not controls:
        return config
    last = {exp["design"]: name for name, exp in experiments.items()}
    ordered: dict[str, dict] = {}
    for name, exp in experiments.items():
        ordered[name] = exp
        if last.get(exp.get("design")) == name:
            ordered.update({n: c for n, c in controls.items() if c["design"] == exp["design"]})
    nn["experiments"] = ordered
    return config
