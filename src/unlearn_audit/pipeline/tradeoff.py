"""The μ-GDP trade-off figures (docs/bounds.md §8): for each audit with a μ lower bound, the curve
of the claim beside the curve G_{μ_LB} that the audit proves; one function per rule.

``workflow/rules/tradeoff.smk`` → ``workflow/scripts/tradeoff_<name>.py`` → the function here:

* :func:`convex` (rule ``tradeoff_convex``) — the convex audits of Table 2, one panel per selected
  (mechanism, ε) cell (:meth:`.plan.tradeoff.TradeoffPlan.convex_cells`): the (ε, δ) claim f_{ε,δ}, the μ = Δ/σ of the exact
  Gaussian mechanism that certifies it, the true μ of the audited pair, G_{μ_LB} and the audited
  (FP_hi, FN_hi) point;
* :func:`gaussian_unlearning` (rule ``tradeoff_gaussian_unlearning``) — the audit of one-step
  Newton + Gaussian noise and its two positive controls: the μ-GDP claim, the true μ and G_{μ_LB};
* :func:`sign_vector` (rule ``tradeoff_sign_vector``) — the sign-vector audits (Algorithms 2 and
  3) on their reported cell (BOUNDS role ``preregistered`` or ``selected``), one panel per
  experiment of :meth:`.plan.tradeoff.TradeoffPlan.sign_vector_experiments`: the (ε, δ) claim of a certified algorithm (and
  G_μ where its release is an exact Gaussian mechanism), or no claim for a heuristic one.

Every curve is a function of :mod:`unlearn_audit.stats.tradeoff`; the figure's CSV holds the
numbers plotted (columns :data:`CURVE_COLUMNS`).  Which panels a config shows is decided by the
plan (:mod:`.plan.tradeoff`, from the config alone, never from results), at most
:data:`MAX_PANELS` per figure; this module only draws them, so the two never import each other.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping, Sequence

import numpy as np
import pandas as pd

from .. import catalogue, schemas
from ..checks import check_zeta
from ..io import read_concat, read_parquet
from ..schemas import REPORTED_ROLES
from ..stats.tradeoff import (
    confidence_tradeoff_point,
    dp_tradeoff,
    gaussian_mechanism_mu,
    gdp_tradeoff,
)
from .plan.tradeoff import FIGURES, MAX_PANELS

__all__ = [
    "FIGURES", "MAX_PANELS", "GRID_COLUMNS", "CURVE_COLUMNS",
    "Panel", "alpha_grid", "curves_frame", "panels_frame",
    "convex_panels", "gaussian_unlearning_panels", "sign_vector_panels",
    "convex", "gaussian_unlearning", "sign_vector",
]

#: Panels per row of a figure whose panels are not laid out by (mechanism, ε).
GRID_COLUMNS = 4

#: The columns of a figure's CSV: one row per plotted (α, β).  ``curve`` is ``diagonal`` (1 − α),
#: ``claim``, ``true`` (the exact μ of the audited pair, where known), ``proven`` (G_{μ_LB}) or
#: ``audited_point``; ``form`` is ``gdp`` (a G_μ, with ``mu``), ``dp`` (an f_{ε,δ}, with ``epsilon``
#: and ``delta``) or ``point``.
CURVE_COLUMNS = ["panel", "subject", "curve", "form", "mu", "epsilon", "delta", "alpha", "beta"]



def alpha_grid() -> np.ndarray:
    """The type I errors α at which every curve is evaluated: 101 even steps on [0, 1] and 31
    geometric ones on [1e-12, 1e-2] (where the curve of a large μ drops from 1 to 0)."""
    return np.unique(np.concatenate([np.linspace(0.0, 1.0, 101), np.geomspace(1e-12, 1e-2, 31)]))


@dataclass(frozen=True)
class Panel:
    """What one panel shows: the audit's ``mu_lb`` at level ``zeta`` and, where there are any, the
    claim (an (ε, δ) pair and/or a μ), the true μ of the audited pair and an audited (α, β) point;
    ``note`` is the text written in the panel, ``row``/``col`` its place in the grid."""

    subject: str
    title: str
    row: int
    col: int
    mu_lb: float
    zeta: float
    claim_epsilon: float | None = None
    claim_delta: float | None = None
    claim_mu: float | None = None
    true_mu: float | None = None
    point: tuple[float, float] | None = None
    note: str = ""


def curves_frame(panels: Sequence[Panel], alpha: np.ndarray | None = None) -> pd.DataFrame:
    """The numbers every panel plots (:data:`CURVE_COLUMNS`), from :mod:`unlearn_audit.stats.tradeoff`."""
    alpha = alpha_grid() if alpha is None else np.asarray(alpha, dtype=float)
    nan = math.nan
    parts: list[pd.DataFrame] = []

    def add(i: int, p: Panel, curve: str, form: str, beta, a=alpha, mu=nan, epsilon=nan, delta=nan) -> None:
        parts.append(pd.DataFrame({"panel": i, "subject": p.subject, "curve": curve, "form": form,
                                   "mu": mu, "epsilon": epsilon, "delta": delta, "alpha": a, "beta": beta}))

    for i, p in enumerate(panels):
        add(i, p, "diagonal", "gdp", gdp_tradeoff(alpha, 0.0), mu=0.0)
        if p.claim_epsilon is not None:
            add(i, p, "claim", "dp", dp_tradeoff(alpha, p.claim_epsilon, p.claim_delta), epsilon=p.claim_epsilon, delta=p.claim_delta)
        if p.claim_mu is not None:
            add(i, p, "claim", "gdp", gdp_tradeoff(alpha, p.claim_mu), mu=p.claim_mu)
        if p.true_mu is not None:
            add(i, p, "true", "gdp", gdp_tradeoff(alpha, p.true_mu), mu=p.true_mu)
        add(i, p, "proven", "gdp", gdp_tradeoff(alpha, p.mu_lb), mu=p.mu_lb)
        if p.point is not None:
            add(i, p, "audited_point", "point", np.array([p.point[1]]), a=np.array([p.point[0]]), mu=p.mu_lb)
    if not parts:
        return pd.DataFrame(columns=CURVE_COLUMNS)
    return pd.concat(parts, ignore_index=True)[CURVE_COLUMNS]


def panels_frame(panels: Sequence[Panel]) -> pd.DataFrame:
    """One row per panel: ``panel, subject, title, row, col, zeta, note`` (what the renderer lays out)."""
    columns = ["panel", "subject", "title", "row", "col", "zeta", "note"]
    return pd.DataFrame([{"panel": i, "subject": p.subject, "title": p.title, "row": p.row, "col": p.col, "zeta": p.zeta, "note": p.note}
                         for i, p in enumerate(panels)], columns=columns)


def _fmt(x: float) -> str:
    return f"{x:.3g}"


def _verdict(mu_lb: float, claim_mu: float) -> str:
    return "falsified: μ_LB > claimed μ" if mu_lb > claim_mu else "not falsified"


def _flow(i: int, n: int) -> tuple[int, int]:
    cols = min(GRID_COLUMNS, max(n, 1))
    return i // cols, i % cols


# ---------------------------------------------------------------------------------------- panels
_CONVEX_NAMES = catalogue.CONVEX_MECHANISMS


def convex_panels(summaries: pd.DataFrame) -> list[Panel]:
    """One panel per summary row (CONVEX_SUMMARY), row = mechanism (in order of appearance), column
    = rank of ε within it.  The claim is (ε, δ)-DP, certified by the exact Gaussian mechanism with
    sensitivity Δ and noise σ, hence also μ-GDP with μ = Δ/σ; the true μ is the audited pair's
    distance over σ; the point is the test's (FP_hi, FN_hi)."""
    panels = []
    mechs = list(dict.fromkeys(summaries.mechanism))
    for row, mech in enumerate(mechs):
        sub = summaries[summaries.mechanism == mech].sort_values("epsilon")
        for col, s in enumerate(sub.itertuples()):
            claim_mu = float(s.sensitivity) / float(s.sigma)
            point = confidence_tradeoff_point(int(s.fp), int(s.n_neg), int(s.fn), int(s.n_pos), zeta=float(s.zeta))
            note = (f"μ_LB = {_fmt(s.mu_lb)}, true μ = {_fmt(s.true_mu)}\n"
                    f"claim μ = Δ/σ = {_fmt(claim_mu)}\n{_verdict(float(s.mu_lb), claim_mu)}")
            panels.append(Panel(
                subject=f"{mech}:{float(s.epsilon):g}",
                title=f"{_CONVEX_NAMES.get(mech, mech)}\nε = {float(s.epsilon):g}, δ = {float(s.delta):g}",
                row=row, col=col, mu_lb=float(s.mu_lb), zeta=float(s.zeta),
                claim_epsilon=float(s.epsilon), claim_delta=float(s.delta), claim_mu=claim_mu,
                true_mu=float(s.true_mu), point=point, note=note,
            ))
    return panels


