"""The ``unlearn-audit`` command run in-process, as the console script runs it (``cli.main``)."""

import io
from contextlib import redirect_stderr, redirect_stdout

from unlearn_audit import cli


def run_cli(*args, cwd=None) -> tuple[int, str, str]:
    """(exit status, stdout, stderr) of ``unlearn-audit *args`` (``cwd``: the folder it runs in)."""
    import os

    out, err = io.StringIO(), io.StringIO()
    here = os.getcwd()
    try:
        if cwd is not None:
            os.chdir(cwd)
        with redirect_stdout(out), redirect_stderr(err):
            try:
                rc = cli.main([str(a) for a in args])
            except SystemExit as stop:  # --help, as argparse ends it
                rc = stop.code
    finally:
        os.chdir(here)
    return rc, out.getvalue(), err.getvalue()
