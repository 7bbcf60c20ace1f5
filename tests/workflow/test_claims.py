"""analysis/claims.py has teeth: fed doctored copies of the shared run, its claims fail where the
paper's phenomenon is absent and pass where it is present, through the workflow's own table code.

* "heuristics replaced by Retrain's overlaps": Table 1b's methods get the bounds, overlaps and
  evaluation metrics of the design's Retrain control, and Table 1b is rendered again by
  :func:`unlearn_audit.pipeline.nn.table`: the finding's claims FAIL;
* the phenomenon made present: the methods get No unlearning's bounds and overlaps (they leak) and
  Retrain's accuracies (they look unlearned): the same claims PASS;
* App. F.4 at the paper's value (a claim of ~0 just after the first noisy step) PASSes its claim,
  which prints DIVERGES, never PASS, on a run where that step is rejected.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from types import SimpleNamespace

import pandas as pd
import pytest

from unlearn_audit import schemas
from unlearn_audit.io import read_concat, write_parquet
from unlearn_audit.pipeline import nn as pnn
from workflow_utils import REPO, claims_script

pytestmark = pytest.mark.workflow

FINDING = ("heuristics-rejected", "looks-unlearned-yet-rejected-uniform")


@pytest.fixture(scope="module")
def claims():
    return claims_script()


def _status(claims, results) -> dict[str, str]:
    table = claims.evaluate(results)
    return dict(zip(table.key, table.status))


def _copy(shared_run, dest):
    """The shared run's results less its per-run files (the claims read tables, bounds and configs)."""
    shutil.copytree(shared_run.results, dest, ignore=shutil.ignore_patterns("runs", "designs", "logs", "benchmarks"))
    return dest


def _doctored_table1b(shared_run, dest, bounds_from: str, metrics_from: str) -> None:
    """Table 1b of the copy at ``dest`` rendered again with every method's bounds and overlaps taken
    from control ``bounds_from`` and its evaluation metrics from control ``metrics_from``."""
    plan = shared_run.plan
    experiments = plan.nn.table_summaries(SimpleNamespace(table="table1b"))
    names = list(experiments)
    controls = {"trained": next(n for n in names if experiments[n].get("method") == "no_unlearning" and experiments[n].get("base", "trained") == "trained"),
                "retrain": next(n for n in names if experiments[n].get("base") == "retrain")}
    # the methods audited on the controls' guess budgets (a donor's bounds are its cells)
    methods = [n for n in names if experiments[n].get("method") != "no_unlearning" and experiments[n]["r"] == experiments[controls["trained"]]["r"]]
    assert methods, "Table 1b of the shared run has a method on its controls' r"
    names = [*methods, controls["trained"], controls["retrain"]]
    experiments = {n: experiments[n] for n in names}

    def frames(name: str, kind: str):
        if kind == "metrics":
            return read_concat([shared_run.workdir / p for p in plan.nn.evaluation_metrics_of([name])], schemas.RUN_METRICS)
        return pd.read_parquet(shared_run.results / name / f"{kind}.parquet")

    paths = {}
    for kind, donor in (("bounds", controls[bounds_from]), ("overlaps", controls[bounds_from]), ("metrics", controls[metrics_from])):
        parts = [frames(n, kind) for n in names if n not in methods]
        parts += [frames(donor, kind).assign(experiment=n) for n in methods]
        paths[kind] = dest / f"doctored_{kind}.parquet"
        write_parquet(pd.concat(parts, ignore_index=True), paths[kind], {"bounds": schemas.BOUNDS, "overlaps": schemas.OVERLAPS,
                                                                          "metrics": schemas.RUN_METRICS}[kind])
    pnn.table("table1b", [str(paths["bounds"])], [str(paths["metrics"])], experiments, dest / "tables" / "table1b.csv",
              overlap_paths=[str(paths["overlaps"])])


