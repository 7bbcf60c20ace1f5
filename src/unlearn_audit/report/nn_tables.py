"""The paper's neural-network tables (Tables 1a, 1b, 3, 4, 5, 7) from bounds and run metrics.

Every renderer takes (bounds, metrics, experiments) where ``bounds`` has the BOUNDS schema,
``metrics`` the RUN_METRICS schema (evaluation runs), and ``experiments`` maps experiment
name → summary (design, dataset, split, batch_size, m, method, label, params, report_r, r).
"""

from __future__ import annotations

import json
from typing import Callable, Mapping

import pandas as pd

__all__ = ["NN_TABLES", "table1", "table3", "table4", "table5", "table7", "params_text"]


def params_text(params: Mapping) -> str:
    """Compact, stable text of a hyperparameter mapping (e.g. ``q=1, lambda=0.5``)."""
    return ", ".join(f"{k}={json.dumps(v) if not isinstance(v, str) else v}" for k, v in sorted(params.items()))


def _pick(bounds: pd.DataFrame, experiment: str, r: int, score: str = "logit", statistic: str = "mean") -> pd.Series:
    sel = bounds[(bounds.experiment == experiment) & (bounds.r == r) & (bounds.score == score) & (bounds.statistic == statistic)]
    if sel.empty:
        raise ValueError(f"no bound for experiment {experiment!r} at r={r}, score={score}, statistic={statistic}")
    return sel.iloc[0]


def _accuracies(metrics: pd.DataFrame, experiment: str) -> dict[str, float]:
    sub = metrics[(metrics.experiment == experiment) & (metrics.phase == "eval")]
    return {k: float(sub[k].mean()) for k in ("retain_acc", "forget_acc", "test_acc")}


def table1(bounds: pd.DataFrame, metrics: pd.DataFrame, experiments: Mapping[str, Mapping]) -> pd.DataFrame:
    """Table 1: one row per (method, hyperparameters, split) at the experiment's reported r."""
    rows = []
    for name, e in experiments.items():
        b = _pick(bounds, name, int(e["report_r"]))
        rows.append(
            {
                "method": e["label"],
                "params": params_text(e["params"]),
                "split": e["split"],
                "epsilon_lb": b.epsilon_lb,
                "epsilon_ldp": b.epsilon_ldp,
                "r": int(b.r),
                "m": int(b.m),
                "L": int(b.L),
                **_accuracies(metrics, name),
            }
        )
    return pd.DataFrame(rows)


def _over_r(bounds, experiments, columns: Mapping[str, tuple[str, str]]) -> pd.DataFrame:
    rows = []
    for name, e in experiments.items():
        for r in sorted(e["r"]):
            row = {"method": e["label"], "split": e["split"], "r": int(r)}
            for col, (score, statistic) in columns.items():
                row[col] = _pick(bounds, name, int(r), score, statistic).epsilon_lb
            rows.append(row)
    return pd.DataFrame(rows)


def table3(bounds, metrics, experiments) -> pd.DataFrame:
    """Table 3 (App. E.1): logit score vs cross-entropy score, over r (mean aggregation)."""
    return _over_r(bounds, experiments, {"epsilon_lb_logit": ("logit", "mean"), "epsilon_lb_loss": ("loss", "mean")})


def table4(bounds, metrics, experiments) -> pd.DataFrame:
    """Table 4 (App. E.2): mean vs median aggregation, over r (logit score)."""
    return _over_r(bounds, experiments, {"epsilon_lb_mean": ("logit", "mean"), "epsilon_lb_median": ("logit", "median")})


def table5(bounds, metrics, experiments) -> pd.DataFrame:
    """Table 5 (App. F.3): batch size B × guess budget r; r·B is the number of reported examples."""
    rows = []
    for name, e in experiments.items():
        for r in sorted(e["r"]):
            b = _pick(bounds, name, int(r))
            rows.append({"batch_size": int(e["batch_size"]), "m": int(e["m"]), "r": int(r), "r_times_B": int(r) * int(e["batch_size"]), "epsilon_lb": b.epsilon_lb})
    return pd.DataFrame(rows).sort_values(["batch_size", "r"]).reset_index(drop=True)


def table7(bounds, metrics, experiments) -> pd.DataFrame:
    """Table 7 (App. G.4): Hessian-based unlearning for several final noise levels σ."""
    rows = []
    for name, e in experiments.items():
        b = _pick(bounds, name, int(e["report_r"]))
        rows.append({"sigma": float(e["params"].get("sigma", float("nan"))), "split": e["split"], "epsilon_lb": b.epsilon_lb, "epsilon_ldp": b.epsilon_ldp, "r": int(b.r), **_accuracies(metrics, name)})
    return pd.DataFrame(rows).sort_values(["split", "sigma"]).reset_index(drop=True)


NN_TABLES: dict[str, tuple[Callable, str]] = {
    "table1a": (table1, "Table 1a: epsilon lower bounds on Shakespeare (uncertified methods)"),
    "table1b": (table1, "Table 1b: epsilon lower bounds on images, uniform and adversarial splits"),
    "table3": (table3, "Table 3: logit score vs cross-entropy loss score over r"),
    "table4": (table4, "Table 4: mean vs median aggregation of overlaps over r"),
    "table5": (table5, "Table 5: batch size B and guess budget r, forget ascent"),
    "table7": (table7, "Table 7: Hessian-based unlearning, final noise sigma"),
}
