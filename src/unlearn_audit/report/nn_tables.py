"""The paper's neural-network tables (Tables 1a, 1b, 3, 4, 5, 7) from bounds and run metrics.

Every renderer takes (bounds, metrics, experiments) where ``bounds`` has the BOUNDS schema,
``metrics`` the RUN_METRICS schema (evaluation runs), and ``experiments`` maps experiment
name → summary (design, dataset, split, batch_size, m, method, label, params, report_r, r).

Which bound is *the* result of an experiment was fixed before it ran
(:mod:`unlearn_audit.stats.selection`) and is recorded in the bounds' ``role`` column: the row
with role ``preregistered`` (or ``selected`` under ``selection="bonferroni"``, where every cell
was tested at ζ/K).  Tables 1 and 7 report that row; Tables 3, 4 and 5, which show several cells,
label each row in a last ``cell`` column (``preregistered`` / ``bonferroni-selected`` naming the
reported cell, else ``exploratory``: not a level-ζ claim on its own).

Every table leads with the claim (README, "Reading a table"): after the columns that name the row,
``epsilon_lb_claim`` (the row's bound under the pre-registered test, BOUNDS ``epsilon_lb_test``),
``test`` and the claim's own ceiling ``epsilon_lb_ceiling_claim``; then the scale-free readings of
the cell's overlaps (:data:`~unlearn_audit.schemas.GUESS_COLUMNS`); then Theorem 4.2's bound of the
same cell (``epsilon_lb_theorem42``, the paper's number), its ceiling ``epsilon_lb_ceiling_theorem42``
and ``epsilon_ldp``; then the exact test's ε_LB and μ_LB; Tables 1a and 1b then the membership
metrics of the row's score (:data:`~unlearn_audit.schemas.MEMBERSHIP_COLUMNS`: AUC, TPR at low FPR,
privleak against the design's Retrain; docs/metrics.md), ``llm_qa`` (Table 1's rows) also TOFU's
metrics after the flags (:func:`llm_qa`).  Tables 3 and 4 (one ε column per score or
statistic ``<x>``) have ``epsilon_lb_claim_<x>`` and ``epsilon_lb_theorem42_<x>``.

Bounds that carry the perfect-prediction ceilings of their cell (columns ``epsilon_lb_ceiling_claim``,
``at_ceiling_claim`` and Theorem 4.2's ``epsilon_lb_ceiling``, ``at_ceiling``, added by
:func:`unlearn_audit.pipeline.nn.with_ceilings`) give each table its ceiling columns and a boolean
flag per ε column, ``at_ceiling_<rest>`` for ``epsilon_lb_<rest>`` (``at_ceiling_claim``,
``at_ceiling_theorem42``, ``at_ceiling_claim_logit``, …), each against its own test's ceiling.
:func:`write_nn_table` keeps the flags in the CSV and turns them into a trailing ‡ with a footnote
in Markdown and LaTeX.  The renderers only select and render; no statistic is computed here.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Callable, Mapping

import pandas as pd

from .. import catalogue
from ..schemas import DIAGNOSTIC_FLAGS, GUESS_COLUMNS, MEMBERSHIP_COLUMNS, QA_COLUMNS, STEP_FLAGS
from ..schemas import REPORTED_ROLES as _REPORTED
from .tables import diagnostics_row, format_cell, format_latex, format_markdown, write_table

__all__ = ["NN_TABLES", "REPORTED_ROLES", "CEILING_MARK", "CEILING_NOTE", "table1", "llm_qa", "audit_size", "table3", "table4", "table5", "table7", "appendix_f4",
           "params_text", "write_nn_table"]

#: Roles of the row an experiment reports (BOUNDS ``role``), and how the tables label them.
REPORTED_ROLES = dict(zip(_REPORTED, ("preregistered", "bonferroni-selected")))
EXPLORATORY = "exploratory"

#: The mark of a bound equal to its own test's perfect-prediction ceiling, and the footnote that explains it.
CEILING_MARK = "‡"
CEILING_NOTE = (f"{CEILING_MARK} equals the perfect-prediction ceiling of its own test for this (m, r, L) (the claim's for the claim, "
                "Theorem 4.2's for Theorem 4.2's): every guess was right (for a median: in at least half of the L runs); "
                "the bound is limited by m, r and L, not by the algorithm.")
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
    """``preregistered: logit/mean`` for a reported row (``… (reference test)`` when the pre-registered
    test, whose bound is the row's ``epsilon_lb_claim``, is not Theorem 4.2), else ``exploratory``."""
    label = REPORTED_ROLES.get(row.role)
    if not label:
        return EXPLORATORY
    return f"{label}: {row.score}/{row.statistic}" + ("" if row.test == "theorem4.2" else f" ({row.test} test)")


def _has_ceilings(bounds: pd.DataFrame) -> bool:
    return {"epsilon_lb_ceiling", _FLAG, "epsilon_lb_ceiling_claim", "at_ceiling_claim"} <= set(bounds.columns)


def _claim(row: pd.Series) -> dict:
    """The reported row's claim, its test and the claim's own ceiling (when the bounds carry ceilings)."""
    ceiling = {"epsilon_lb_ceiling_claim": float(row.epsilon_lb_ceiling_claim)} if "epsilon_lb_ceiling_claim" in row.index else {}
    return {"epsilon_lb_claim": float(row.epsilon_lb_test), "test": str(row.test), **ceiling}


def _guesses(row: pd.Series) -> dict[str, float]:
    """The scale-free readings of the row's overlaps (when the bounds carry them: :data:`GUESS_COLUMNS`)."""
    return {c: float(row[c]) for c in GUESS_COLUMNS if c in row.index}


def _membership(row: pd.Series) -> dict:
    """The membership metrics of the row's experiment and score (when the bounds carry them:
    :data:`MEMBERSHIP_COLUMNS`; docs/metrics.md): they describe, the claim proves."""
    return {c: (bool(row[c]) if c.startswith("few_") else float(row[c])) for c in MEMBERSHIP_COLUMNS if c in row.index}


def _theorem42(row: pd.Series) -> dict[str, float]:
    """Theorem 4.2's bound of the reported cell, its ceiling (when the bounds carry ceilings) and ε_LDP."""
    ceiling = {"epsilon_lb_ceiling_theorem42": float(row.epsilon_lb_ceiling)} if "epsilon_lb_ceiling" in row.index else {}
    return {"epsilon_lb_theorem42": float(row.epsilon_lb), **ceiling, "epsilon_ldp": float(row.epsilon_ldp)}


def _other_bounds(row: pd.Series) -> dict[str, float]:
    """The exact test's ε_LB and μ_LB of the reported cell, in their own columns (docs/bounds.md)."""
    return {"epsilon_lb_exact": row.epsilon_lb_exact, "mu_lb": row.mu_lb}


def _flags(row: pd.Series) -> dict[str, bool]:
    """The reported row's ``at_ceiling_claim`` and ``at_ceiling_theorem42`` (when the bounds carry ceilings)."""
    return {"at_ceiling_claim": bool(row.at_ceiling_claim), "at_ceiling_theorem42": bool(row.at_ceiling)} if "at_ceiling_claim" in row.index else {}


def _row_label(picked: list[pd.Series]) -> str:
    """Label of a table row that shows the cells ``picked``: which of them, if any, is reported."""
    for row in picked:
        if row.role in REPORTED_ROLES:
            return _cell_text(row)
    return EXPLORATORY


_DIAGNOSTIC_COLUMNS = ("retain_acc", "forget_acc", "test_acc", *DIAGNOSTIC_FLAGS)


def _diagnostics(diagnostics: pd.DataFrame | None, experiment: str) -> dict:
    """The experiment's accuracies and its flags of ``DIAGNOSTIC_FLAGS`` (:func:`.tables.diagnostics_row`)."""
    return diagnostics_row(diagnostics, experiment, _DIAGNOSTIC_COLUMNS)


def table1(bounds: pd.DataFrame, metrics: pd.DataFrame, experiments: Mapping[str, Mapping], diagnostics: pd.DataFrame | None = None,
           steps: pd.DataFrame | None = None, step_diagnostics: pd.DataFrame | None = None) -> pd.DataFrame:
    """Table 1: one row per (method, hyperparameters, dataset, split), the experiment's pre-registered cell:
    its claim first (module docstring), Theorem 4.2's beside it, the membership metrics of its score
    (when the bounds carry them), with the audited models' accuracies and the flags of
    ``DIAGNOSTIC_FLAGS`` (``diagnostics``).

    The last column ``cell`` names the reported cell (score/statistic; r is its own column).
    """
    rows = []
    for name, e in experiments.items():
        b = _reported(bounds, name, e)
        rows.append(
            {
                "method": e["label"],
                "params": params_text(e["params"]),
                "dataset": e.get("dataset", ""),
                "split": e["split"],
                **_claim(b),
                **_guesses(b),
                **_theorem42(b),
                **_other_bounds(b),
                **_membership(b),
                "r": int(b.r),
                "m": int(b.m),
                "L": int(b.L),
                **_diagnostics(diagnostics, name),
                **_flags(b),
                "cell": _cell_text(b),
            }
        )
    return pd.DataFrame(rows)


#: The boolean columns of :data:`QA_COLUMNS`.
_QA_FLAGS = ("damaged", "no_retrain")


def llm_qa(bounds, metrics, experiments, diagnostics=None, steps=None, step_diagnostics=None) -> pd.DataFrame:
    """The language-model table: Table 1's rows, with TOFU's metrics of each experiment's evaluation
    runs (:data:`QA_COLUMNS`, where ``diagnostics`` carry them: answer probability, ROUGE-L and truth
    ratio on the forget, retain and test pairs, forget quality, model utility, the mean answer loss,
    the ``damaged`` and ``no_retrain`` flags; docs/metrics.md) after the accuracies and flags."""
    frame = table1(bounds, metrics, experiments, diagnostics)
    if diagnostics is None or not set(QA_COLUMNS) <= set(diagnostics.columns):
        return frame
    by = diagnostics.set_index("experiment")
    qa = pd.DataFrame([{c: bool(by.at[name, c]) if c in _QA_FLAGS else float(by.at[name, c]) for c in QA_COLUMNS} for name in experiments],
                      index=frame.index)
    at = next((i for i, c in enumerate(frame.columns) if c == _FLAG or c.startswith(_FLAG + "_") or c == "cell"), len(frame.columns))
    return pd.concat([frame.iloc[:, :at], qa, frame.iloc[:, at:]], axis=1)


def _suffixed(prefix: str, columns, picked: list[pd.Series], value: str, one: bool) -> dict[str, float]:
    """``prefix`` (``one``: the columns share it) or ``prefix_<x>`` per column ``x`` of ``columns``: each
    picked row's ``value``."""
    if one:
        return {prefix: float(picked[0][value])}
    return {f"{prefix}_{col}": float(b[value]) for col, b in zip(columns, picked)}


def _over_r(bounds, experiments, columns: Mapping[str, tuple[str, str]], diagnostics: pd.DataFrame | None = None) -> pd.DataFrame:
    """One row per (experiment, r): the claim of each (score, statistic) cell ``x`` of ``columns``
    (``epsilon_lb_claim_<x>``), its ``test``; with ceilings, the claim's ceiling (one
    ``epsilon_lb_ceiling_claim``, or ``epsilon_lb_ceiling_claim_<x>`` per column when the statistics,
    and so the ceilings, differ); with the bounds' guess fractions, the scale-free readings of each
    score's overlaps (:data:`GUESS_COLUMNS`: the mean fraction of right guesses, its interval and the
    paper-size extrapolation; ``guess_fraction``, or ``guess_fraction_<score>`` when the scores differ); then
    Theorem 4.2's ``epsilon_lb_theorem42_<x>`` and its ceilings; the experiment's accuracies and flags
    (``diagnostics``); a ceiling flag per ε column, ``at_ceiling_claim_<x>`` and ``at_ceiling_theorem42_<x>``."""
    _check_roles(bounds)
    ceilings = _has_ceilings(bounds)
    guesses = GUESS_COLUMNS[0] in bounds.columns
    one_ceiling = len({statistic for _, statistic in columns.values()}) == 1
    scores = list(dict.fromkeys(score for score, _ in columns.values()))
    rows = []
    for name, e in experiments.items():
        for r in sorted(e["r"]):
            picked = [_pick(bounds, name, int(r), score, statistic) for score, statistic in columns.values()]
            row = {"method": e["label"], "split": e["split"], "r": int(r),
                   **{f"epsilon_lb_claim_{col}": float(b.epsilon_lb_test) for col, b in zip(columns, picked)}, "test": str(picked[0].test)}
            if ceilings:
                row.update(_suffixed("epsilon_lb_ceiling_claim", columns, picked, "epsilon_lb_ceiling_claim", one_ceiling))
            if guesses:
                by_score = [_pick(bounds, name, int(r), score) for score in scores]
                for column in GUESS_COLUMNS:
                    row.update(_suffixed(column, scores, by_score, column, len(scores) == 1))
            row.update({f"epsilon_lb_theorem42_{col}": float(b.epsilon_lb) for col, b in zip(columns, picked)})
            if ceilings:
                row.update(_suffixed("epsilon_lb_ceiling_theorem42", columns, picked, "epsilon_lb_ceiling", one_ceiling))
            row.update(_diagnostics(diagnostics, name))
            if ceilings:
                row.update({f"at_ceiling_claim_{col}": bool(b.at_ceiling_claim) for col, b in zip(columns, picked)})
                row.update({f"at_ceiling_theorem42_{col}": bool(b.at_ceiling) for col, b in zip(columns, picked)})
            row["cell"] = _row_label(picked)
            rows.append(row)
    return pd.DataFrame(rows)


def table3(bounds, metrics, experiments, diagnostics=None, steps=None, step_diagnostics=None) -> pd.DataFrame:
    """Table 3 (App. E.1): logit score vs cross-entropy score, over r (mean aggregation)."""
    return _over_r(bounds, experiments, {"logit": ("logit", "mean"), "loss": ("loss", "mean")}, diagnostics)


def table4(bounds, metrics, experiments, diagnostics=None, steps=None, step_diagnostics=None) -> pd.DataFrame:
    """Table 4 (App. E.2): mean vs median aggregation, over r (logit score)."""
    return _over_r(bounds, experiments, {"mean": ("logit", "mean"), "median": ("logit", "median")}, diagnostics)


def table5(bounds, metrics, experiments, diagnostics=None, steps=None, step_diagnostics=None) -> pd.DataFrame:
    """Table 5 (App. F.3): batch size B × guess budget r; r·B is the number of reported examples.

    Every row is the logit/mean cell, its claim first (module docstring); ``cell`` says whether it is
    the experiment's reported one.  The controls of each B stand beside the method (column
    ``method``), every row with its experiment's accuracies and flags.
    """
    _check_roles(bounds)
    rows = []
    for order, (name, e) in enumerate(experiments.items()):
        for r in sorted(e["r"]):
            b = _pick(bounds, name, int(r))
            rows.append({"batch_size": int(e["batch_size"]), "m": int(e["m"]), "method": e["label"], "r": int(r), "r_times_B": int(r) * int(e["batch_size"]),
                         **_claim(b), **_guesses(b), **_theorem42(b), **_diagnostics(diagnostics, name), **_flags(b),
                         "cell": REPORTED_ROLES.get(b.role, EXPLORATORY), "_order": order})
    return pd.DataFrame(rows).sort_values(["batch_size", "_order", "r"]).drop(columns="_order").reset_index(drop=True)


def appendix_f4(bounds, metrics, experiments, diagnostics=None, steps=None, step_diagnostics=None) -> pd.DataFrame:
    """App. F.4: uncertified model clipping audited just after its first noisy step, as the paper
    audits it (B = 750, r = 6 → 0.112; B = 100, r = 40 → 0.007), by the batchwise auditor at a few
    large batches and by the joint auditor at the same step beside it, each beside its design's
    controls.

    One row per experiment: ``batch_size``, ``m``, ``auditor``, ``method``, ``split``, ``step`` (the
    audited step; empty for a control, audited as trained), the claim at that step (the pre-registered
    cell: ``epsilon_lb_claim``, ``test``, its ceiling), the mean fraction of right guesses (at a step
    from its mean overlap alone: a step's per-run overlaps are not kept, so no interval and no
    paper-size reading), Theorem 4.2's bound at that step and its ceiling, ``r``, ``L``, the models'
    accuracies and flags at that step, the ceiling flags, ``epsilon_lb_claim_final`` (the same cell's
    claim after Phase 2: another algorithm's audit, for reference) and ``cell``.  Each row is one
    level-ζ audit.
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
        theorem42 = {k: v for k, v in _theorem42(at).items() if k != "epsilon_ldp"}
        rows.append({"batch_size": int(e["batch_size"]), "m": int(e["m"]), "auditor": e.get("auditor", "batchwise"), "method": e["label"],
                     "split": e["split"], "step": step, **_claim(at), **_guesses(at), **theorem42, "r": int(at.r), "L": int(at.L),
                     **acc, **_flags(at), "epsilon_lb_claim_final": float(final.epsilon_lb_test), "cell": _cell_text(at)})
    frame = pd.DataFrame(rows)
    return frame.sort_values("batch_size", kind="stable", ascending=False).reset_index(drop=True)


def _step_flags(step_diagnostics: pd.DataFrame | None, experiment: str, step: int) -> dict:
    """The accuracies and the flags of ``STEP_FLAGS`` of the experiment's models at checkpoint ``step``
    (:func:`unlearn_audit.pipeline.diagnostics.checkpoint_diagnostics`), replacing the final models'."""
    if step_diagnostics is None:
        return {}
    rows = step_diagnostics[(step_diagnostics.experiment == experiment) & (step_diagnostics.step == step)]
    if len(rows) != 1:
        raise ValueError(f"experiment {experiment!r}: expected one diagnostics row at step {step}, found {len(rows)}")
    row = rows.iloc[0]
    return {"forget_acc": float(row.forget_acc), "test_acc": float(row.test_acc), "retain_acc": float("nan"),
            **{flag: bool(row[flag]) for flag in STEP_FLAGS}}


def table7(bounds, metrics, experiments, diagnostics=None, steps=None, step_diagnostics=None) -> pd.DataFrame:
    """Table 7 (App. G.4): Hessian-based unlearning for several final noise levels σ (pre-registered
    cells, the claim first as in Table 1), beside the design's controls (``sigma`` empty), with
    accuracies and flags."""
    rows = []
    for name, e in experiments.items():
        b = _reported(bounds, name, e)
        rows.append({"method": e["label"], "sigma": float(e["params"].get("sigma", float("nan"))), "split": e["split"], **_claim(b),
                     **_guesses(b), **_theorem42(b), **_other_bounds(b), "r": int(b.r), "m": int(b.m), "L": int(b.L),
                     **_diagnostics(diagnostics, name), **_flags(b), "cell": _cell_text(b)})
    return pd.DataFrame(rows).sort_values(["split", "sigma"], na_position="first").reset_index(drop=True)


def _marked(df: pd.DataFrame, digits: int) -> tuple[pd.DataFrame, bool]:
    """The table as read: each ε column ``epsilon_lb_<rest>`` whose own flag ``at_ceiling_<rest>``
    (``at_ceiling_claim``, ``at_ceiling_theorem42``, ``at_ceiling_claim_logit``, …) is set gets a
    trailing ‡, the flag columns go; and whether any cell was marked."""
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


def audit_size(bounds, metrics, experiments, diagnostics=None, steps=None, step_diagnostics=None) -> pd.DataFrame:
    """The audit-size table: Table 1's rows of one method and its controls on designs that differ only
    in m (r/m fixed), by method and m (README, "Why these bounds are smaller than the paper's")."""
    return table1(bounds, metrics, experiments, diagnostics).sort_values(["method", "m"], kind="stable").reset_index(drop=True)


_RENDERERS: dict[str, Callable] = {"table1a": table1, "table1b": table1, "table_baselines": table1, "table3": table3, "table4": table4, "table5": table5, "table7": table7,
                                   "appendix_f4": appendix_f4, "llm_qa": llm_qa,
                                   "audit_size": audit_size}
#: Every neural-network table of :data:`unlearn_audit.catalogue.NN_TABLES` → (renderer, caption).
NN_TABLES: dict[str, tuple[Callable, str]] = {name: (_RENDERERS[name], caption) for name, caption in catalogue.NN_TABLES.items()}
