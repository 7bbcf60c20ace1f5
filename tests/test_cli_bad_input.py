"""The CLI on inputs a user gets wrong, and on an odd m: every refusal is one line on stderr with
exit status 2 and comes before any work; an odd m is audited as the workflow audits it (S ∈ S_m
has ⌊m/2⌋ entries +1)."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from synthetic_scores import long_scores, pipeline_overlaps
from unlearn_audit import cli, schemas
from unlearn_audit.auditors.batchwise import fit_table
from unlearn_audit.auditors.tables import audit_tables
from unlearn_audit.auditors.runs import sign_table
from unlearn_audit.io import write_parquet


def run(args, capsys):
    rc = cli.main([str(a) for a in args])
    out, err = capsys.readouterr()
    return rc, (json.loads(out) if rc == 0 else None), err


def one_line_refusal(rc, err, *needles):
    lines = err.strip().splitlines()
    assert rc == 2 and len(lines) == 1 and "Traceback" not in err, err
    for needle in needles:
        assert needle in lines[0], lines[0]


def scores_of(m: int, n_calib: int = 12, n_eval: int = 6, seed: int = 0) -> tuple[pd.DataFrame, pd.DataFrame]:
    rng = np.random.default_rng(seed)
    signs = sign_table("synthetic", m, n_calib, n_eval, root_seed=seed + 1)
    frame = pd.concat([long_scores(signs, "calib", "odd", rng), long_scores(signs, "eval", "odd", rng)], ignore_index=True)
    frame["sign_index"] = np.where(frame.phase == "calib", frame.run, n_calib + frame.run)
    return frame, signs


def test_audit_of_an_odd_m_equals_the_workflows_functions(tmp_path, capsys):
    m = 9  # the default's Table 5 design at B = 16
    frame, signs = scores_of(m)
    assert set((signs.signs.map(lambda s: int((np.asarray(s) == 1).sum())))) == {m // 2}
    path = tmp_path / "scores.parquet"
    frame.to_parquet(path)
    rc, res, err = run(["audit", "--scores", path, "--r", "2,4,8"], capsys)
    assert rc == 0, err
    assert res["m"] == m
    fit = fit_table(frame[frame.phase == "calib"], "odd", scores=["logit"])
    overlaps, _ = audit_tables(fit, frame[frame.phase == "eval"], signs[signs.phase == "eval"], m, [2, 4, 8])
    for a in res["audits"]:
        expected = overlaps[(overlaps.r == a["r"]) & (overlaps.score == "logit")].sort_values("run")["overlap"].tolist()
        assert a["overlaps"] == expected


def test_audit_refuses_an_empty_score_file(tmp_path, capsys):
    frame, _ = scores_of(6)
    path = tmp_path / "empty.parquet"
    frame.iloc[:0].to_parquet(path)
    rc, _, err = run(["audit", "--scores", path, "--r", "2"], capsys)
    one_line_refusal(rc, err, "no rows")


def test_audit_refuses_a_missing_batch_id(tmp_path, capsys):
    frame, _ = scores_of(6)
    frame["batch"] = frame["batch"].astype(float)
    frame.loc[3, "batch"] = np.nan
    path = tmp_path / "nan.parquet"
    frame.to_parquet(path)
    rc, _, err = run(["audit", "--scores", path, "--r", "2"], capsys)
    one_line_refusal(rc, err, "column batch", "missing")


def test_audit_refuses_an_output_that_cannot_be_a_file_before_reading_the_scores(tmp_path, capsys):
    out_dir = tmp_path / "outdir"
    out_dir.mkdir()
    # --scores does not exist: the --out check must come first (before any work)
    rc, _, err = run(["audit", "--scores", tmp_path / "absent", "--r", "2", "--out", out_dir], capsys)
    one_line_refusal(rc, err, "--out", "is a directory")
    a_file = tmp_path / "plain"
    a_file.write_text("x")
    rc, _, err = run(["audit", "--scores", tmp_path / "absent", "--r", "2", "--out", a_file / "bounds.parquet"], capsys)
    one_line_refusal(rc, err, "--out", "not a directory")


def test_an_os_error_is_one_line(tmp_path, capsys):
    frame, _ = scores_of(6)
    path = tmp_path / "scores.parquet"
    frame.to_parquet(path)
    rc, _, err = run(["audit", "--scores", path, "--r", "2", "--out", "/proc/bounds.parquet"], capsys)
    # refused before any work by trying to create a file there (root may write everywhere but /proc)
    one_line_refusal(rc, err, "--out /proc/bounds.parquet: cannot create a file in /proc")


def test_bound_refuses_an_m_that_contradicts_the_overlaps_file(tmp_path, capsys):
    m = 20
    ov = pipeline_overlaps(m, [10], 6)
    assert (ov["m"] == m).all()
    path = tmp_path / "overlaps.parquet"
    write_parquet(ov, path, schemas.OVERLAPS)
    rc, res, err = run(["bound", "--m", m, "--r", 10, "--overlaps-file", path], capsys)
    assert rc == 0, err
    assert res["m"] == m
    rc, _, err = run(["bound", "--m", m + 20, "--r", 10, "--overlaps-file", path], capsys)
    one_line_refusal(rc, err, f"--m {m + 20}", f"m = {m}", f"give --m {m}")


@pytest.mark.parametrize("ms", [(20, 40)])
def test_bound_refuses_a_file_mixing_two_ms(tmp_path, capsys, ms):
    ov = pd.concat([pipeline_overlaps(m, [10], 4) for m in ms], ignore_index=True)
    path = tmp_path / "mixed.parquet"
    write_parquet(ov, path, schemas.OVERLAPS)
    rc, _, err = run(["bound", "--m", ms[0], "--r", 10, "--overlaps-file", path], capsys)
    one_line_refusal(rc, err, "m = 20, 40")
