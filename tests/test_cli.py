import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from unlearn_audit import cli, schemas
from unlearn_audit.io import write_parquet
from unlearn_audit.stats.bounds import epsilon_lower_bound
from unlearn_audit.stats.gdp_overlaps import mu_lower_bound
from cli_runner import run_cli
from synthetic_scores import pipeline_overlaps


def main_json(argv, capsys):
    rc = cli.main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return rc, (json.loads(out) if rc == 0 else None), err


def test_bound_from_pipeline_overlaps_counts_each_run_once(tmp_path, capsys):
    m, n_eval = 40, 9
    ov = pipeline_overlaps(m, [10, 20], n_eval)
    path = tmp_path / "overlaps.parquet"
    write_parquet(ov, path, schemas.OVERLAPS)
    results = {}
    for score in ("logit", "loss"):
        for r in (10, 20):
            args = ["bound", "--m", m, "--r", r, "--overlaps-file", path] + (["--score", score] if score == "loss" else [])
            rc, res, err = main_json(args, capsys)
            assert rc == 0, err
            v = ov[(ov.score == score) & (ov.r == r)].sort_values("run")["overlap"].to_numpy()
            assert res["L"] == n_eval == len(v)
            assert res["score"] == score and res["auditor"] == "batchwise" and res["experiment"] == "e"
            assert res["epsilon_ldp"] == pytest.approx(epsilon_lower_bound(v, m, r).epsilon_ldp)
            results[score, r] = v
    assert any(not np.array_equal(results["logit", r], results["loss", r]) for r in (10, 20))


def test_bound_parquet_filters_refuse_ambiguous_rows(tmp_path, capsys):
    m = 20
    a, b = pipeline_overlaps(m, [10], 4, "exp_a"), pipeline_overlaps(m, [10], 4, "exp_b", seed=5)
    both = tmp_path / "both.parquet"
    write_parquet(pd.concat([a, b]), both, schemas.OVERLAPS)
    base = ["bound", "--m", m, "--r", 10, "--overlaps-file", both]
    rc, _, err = main_json(base, capsys)
    assert rc == 2 and len(err.strip().splitlines()) == 1 and "exp_a, exp_b" in err and "--experiment" in err
    rc, res, _ = main_json(base + ["--experiment", "exp_b"], capsys)
    v = b[(b.score == "logit") & (b.r == 10)]["overlap"].to_numpy()
    assert rc == 0 and res["L"] == 4 and res["epsilon_ldp"] == pytest.approx(epsilon_lower_bound(v, m, 10).epsilon_ldp)
    rc, _, err = main_json(base + ["--experiment", "exp_c"], capsys)
    assert rc == 2 and "exp_a, exp_b" in err
    rc, _, err = main_json(base + ["--experiment", "exp_a", "--auditor", "weights"], capsys)
    assert rc == 2 and "auditors present: batchwise" in err
    # two reruns of one experiment written to one file: run ids repeat after every filter
    dup = tmp_path / "dup.parquet"
    write_parquet(pd.concat([a, b.assign(experiment="exp_a")]), dup, schemas.OVERLAPS)
    rc, _, err = main_json(["bound", "--m", m, "--r", 10, "--overlaps-file", dup], capsys)
    lines = err.strip().splitlines()
    assert rc == 2 and len(lines) == 1, err
    assert "run 0 occurs 2 times" in lines[0] and "--experiment/--auditor/--score/--r" in lines[0]
    # a file without the score column pools logit and loss: refused, not counted as 2L runs
    noscore = tmp_path / "noscore.parquet"
    a.drop(columns="score").to_parquet(noscore)
    rc, _, err = main_json(["bound", "--m", m, "--r", 10, "--overlaps-file", noscore], capsys)
    assert rc == 2 and len(err.strip().splitlines()) == 1 and "occurs 2 times" in err
    rc, _, err = main_json(["bound", "--m", m, "--r", 10, "--overlaps-file", noscore, "--score", "loss"], capsys)
    assert rc == 2 and "no 'score' column" in err


def test_bound_prints_json():
    rc, out, err = run_cli("bound", "--m", "100", "--r", "60", "--overlaps", ",".join(["60"] * 10))
    assert rc == 0, err
    res = json.loads(out)
    assert round(res["epsilon_ldp"], 2) == 40.83
    assert res["epsilon_lb"] == pytest.approx(res["epsilon_ldp"] / 2)
    assert res["rejected"] is True and res["L"] == 10 and res["statistic"] == "mean"


