"""Every job a config's DAG holds, one JSON line each: rule, wildcards, input, output, params, resources
(at the first attempt), log and benchmark, sorted.  Two checkouts that print the same lines for a
config plan the same jobs with the same params, so a refactor of the plan or the rules that keeps
them equal reruns nothing and changes no output.

    python analysis/dag_jobs.py CONFIG [CONFIG ...] > jobs.jsonl

Run from the repository root (the Snakefile there); the checkout's absolute path, which the
provenance rule takes as a param, is printed as ``<checkout>`` so that two checkouts compare.
Builds the DAG through Snakemake's Python API (its workflow object: not a public interface, so pinned
to the Snakemake of ``pyproject.toml``); plans every job as ``--forceall`` would, runs none.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from snakemake.api import SnakemakeApi
from snakemake.settings.enums import Quietness
from snakemake.settings.types import ConfigSettings, DAGSettings, OutputSettings, ResourceSettings, StorageSettings

#: Resources Snakemake adds to every job (scheduler bookkeeping, not the rules').
INTERNAL_RESOURCES = ("_cores", "_nodes", "tmpdir")


def _text(value) -> str:
    try:
        return str(value)
    except Exception as err:  # a resource function that fails names its error instead of stopping the listing
        return f"error: {err}"


def job_lines(configfile: Path, root: Path) -> list[str]:
    """The sorted JSON lines of every job of ``configfile``'s DAG, the workflow at ``root``."""
    with SnakemakeApi(OutputSettings(quiet={Quietness.ALL})) as api:
        workflow_api = api.workflow(resource_settings=ResourceSettings(cores=2), config_settings=ConfigSettings(configfiles=[configfile]),
                                    storage_settings=StorageSettings(), snakefile=root / "Snakefile", workdir=root)
        workflow = workflow_api.dag(dag_settings=DAGSettings(forceall=True)).workflow_api._workflow
        workflow._prepare_dag(forceall=True, ignore_incomplete=True, lock_warn_only=True, nolock=True)
        workflow._build_dag()
        lines = []
        for job in workflow.dag.jobs:
            row = {"rule": job.rule.name, "wildcards": dict(job.wildcards_dict), "input": sorted(map(str, job.input)),
                   "output": sorted(map(str, job.output)), "params": repr(dict(job.params.items())),
                   "resources": {k: _text(v) for k, v in job.resources.items() if k not in INTERNAL_RESOURCES},
                   "log": sorted(map(str, job.log)), "benchmark": str(job.benchmark)}
            lines.append(json.dumps(row, sort_keys=True).replace(str(root), "<checkout>"))
    return sorted(lines)


def main(argv: list[str]) -> int:
    if not argv:
        print(__doc__, file=sys.stderr)
        return 2
    root = Path.cwd().resolve()
    for configfile in argv:
        for line in job_lines(Path(configfile), root):
            print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
