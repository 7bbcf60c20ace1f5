"""Is the audited regime an experiment?  Accuracies beside every bound, and two warnings (paper §7).

A bound means something only about models that work and a method that did something:

* **at chance** — the audited models' mean test accuracy is within 2 binomial standard errors
  (of one model's test set) of 1/classes, or below it: a bound of 0 on such models says nothing
  about the algorithm's certificate, only that the models are destroyed;
* **no-op** — a method whose forget accuracy is within 2 binomial standard errors of the
  *No unlearning* control's and whose claimed ε_LB (the pre-registered test's) is at least 90 % of
  that control's, where that control's is positive: it left the model where it was, and its bound
  is the design's own leakage.  The 90 % is a reading aid, not a test.  A control at 0 makes no
  method a no-op: two zeros say nothing about each other;
* **no power** — every experiment of a design whose *No unlearning* control is not rejected
  (its claimed ε_LB is 0): the trained models themselves show no leakage at this audit's size, so
  a 0 of any method on the design is no evidence that it forgets.  The fix is the design, not the
  method: more candidates m, a larger r, more calibration runs Γ or evaluation runs L, or models
  that memorise (docs/workflow.md, "A memorising regime");
* **not forgotten** — a method whose mean forget accuracy is more than ``FORGET_MARGIN`` (0.05)
  above its design's *Retrain* control's (A(D_r), which never saw the forget set): the method does
  not look unlearned, its forget accuracy alone tells it apart from retraining, so a rejection of
  its claim says nothing an accuracy check does not.  False for the controls themselves, for a
  design without a Retrain control here and where an accuracy is NaN.

:func:`experiment_diagnostics` computes the four per experiment from the evaluation runs' metrics
and the reported bounds, :func:`checkpoint_diagnostics` those of ``STEP_FLAGS`` per checkpoint step
(each step's models are an audited model set of their own); the table and figure rules put them in
``at_chance`` / ``no_op`` / ``no_power`` / ``not_forgotten`` columns and :func:`warn` writes one
line per flag to the job's log.  Torch-free.
"""

from __future__ import annotations

import math
import sys
from typing import Mapping, TextIO

import numpy as np
import pandas as pd

from ..schemas import DIAGNOSTIC_FLAGS as FLAGS
from ..schemas import REPORTED_ROLES, STEP_FLAGS
from .controls import RETRAIN, TRAINED, controls_on, is_control

__all__ = ["ACCURACY_COLUMNS", "FLAGS", "NO_OP_FRACTION", "FORGET_MARGIN", "accuracies", "at_chance", "same_accuracy", "is_no_op",
           "is_not_forgotten", "experiment_diagnostics",
           "checkpoint_accuracies", "checkpoint_diagnostics", "warn"]

ACCURACY_COLUMNS = ("retain_acc", "forget_acc", "test_acc")
#: A method whose ε_LB reaches this fraction of the No-unlearning control's (and whose forget
#: accuracy matches it) is flagged as a no-op.
NO_OP_FRACTION = 0.9
#: A method whose mean forget accuracy is more than this above its design's Retrain control's is
#: flagged as not forgotten (module docstring).
FORGET_MARGIN = 0.05


def accuracies(metrics: pd.DataFrame, experiment: str) -> dict[str, float]:
    """Mean retain, forget and test accuracy of the experiment's evaluation runs (NaN if none)."""
    sub = metrics[(metrics.experiment == experiment) & (metrics.phase == "eval")]
    return {k: float(sub[k].mean()) if len(sub) else float("nan") for k in ACCURACY_COLUMNS}


def _se(p: float, n: float) -> float:
    return math.sqrt(max(p * (1.0 - p), 0.0) / n) if n > 0 else float("inf")


def at_chance(test_acc: float, chance: float, n_test: float) -> bool:
    """Whether a mean test accuracy is within 2 binomial standard errors of ``chance`` (1/classes,
    n = one model's ``n_test``) or below it."""
    if not (np.isfinite(test_acc) and np.isfinite(chance)):
        return False
    return bool(test_acc <= chance + 2.0 * _se(chance, n_test))


def same_accuracy(a: float, b: float, n: float) -> bool:
    """Whether two accuracies on ``n`` examples each are within 2 standard errors of their difference."""
    if not (np.isfinite(a) and np.isfinite(b)):
        return False
    p = (a + b) / 2.0
    return bool(abs(a - b) <= 2.0 * math.sqrt(2.0) * _se(p, n) + 1e-12)


def _reported_epsilon(bounds: pd.DataFrame, experiment: str) -> float:
    """The experiment's claimed ε_LB: its reported row's bound under the pre-registered test
    (``epsilon_lb_test``; in bounds written without that column, ``epsilon_lb_exact`` for the exact
    test and Theorem 4.2's ``epsilon_lb`` otherwise)."""
    rows = bounds[(bounds.experiment == experiment) & bounds.role.isin(REPORTED_ROLES)]
    if not len(rows):
        return float("nan")
    row = rows.iloc[0]
    if "epsilon_lb_test" in rows.columns:
        return float(row["epsilon_lb_test"])
    exact = "test" in rows.columns and row["test"] == "exact" and "epsilon_lb_exact" in rows.columns
    return float(row["epsilon_lb_exact"] if exact else row["epsilon_lb"])