_GU_TITLES = {
    "certified": "certified (σ = r/ε)",
    "control_tight": "positive control: σ with true μ = claim",
    "control_undernoised": "positive control: σ ten times too small",
}


def gaussian_unlearning_panels(audit: pd.DataFrame) -> list[Panel]:
    """One panel per row of the Gaussian-unlearning audit: the μ-GDP claim (μ = ε, GPAR with the
    Gaussian curve), the pair's true μ and the weight-space auditor's μ_LB."""
    panels = []
    for i, r in enumerate(audit.itertuples()):
        note = (f"μ_LB = {_fmt(r.mu_lb)}, true μ = {_fmt(r.true_mu)}\n"
                f"claim μ = {_fmt(r.claimed_mu)}\n{_verdict(float(r.mu_lb), float(r.claimed_mu))}")
        panels.append(Panel(
            subject=str(r.mechanism), title=f"{_GU_TITLES.get(r.mechanism, r.mechanism)}\nn = p = {int(r.p)}, m = {int(r.m)}",
            row=0, col=i, mu_lb=float(r.mu_lb), zeta=float(r.zeta), claim_mu=float(r.claimed_mu), true_mu=float(r.true_mu), note=note,
        ))
    return panels


def _reported_row(bounds: pd.DataFrame, experiment: str) -> pd.Series:
    rows = bounds[(bounds.experiment == experiment) & bounds.role.isin(REPORTED_ROLES)]
    if len(rows) != 1:
        raise ValueError(f"{experiment}: expected one reported (preregistered or selected) bounds row, found {len(rows)}")
    row = rows.iloc[0]
    if not (row.mu_lb >= 0):
        raise ValueError(f"{experiment}: the reported bounds row has mu_lb = {row.mu_lb!r}; rerun its audit")
    return row


