"""Every `unlearn-audit` command and Python example of README.md and docs/cli.md runs, on the
example inputs shipped in examples/ (so they run on a fresh clone, before any workflow run)."""

import json
import re
import shlex
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq
import pytest

from cli_runner import run_cli
from workflow_utils import script_module
from unlearn_audit import schemas

REPO = Path(__file__).resolve().parents[2]
README = REPO / "README.md"
CLI_DOC = REPO / "docs" / "cli.md"
EXAMPLES = REPO / "examples"
PREFIX = ".venv/bin/unlearn-audit"
SUBCOMMANDS = ("bound", "audit", "pairwise", "gdp", "plan")


def code_blocks(lang: str, path: Path = README) -> list[str]:
    """The ```lang code blocks of one Markdown file."""
    return re.findall(rf"```{lang}\n(.*?)```", path.read_text(), flags=re.S)


def commands(path: Path) -> list[list[str]]:
    lines = [line.strip() for block in code_blocks("bash", path) for line in block.splitlines()]
    return [shlex.split(line) for line in lines if line.startswith(PREFIX)]


ALL_COMMANDS = [argv for path in (README, CLI_DOC) for argv in commands(path)]


def _option(argv: list[str], name: str) -> str | None:
    return argv[argv.index(name) + 1] if name in argv else None


def test_readme_has_one_example_per_subcommand_and_python():
    cmds = commands(README)
    for sub in SUBCOMMANDS:
        assert any(c[1] == sub for c in cmds), f"README.md has no `{PREFIX} {sub}` example"
    assert any(_option(c, "--overlaps-file") == "examples/overlaps.parquet" for c in cmds)
    assert any(_option(c, "--scores") == "examples/scores" for c in cmds)
    assert code_blocks("python")


@pytest.mark.parametrize("argv", ALL_COMMANDS, ids=lambda a: " ".join(a[1:4]))
def test_documented_command_runs(argv, tmp_path):
    assert argv[0] == PREFIX
    args = argv[1:]
    if "--out" in args:  # written where the test may write, not into the checkout
        i = args.index("--out") + 1
        args[i] = str(tmp_path / Path(args[i]).name)
    for option in ("--overlaps-file", "--scores", "--signs", "--configfile"):
        if option in args:
            assert (REPO / _option(args, option)).exists(), f"{option} {_option(args, option)} is not in the checkout"
    rc, stdout, stderr = run_cli(*args, cwd=REPO)  # the console script's main, in-process (tests/test_cli.py runs the script)
    assert rc == 0, stderr
    if args[0] == "plan":
        assert re.search(r"^total\s", stdout, re.M), stdout
        return
    lines = stdout.strip().splitlines()
    assert len(lines) == 1
    res = json.loads(lines[0])
    assert isinstance(res, dict)
    name = _option(args, "--overlaps-file")
    if name is not None:
        df = pd.read_parquet(REPO / name)
        score = _option(args, "--score") or "logit"
        cell = df[(df.r == int(_option(args, "--r"))) & (df.score == score)]
        assert res["L"] == len(cell) > 0 and res["score"] == score and res["m"] == int(_option(args, "--m"))
    if args[0] == "audit":
        assert res["calibration_runs"] > 0 and res["evaluation_runs"] > 0
        if "--out" in args:
            assert pq.read_schema(_option(args, "--out")).names == schemas.BOUNDS.names


@pytest.mark.parametrize("path", [README, CLI_DOC], ids=lambda p: p.name)
def test_python_examples_run(path):
    for block in code_blocks("python", path):
        exec(compile(block, str(path), "exec"), {})


# ----------------------------------------------------------------------------- the shipped inputs
def _generator():
    return script_module(EXAMPLES / "make_example_inputs.py", "make_example_inputs")


def test_example_inputs_are_small_and_in_their_schemas():
    scores = sorted((EXAMPLES / "scores").rglob("*.parquet"))
    assert {p.parent.name for p in scores} == {"calib", "eval"}
    for path in scores:
        assert pq.read_schema(path).remove_metadata() == schemas.SCORES, path
    assert pq.read_schema(EXAMPLES / "overlaps.parquet").remove_metadata() == schemas.OVERLAPS  # with its m column
    assert pq.read_schema(EXAMPLES / "signs.parquet").remove_metadata() == schemas.SIGNS
    total = sum(p.stat().st_size for p in [*scores, EXAMPLES / "overlaps.parquet", EXAMPLES / "signs.parquet"])
    assert total < 400_000, f"the example inputs take {total} bytes"


def test_example_inputs_are_what_the_script_writes():
    signs, scores, overlaps = _generator().make_inputs()
    shipped = pd.concat([pd.read_parquet(p) for p in sorted((EXAMPLES / "scores").rglob("*.parquet"))], ignore_index=True)
    key = ["phase", "run", "example"]
    pd.testing.assert_frame_equal(shipped.sort_values(key).reset_index(drop=True)[schemas.SCORES.names],
                                  scores.sort_values(key).reset_index(drop=True)[schemas.SCORES.names], check_dtype=False)
    pd.testing.assert_frame_equal(pd.read_parquet(EXAMPLES / "overlaps.parquet"), overlaps[schemas.OVERLAPS.names], check_dtype=False)
    shipped_signs = pd.read_parquet(EXAMPLES / "signs.parquet")
    columns = ["design", "phase", "run", "sign_index", "seed"]
    pd.testing.assert_frame_equal(shipped_signs[columns], signs[columns], check_dtype=False)
    assert all((a == b).all() for a, b in zip(shipped_signs["signs"], signs["signs"]))


def test_audit_of_the_example_scores_matches_bound_on_the_example_overlaps():
    rc, out, err = run_cli("audit", "--scores", "examples/scores", "--r", "20,40,60", cwd=REPO)
    assert rc == 0, err
    audit = json.loads(out)
    m = audit["m"]
    for block in audit["audits"]:
        (row,) = [b for b in block["bounds"] if b["statistic"] == "mean"]
        rc, out, err = run_cli("bound", "--m", m, "--r", block["r"], "--overlaps-file", "examples/overlaps.parquet", cwd=REPO)
        assert rc == 0, err
        bound = json.loads(out)
        assert bound["epsilon_lb"] == pytest.approx(row["epsilon_lb"]) and bound["rejected"] == row["rejected"]
    preregistered = [b for a in audit["audits"] for b in a["bounds"] if b["role"] == "preregistered"]
    assert len(preregistered) == 1 and preregistered[0]["r"] == 60 and preregistered[0]["rejected"]
    # its claim is the workflow's default test's, the reference test (docs/cli.md)
    rc, out, err = run_cli("bound", "--m", m, "--r", 60, "--overlaps-file", "examples/overlaps.parquet", "--method", "reference", cwd=REPO)
    assert rc == 0, err
    assert preregistered[0]["test"] == "reference" and json.loads(out)["epsilon_lb"] == pytest.approx(preregistered[0]["epsilon_lb_test"])


def test_bound_refuses_an_m_that_contradicts_the_example_overlaps():
    rc, _, err = run_cli("bound", "--m", "100", "--r", "60", "--overlaps-file", "examples/overlaps.parquet", cwd=REPO)
    assert rc == 2 and "give --m 60" in err
