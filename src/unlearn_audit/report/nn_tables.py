"""The paper's neural-network tables (Tables 1a, 1b, 3, 4, 5, 7) from bounds and run metrics.

Every renderer takes (bounds, metrics, experiments) where ``bounds`` has the BOUNDS schema,
``metrics`` the RUN_METRICS schema (evaluation runs), and ``experiments`` maps experiment
name → summary (design, dataset, split, batch_size, m, method, label, params, report_r, r).

Which bound is *the* result of an experiment was fixed before it ran
(:mod:`unlearn_audit.stats.selection`) and is recorded in the bounds' ``role`` column: the row
with role ``preregistered`` (or ``selected`` under ``selection="bonferroni"``, where every cell
was tested at ζ/K).  Tables 1 and 7 report that row; Tables 3, 4 and 5, which show several cells,
label each row in a last ``cell`` column (``preregistered`` / ``bonferroni-selected`` naming the
reported cell, else ``exploratory``: not a level-ζ claim on its own).  Tables 1 and 7 show the
exact test's ε_LB and μ_LB of the reported cell beside Theorem 4.2's (``epsilon_lb_exact``,
``mu_lb``); which of the two ε columns is the claim is the pre-registered test, named in ``cell``.

Bounds that carry the perfect-prediction ceiling of their cell (columns ``epsilon_lb_ceiling`` and
``at_ceiling``, added by :func:`unlearn_audit.pipeline.nn.with_ceilings`) give each table its
ceiling column(s) and a boolean flag per ε column: ``at_ceiling`` for the one ``epsilon_lb``
column, ``at_ceiling_<x>`` for ``epsilon_lb_<x>`` in Tables 3 and 4.  :func:`write_nn_table`
keeps the flags in the CSV and turns them into a trailing ‡ with a footnote in Markdown and LaTeX.
The renderers only select and render; no statistic is computed here.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Callable, Mapping

import pandas as pd

from .. import catalogue
from ..schemas import DIAGNOSTIC_FLAGS
from ..schemas import REPORTED_ROLES as _REPORTED
from .tables import diagnostics_row, format_cell, format_latex, format_markdown, write_table

__all__ = ["NN_TABLES", "REPORTED_ROLES", "CEILING_MARK", "CEILING_NOTE", "table1", "table3", "table4", "table5", "table7", "appendix_f4",
           "params_text", "write_nn_table"]

#: Roles of the row an experiment reports (BOUNDS ``role``), and how the tables label them.
REPORTED_ROLES = dict(zip(_REPORTED, ("preregistered", "bonferroni-selected")))
EXPLORATORY = "exploratory"

#: The mark of a bound equal to its cell's perfect-prediction ceiling, and the footnote that explains it.
CEILING_MARK = "‡"
CEILING_NOTE = (f"{CEILING_MARK} equals the perfect-prediction ceiling for this (m, r, L): every guess was right "
                "(for a median: in at least half of the L runs); the bound is limited by m, r and L, not by the algorithm.")
_FLAG = "at_ceiling"


def params_text(params: Mapping) -> str:
    """Compact, stable text of a hyperparameter mapping (e.g. ``q=1, lambda=0.5``)."""
    return ", ".join(f"{k}={json.dumps(v) if not isinstance(v, str) else v}" for k, v in sorted(params.items()))


def _pick(bounds: pd.DataFrame, experiment: str, r: int, score: str = "logit", statistic: str = "mean") -> pd.Series:
    sel = bounds[(bounds.experiment == experiment) & (bounds.r == r) & (bounds.score == score) & (bounds.statistic == statistic)]
    if sel.empty:
        raise ValueError(f"no bound for experiment {experiment!r} at r={r}, score={score}, statistic={statistic}")
    return sel.iloc[0]


def _check_roles(bounds: pd.DataFrame) -> None:
    if "role" not in bounds.columns:
        raise ValueError("bounds have no 'role' column: they were written before cells were pre-registered; rerun the audit")


def _reported(bounds: pd.DataFrame, experiment: str, summary: Mapping) -> pd.Series:
    """The experiment's reported row: role ``preregistered`` (or ``selected`` under Bonferroni).

    A pre-registered row must sit at the summary's ``report_r`` (else the bounds are stale).
    """
    _check_roles(bounds)
    sel = bounds[(bounds.experiment == experiment) & bounds.role.isin(list(REPORTED_ROLES))]
    if len(sel) != 1:
        raise ValueError(
            f"experiment {experiment!r} has {len(sel)} bounds rows with role in {sorted(REPORTED_ROLES)}; "
            "exactly one (its pre-registered or Bonferroni-selected cell) must be marked"
        )
    row = sel.iloc[0]
    report_r = summary.get("report_r")
    if row.role == "preregistered" and report_r not in (None, "calibrated") and int(row.r) != int(report_r):
        raise ValueError(f"experiment {experiment!r}: the pre-registered bound is at r={int(row.r)} but report_r={report_r}; rerun the audit")
    return row


def _cell_text(row: pd.Series) -> str:
    """``preregistered: logit/mean`` for a reported row (``… (exact test)`` when the pre-registered
    test is the exact one, whose bound is the ``epsilon_lb_exact`` column), else ``exploratory``."""
    label = REPORTED_ROLES.get(row.role)
    if not label:
        return EXPLORATORY
    test = row.get("test", "theorem4.2")
    return f"{label}: {row.score}/{row.statistic}" + ("" if test == "theorem4.2" else f" ({test} test)")


def _other_bounds(row: pd.Series) -> dict[str, float]:
    """The exact test's ε_LB and μ_LB of the reported cell, in their own columns (docs/bounds.md),
    and under a pre-registered "mgf" or "adaptive" test its bound as ``epsilon_lb_<test>``."""
    test = row.get("test", "theorem4.2")
    extra = {f"epsilon_lb_{test}": row.epsilon_lb_test} if test not in ("theorem4.2", "exact") and "epsilon_lb_test" in row.index else {}
    return {"epsilon_lb_exact": row.epsilon_lb_exact, **extra, "mu_lb": row.mu_lb}


def _has_ceilings(bounds: pd.DataFrame) -> bool:
    return {"epsilon_lb_ceiling", _FLAG} <= set(bounds.columns)


def _ceiling(row: pd.Series) -> dict[str, float]:
    """The reported row's ceiling, beside its ``epsilon_lb`` (when the bounds carry ceilings)."""
    return {"epsilon_lb_ceiling": float(row.epsilon_lb_ceiling)} if "epsilon_lb_ceiling" in row.index else {}


