"""Batchwise audit (Algorithm 2) of per-run SCORES files from any producer (auditors/score_files.py,
behind ``unlearn-audit audit``; tests/test_cli_audit.py tests it through the command line).

Direct tests of its functions: reading Parquet score files (recursively, by pattern) and a SIGNS
file; ``audit_scores`` equals the pipeline's ``fit_table`` (calibration runs only) and
``audit_tables`` (evaluation runs only) with the largest r / mean / the chosen score as the
pre-registered cell; sign vectors read from ``in_forget`` or from a SIGNS table; and every check of
the module docstring (Section 5: calibration and evaluation runs disjoint; S ∈ S_m; ≥ 2
calibration runs in and out for every batch, Algorithm 2 step 7; r even and ≤ m) as one
``ValueError`` line naming what is wrong."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from unlearn_audit import schemas
from unlearn_audit.auditors.batchwise import fit_table
from unlearn_audit.auditors.tables import audit_tables
from unlearn_audit.auditors.runs import sign_table
from unlearn_audit.auditors.score_files import ScoreAudit, audit_scores, read_score_files, read_signs_file
from unlearn_audit.io import write_parquet
from unlearn_audit.stats.selection import DEFAULT_CELL, Cell
from synthetic_scores import split_batch

M = 12


def scores_frame(m=M, n_calib=16, n_eval=5, shift=0.8, seed=3, per_batch=1):
    """(SIGNS table, SCORES rows) laid out as the workflow writes them: run ids within each phase,
    seeds and sign indices that identify runs."""
    rng = np.random.default_rng(seed)
    signs = sign_table("d", m, n_calib, n_eval, root_seed=seed)
    batch = np.repeat(np.arange(m), per_batch)
    frames = []
    for row in signs.itertuples():
        s = np.asarray(row.signs)
        frames.append(pd.DataFrame({
            "experiment": "exp", "phase": row.phase, "run": row.run, "sign_index": row.sign_index, "seed": np.uint64(row.seed),
            "batch": batch, "example": np.arange(batch.size), "in_forget": s[batch] == 1,
            "score_logit": np.linspace(-1, 1, batch.size) + shift * (s[batch] == 1) + rng.normal(0, 0.3, batch.size),
            "score_loss": rng.normal(0, 1, batch.size),
        }))
    return signs, pd.concat(frames, ignore_index=True)


# ---------------------------------------------------------------------------------------------
# reading files
# ---------------------------------------------------------------------------------------------
def test_read_score_files_reads_one_file_or_every_match_under_a_folder(tmp_path):
    _, scores = scores_frame()
    for (phase, run), grp in scores.groupby(["phase", "run"]):
        write_parquet(grp, tmp_path / "s" / phase / f"run{run}" / "scores.parquet", schemas.SCORES)
    write_parquet(pd.DataFrame({"experiment": ["exp"], "phase": ["eval"], "run": [0]}), tmp_path / "s" / "metrics.parquet")
    frame, n = read_score_files(tmp_path / "s", pattern="scores.parquet")
    assert n == 21 and len(frame) == len(scores)
    key = ["phase", "run", "example"]
    pd.testing.assert_frame_equal(frame.sort_values(key).reset_index(drop=True)[scores.columns],
                                  scores.sort_values(key).reset_index(drop=True), check_dtype=False)
    one, n1 = read_score_files(tmp_path / "s" / "calib" / "run0" / "scores.parquet")
    assert n1 == 1 and len(one) == M
    # the default pattern also finds metrics.parquet, which is not a scores table
    with pytest.raises(ValueError, match=r"metrics.parquet has no column\(s\) batch, example, in_forget .*--glob scores.parquet"):
        read_score_files(tmp_path / "s")


def test_read_score_files_bad_paths(tmp_path):
    with pytest.raises(ValueError, match="no such file or directory"):
        read_score_files(tmp_path / "nowhere")
    (tmp_path / "empty").mkdir()
    with pytest.raises(ValueError, match=r"no files matching '\*.parquet' under it"):
        read_score_files(tmp_path / "empty")
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "x.parquet").write_text("not parquet")
    with pytest.raises(ValueError, match=r"--scores: cannot read .*x.parquet as Parquet"):
        read_score_files(tmp_path / "bad")


def test_read_signs_file(tmp_path):
    signs, _ = scores_frame()
    write_parquet(signs, tmp_path / "signs.parquet", schemas.SIGNS)
    got = read_signs_file(tmp_path / "signs.parquet")
    assert len(got) == len(signs) and list(got.columns) == schemas.SIGNS.names
    for a, b in zip(got.signs, signs.signs):
        np.testing.assert_array_equal(a, b)
    with pytest.raises(ValueError, match="--signs .*: no such file"):
        read_signs_file(tmp_path / "missing.parquet")
    (tmp_path / "garbage.parquet").write_text("nope")
    with pytest.raises(ValueError, match="cannot read Parquet"):
        read_signs_file(tmp_path / "garbage.parquet")
    write_parquet(signs.drop(columns="signs"), tmp_path / "nosigns.parquet")
    with pytest.raises(ValueError, match=r"no column\(s\) signs \(SIGNS schema\)"):
        read_signs_file(tmp_path / "nosigns.parquet")
    two = pd.concat([signs, signs.assign(design="other")], ignore_index=True)
    write_parquet(two, tmp_path / "two.parquet", schemas.SIGNS)
    with pytest.raises(ValueError, match="holds designs d, other; give the signs of one design"):
        read_signs_file(tmp_path / "two.parquet")


# ---------------------------------------------------------------------------------------------
# audit_scores
# ---------------------------------------------------------------------------------------------
def test_audit_scores_equals_the_pipeline_fit_and_audit():
    signs, scores = scores_frame()
    res = audit_scores(scores, [4, 12])
    assert isinstance(res, ScoreAudit)
    assert (res.experiment, res.score, res.m, res.calibration_runs, res.evaluation_runs) == ("exp", "logit", M, 16, 5)
    fit = fit_table(scores[scores.phase == "calib"], "exp", scores=["logit"])
    overlaps, bounds = audit_tables(fit, scores[scores.phase == "eval"], signs[signs.phase == "eval"], M, [4, 12],
                                    primary=Cell(12, "mean", "logit", DEFAULT_CELL["test"]))  # the workflow's default cell
    pd.testing.assert_frame_equal(res.fit.reset_index(drop=True), fit.reset_index(drop=True), check_dtype=False)
    pd.testing.assert_frame_equal(res.overlaps.reset_index(drop=True), overlaps.reset_index(drop=True), check_dtype=False)
    pd.testing.assert_frame_equal(res.bounds.reset_index(drop=True), bounds.reset_index(drop=True), check_dtype=False)
    pre = res.bounds[res.bounds.role == "preregistered"]
    assert pre[["r", "statistic", "score"]].values.tolist() == [[12, "mean", "logit"]]
    assert pre.rejected.iloc[0] and (res.bounds.role != "preregistered").sum() == 3


def test_audit_scores_relabelled_batches_loss_score_and_experiment_name():
    _, scores = scores_frame()
    base = audit_scores(scores, [4, 12])
    relabelled = audit_scores(scores.assign(batch=scores["batch"] * 10 + 7), [4, 12])  # batch ids need not be 0..m−1
    pd.testing.assert_frame_equal(relabelled.overlaps, base.overlaps)
    loss = audit_scores(scores, [12], score="loss")
    assert loss.score == "loss" and set(loss.bounds.score) == {"loss"}
    unnamed = audit_scores(scores.drop(columns="experiment"), [12])
    assert unnamed.experiment == "scores" and set(unnamed.bounds.experiment) == {"scores"}
    assert audit_scores(scores.drop(columns="experiment"), [12], experiment="mine").experiment == "mine"
    assert audit_scores(scores.assign(in_forget=scores.in_forget.astype(int)), [4, 12]).overlaps.equals(base.overlaps)  # 0/1
    # eval sign indices from the scores; without the column they count on from the calibration runs
    assert base.overlaps.sign_index.unique().tolist() == list(range(16, 21))
    no_index = audit_scores(scores.drop(columns="sign_index"), [12])
    assert no_index.overlaps.sign_index.unique().tolist() == list(range(16, 21))
    distinct = scores.drop(columns=["seed", "sign_index"])
    distinct.loc[distinct.phase == "eval", "run"] += 1000  # distinct run ids identify the runs without a seed
    assert audit_scores(distinct, [12]).overlaps.run.unique().tolist() == list(range(1000, 1005))


def test_audit_scores_with_a_signs_table():
    signs, scores = scores_frame(per_batch=2)
    plain = audit_scores(scores, [4, 12])
    given = audit_scores(scores, [4, 12], signs=signs)
    pd.testing.assert_frame_equal(given.overlaps, plain.overlaps)
    flipped = signs.copy()
    flipped.at[0, "signs"] = -np.asarray(flipped.at[0, "signs"])
    with pytest.raises(ValueError, match=r"calib run 0: in_forget of batch \d+ disagrees with S_j = -?1 of the signs file"):
        audit_scores(scores, [12], signs=flipped)
    with pytest.raises(ValueError, match="--signs: no sign vector for eval run 4 of the scores"):
        audit_scores(scores, [12], signs=signs[~((signs.phase == "eval") & (signs.run == 4))])
    short = signs.copy()
    short.at[1, "signs"] = np.asarray(short.at[1, "signs"])[:-2]
    with pytest.raises(ValueError, match=r"sign vectors of different lengths \[10, 12\]"):
        audit_scores(scores, [12], signs=short)
    with pytest.raises(ValueError, match=r"batch ids must be integers in \[0, 12\)"):
        audit_scores(scores.assign(batch=scores.batch + 1), [12], signs=signs)


def _shared_seed(df):
    df = df.copy()
    first_eval = df.phase == "eval"
    df.loc[first_eval & (df.run == 0), "seed"] = df.loc[df.phase == "calib", "seed"].iloc[0]
    return df


def _unbalanced(df):
    df = df.copy()
    df.loc[(df.phase == "eval") & (df.run == 0), "in_forget"] = True  # every batch forgotten: S not in S_m
    return df


def _odd_m(df):
    return df[df.batch != 0]  # 11 batches, 6 of them forgotten in the runs that forgot batch 0's partner


def _two_batches_for_one_example(df):
    df = df.copy()
    df.loc[(df.phase == "eval") & (df.run == 1) & (df.example == 3), "batch"] = 4
    return df


BAD = [
    (lambda df: df, dict(score="prob"), "--score must be one of logit, loss, got 'prob'"),
    (lambda df: df.drop(columns=["in_forget"]), {}, r"scores have no column\(s\) in_forget"),
    (lambda df: df.drop(columns=["score_loss"]), dict(score="loss"), r"no column\(s\) score_loss"),
    (lambda df: pd.concat([df, df.assign(experiment="b")]), {}, "scores hold experiments b, exp; audit one experiment at a time"),
    (lambda df: df.assign(phase=df.phase.replace("eval", "test")), {}, "column phase must be calib or eval, got test"),
    (lambda df: df[df.phase == "calib"], {}, "no eval runs in the scores"),
    (lambda df: df[df.phase == "eval"], {}, "no calib runs in the scores"),
    (lambda df: df.assign(in_forget=np.where(df.in_forget, "yes", "no")), {}, "column in_forget must be boolean"),
    (lambda df: df.assign(score_logit=df.score_logit.where(df.index != 5, np.nan)), {}, "column score_logit holds NaN or infinite values"),
    (_shared_seed, {}, r"seed \d+ occurs in both phases \(calib run 0, eval run 0\).*must not reuse a calibration run"),
    (lambda df: df.drop(columns=["seed", "sign_index"]), {}, "run 0 occurs in both phases.*give each run a distinct run id"),
    (lambda df: pd.concat([df, df.iloc[[0]]], ignore_index=True), {}, "calib run 0 holds example 0 twice: one row per example per run"),
    (_two_batches_for_one_example, {}, "example 3 is in different batches in different runs"),
    (lambda df: df[~((df.phase == "eval") & (df.run == 2) & (df.example == 5))], {}, "eval run 2 scores 11 of the 12 examples"),
    (split_batch, {}, "calib run 0: the examples of batch 0 disagree on in_forget"),
    (_odd_m, {}, r"run \d+ has 6 of its m = 11 batches in the forget set; S ∈ S_m puts exactly ⌊m/2⌋ = 5 in"),
    (_unbalanced, {}, "eval run 0 has 12 of its m = 12 batches in the forget set; S ∈ S_m puts exactly ⌊m/2⌋ = 6 in"),
    (lambda df: df[(df.phase == "eval") | (df.run < 3)], {}, r"calibration run\(s\) with it (in|out of) the forget set.*>= 2 runs in and >= 2 out"),
]


@pytest.mark.parametrize("mutate,kwargs,message", BAD, ids=[b[2][:40] for b in BAD])
def test_audit_scores_checks(mutate, kwargs, message):
    _, scores = scores_frame()
    with pytest.raises(ValueError, match=message) as err:
        audit_scores(mutate(scores), [4], **kwargs)
    assert "\n" not in str(err.value)  # one line


@pytest.mark.parametrize("r", [0, 3, 14, -2])
def test_audit_scores_checks_every_r(r):
    _, scores = scores_frame()
    with pytest.raises(ValueError, match=rf"r = {r}: every guess budget must be even with 2 <= r <= m = 12"):
        audit_scores(scores, [4, r])
