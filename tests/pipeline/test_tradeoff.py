"""The μ-GDP trade-off figures (pipeline/tradeoff.py, docs/bounds.md §8): the figures' CSV against
the curve functions, and the panels a config selects."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from tradeoff_checks import figure_outputs
from unlearn_audit import schemas
from unlearn_audit.auditors.audit import bounds_table
from unlearn_audit.io import read_parquet, write_parquet
from unlearn_audit.pipeline import convex as convex_pipeline
from unlearn_audit.pipeline import tradeoff
from unlearn_audit.pipeline.config import validate_config
from unlearn_audit.pipeline.gaussian_unlearning import run_audit
from unlearn_audit.pipeline.plan import WorkflowPlan, certified_claim
from unlearn_audit.pipeline.plan import tradeoff as tradeoff_plan
from unlearn_audit.stats.selection import Cell
from unlearn_audit.stats.tradeoff import confidence_tradeoff_point, gaussian_mechanism_mu

REPO = Path(__file__).resolve().parents[2]
SCHEMA = REPO / "workflow" / "schemas" / "config.schema.yaml"


def test_convex_figure_plots_the_claim_and_the_proven_curve(tmp_path):
    settings = {"n_calibration": 50, "n_test_draws": 4000, "zeta": 0.05}
    cells = [("cubic_newton", 50.0, {"lam": 0.2, "M": 0.001, "B": 2.5, "R": 10.0, "n_retain": 1000, "n_forget": 50, "delta": 0.01}),
             ("output_perturbation", 2.0, {"clip_radius": 0.1, "n_retain": 600, "n_forget": 400, "d": 2, "eta": 0.5,
                                           "range_half": 10.0, "forget_norm": 10.0, "delta": 0.01}),
             ("output_perturbation", 0.5, {"clip_radius": 0.1, "n_retain": 600, "n_forget": 400, "d": 2, "eta": 0.5,
                                           "range_half": 10.0, "forget_norm": 10.0, "delta": 0.01})]
    paths = []
    for mech, eps, params in cells:
        _, summary = convex_pipeline.audit_cell(mech, eps, params, settings, root_seed=7)
        path = tmp_path / f"{mech}_{eps}.parquet"
        write_parquet(summary, path, schemas.CONVEX_SUMMARY)
        paths.append(str(path))
    tradeoff.convex(paths, tmp_path / "tradeoff_convex.png")
    csv = figure_outputs(tmp_path / "tradeoff_convex")
    summaries = pd.concat([read_parquet(p) for p in paths], ignore_index=True)
    assert sorted(csv.subject.unique()) == ["cubic_newton:50", "output_perturbation:0.5", "output_perturbation:2"]
    for s in summaries.itertuples():
        rows = csv[csv.subject == f"{s.mechanism}:{s.epsilon:g}"]
        assert set(rows.curve) == {"diagonal", "claim", "true", "proven", "audited_point"}
        assert rows[rows.curve == "proven"].mu.unique().tolist() == [pytest.approx(s.mu_lb)]
        assert rows[rows.curve == "true"].mu.unique().tolist() == [pytest.approx(s.true_mu)]
        dp = rows[(rows.curve == "claim") & (rows.form == "dp")]
        assert dp.epsilon.unique().tolist() == [s.epsilon] and dp.delta.unique().tolist() == [s.delta]
        gdp = rows[(rows.curve == "claim") & (rows.form == "gdp")]
        # the claim's μ is that of the exact Gaussian mechanism calibrated at (ε, δ)
        assert gdp.mu.unique().tolist() == [pytest.approx(gaussian_mechanism_mu(s.epsilon, s.delta), rel=1e-9)]
        point = rows[rows.curve == "audited_point"]
        assert (point.alpha.iloc[0], point.beta.iloc[0]) == pytest.approx(confidence_tradeoff_point(s.fp, s.n_neg, s.fn, s.n_pos, zeta=s.zeta))
    # panels: one row per mechanism, its ε in increasing order
    panels = tradeoff.panels_frame(tradeoff.convex_panels(summaries))
    assert panels[["subject", "row", "col"]].values.tolist() == [
        ["cubic_newton:50", 0, 0], ["output_perturbation:0.5", 1, 0], ["output_perturbation:2", 1, 1]]


def test_gaussian_unlearning_figure_falsifies_only_the_undernoised_control(tmp_path):
    spec = {"n": 60, "p": 60, "m": 2, "epsilon": 0.75, "delta": 1e-5,
            "settings": {"n_calibration": 2000, "n_fit": 500, "n_eval": 5000, "n_alg1_runs": 2000}}
    audit = run_audit(spec, {}, 1, 0.05)
    path = tmp_path / "audit.parquet"
    write_parquet(audit, path)
    tradeoff.gaussian_unlearning(path, tmp_path / "tradeoff_gaussian_unlearning.png")
    csv = figure_outputs(tmp_path / "tradeoff_gaussian_unlearning")
    assert csv.subject.unique().tolist() == ["certified", "control_tight", "control_undernoised"]
    for r in audit.itertuples():
        rows = csv[csv.subject == r.mechanism]
        assert set(rows.curve) == {"diagonal", "claim", "true", "proven"}
        assert rows[rows.curve == "claim"].mu.unique().tolist() == [0.75]
        assert rows[rows.curve == "proven"].mu.unique().tolist() == [pytest.approx(r.mu_lb)]
    notes = dict(zip(*tradeoff.panels_frame(tradeoff.gaussian_unlearning_panels(audit))[["subject", "note"]].T.values))
    assert "falsified: μ_LB > claimed μ" in notes["control_undernoised"]
    assert notes["certified"].endswith("not falsified") and notes["control_tight"].endswith("not falsified")


def _bounds(experiment: str, auditor: str, m: int, r: int, overlaps: list[int], delta: float, primary: Cell) -> pd.DataFrame:
    runs = len(overlaps)
    frames = []
    for score in ("logit", "loss"):
        ov = [min(v + (score == "loss"), r) for v in overlaps]  # the exploratory score: other overlaps, another μ_LB
        frames.append(pd.DataFrame({"experiment": experiment, "auditor": auditor, "score": score, "run": np.arange(runs),
                                    "sign_index": np.arange(runs), "r": r, "overlap": ov}))
    ov = pd.concat(frames, ignore_index=True)
    if delta > 0:
        return bounds_table(ov, m, zeta=0.05, delta=delta, primary=primary, delta_kind="unlearning")
    return bounds_table(ov, m, zeta=0.05, primary=primary)


def test_sign_vector_figure_reads_the_reported_row(tmp_path):
    heuristic = _bounds("ascent", "batchwise", 40, 20, [15, 16, 14, 17, 15, 16, 15, 14, 16, 15], 0.0, Cell(20, "mean", "logit", "theorem4.2"))
    r2d = _bounds("r2d", "joint", 6, 6, [6, 6, 4, 6, 6, 6, 4, 6, 6, 6, 6, 4] * 2, 1e-3, Cell(6, "mean", "logit", "theorem4.2"))
    paths = []
    for name, b in (("ascent", heuristic), ("r2d", r2d)):
        paths.append(str(tmp_path / f"{name}.parquet"))
        write_parquet(b, paths[-1], schemas.BOUNDS)
    experiments = {
        "r2d": {"label": "Rewind-to-delete", "dataset": "digits", "split": "uniform", "method": "rewind_to_delete",
                "auditor": "joint", "claim": [100.0, 1e-3], "gaussian_claim": True},
        "ascent": {"label": "Forget ascent", "dataset": "digits", "split": "uniform", "method": "forget_ascent",
                   "auditor": "batchwise", "claim": None, "gaussian_claim": False},
    }
    tradeoff.sign_vector(paths, experiments, 0.05, tmp_path / "tradeoff_sign_vector.png")
    csv = figure_outputs(tmp_path / "tradeoff_sign_vector")
    assert csv.groupby("panel").subject.first().tolist() == ["r2d", "ascent"]  # the order of ``experiments``
    for name, b in (("ascent", heuristic), ("r2d", r2d)):
        reported = b[b.role == "preregistered"]
        assert len(reported) == 1 and reported.mu_lb.iloc[0] > 0
        assert (b[b.role == "exploratory"].mu_lb != reported.mu_lb.iloc[0]).any()
        rows = csv[csv.subject == name]
        assert rows[rows.curve == "proven"].mu.unique().tolist() == [pytest.approx(reported.mu_lb.iloc[0])]
    assert set(csv[csv.subject == "ascent"].curve) == {"diagonal", "proven"}  # a heuristic: no claim
    claim = csv[(csv.subject == "r2d") & (csv.curve == "claim")]
    assert claim[claim.form == "dp"][["epsilon", "delta"]].drop_duplicates().values.tolist() == [[100.0, 1e-3]]
    assert claim[claim.form == "gdp"].mu.unique().tolist() == [pytest.approx(gaussian_mechanism_mu(100.0, 1e-3))]


def test_bounds_without_mu_lb_are_refused(tmp_path):
    b = _bounds("ascent", "batchwise", 40, 20, [15] * 10, 0.0, Cell(20, "mean", "logit", "theorem4.2"))
    path = tmp_path / "old.parquet"
    write_parquet(b.drop(columns=["mu_ldp", "mu_lb"]), path)
    exp = {"ascent": {"label": "x", "dataset": "digits", "split": "uniform", "method": "forget_ascent", "auditor": "batchwise", "claim": None}}
    with pytest.raises(ValueError, match="mu_lb"):
        tradeoff.sign_vector([str(path)], exp, 0.05, tmp_path / "f.png")


# ---------------------------------------------------------------------------------------- the plan
def _plan(overrides: dict | None = None) -> WorkflowPlan:
    cfg = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
    for section, values in (overrides or {}).items():
        cfg[section].update(values)
    return WorkflowPlan(validate_config(cfg, SCHEMA))


def test_default_config_panels():
    plan = _plan()
    cells = plan.tradeoff.convex_cells()
    assert 0 < len(cells) <= tradeoff.MAX_PANELS
    for mech in plan.convex.mechanisms():
        eps = sorted(plan.config["convex"]["mechanisms"][mech]["epsilons"])
        shown = [e for m, e in cells if m == mech]
        assert shown[0] == eps[0] and shown[-1] == eps[-1] and shown == sorted(shown)
        assert len(shown) == min(len(eps), tradeoff.MAX_PANELS // len(plan.convex.mechanisms()))
    assert plan.tradeoff.convex_inputs() == [plan.files.convex_file(m, e, "summary.parquet") for m, e in cells]

    names = plan.tradeoff.sign_vector_experiments()
    assert 0 < len(names) <= tradeoff.MAX_PANELS and len(set(names)) == len(names)
    assert all(plan.nn.auditor(e) in ("batchwise", "joint") for e in names)
    claimed = [certified_claim(plan.nn.experiment(e)) is not None for e in names]
    assert claimed == sorted(claimed, reverse=True) and any(claimed) and not all(claimed)  # claims first
    heuristic = [e for e, c in zip(names, claimed) if not c]
    assert heuristic == plan.nn.table_experiments("table1b")[: len(heuristic)]
    summaries = plan.tradeoff.sign_vector_summaries()
    assert list(summaries) == names
    r2d = [s for s in summaries.values() if s["method"] == "rewind_to_delete"]
    assert r2d and all(s["gaussian_claim"] and s["claim"] for s in r2d)
    mc = [s for s in summaries.values() if s["method"] == "model_clipping"]
    assert mc and not any(s["gaussian_claim"] for s in mc)

    targets = plan.all_targets()
    for name in tradeoff.FIGURES:
        assert f"{plan.results}/figures/{name}.png" in targets and f"{plan.results}/figures/{name}.pdf" in targets
    assert len(targets) == len(set(targets))


@pytest.mark.parametrize("section,figure", [("convex", "tradeoff_convex"), ("gaussian_unlearning", "tradeoff_gaussian_unlearning"),
                                            ("nn", "tradeoff_sign_vector")])
def test_a_disabled_section_has_no_tradeoff_figure(section, figure):
    plan = _plan({section: {"enabled": False}})
    targets = plan.tradeoff.targets()
    assert not any(f"/{figure}." in t for t in targets)
    assert len(targets) == 4  # the two other figures, PNG and PDF each
