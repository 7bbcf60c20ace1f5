"""``unlearn-audit audit``: Algorithm 2 (Section 5) from per-run SCORES files of any producer.

The fits use calibration runs only and the bounds evaluation runs only; the results must equal
the pipeline's own functions (``fit_table``, ``audit_tables``) on the same scores, and every
check of the workflow is one line on stderr with exit status 2.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from cli_runner import run_cli
from unlearn_audit import cli, schemas
from unlearn_audit.auditors.batchwise import fit_table
from unlearn_audit.auditors.tables import audit_tables
from unlearn_audit.auditors.runs import sign_table
from unlearn_audit.io import write_parquet
from synthetic_scores import split_batch
from unlearn_audit.stats.selection import DEFAULT_CELL, Cell

# A producer that knows nothing of unlearn_audit: numpy and pyarrow only.  One Parquet file per
# run (calib/<run>.parquet, eval/<run>.parquet), run ids counted within each phase and a seed
# column that identifies the runs, as in the SCORES schema.  argv: out_dir, shift, m, n_calib, n_eval.
PRODUCER = r"""
import sys
from pathlib import Path
import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

out, shift = Path(sys.argv[1]), float(sys.argv[2])
m, n_calib, n_eval, per_batch = int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]), 2
rng = np.random.default_rng(7)
base = rng.normal(0, 1, m * per_batch)                       # per-example difficulty
batch = np.repeat(np.arange(m), per_batch)
for phase, count, seed0 in (("calib", n_calib, 1000), ("eval", n_eval, 5000)):
    for run in range(count):
        s = rng.permutation(np.repeat([1, -1], m // 2))      # balanced S in S_m
        inside = s[batch] == 1
        logit = base + shift * inside + rng.normal(0, 0.3, base.size)
        loss = -0.5 * base - 0.5 * shift * inside + rng.normal(0, 0.3, base.size)
        table = pa.table({
            "experiment": pa.array(["theirs"] * base.size, pa.string()),
            "phase": pa.array([phase] * base.size, pa.string()),
            "run": pa.array(np.full(base.size, run), pa.int32()),
            "sign_index": pa.array(np.full(base.size, run if phase == "calib" else n_calib + run), pa.int64()),
            "seed": pa.array(np.full(base.size, seed0 + run), pa.uint64()),
            "batch": pa.array(batch, pa.int32()),
            "example": pa.array(np.arange(base.size) + 100, pa.int64()),
            "in_forget": pa.array(inside, pa.bool_()),
            "score_logit": pa.array(logit, pa.float64()),
            "score_loss": pa.array(loss, pa.float64()),
        })
        (out / phase).mkdir(parents=True, exist_ok=True)
        pq.write_table(table, out / phase / f"{run}.parquet")
assert "unlearn_audit" not in sys.modules
"""

M, N_CALIB, N_EVAL = 60, 40, 8


def produce(out: Path, shift: float, m: int = M, n_calib: int = N_CALIB, n_eval: int = N_EVAL) -> Path:
    subprocess.run([sys.executable, "-c", PRODUCER, str(out), str(shift), str(m), str(n_calib), str(n_eval)], check=True)
    return out


def run_audit(*args):
    """``unlearn-audit audit *args`` as a separate process (its exit status and streams)."""
    proc = subprocess.run([sys.executable, "-m", "unlearn_audit", "audit", *map(str, args)], capture_output=True, text=True)
    return proc.returncode, proc.stdout, proc.stderr


def main_audit(args, capsys):
    rc = cli.main(["audit", *map(str, args)])
    out, err = capsys.readouterr()
    return rc, (json.loads(out) if rc == 0 else None), err


def preregistered(res: dict) -> dict:
    rows = [b for a in res["audits"] for b in a["bounds"] if b["role"] == "preregistered"]
    assert len(rows) == 1
    return rows[0]


def test_scores_of_a_standalone_producer_give_a_positive_bound(tmp_path):
    scores = produce(tmp_path / "scores", shift=0.25)  # in-forget examples score 0.25 higher (noise sd 0.3)
    out = tmp_path / "bounds.parquet"
    rc, stdout, stderr = run_cli("audit", "--scores", scores, "--r", "20,40,60", "--out", out)
    assert rc == 0, stderr
    lines = stdout.strip().splitlines()
    assert len(lines) == 1
    res = json.loads(lines[0])
    assert (res["experiment"], res["score"], res["m"], res["files"]) == ("theirs", "logit", M, N_CALIB + N_EVAL)
    assert (res["calibration_runs"], res["evaluation_runs"]) == (N_CALIB, N_EVAL)
    assert [a["r"] for a in res["audits"]] == [20, 40, 60]
    for a in res["audits"]:
        assert a["runs"] == list(range(N_EVAL)) and len(a["overlaps"]) == N_EVAL
        assert all(0 <= v <= a["r"] for v in a["overlaps"])  # V: correct guesses of r
        assert {b["statistic"] for b in a["bounds"]} == {"mean", "median"}
        for b in a["bounds"]:
            assert set(b) == set(schemas.BOUNDS.names)
            assert b["r"] == a["r"] and b["L"] == N_EVAL and b["m"] == M
            assert b["mean_overlap"] == pytest.approx(np.mean(a["overlaps"]))
            assert b["epsilon_lb"] == pytest.approx(b["epsilon_ldp"] / 2)
    pre = preregistered(res)
    assert (pre["r"], pre["statistic"], pre["score"]) == (60, "mean", "logit")
    assert pre["rejected"] and pre["epsilon_lb"] > 0.5
    written = pd.read_parquet(out)
    assert list(written.columns) == schemas.BOUNDS.names and len(written) == 6
    mean60 = written[(written.r == 60) & (written.statistic == "mean")].iloc[0]
    assert mean60.epsilon_lb == pytest.approx(pre["epsilon_lb"]) and bool(mean60.rejected)


def test_no_signal_gives_zero(tmp_path, capsys):
    scores = produce(tmp_path / "scores", shift=0.0)
    rc, res, err = main_audit(["--scores", scores, "--r", "20,40,60"], capsys)
    assert rc == 0, err
    pre = preregistered(res)
    assert pre["epsilon_lb"] == 0 and not pre["rejected"]
    assert abs(pre["mean_overlap"] - 30) < 6  # guesses at chance: E[V] = r/2 correct of r


def test_loss_score_and_signs_file(tmp_path, capsys):
    scores = produce(tmp_path / "scores", shift=1.0)
    rc, res, err = main_audit(["--scores", scores, "--r", "60", "--score", "loss"], capsys)
    assert rc == 0, err
    assert res["score"] == "loss" and preregistered(res)["rejected"]
    # the same sign vectors given as a SIGNS file: the same audit
    frame = pd.concat([pd.read_parquet(f) for f in sorted(scores.rglob("*.parquet"))])
    rows = []
    for (phase, run), grp in frame.groupby(["phase", "run"]):
        s = -np.ones(M, dtype=np.int8)
        s[grp.loc[grp.in_forget, "batch"].to_numpy()] = 1
        rows.append({"design": "theirs", "phase": phase, "run": run, "sign_index": 0, "seed": 0, "signs": s})
    write_parquet(pd.DataFrame(rows), tmp_path / "signs.parquet", schemas.SIGNS)
    rc, res2, err = main_audit(["--scores", scores, "--r", "60", "--score", "loss", "--signs", tmp_path / "signs.parquet"], capsys)
    assert rc == 0, err
    assert res2["signs"] == "signs file" and res2["audits"] == res["audits"]
    # a sign vector that contradicts in_forget is refused
    flipped = pd.DataFrame(rows)
    flipped.at[0, "signs"] = -flipped.at[0, "signs"]
    write_parquet(flipped, tmp_path / "bad_signs.parquet", schemas.SIGNS)
    rc, _, err = main_audit(["--scores", scores, "--r", "60", "--signs", tmp_path / "bad_signs.parquet"], capsys)
    assert rc == 2 and "disagrees with" in err and len(err.strip().splitlines()) == 1


def _pipeline_scores(m=24, n_calib=30, n_eval=6, shift=0.8, seed=3):
    """Scores laid out as the workflow writes them (run ids within each phase, seeds from signs.parquet)."""
    rng = np.random.default_rng(seed)
    signs = sign_table("d", m, n_calib, n_eval, root_seed=seed)
    frames = []
    for row in signs.itertuples():
        s = np.asarray(row.signs)
        frames.append(pd.DataFrame({
            "experiment": "exp", "phase": row.phase, "run": row.run, "sign_index": row.sign_index, "seed": np.uint64(row.seed),
            "batch": np.arange(m), "example": np.arange(m), "in_forget": s == 1,
            "score_logit": np.linspace(-1, 1, m) + shift * (s == 1) + rng.normal(0, 0.3, m),
            "score_loss": rng.normal(0, 1, m),
        }))
    return signs, pd.concat(frames, ignore_index=True)


def test_equals_the_pipeline_fit_and_audit(tmp_path, capsys):
    signs, scores = _pipeline_scores()
    for phase, grp in scores.groupby("phase"):  # one file per phase, in nested folders
        write_parquet(grp, tmp_path / "s" / phase / "scores.parquet", schemas.SCORES)
    rc, res, err = main_audit(["--scores", tmp_path / "s", "--r", "8,24", "--out", tmp_path / "b.parquet"], capsys)
    assert rc == 0, err
    fit = fit_table(scores[scores.phase == "calib"], "exp", scores=["logit"])
    overlaps, bounds = audit_tables(fit, scores[scores.phase == "eval"], signs[signs.phase == "eval"], 24, [8, 24],
                                    primary=Cell(24, "mean", "logit", DEFAULT_CELL["test"]))  # the workflow's default cell
    for a in res["audits"]:
        assert a["overlaps"] == overlaps[overlaps.r == a["r"]].sort_values("run")["overlap"].tolist()
    got = pd.read_parquet(tmp_path / "b.parquet")
    pd.testing.assert_frame_equal(got.reset_index(drop=True), bounds[schemas.BOUNDS.names].reset_index(drop=True), check_dtype=False)
    # the same rows in one file with the batch ids relabelled: the same audit
    relabelled = scores.assign(batch=scores["batch"] * 10 + 7)
    write_parquet(relabelled, tmp_path / "one.parquet", schemas.SCORES)
    rc, res2, err = main_audit(["--scores", tmp_path / "one.parquet", "--r", "8,24"], capsys)
    assert rc == 0, err
    assert res2["audits"] == res["audits"]


def _write(tmp_path: Path, frame: pd.DataFrame) -> Path:
    path = tmp_path / "bad" / "scores.parquet"
    path.parent.mkdir(exist_ok=True)
    pq.write_table(pa.Table.from_pandas(frame, preserve_index=False), path)
    return path.parent


def _shared_seed(df):
    df = df.copy()
    first_eval = df.phase == "eval"
    run0 = df.loc[first_eval, "run"].min()
    df.loc[first_eval & (df.run == run0), "seed"] = df.loc[df.phase == "calib", "seed"].iloc[0]
    return df


def _run_ids_only(df):
    return df.drop(columns=["seed", "sign_index"])


def _duplicate_row(df):
    return pd.concat([df, df.iloc[[0]]], ignore_index=True)


def _few_calibration_runs(df):
    return df[(df.phase == "eval") | (df.run < 3)]


def _unbalanced(df):
    df = df.copy()
    df.loc[(df.phase == "eval") & (df.run == 0), "in_forget"] = True  # every batch forgotten: S not in S_m
    return df


BAD = [
    (_shared_seed, ["--r", "8"], "occurs in both phases"),
    (_run_ids_only, ["--r", "8"], "run 0 occurs in both phases"),
    (_duplicate_row, ["--r", "8"], "one row per example per run"),
    (split_batch, ["--r", "8"], "disagree on in_forget"),
    (_few_calibration_runs, ["--r", "8"], ">= 2 runs in and >= 2 out"),
    (_unbalanced, ["--r", "8"], "exactly ⌊m/2⌋"),
    (lambda df: df, ["--r", "7"], "even"),
    (lambda df: df, ["--r", "26"], "<= m = 24"),
    (lambda df: df.drop(columns=["in_forget"]), ["--r", "8"], "no column(s) in_forget"),
    (lambda df: df.drop(columns=["score_loss"]), ["--r", "8", "--score", "loss"], "no column(s) score_loss"),
    (lambda df: df[df.phase == "calib"], ["--r", "8"], "no eval runs"),
]


@pytest.mark.parametrize("mutate,args,message", BAD, ids=[b[2] for b in BAD])
def test_bad_scores_exit_2_with_one_line(tmp_path, capsys, mutate, args, message):
    _, scores = _pipeline_scores()
    rc = cli.main(["audit", "--scores", str(_write(tmp_path, mutate(scores))), *args])
    stdout, stderr = capsys.readouterr()
    assert rc == 2 and stdout == ""
    assert len(stderr.strip().splitlines()) == 1
    assert message in stderr


def test_error_from_the_command_line_is_one_line(tmp_path):
    _, scores = _pipeline_scores()
    rc, stdout, stderr = run_audit("--scores", _write(tmp_path, _shared_seed(scores)), "--r", "8")
    assert rc == 2 and stdout == "" and "Traceback" not in stderr
    assert stderr.startswith("error: ") and len(stderr.strip().splitlines()) == 1


def test_distinct_run_ids_need_no_seed(tmp_path, capsys):
    _, scores = _pipeline_scores()
    scores = scores.drop(columns=["seed", "sign_index"])
    scores.loc[scores.phase == "eval", "run"] += 1000
    rc, res, err = main_audit(["--scores", _write(tmp_path, scores), "--r", "8,24"], capsys)
    assert rc == 0, err
    assert res["audits"][0]["runs"] == list(range(1000, 1006))


def test_empty_directory_and_bad_r(tmp_path, capsys):
    (tmp_path / "empty").mkdir()
    rc, _, err = main_audit(["--scores", tmp_path / "empty", "--r", "8"], capsys)
    assert rc == 2 and "no files matching '*.parquet'" in err
    _, scores = _pipeline_scores()
    directory = _write(tmp_path, scores)
    write_parquet(pd.DataFrame({"experiment": ["exp"], "phase": ["eval"], "run": [0]}), directory / "metrics.parquet")
    rc, _, err = main_audit(["--scores", directory, "--r", "8"], capsys)
    assert rc == 2 and "metrics.parquet has no column(s) batch, example, in_forget" in err and "--glob scores.parquet" in err
    rc, res, err = main_audit(["--scores", directory, "--glob", "scores.parquet", "--r", "8"], capsys)
    assert rc == 0 and res["files"] == 1
    rc, _, err = main_audit(["--scores", tmp_path / "nowhere", "--r", "8"], capsys)
    assert rc == 2 and "no such file or directory" in err
    rc, _, err = main_audit(["--scores", tmp_path / "empty", "--r", "eight"], capsys)
    assert rc == 2 and "--r must be" in err


def test_membership_metrics_beside_the_bound_and_privleak_against_retrain(tmp_path, capsys):
    leaky, retrain = produce(tmp_path / "leaky", shift=0.8), produce(tmp_path / "retrain", shift=0.0)
    rc, res, err = main_audit(["--scores", leaky, "--r", "60", "--retrain-scores", retrain], capsys)
    assert rc == 0, err
    mm = res["membership"]
    # the same scores' AUC: well above chance where the audit rejects, its interval around it
    assert preregistered(res)["rejected"] and mm["auc_low"] <= mm["auc"] <= mm["auc_high"] and mm["auc_low"] > 0.5
    assert mm["n_positive"] == mm["n_negative"] == N_EVAL * M and mm["n_calibration_negative"] == N_CALIB * M
    assert mm["tpr_at_1pct_fpr"] is not None and mm["tpr_at_0.1pct_fpr"] is None and mm["few_negatives_0.1pct"]
    assert abs(mm["auc_retrain"] - 0.5) < 0.05
    assert mm["privleak"] == pytest.approx(100 * ((1 - mm["auc"]) - (1 - mm["auc_retrain"])) / (1 - mm["auc_retrain"]))
    assert mm["privleak_high"] < 0  # more separable than after retraining
    rc, res, err = main_audit(["--scores", leaky, "--r", "60"], capsys)
    assert rc == 0 and res["membership"]["privleak"] is None


def test_retrain_scores_without_both_phases_are_refused_before_the_audit(tmp_path, capsys):
    leaky, retrain = produce(tmp_path / "leaky", shift=0.25), produce(tmp_path / "retrain", shift=0.0)
    rc, _, err = main_audit(["--scores", leaky, "--r", "60", "--retrain-scores", retrain / "eval"], capsys)
    assert rc == 2 and "--retrain-scores" in err and "calib" in err and len(err.strip().splitlines()) == 1


def test_an_external_attacks_statistic_is_audited_under_its_own_name(tmp_path, capsys):
    """A LiRA-style statistic computed elsewhere (each example's score standardised by its calibration
    runs out of the forget set), written as a column of the producer's files, audited with --score-column."""
    src = produce(tmp_path / "scores", shift=0.8)
    files = sorted(src.rglob("*.parquet"))
    frames = {f: pd.read_parquet(f) for f in files}
    calib = pd.concat(v for f, v in frames.items() if v.phase.iloc[0] == "calib")
    out_stats = calib[~calib.in_forget].groupby("example").score_logit.agg(["mean", "std"])
    mine = tmp_path / "mine"
    for f, v in frames.items():
        stats = out_stats.loc[v.example]
        lira = (v.score_logit.to_numpy() - stats["mean"].to_numpy()) / stats["std"].to_numpy()
        dest = mine / f.relative_to(src)
        dest.parent.mkdir(parents=True, exist_ok=True)
        v.drop(columns=["score_logit", "score_loss"]).assign(score_lira=lira).to_parquet(dest)
    rc, res, err = main_audit(["--scores", mine, "--r", "60", "--score-column", "score_lira", "--out", tmp_path / "b.parquet"], capsys)
    assert rc == 0, err
    pre = preregistered(res)
    assert res["score"] == "score_lira" and pre["score"] == "score_lira" and pre["rejected"]
    assert set(pd.read_parquet(tmp_path / "b.parquet").score) == {"score_lira"}
    assert res["membership"]["auc"] > 0.6
    rc, _, err = main_audit(["--scores", mine, "--r", "60", "--score-column", "score_nope"], capsys)
    assert rc == 2 and "score_nope" in err and "score_lira" in err and len(err.strip().splitlines()) == 1
