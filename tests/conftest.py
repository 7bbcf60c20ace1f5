"""Shared test set-up.

- The helpers of ``tests/support`` (workflow runs, generated datasets, independent reference
  implementations) import by their plain module names.
- Every test under ``tests/workflow/`` carries the ``workflow`` mark (``make test-fast`` leaves
  those out).
- With pytest-xdist (``make test``: ``-n 2``) the tests of one module run on one worker, so that a
  module's fixtures are made once.  The modules are sent in this order: the shared run's own tests
  (``tests/workflow/test_shared_run.py``: one worker makes the run, with both cores, while the
  other starts on the rest), the SLURM module (which makes the second run, ``.test/slurm.yaml``)
  and the paper-DAG module, the library's modules (most tests first), and last the other workflow
  modules, which read the shared run (finished by then).
"""

import os
import sys
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent
sys.path.insert(0, str(TESTS / "support"))

# A pytest-xdist worker has a core of its own (make test: -n 2 on 2 cores): more BLAS/OpenMP/torch
# threads would only spin against the other worker and the Snakemake runs (whose jobs Snakemake
# limits to their `threads` itself).  Set before any test module imports numpy or torch.
if os.environ.get("PYTEST_XDIST_WORKER"):
    for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(_var, "1")

#: The fixtures that are the shared run (tests/workflow/conftest.py).
SHARED_RUN_FIXTURES = ("shared_run", "shared_report")
#: Modules sent first, in this order.
FIRST_MODULES = ("tests/workflow/test_shared_run.py", "tests/workflow/test_slurm.py", "tests/workflow/test_paper.py")


def _module(item: pytest.Item) -> str:
    return Path(str(item.path)).relative_to(TESTS.parent).as_posix()


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
    for item in items:
        if (TESTS / "workflow") in Path(str(item.path)).parents:
            item.add_marker(pytest.mark.workflow)
        if set(SHARED_RUN_FIXTURES) & set(getattr(item, "fixturenames", ())) and not _module(item).startswith("tests/workflow/"):
            raise pytest.UsageError(f"{item.nodeid} reads the shared run: such tests live in tests/workflow/")


try:
    from xdist.scheduler import LoadFileScheduling
except ImportError:  # pragma: no cover - xdist is a dev dependency
    LoadFileScheduling = None


if LoadFileScheduling is not None:

    class SharedRunFirstScheduling(LoadFileScheduling):
        """xdist's per-module scheduling (``--dist loadfile``), in the order of this file's docstring."""

        def _assign_work_unit(self, node) -> None:
            if not getattr(self, "_ordered", False):  # the queue is complete at the first assignment
                self._ordered = True
                last = [m for m in self.workqueue if m.startswith("tests/workflow/") and m not in FIRST_MODULES]
                for module in last:
                    self.workqueue.move_to_end(module)
                for module in reversed(FIRST_MODULES):
                    if module in self.workqueue:
                        self.workqueue.move_to_end(module, last=False)
            super()._assign_work_unit(node)


class _XdistScheduling:
    """The scheduler hook, registered only where pytest-xdist is loaded (``-p no:xdist`` works too)."""

    @pytest.hookimpl(tryfirst=True)
    def pytest_xdist_make_scheduler(self, config, log):
        if config.getvalue("dist") in ("load", "loadfile", "loadscope", "loadgroup"):
            return SharedRunFirstScheduling(config, log)
        return None


def pytest_configure(config):
    if LoadFileScheduling is not None and config.pluginmanager.hasplugin("xdist"):
        config.pluginmanager.register(_XdistScheduling(), "shared-run-first-scheduling")