@pytest.mark.parametrize("method", ["theorem4.2", "exact", "mgf"])
def test_bound_method_flag_and_mu_fields(method, capsys):
    overlaps = [60] * 10
    rc, res, err = main_json(["bound", "--m", 100, "--r", 60, "--overlaps", ",".join(map(str, overlaps)), "--method", method], capsys)
    assert rc == 0, err
    want = epsilon_lower_bound(overlaps, 100, 60, method=method)
    assert res["method"] == method and res["epsilon_ldp"] == pytest.approx(want.epsilon_ldp)
    # μ by the trade-off test by default (docs/bounds.md §6a), never below Lemma C.1's
    mu = mu_lower_bound(overlaps, 100, 60, method="tradeoff")
    assert res["mu_method"] == "tradeoff" and res["mu_ldp"] == pytest.approx(mu.mu_ldp) and res["mu_lb"] == pytest.approx(mu.mu_lb)
    assert res["mu_lb"] >= mu_lower_bound(overlaps, 100, 60, method="lemma_c1").mu_lb > 0
    if method != "theorem4.2":
        assert res["epsilon_ldp"] > epsilon_lower_bound(overlaps, 100, 60).epsilon_ldp


def test_bound_method_reference_bounds_the_unlearning_claim_at_any_delta(capsys):
    """--method reference (docs/bounds.md §6b): the unlearning ε against the retrained model, not halved,
    never below the sign-vector route's; --delta is then the claim's δ, and a larger δ never gives more."""
    from unlearn_audit.stats.reference import reference_epsilon_lower_bound

    overlaps = [58, 56, 60, 55, 57, 59, 58, 56, 60, 57]
    args = ["bound", "--m", 100, "--r", 60, "--overlaps", ",".join(map(str, overlaps)), "--method", "reference"]
    rc, res, err = main_json(args, capsys)
    assert rc == 0, err
    assert res["method"] == "reference" and res["epsilon_ldp"] is None and res["rejected"] is True
    assert res["epsilon_lb"] == pytest.approx(reference_epsilon_lower_bound(overlaps, 100, 60))
    assert res["epsilon_lb"] > epsilon_lower_bound(overlaps, 100, 60, method="adaptive").epsilon_lb
    rc, with_delta, _ = main_json(args + ["--delta", "1e-3"], capsys)
    assert rc == 0 and with_delta["delta"] == 1e-3 and with_delta["epsilon_lb"] <= res["epsilon_lb"]


def test_bound_default_method_is_theorem42(capsys):
    rc, res, _ = main_json(["bound", "--m", 6, "--r", 6, "--overlaps", "6,6,4"], capsys)
    assert rc == 0 and res["method"] == "theorem4.2"
    assert res["epsilon_ldp"] == epsilon_lower_bound([6, 6, 4], 6, 6).epsilon_ldp


def test_bound_from_text_and_parquet_files(tmp_path):
    txt = tmp_path / "v.txt"
    txt.write_text("# overlaps\n6 6\n5,6\n")
    rc, out, _ = run_cli("bound", "--m", "6", "--r", "6", "--overlaps-file", str(txt), "--statistic", "median")
    assert rc == 0
    assert json.loads(out)["L"] == 4
    pq = tmp_path / "overlaps.parquet"
    pd.DataFrame({"run": [0, 1, 2, 0, 1, 2], "r": [2, 2, 2, 6, 6, 6], "overlap": [2, 2, 1, 6, 6, 6]}).to_parquet(pq)
    rc, out, _ = run_cli("bound", "--m", "6", "--r", "6", "--overlaps-file", str(pq))
    res = json.loads(out)
    assert rc == 0 and res["L"] == 3 and res["statistic_value"] == 6.0


def test_pairwise_and_gdp():
    rc, out, _ = run_cli("pairwise", "--fp", "0", "--n-neg", "100000", "--fn", "0", "--n-pos", "100000", "--delta", "0.01")
    assert rc == 0
    res = json.loads(out)
    assert abs(res["epsilon_lb"] - 10.1983) < 1e-3 and res["mu_lb"] > 7
    rc, out, _ = run_cli("gdp", "--correct", "90", "--total", "100", "--delta", "1e-5")
    res = json.loads(out)
    assert rc == 0 and 1.5 < res["mu_lb"] < 2.6 and res["epsilon"] > 0


