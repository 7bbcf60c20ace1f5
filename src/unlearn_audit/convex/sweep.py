"""The hyper-parameter sweeps of App. H.4 that pick the convex instances: Lemma 3's ratio
ρ = ‖w̄ − ŵ_r‖ / γ (how tight Sekhari et al.'s sensitivity γ = 2Mm²L²/(μ³n²) is on the instance;
:attr:`~.perturbed_newton.NewtonUnlearning.rho`) at every point of a grid, so that the chosen point
is the grid's largest ρ, reproduced rather than copied.

* :data:`CUBIC_GRID` — App. H.4.1's grid of the cubic loss (M, B, R, λ0): the paper reports the
  largest ρ = 0.22 at B = 2.5, R = 10;
* :func:`rho_sweep` — ρ over any grid of a mechanism's parameters, the others fixed; a point whose
  loss or ERM is refused (μ = λ0 − M·B ≤ 0, or the optimum outside the box |w| ≤ B, App. H.4.1's
  requirement), or whose ERM does not converge, is kept with ρ NaN and the reason.
"""

from __future__ import annotations

import itertools
import math
from typing import Mapping, Sequence

from .experiments import CubicNewtonParams, LogisticNewtonParams, build_cubic_newton, build_logistic_newton

__all__ = ["CUBIC_GRID", "SWEEPS", "rho_sweep", "largest"]

#: App. H.4.1: M ∈ {0.001, 0.002, 0.005}, B ∈ {2.5, 3.0, 3.5}, R ∈ {4, …, 12}, λ0 ∈ {0.10, …, 0.20}.
CUBIC_GRID: dict[str, tuple] = {"M": (0.001, 0.002, 0.005), "B": (2.5, 3.0, 3.5), "R": (4.0, 5.0, 6.0, 7.0, 8.0, 10.0, 12.0),
                                "lam": (0.10, 0.12, 0.15, 0.18, 0.20)}

#: The mechanisms a sweep can vary: their parameter class and the deterministic part they build.
SWEEPS = {"cubic_newton": (CubicNewtonParams, build_cubic_newton), "logistic_newton": (LogisticNewtonParams, build_logistic_newton)}


def rho_sweep(mechanism: str, base: Mapping, grid: Mapping[str, Sequence]) -> list[dict]:
    """One row per point of ``grid`` (parameter → values; ``base`` the other parameters): the point,
    ``rho``, ``distance`` ‖w̄ − ŵ_r‖, ``gamma`` and ``feasible`` (False, with ``reason``, where the
    instance is refused)."""
    if mechanism not in SWEEPS:
        raise ValueError(f"no sweep of {mechanism!r}; known: {sorted(SWEEPS)}")
    if not grid or any(len(v) == 0 for v in grid.values()):
        raise ValueError(f"a sweep needs at least one value per parameter, got {dict(grid)}")
    cls, build = SWEEPS[mechanism]
    unknown = set(grid) - set(cls.__dataclass_fields__)
    if unknown:
        raise ValueError(f"{mechanism} has no parameter(s) {sorted(unknown)}; known: {sorted(cls.__dataclass_fields__)}")
    rows = []
    for values in itertools.product(*grid.values()):
        point = dict(zip(grid, values))
        row = {"mechanism": mechanism, **point}
        try:
            u = build(cls(**{**base, **point}))
        except (ValueError, RuntimeError) as err:  # a refused instance, or an ERM that did not converge
            rows.append({**row, "rho": math.nan, "distance": math.nan, "gamma": math.nan, "feasible": False, "reason": str(err)})
            continue
        rows.append({**row, "rho": u.rho, "distance": u.distance, "gamma": u.gamma, "feasible": True, "reason": ""})
    return rows


def largest(rows: Sequence[Mapping]) -> Mapping:
    """The feasible row of the largest ρ (the first of equals, in grid order)."""
    feasible = [r for r in rows if r["feasible"] and math.isfinite(r["rho"])]
    if not feasible:
        raise ValueError("no point of the sweep is feasible")
    return max(feasible, key=lambda r: r["rho"])
