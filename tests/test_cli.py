import json
import subprocess
import sys

import pandas as pd
import pytest


def run_cli(*args):
    proc = subprocess.run([sys.executable, "-m", "unlearn_audit", *args], capture_output=True, text=True)
    return proc.returncode, proc.stdout, proc.stderr


def test_bound_prints_json():
    rc, out, err = run_cli("bound", "--m", "100", "--r", "60", "--overlaps", ",".join(["60"] * 10))
    assert rc == 0, err
    res = json.loads(out)
    assert round(res["epsilon_ldp"], 2) == 40.83
    assert res["epsilon_lb"] == pytest.approx(res["epsilon_ldp"] / 2)
    assert res["rejected"] is True and res["L"] == 10 and res["statistic"] == "mean"


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
        (["bound", "--m", "4500", "--r", "3000", "--overlaps", "2000", "--delta", "1e-9"], "M'/K"),
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
