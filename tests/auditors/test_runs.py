import numpy as np
import pandas as pd
import pytest

from unlearn_audit import schemas
from unlearn_audit.auditors.batchwise import audit_tables, fit_table
from unlearn_audit.auditors.runs import sign_matrix, sign_table
from unlearn_audit.stats.selection import Cell
from unlearn_audit.stats.signs import is_balanced


def test_sign_table_is_deterministic_balanced_and_phase_separated():
    a = sign_table("digits_uniform", 30, 8, 4, root_seed=7)
    b = sign_table("digits_uniform", 30, 8, 4, root_seed=7)
    pd.testing.assert_frame_equal(a.drop(columns="signs"), b.drop(columns="signs"))
    assert all(np.array_equal(x, y) for x, y in zip(a.signs, b.signs))
    assert all(is_balanced(s) for s in a.signs)
    assert (a.phase == "calib").sum() == 8 and (a.phase == "eval").sum() == 4
    assert a["seed"].is_unique
    assert set(a.loc[a.phase == "calib", "seed"]).isdisjoint(a.loc[a.phase == "eval", "seed"])
    _, cal = sign_matrix(a, "calib")
    _, ev = sign_matrix(a, "eval")
    assert not any(np.array_equal(c, e) for c in cal for e in ev)
    other = sign_table("digits_adversarial", 30, 8, 4, root_seed=7)
    assert not np.array_equal(np.stack(other.signs), np.stack(a.signs))


def long_scores(signs: pd.DataFrame, phase: str, shift: float, rng) -> pd.DataFrame:
    runs, s = sign_matrix(signs, phase)
    m = s.shape[1]
    base = np.linspace(-1, 1, m)
    rows = []
    for run, vec in zip(runs, s):
        val = base + shift * (vec == 1) + rng.normal(0, 0.3, m)
        for j in range(m):
            rows.append({"experiment": "e", "phase": phase, "run": run, "sign_index": 0, "seed": 0, "batch": j, "example": j,
                         "in_forget": bool(vec[j] == 1), "score_logit": val[j], "score_loss": -val[j]})
    return pd.DataFrame(rows)


def test_fit_and_audit_end_to_end_on_synthetic_scores():
    rng = np.random.default_rng(0)
    signs = sign_table("synthetic", 40, 30, 6, root_seed=1)
    calib = long_scores(signs, "calib", 2.0, rng)
    fit = fit_table(calib, "e")
    assert set(fit["score"]) == {"logit", "loss"} and len(fit) == 80
    ev = long_scores(signs, "eval", 2.0, rng)
    overlaps, bounds = audit_tables(fit, ev, signs[signs.phase == "eval"], 40, [10, 20, 40], primary=Cell(20, "median", "loss"))
    assert len(overlaps) == 2 * 3 * 6
    assert list(overlaps.columns) == schemas.OVERLAPS.names
    assert sorted(bounds.columns) == sorted(schemas.BOUNDS.names)
    assert bounds["epsilon_lb"].max() > 5
    assert (bounds["epsilon_lb"] == bounds["epsilon_ldp"] / 2).all()
    pre = bounds[bounds.role == "preregistered"]
    assert pre[["r", "statistic", "score"]].values.tolist() == [[20, "median", "loss"]]
    assert (bounds.role != "preregistered").sum() == 11 and set(bounds.role) == {"preregistered", "exploratory"}
    assert (bounds.selection == "preregistered").all() and (bounds.zeta == 0.05).all()

    _, bonf = audit_tables(fit, ev, signs[signs.phase == "eval"], 40, [10, 20, 40], selection="bonferroni")
    assert len(bonf) == 12 and (bonf.zeta == 0.05 / 12).all() and (bonf.selection == "bonferroni").all()
    selected = bonf[bonf.role == "selected"]
    assert len(selected) == 1 and selected.epsilon_ldp.iloc[0] == bonf.epsilon_ldp.max()
    assert selected.epsilon_ldp.iloc[0] <= bounds.epsilon_ldp.max()  # ζ/K costs power


def test_phases_cannot_mix():
    rng = np.random.default_rng(0)
    signs = sign_table("synthetic", 10, 16, 3, root_seed=1)
    calib = long_scores(signs, "calib", 1.0, rng)
    ev = long_scores(signs, "eval", 1.0, rng)
    with pytest.raises(ValueError, match="must not mix"):
        fit_table(pd.concat([calib, ev]), "e")
    fit = fit_table(calib, "e")
    with pytest.raises(ValueError, match="must not mix"):
        audit_tables(fit, calib, signs[signs.phase == "calib"], 10, [4])