def _flag(row: pd.Series) -> dict[str, bool]:
    """The reported row's ``at_ceiling`` flag (when the bounds carry ceilings)."""
    return {_FLAG: bool(row.at_ceiling)} if _FLAG in row.index else {}


def _row_label(picked: list[pd.Series]) -> str:
    """Label of a table row that shows the cells ``picked``: which of them, if any, is reported."""
    for row in picked:
        if row.role in REPORTED_ROLES:
            return _cell_text(row)
    return EXPLORATORY


_DIAGNOSTIC_COLUMNS = ("retain_acc", "forget_acc", "test_acc", *DIAGNOSTIC_FLAGS)


def _diagnostics(diagnostics: pd.DataFrame | None, experiment: str) -> dict:
    """The experiment's accuracies and its ``at_chance`` / ``no_op`` / ``no_power`` flags (:func:`.tables.diagnostics_row`)."""
    return diagnostics_row(diagnostics, experiment, _DIAGNOSTIC_COLUMNS)


def table1(bounds: pd.DataFrame, metrics: pd.DataFrame, experiments: Mapping[str, Mapping], diagnostics: pd.DataFrame | None = None,
           steps: pd.DataFrame | None = None, step_diagnostics: pd.DataFrame | None = None) -> pd.DataFrame:
    """Table 1: one row per (method, hyperparameters, split), the experiment's pre-registered cell,
    with the audited models' accuracies and the ``at_chance`` / ``no_op`` / ``no_power`` flags (``diagnostics``).

    The last column ``cell`` names the reported cell (score/statistic; r is its own column).
    """
    rows = []
    for name, e in experiments.items():
        b = _reported(bounds, name, e)
        rows.append(
            {
                "method": e["label"],
                "params": params_text(e["params"]),
                "split": e["split"],
                "epsilon_lb": b.epsilon_lb,
                **_ceiling(b),
                "epsilon_ldp": b.epsilon_ldp,
                **_other_bounds(b),
                "r": int(b.r),
                "m": int(b.m),
                "L": int(b.L),
                **_diagnostics(diagnostics, name),
                **_flag(b),
                "cell": _cell_text(b),
            }
        )
    return pd.DataFrame(rows)