@pytest.mark.parametrize(
    "args,needle",
    [
        (["bound", "--m", "6", "--r", "5", "--overlaps", "3"], "even"),
        (["bound", "--m", "6", "--r", "8", "--overlaps", "3"], "<= m"),
        (["bound", "--m", "6", "--r", "6", "--overlaps", "3", "--zeta", "1.2"], "zeta"),
        (["bound", "--m", "6", "--r", "6", "--overlaps", "9"], "overlaps must lie"),
        (["bound", "--m", "6", "--r", "6", "--overlaps", "a,b"], "--overlaps"),
        (["bound", "--m", "6", "--r", "6"], "exactly one of --overlaps"),
        (["bound", "--m", "6", "--r", "6", "--overlaps-file", "/nonexistent/v.txt"], "no such file"),
        (["bound", "--m", "6"], "--r"),
        (["bound", "--m", "6", "--r", "6", "--overlaps", "3", "--score", "loss"], "only to --overlaps-file"),
        (["bound", "--m", "4500", "--r", "3000", "--overlaps", "2000", "--delta", "1e-9"], "M'/K"),
        (["bound", "--m", "6", "--r", "6", "--overlaps", "6", "--method", "exact", "--delta", "0.1"], "supports delta = 0 only"),
        (["bound", "--m", "6", "--r", "6", "--overlaps", "6", "--method", "mgf", "--statistic", "median"], "statistic='mean' only"),
        (["bound", "--m", "6", "--r", "6", "--overlaps", "6", "--method", "fft"], "invalid choice"),
        (["pairwise", "--fp", "5", "--n-neg", "3", "--fn", "0", "--n-pos", "3"], "fp"),
        (["gdp", "--correct", "3"], "--correct and --total"),
        (["frobnicate"], "invalid choice"),
        ([], "missing command"),
    ],
)
def test_bad_input_exit_2_one_line(args, needle):
    rc, out, err = run_cli(*args)
    assert rc == 2
    assert out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert needle in lines[0]
    assert "Traceback" not in err


def test_bad_overlaps_file_exit_2_one_line(tmp_path):
    (tmp_path / "results").mkdir()
    bad = tmp_path / "broken.parquet"
    bad.write_bytes(b"PAR1 not really parquet\n\x00\x01")
    binary = tmp_path / "v.txt"
    binary.write_bytes(b"\xff\xfe\x00garbage")
    text = tmp_path / "ok.txt"
    text.write_text("6 6\n")
    for path, needle in [(tmp_path / "results", "is a directory"), (bad, "cannot read Parquet"),
                         (binary, "cannot read text"), (text, "apply only to Parquet")]:
        extra = ["--experiment", "e"] if path == text else []
        rc, out, err = run_cli("bound", "--m", "6", "--r", "6", "--overlaps-file", str(path), *extra)
        lines = err.strip().splitlines()
        assert rc == 2 and out == "" and len(lines) == 1, err
        assert needle in lines[0] and "Traceback" not in err


def test_the_installed_command_exits_with_its_status_and_prints_one_line():
    """The console script and ``python -m unlearn_audit`` (the tests above call ``cli.main``
    in-process): JSON and status 0 for good input, one line on stderr and status 2 for bad."""
    script = Path(sys.executable).with_name("unlearn-audit")
    for command in ([str(script)], [sys.executable, "-m", "unlearn_audit"]):
        good = subprocess.run([*command, "bound", "--m", "6", "--r", "6", "--overlaps", "6,6,5"], capture_output=True, text=True)
        assert good.returncode == 0 and json.loads(good.stdout)["m"] == 6, good.stderr
        bad = subprocess.run([*command, "bound", "--m", "6", "--r", "5", "--overlaps", "3"], capture_output=True, text=True)
        assert bad.returncode == 2 and bad.stdout == "" and len(bad.stderr.strip().splitlines()) == 1, bad.stderr
        assert "even" in bad.stderr and "Traceback" not in bad.stderr

