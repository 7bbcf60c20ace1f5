"""The Snakefiles are as snakefmt writes them (docs/development.md): ``snakefmt --check`` on the
root Snakefile, workflow/Snakefile and workflow/rules/*.smk, with the settings of pyproject.toml's
``[tool.snakefmt]``.  snakefmt comes with the dev extra (``make install``); reformat with
``.venv/bin/snakefmt Snakefile workflow/``."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SNAKEFILES = [REPO / "Snakefile", REPO / "workflow" / "Snakefile", *sorted((REPO / "workflow" / "rules").glob("*.smk"))]


@pytest.mark.skipif(importlib.util.find_spec("snakefmt") is None,
                    reason="snakefmt is not installed (it is in the dev extra: make install, or pip install -e '.[dev]')")
def test_the_snakefiles_are_formatted_by_snakefmt():
    assert len(SNAKEFILES) >= 10 and all(path.is_file() for path in SNAKEFILES)
    proc = subprocess.run([sys.executable, "-m", "snakefmt", "--check", "--diff", *map(str, SNAKEFILES)],
                          cwd=REPO, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, f"not as snakefmt writes them (run .venv/bin/snakefmt Snakefile workflow/):\n{proc.stdout[-4000:]}{proc.stderr[-2000:]}"