def _over_r(bounds, experiments, columns: Mapping[str, tuple[str, str]], diagnostics: pd.DataFrame | None = None) -> pd.DataFrame:
    """One row per (experiment, r) with one ε column per (score, statistic) of ``columns``; with
    ceilings, one ceiling column (``epsilon_lb_ceiling``, or ``epsilon_lb_ceiling_<x>`` per column
    ``epsilon_lb_<x>`` when the statistics, and so the ceilings, differ) and a flag per ε column;
    with ``diagnostics``, the experiment's accuracies and flags on each of its rows."""
    _check_roles(bounds)
    ceilings = _has_ceilings(bounds)
    one_ceiling = len({statistic for _, statistic in columns.values()}) == 1
    rows = []
    for name, e in experiments.items():
        for r in sorted(e["r"]):
            row = {"method": e["label"], "split": e["split"], "r": int(r)}
            picked = [_pick(bounds, name, int(r), score, statistic) for score, statistic in columns.values()]
            for col, b in zip(columns, picked):
                row[col] = b.epsilon_lb
            if ceilings:
                if one_ceiling:
                    row["epsilon_lb_ceiling"] = float(picked[0].epsilon_lb_ceiling)
                else:
                    row.update({"epsilon_lb_ceiling" + col.removeprefix("epsilon_lb"): float(b.epsilon_lb_ceiling) for col, b in zip(columns, picked)})
                row.update({_FLAG + col.removeprefix("epsilon_lb"): bool(b.at_ceiling) for col, b in zip(columns, picked)})
            row.update(_diagnostics(diagnostics, name))
            row["cell"] = _row_label(picked)
            rows.append(row)
    return pd.DataFrame(rows)


def table3(bounds, metrics, experiments, diagnostics=None, steps=None, step_diagnostics=None) -> pd.DataFrame:
    """Table 3 (App. E.1): logit score vs cross-entropy score, over r (mean aggregation)."""
    return _over_r(bounds, experiments, {"epsilon_lb_logit": ("logit", "mean"), "epsilon_lb_loss": ("loss", "mean")}, diagnostics)


def table4(bounds, metrics, experiments, diagnostics=None, steps=None, step_diagnostics=None) -> pd.DataFrame:
    """Table 4 (App. E.2): mean vs median aggregation, over r (logit score)."""
    return _over_r(bounds, experiments, {"epsilon_lb_mean": ("logit", "mean"), "epsilon_lb_median": ("logit", "median")}, diagnostics)


def table5(bounds, metrics, experiments, diagnostics=None, steps=None, step_diagnostics=None) -> pd.DataFrame:
    """Table 5 (App. F.3): batch size B × guess budget r; r·B is the number of reported examples.

    Every row is the logit/mean cell; ``cell`` says whether it is the experiment's reported one.
    The controls of each B stand beside the method (column ``method``), every row with its
    experiment's accuracies and flags.
    """
    _check_roles(bounds)
    rows = []
    for order, (name, e) in enumerate(experiments.items()):
        for r in sorted(e["r"]):
            b = _pick(bounds, name, int(r))
            rows.append({"batch_size": int(e["batch_size"]), "m": int(e["m"]), "method": e["label"], "r": int(r), "r_times_B": int(r) * int(e["batch_size"]),
                         "epsilon_lb": b.epsilon_lb, **_ceiling(b), **_flag(b), **_diagnostics(diagnostics, name),
                         "cell": REPORTED_ROLES.get(b.role, EXPLORATORY), "_order": order})
    return pd.DataFrame(rows).sort_values(["batch_size", "_order", "r"]).drop(columns="_order").reset_index(drop=True)


def appendix_f4(bounds, metrics, experiments, diagnostics=None, steps=None, step_diagnostics=None) -> pd.DataFrame:
    """App. F.4: uncertified model clipping audited just after its first noisy step, as the paper
    audits it (B = 750, r = 6 → 0.112; B = 100, r = 40 → 0.007), by the batchwise auditor at a few
    large batches and by the joint auditor at the same step beside it, each beside its design's
    controls.

    One row per experiment: ``batch_size``, ``m``, ``auditor``, ``method``, ``split``, ``step`` (the
    audited step; empty for a control, audited as trained), ``epsilon_lb`` (Theorem 4.2 at that
    step, the pre-registered cell), the claim under the pre-registered test (``epsilon_lb_<test>``
    where it is not Theorem 4.2), its ceiling and ``at_ceiling``, ``r``, ``L``, the models'
    accuracies and flags at that step, ``epsilon_lb_final`` (the same cell after Phase 2: another
    algorithm's audit, for reference) and ``cell``.  Each row is one level-ζ audit.
    """
    rows = []
    for name, e in experiments.items():
        final = _reported(bounds, name, e)
        at = final
        step = None
        if steps is not None and len(steps) and (steps.experiment == name).any():
            sub = steps[(steps.experiment == name) & steps.role.isin(list(REPORTED_ROLES))]
            first = sub[sub.step == sub.step.min()]
            if len(first) != 1:
                raise ValueError(f"experiment {name!r}: expected one reported row at its first checkpoint step, found {len(first)}")
            at, step = first.iloc[0], int(first.step.iloc[0])
        if step is None:
            acc = _diagnostics(diagnostics, name)
        else:
            acc = {**_diagnostics(diagnostics, name), **_step_flags(step_diagnostics, name, step)}
        test = at.get("test", "theorem4.2")
        rows.append({"batch_size": int(e["batch_size"]), "m": int(e["m"]), "auditor": e.get("auditor", "batchwise"), "method": e["label"],
                     "split": e["split"], "step": step, "epsilon_lb": at.epsilon_lb, **_ceiling(at),
                     **({f"epsilon_lb_{test}": at.epsilon_lb_test} if test != "theorem4.2" else {}), "r": int(at.r), "L": int(at.L),
                     **acc, **_flag(at), "epsilon_lb_final": final.epsilon_lb, "cell": _cell_text(at)})
    frame = pd.DataFrame(rows)
    return frame.sort_values("batch_size", kind="stable", ascending=False).reset_index(drop=True)