def test_the_findings_claims_fail_on_retrain_level_methods_and_pass_where_they_leak(shared_run, claims, tmp_path):
    absent = _copy(shared_run, tmp_path / "absent")
    _doctored_table1b(shared_run, absent, bounds_from="retrain", metrics_from="retrain")
    t = pd.read_csv(absent / "tables" / "table1b.csv")
    assert (t[~t.method.isin(["No unlearning", "Retrain"])].epsilon_lb_claim == t[t.method == "Retrain"].epsilon_lb_claim.iloc[0]).all()
    status = _status(claims, absent)
    assert [status[k] for k in FINDING] == ["FAIL", "FAIL"], status

    present = _copy(shared_run, tmp_path / "present")
    _doctored_table1b(shared_run, present, bounds_from="trained", metrics_from="retrain")
    t = pd.read_csv(present / "tables" / "table1b.csv")
    methods = t[~t.method.isin(["No unlearning", "Retrain"])]
    assert (methods.epsilon_lb_claim > 0).all() and not methods.not_forgotten.any()
    status = _status(claims, present)
    assert [status[k] for k in FINDING] == ["PASS", "PASS"], status
    # the script's exit status: 1 with a FAIL
    proc = subprocess.run([sys.executable, str(REPO / "analysis" / "claims.py"), str(absent)], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 1 and "FAIL  heuristics-rejected" in proc.stdout


def test_app_f4_at_the_papers_value_passes_and_at_the_controls_prints_as_a_divergence(shared_run, claims, tmp_path):
    for value, expected in ((0.007, "PASS"), (1.0, "DIVERGES")):
        dest = _copy(shared_run, tmp_path / f"f4_{expected}")
        f4 = pd.read_csv(dest / "tables" / "appendix_f4.csv")
        batchwise = (f4.auditor == "batchwise") & f4.step.notna()
        assert batchwise.any()
        f4.loc[batchwise, "epsilon_lb_claim"] = value
        f4.to_csv(dest / "tables" / "appendix_f4.csv", index=False)
        status = _status(claims, dest)
        assert status["f4-first-step-near-zero"] == expected, status


def test_a_claim_that_holds_by_construction_is_never_counted_as_a_pass(shared_run, claims):
    status = _status(claims, shared_run.results)
    assert status["reference-never-weaker"] == "BY-CONSTRUCTION" and status["joint-controls-on-ceiling"] == "BY-CONSTRUCTION"
    assert set(status.values()) <= set(claims.STATUSES)


def test_the_second_papers_claims_fail_when_its_noises_are_swapped(shared_run, claims, tmp_path):
    """The shared run's GED figures show the second paper's contrasts (Gaussian far below l2-Laplace,
    falling with epsilon); a copy whose Gaussian and l2-Laplace rows trade places shows the opposite,
    and those claims FAIL there.  The slopes' claims read a slopes table given the paper's slopes
    (the shared run's grids are too small to fit them): PASS, and FAIL with the noises swapped."""
    status = _status(claims, shared_run.results)
    assert [status[k] for k in ("seed2-gaussian-below-laplace", "seed2-ged-falls-with-eps")] == ["PASS", "PASS"], status

    names = {"gaussian": "laplace", "laplace": "gaussian"}
    slope_keys = ("seed2-newton-slopes", "seed2-ued-newton-slopes")
    for swap, expected in ((False, "PASS"), (True, "FAIL")):
        dest = _copy(shared_run, tmp_path / f"swapped_{swap}")
        path = dest / "tables" / "gaussian_unlearning_slopes.csv"
        slopes = pd.read_csv(path)
        papers = {(1, "gaussian"): -0.5, (1, "laplace"): 0.0, (2, "gaussian"): -1.0, (2, "laplace"): -0.5}
        slopes["slope"] = [papers[(int(n), noise)] for n, noise in zip(slopes.newton_steps, slopes.noise)]
        if swap:
            slopes["noise"] = slopes.noise.map(names)
            for axis in ("p", "eps", "m"):
                figure = dest / "figures" / f"gaussian_unlearning_ged_vs_{axis}.csv"
                frame = pd.read_csv(figure)
                frame["noise"] = frame.noise.map(names)
                frame.to_csv(figure, index=False)
        slopes.to_csv(path, index=False)
        status = _status(claims, dest)
        assert [status[k] for k in slope_keys] == [expected] * 2, status
        assert status["seed2-gaussian-below-laplace"] == ("FAIL" if swap else "PASS"), status

    # a Gaussian GED that does not fall with epsilon: its points in reverse order
    flat = _copy(shared_run, tmp_path / "flat")
    path = flat / "figures" / "gaussian_unlearning_ged_vs_eps.csv"
    frame = pd.read_csv(path)
    gaussian = frame.noise == "gaussian"
    frame.loc[gaussian, "x"] = -frame.loc[gaussian, "x"]
    frame.to_csv(path, index=False)
    assert _status(claims, flat)["seed2-ged-falls-with-eps"] == "FAIL"


def test_every_check_returns_margins_that_agree_with_its_verdict(shared_run, claims):
    table = claims.evaluate(shared_run.results)
    for r in table[table.status != "SKIP"].itertuples():
        assert r.margins, r.key
        assert all(v > 0 for v in r.margins.values()) == (r.status in ("PASS", "BY-CONSTRUCTION")), (r.key, r.status, r.margins)


def test_a_margin_must_exceed_its_spread_between_runs(claims):
    # passing on both runs: the margins 3 and 1 spread by 2, so the smaller (1) does not exceed it
    assert claims.beyond_spread([{"rows": 3.0}, {"rows": 1.0}], passing=True) == (False, "rows: margin 1, spread 2")
    assert claims.beyond_spread([{"rows": 3.0, "d": 0.5}, {"rows": 2.5, "d": 0.6}], passing=True)[0]
    # failing on both: one condition far below 0 on each run is enough
    assert claims.beyond_spread([{"a": 1.0, "b": -4.0}, {"a": 2.0, "b": -5.0}], passing=False)[0]
    assert not claims.beyond_spread([{"b": -0.5}, {"b": -2.0}], passing=False)[0]
    assert claims.beyond_spread([{}, {}], passing=True) == (False, "no margin")


def test_a_claim_holds_on_every_cpu_only_where_every_cpus_run_gives_it_the_same_status(shared_run, claims, tmp_path):
    import json

    # two copies of the run recorded as two CPUs': on one the heuristics leak and look unlearned (the finding
    # PASSes), on the other they keep Retrain's overlaps (it FAILs): the finding differs between the "CPUs", a
    # claim the doctoring leaves alone holds on both
    runs = []
    for name, bounds_from in (("cpu_a", "trained"), ("cpu_b", "retrain")):
        run = _copy(shared_run, tmp_path / name)
        _doctored_table1b(shared_run, run, bounds_from=bounds_from, metrics_from="retrain")
        record = json.loads((run / "provenance.json").read_text())
        record["cpu"] = {**record.get("cpu", {}), "model": f"CPU {name}", "torch_capability": "AVX2"}
        (run / "provenance.json").write_text(json.dumps(record))
        runs.append(run)
    table = claims.across_runs(runs).set_index("key")
    assert (table.loc[list(FINDING), "every_cpu"] == "differs").all(), table
    assert table.loc["convex-valid", "every_cpu"] == "holds"
    # the same status on both, but a margin narrower than the spread between them: not "holds"
    path = runs[1] / "tables" / "table2a.csv"
    t2a = pd.read_csv(path)
    gaps = t2a.epsilon - t2a[["epsilon_lb_pairwise", "epsilon_lb_joint"]].max(axis=1)
    closest = gaps.idxmin()
    # that row's bound moved to 0.3 of its margin below epsilon: PASS on both, margins m and 0.3 m
    t2a.loc[closest, "epsilon_lb_pairwise"] = t2a.loc[closest, "epsilon"] - 0.3 * gaps[closest]
    t2a.to_csv(path, index=False)
    table = claims.across_runs(runs).set_index("key")
    assert table.loc["convex-valid", list(map(str, runs))].tolist() == ["PASS", "PASS"]
    assert table.loc["convex-valid", "every_cpu"] == "within spread", table.loc["convex-valid"]
    # two runs of one CPU prove nothing about another
    same = claims.across_runs([shared_run.results, shared_run.results])
    assert set(same.every_cpu) == {"one CPU measured"}
