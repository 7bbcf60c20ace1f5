"""Every command and Python example of the README section "Bounds from your own scores" runs."""

import json
import re
import shlex
from pathlib import Path

import pytest

from cli_runner import run_cli
from synthetic_scores import pipeline_overlaps
from unlearn_audit import schemas
from unlearn_audit.io import write_parquet

README = Path(__file__).resolve().parents[2] / "README.md"
PREFIX = ".venv/bin/unlearn-audit"
N_EVAL = 6


def section_blocks(lang: str, title: str = "Bounds from your own scores") -> list[str]:
    """The ```lang code blocks of one ``## title`` section of the README."""
    text = README.read_text()
    start = text.index(f"## {title}\n")
    end = text.find("\n## ", start + 1)
    return re.findall(rf"```{lang}\n(.*?)```", text[start : end if end > 0 else None], flags=re.S)


def commands() -> list[list[str]]:
    lines = [line.strip() for block in section_blocks("bash") for line in block.splitlines()]
    return [shlex.split(line) for line in lines if line.startswith(PREFIX)]


def _option(argv: list[str], name: str) -> str | None:
    return argv[argv.index(name) + 1] if name in argv else None


def test_section_has_commands_and_python():
    cmds = commands()
    assert len(cmds) >= 4 and any("--overlaps-file" in c for c in cmds)
    assert section_blocks("python")


@pytest.mark.parametrize("argv", commands(), ids=lambda a: " ".join(a[1:4]))
def test_readme_command_runs(argv, tmp_path):
    assert argv[0] == PREFIX
    args = argv[1:]
    name = _option(args, "--overlaps-file")
    if name is not None:  # the results/<experiment>/overlaps.parquet of a run, written by the pipeline
        m, r = int(_option(args, "--m")), int(_option(args, "--r"))
        experiment = _option(args, "--experiment") or "example"
        write_parquet(pipeline_overlaps(m, [r], N_EVAL, experiment, n_calib=30), tmp_path / name, schemas.OVERLAPS)
    rc, stdout, stderr = run_cli(*args, cwd=tmp_path)  # the console script's main, in-process (tests/test_cli.py runs the script)
    assert rc == 0, stderr
    lines = stdout.strip().splitlines()
    assert len(lines) == 1
    res = json.loads(lines[0])
    assert isinstance(res, dict)
    if name is not None:
        assert res["L"] == N_EVAL and res["score"] == (_option(args, "--score") or "logit")


def test_readme_python_example_runs():
    for block in section_blocks("python"):
        exec(compile(block, str(README), "exec"), {})