def sign_vector_panels(bounds: pd.DataFrame, experiments: Mapping[str, Mapping], zeta: float) -> list[Panel]:
    """One panel per experiment of ``experiments`` (:func:`sign_vector_summaries`, in its order), from
    its reported BOUNDS row: G_{μ_LB} with μ_LB = μ_LDP / 2, the (ε, δ) claim if certified and G_μ
    of the claim where its release is an exact Gaussian mechanism.  ``zeta`` is the config's level:
    the reported row is a level-ζ result (a Bonferroni-selected row was tested at ζ/K, its ``zeta``)."""
    for column in ("role", "mu_lb"):
        if column not in bounds.columns:
            raise ValueError(f"bounds have no {column!r} column: they were written before the audits reported it; rerun the audits")
    panels = []
    for i, (name, e) in enumerate(experiments.items()):
        b = _reported_row(bounds, name)
        claim = e.get("claim")
        eps, delta = (float(claim[0]), float(claim[1])) if claim is not None else (None, None)
        claim_mu = gaussian_mechanism_mu(eps, delta) if claim is not None and e.get("gaussian_claim") else None
        lines = [f"μ_LB = {_fmt(b.mu_lb)}"]
        if claim is None:
            lines.append("no claim (heuristic)")
        else:
            lines.append(f"claim (ε, δ) = ({eps:g}, {delta:g})" + (f"\nclaim μ = {_fmt(claim_mu)}" if claim_mu is not None else ""))
            lines.append(f"ε_LB = {_fmt(b.epsilon_lb_test)} ({b.test} test) at δ = {float(b.delta):g}")  # the claim
            if claim_mu is not None:
                lines.append(_verdict(float(b.mu_lb), claim_mu))
        lines.append(f"m = {int(b.m)}, r = {int(b.r)}, L = {int(b.L)}, {b.statistic}, {b.score}")
        row, col = _flow(i, len(experiments))
        panels.append(Panel(
            subject=name, title=f"{e['label']}\n{e['dataset']}, {e['split']} split, {e.get('auditor', b.auditor)}",
            row=row, col=col, mu_lb=float(b.mu_lb), zeta=check_zeta(zeta),
            claim_epsilon=eps, claim_delta=delta, claim_mu=claim_mu, note="\n".join(lines),
        ))
    return panels


# ---------------------------------------------------------------------------------------- rules
def _draw(panels: Sequence[Panel], figure_path, title: str):
    from ..report.tradeoff_figures import tradeoff_figure

    if not panels:
        raise ValueError(f"{title}: no panel to draw")
    return tradeoff_figure(curves_frame(panels), panels_frame(panels), Path(figure_path).with_suffix(""), title)


def convex(summary_paths: Sequence[str], figure_path: str | os.PathLike):
    """Rule ``tradeoff_convex``: ``tradeoff_convex.{png,pdf,csv}`` from the selected cells' summaries."""
    return _draw(convex_panels(read_concat(summary_paths, schemas.CONVEX_SUMMARY)), figure_path,
                 "Convex audits (Table 2): trade-off curves of the claim and of the audit")


def gaussian_unlearning(audit_path: str | os.PathLike, figure_path: str | os.PathLike):
    """Rule ``tradeoff_gaussian_unlearning``: ``tradeoff_gaussian_unlearning.{png,pdf,csv}``."""
    return _draw(gaussian_unlearning_panels(read_parquet(audit_path)), figure_path,
                 "Gaussian certified unlearning (one-step Newton + Gaussian noise): claim vs audit")


def sign_vector(bounds_paths: Sequence[str], experiments: Mapping[str, Mapping], zeta: float, figure_path: str | os.PathLike):
    """Rule ``tradeoff_sign_vector``: ``tradeoff_sign_vector.{png,pdf,csv}`` from the experiments' BOUNDS."""
    return _draw(sign_vector_panels(read_concat(bounds_paths, schemas.BOUNDS), experiments, zeta), figure_path,
                 "Sign-vector audits (Algorithms 2 and 3): trade-off curves of the claim and of the audit")