def _step_flags(step_diagnostics: pd.DataFrame | None, experiment: str, step: int) -> dict:
    """The accuracies and at-chance / no-op flags of the experiment's models at checkpoint ``step``
    (:func:`unlearn_audit.pipeline.diagnostics.checkpoint_diagnostics`), replacing the final models'."""
    if step_diagnostics is None:
        return {}
    rows = step_diagnostics[(step_diagnostics.experiment == experiment) & (step_diagnostics.step == step)]
    if len(rows) != 1:
        raise ValueError(f"experiment {experiment!r}: expected one diagnostics row at step {step}, found {len(rows)}")
    row = rows.iloc[0]
    return {"forget_acc": float(row.forget_acc), "test_acc": float(row.test_acc), "retain_acc": float("nan"),
            "at_chance": bool(row.at_chance), "no_op": bool(row.no_op)}


def table7(bounds, metrics, experiments, diagnostics=None, steps=None, step_diagnostics=None) -> pd.DataFrame:
    """Table 7 (App. G.4): Hessian-based unlearning for several final noise levels σ (pre-registered
    cells), beside the design's controls (``sigma`` empty), with accuracies and flags."""
    rows = []
    for name, e in experiments.items():
        b = _reported(bounds, name, e)
        rows.append({"method": e["label"], "sigma": float(e["params"].get("sigma", float("nan"))), "split": e["split"], "epsilon_lb": b.epsilon_lb,
                     **_ceiling(b), "epsilon_ldp": b.epsilon_ldp, **_other_bounds(b), "r": int(b.r), **_diagnostics(diagnostics, name), **_flag(b),
                     "cell": _cell_text(b)})
    return pd.DataFrame(rows).sort_values(["split", "sigma"], na_position="first").reset_index(drop=True)


def _marked(df: pd.DataFrame, digits: int) -> tuple[pd.DataFrame, bool]:
    """The table as read: each ε column whose flag (``at_ceiling``, ``at_ceiling_<x>``) is set gets
    a trailing ‡, the flag columns go; and whether any cell was marked."""
    shown = df.copy()
    any_mark = False
    for flag in [c for c in df.columns if c == _FLAG or c.startswith(_FLAG + "_")]:
        col = "epsilon_lb" + flag.removeprefix(_FLAG)
        if col not in df.columns:
            raise ValueError(f"column {flag!r} flags {col!r}, which the table does not have")
        marks = df[flag].astype(bool)
        any_mark = any_mark or bool(marks.any())
        shown[col] = [format_cell(v, digits) + (CEILING_MARK if m else "") for v, m in zip(df[col], marks)]
        shown = shown.drop(columns=flag)
    return shown, any_mark


def write_nn_table(df: pd.DataFrame, stem: str | os.PathLike, *, caption: str | None = None, digits: int = 4) -> list[Path]:
    """Write ``stem``.csv / .md / .tex with :func:`~.tables.write_table`, the ceiling flags kept as
    booleans in the CSV and shown as a trailing ‡ (and :data:`CEILING_NOTE` below the table) in
    Markdown and LaTeX; returns the three paths."""
    shown, any_mark = _marked(df, digits)
    markdown = format_markdown(shown, digits, caption)
    latex = format_latex(shown, digits, caption, label=f"tab:{Path(stem).name}").replace(CEILING_MARK, r"\textsuperscript{\ddag}")
    if any_mark:
        markdown += f"\n{CEILING_NOTE}\n"
        note = CEILING_NOTE.removeprefix(CEILING_MARK).strip().replace("_", r"\_")
        latex = latex.replace(r"\end{tabular}", r"\end{tabular}" + "\n" + rf"\par\smallskip{{\footnotesize \ddag{{}} {note}}}", 1)
    return write_table(df, stem, caption=caption, digits=digits, markdown=markdown, latex=latex)


_RENDERERS: dict[str, Callable] = {"table1a": table1, "table1b": table1, "table3": table3, "table4": table4, "table5": table5, "table7": table7,
                                   "appendix_f4": appendix_f4, "llm_qa": table1}
#: Every neural-network table of :data:`unlearn_audit.catalogue.NN_TABLES` → (renderer, caption).
NN_TABLES: dict[str, tuple[Callable, str]] = {name: (_RENDERERS[name], caption) for name, caption in catalogue.NN_TABLES.items()}