def is_no_op(epsilon: float, forget_acc: float, control_epsilon: float, control_forget_acc: float, n_forget: float) -> bool:
    """The no-op verdict (module docstring): the claimed ε_LB at least ``NO_OP_FRACTION`` of a
    positive control's and the forget accuracy within 2 standard errors of the control's."""
    if not (np.isfinite(epsilon) and np.isfinite(control_epsilon)) or control_epsilon <= 0:
        return False
    return bool(epsilon >= NO_OP_FRACTION * control_epsilon and same_accuracy(forget_acc, control_forget_acc, n_forget))


def is_not_forgotten(forget_acc: float, retrain_forget_acc: float) -> bool:
    """The not-forgotten verdict (module docstring): a forget accuracy more than ``FORGET_MARGIN``
    above the Retrain control's; False where either is NaN."""
    if not (np.isfinite(forget_acc) and np.isfinite(retrain_forget_acc)):
        return False
    return bool(forget_acc > retrain_forget_acc + FORGET_MARGIN)


def _no_unlearning_controls(experiments: Mapping[str, Mapping]) -> dict[str, str]:
    """{design: the name of its No-unlearning control} (method ``no_unlearning`` on the trained models, :mod:`.controls`)."""
    return controls_on(experiments, TRAINED)


def _not_forgotten(experiments: Mapping[str, Mapping], name: str, forget_acc: float, retrain_forget_acc: dict[str, float]) -> bool:
    """Whether experiment ``name`` (not a control) at ``forget_acc`` is not forgotten against its
    design's Retrain control (``retrain_forget_acc``: design → that control's mean forget accuracy)."""
    e = experiments.get(name, {})
    if is_control(e):
        return False
    return is_not_forgotten(forget_acc, retrain_forget_acc.get(e.get("design"), float("nan")))


def _retrain_forget_accuracies(metrics: pd.DataFrame, experiments: Mapping[str, Mapping]) -> dict[str, float]:
    """{design: the mean forget accuracy of its Retrain control's evaluation runs}."""
    return {design: accuracies(metrics, name)["forget_acc"] for design, name in controls_on(experiments, RETRAIN).items()}


def experiment_diagnostics(bounds: pd.DataFrame, metrics: pd.DataFrame, experiments: Mapping[str, Mapping]) -> pd.DataFrame:
    """One row per experiment: ``experiment, retain_acc, forget_acc, test_acc, at_chance, no_op, no_power,
    epsilon_lb_claim`` (the last: the reported row's bound under the pre-registered test, NaN without bounds).

    ``experiments`` maps a name to its summary (``design``, ``method``, ``base``); the No-unlearning
    control of a design is its experiment with method ``no_unlearning`` on the trained models.
    ``no_op`` is False for the controls themselves and where the design has no such control here;
    ``no_power`` is True for every experiment of a design whose control's claim is 0, and False
    where the design has no control with a bound here (the pairwise tables pass no bounds);
    ``not_forgotten`` compares the forget accuracy with the design's Retrain control's (module docstring).
    """
    ev = metrics[metrics.phase == "eval"]
    rows = {}
    for name in experiments:
        sub = ev[ev.experiment == name]
        acc = accuracies(metrics, name)
        chance = float(sub.chance_acc.iloc[0]) if len(sub) and "chance_acc" in sub else float("nan")
        n_test = float(sub.n_test.mean()) if len(sub) and "n_test" in sub else 0.0
        rows[name] = {"experiment": name, **acc, "at_chance": at_chance(acc["test_acc"], chance, n_test),
                      "epsilon_lb": _reported_epsilon(bounds, name),
                      "n_forget": float(sub.n_forget.mean()) if len(sub) and "n_forget" in sub else 0.0}
    controls = _no_unlearning_controls(experiments)
    retrained = _retrain_forget_accuracies(metrics, experiments)
    for name, e in experiments.items():
        ctl = controls.get(e["design"])
        row = rows[name]
        ref = rows[ctl] if ctl is not None else None
        row["no_power"] = bool(ref is not None and np.isfinite(ref["epsilon_lb"]) and ref["epsilon_lb"] <= 0)
        row["no_op"] = bool(ref is not None and not is_control(e)
                            and is_no_op(row["epsilon_lb"], row["forget_acc"], ref["epsilon_lb"], ref["forget_acc"], ref["n_forget"]))
        row["not_forgotten"] = _not_forgotten(experiments, name, row["forget_acc"], retrained)
    cols = ["experiment", *ACCURACY_COLUMNS, *FLAGS, "epsilon_lb_claim"]
    return pd.DataFrame([{**{k: r[k] for k in cols[:-1]}, "epsilon_lb_claim": r["epsilon_lb"]} for r in rows.values()], columns=cols)


def checkpoint_accuracies(metrics: pd.DataFrame) -> pd.DataFrame:
    """``experiment, step, test_acc, forget_acc``: the mean over evaluation runs of the accuracies
    each run recorded at its checkpoint steps (model clipping's noisy steps, Figure 1a)."""
    import json

    rows = []
    for r in metrics[metrics.phase == "eval"].itertuples(index=False):
        record = json.loads(r.record or "{}")
        tests, forgets = record.get("checkpoint_test_acc", {}), record.get("checkpoint_forget_acc", {})
        rows += [{"experiment": r.experiment, "step": int(step), "test_acc": float(acc), "forget_acc": float(forgets.get(step, np.nan))}
                 for step, acc in tests.items()]
    cols = ["experiment", "step", "test_acc", "forget_acc"]
    if not rows:
        return pd.DataFrame(columns=cols)
    return pd.DataFrame(rows).groupby(["experiment", "step"], as_index=False, sort=True)[["test_acc", "forget_acc"]].mean()[cols]


def checkpoint_diagnostics(checkpoint_bounds: pd.DataFrame, metrics: pd.DataFrame, diagnostics: pd.DataFrame,
                           experiments: Mapping[str, Mapping]) -> pd.DataFrame:
    """``experiment, step, test_acc, forget_acc, at_chance, no_op, not_forgotten``: each checkpoint
    step's models (the algorithm stopped at that step, Figure 1a, Table 6's first step) flagged as a
    final model set is: at chance by its step's mean test accuracy, a no-op against its design's
    No-unlearning control (final models, ``diagnostics``) by its step's reported bound and forget
    accuracy, not forgotten against its design's Retrain control by its step's forget accuracy."""
    cols = ["experiment", "step", "test_acc", "forget_acc", *STEP_FLAGS]
    steps = checkpoint_accuracies(metrics)
    if steps.empty:
        return pd.DataFrame(columns=cols)
    reported = checkpoint_bounds[checkpoint_bounds.role.isin(REPORTED_ROLES)] if len(checkpoint_bounds) else checkpoint_bounds
    claim = {(str(r.experiment), int(r.step)): float(r.epsilon_lb_test) for r in reported.itertuples(index=False)} if len(reported) else {}
    ev = metrics[metrics.phase == "eval"]
    by_name = diagnostics.set_index("experiment") if len(diagnostics) else None
    controls = _no_unlearning_controls(experiments)
    retrained = _retrain_forget_accuracies(metrics, experiments)
    rows = []
    for r in steps.itertuples(index=False):
        sub = ev[ev.experiment == r.experiment]
        chance = float(sub.chance_acc.iloc[0]) if len(sub) else float("nan")
        n_test = float(sub.n_test.mean()) if len(sub) else 0.0
        ctl = controls.get(experiments.get(r.experiment, {}).get("design"))
        no_op = False
        if ctl is not None and by_name is not None and ctl in by_name.index:
            ref = by_name.loc[ctl]
            n_forget = float(ev[ev.experiment == ctl].n_forget.mean()) if (ev.experiment == ctl).any() else 0.0
            no_op = is_no_op(claim.get((r.experiment, int(r.step)), float("nan")), r.forget_acc, float(ref.epsilon_lb_claim),
                             float(ref.forget_acc), n_forget)
        rows.append({"experiment": r.experiment, "step": int(r.step), "test_acc": float(r.test_acc), "forget_acc": float(r.forget_acc),
                     "at_chance": at_chance(float(r.test_acc), chance, n_test), "no_op": no_op,
                     "not_forgotten": _not_forgotten(experiments, r.experiment, float(r.forget_acc), retrained)})
    return pd.DataFrame(rows, columns=cols)


def warn(diagnostics: pd.DataFrame, stream: TextIO | None = None) -> list[str]:
    """Write (to the job's log, by default stderr) and return one warning line per flag of each experiment."""
    out = stream if stream is not None else sys.stderr
    lines = []
    for r in diagnostics.itertuples(index=False):
        if r.at_chance:
            lines.append(f"WARNING: {r.experiment}: the audited models are at chance (mean test accuracy {r.test_acc:.3f}); "
                         "a bound on destroyed models says nothing about the algorithm: change the regime")
        if r.no_op:
            lines.append(f"WARNING: {r.experiment}: forget accuracy ({r.forget_acc:.3f}) and epsilon_LB are indistinguishable from "
                         "No unlearning: the method left the model where it was")
        if getattr(r, "no_power", False):
            lines.append(f"WARNING: {r.experiment}: its design's No-unlearning control is not rejected (epsilon_LB 0): this audit cannot "
                         "detect leakage at its size, so a 0 here is no evidence of forgetting; enlarge m, r, the calibration runs or "
                         "the evaluation runs, or train models that memorise (docs/workflow.md, \"A memorising regime\")")
        if getattr(r, "not_forgotten", False):
            lines.append(f"WARNING: {r.experiment}: its forget accuracy ({r.forget_acc:.3f}) is more than {FORGET_MARGIN:g} above Retrain's: "
                         "the method does not look unlearned, so a rejection of its claim says nothing an accuracy check does not")
    for line in lines:
        print(line, file=out)
    return lines
