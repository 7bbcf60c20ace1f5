"""The runs the workflow tests share, each made once per test session.

- ``shared_run``: ``.test/all.yaml`` (every section at its smallest) run for real, once; the tests
  read its outputs and dry-run changed configs against it.  Tests that change it work on a copy
  (:meth:`SharedRun.copy`).
- ``shared_report``: ``snakemake --report`` of that run.
- ``second_run``: ``.test/slurm.yaml`` (a part of ``.test/all.yaml``, entry for entry) run in another
  folder, through ``profiles/slurm`` where a SLURM answers and locally where none does; its outputs
  must equal the shared run's byte for byte.
- ``paper_dry_run``: the one dry run of ``config/paper.yaml`` (every job of the paper config; about 5 CPU-s).

Each is made once per session by the first pytest-xdist worker that needs it (build_once.py); a
worker that needs it meanwhile waits (the run itself keeps both cores busy) and then reads it.
"""

from __future__ import annotations

import copy
import json
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
import yaml

from build_once import build_once
from generated_plays import make_play
from local_slurm import slurm_partition, snakemake_on_slurm
from unlearn_audit.pipeline.plan import WorkflowPlan
from workflow_utils import REPO, load_config, merge, planned_job_wildcards, planned_jobs, small_config, snakemake, validated

#: The example algorithm given by import path in .test/all.yaml (``noisy_ft``).
EXAMPLE = REPO / "examples" / "noisy_finetune"
SHARED_CONFIG = small_config("all")
SECOND_CONFIG = small_config("slurm")
SLURM_TIMEOUT_S = 300


@dataclass(frozen=True)
class SharedRun:
    """A finished run of ``.test/all.yaml`` in ``workdir`` (results_dir ``results`` and
    resources_dir ``resources``, relative to it, so that a copy of the folder is a finished run
    too)."""

    workdir: Path
    configfile: Path
    config: dict
    #: {rule: number of jobs} that the run ran
    jobs: dict[str, int]

    @property
    def results(self) -> Path:
        return self.workdir / "results"

    @property
    def plan(self) -> WorkflowPlan:
        """The plan of the run's config (its paths relative to ``workdir``); its custom method's module
        importable as the run's jobs had it (PYTHONPATH)."""
        if str(EXAMPLE) not in sys.path:
            sys.path.insert(0, str(EXAMPLE))
        return WorkflowPlan(validated(copy.deepcopy(self.config)))

    def run_file(self, experiment: str, phase: str, run: int, name: str) -> Path:
        """A per-run file of the run (in the chunk folder that holds it)."""
        return self.workdir / self.plan.nn.run_file(experiment, phase, run, name)

    def base_model(self, design: str, phase: str, run: int) -> Path:
        """A base model of the run (in the training chunk's folder that holds it)."""
        return self.workdir / self.plan.nn.base_model(design, phase, run)

    def write_config(self, overrides: dict, name: str) -> Path:
        """The run's config with ``overrides`` merged in, written beside it as ``name``."""
        cfg = merge(yaml.safe_load(self.configfile.read_text()), overrides)
        path = self.workdir / name
        path.write_text(yaml.safe_dump(cfg, sort_keys=False))
        return path

    def snakemake(self, *args: str, configfile: Path | None = None, cores: int = 1, timeout: int = 600,
                  pythonpath: str | None = str(EXAMPLE)) -> subprocess.CompletedProcess:
        return snakemake(self.workdir, configfile or self.configfile, *args, cores=cores, timeout=timeout, pythonpath=pythonpath)

    def dry_run(self, overrides: dict | None = None, *targets: str, name: str = "changed.yaml") -> dict[str, int]:
        """The jobs ({rule: count}) a dry run plans on this finished run, with ``overrides``."""
        configfile = self.write_config(overrides, name) if overrides else self.configfile
        proc = self.snakemake("-n", *targets, configfile=configfile)
        assert proc.returncode == 0, proc.stderr[-3000:]
        return planned_jobs(proc)

    def dry_run_jobs(self, overrides: dict, name: str = "changed.yaml") -> list[tuple[str, dict[str, str]]]:
        """(rule, wildcards) of every job a dry run plans on this finished run with ``overrides``."""
        proc = self.snakemake("-n", configfile=self.write_config(overrides, name))
        assert proc.returncode == 0, proc.stderr[-3000:]
        return planned_job_wildcards(proc)

    def same_config_in(self, dest: Path) -> SharedRun:
        """An empty folder ``dest`` with this run's config file: a run there makes the same outputs."""
        dest.mkdir(parents=True)
        (dest / self.configfile.name).write_bytes(self.configfile.read_bytes())
        return SharedRun(dest, dest / self.configfile.name, self.config, {})

    def copy(self, dest: Path) -> SharedRun:
        """A copy of the finished run (outputs, modification times and Snakemake's metadata) in
        ``dest``, for tests that run jobs again."""
        shutil.copytree(self.workdir, dest, symlinks=True)
        return SharedRun(dest, dest / self.configfile.name, self.config, self.jobs)


def write_plays(folder: Path) -> Path:
    """Three small generated plays in the Gutenberg layout: the text source of the shared run."""
    folder.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(3)
    for k in range(3):
        (folder / f"play_{k}_gut.txt").write_text(make_play(rng, f"Play {k}", 20))
    return folder


@pytest.fixture(scope="session")
def plays(tmp_path_factory) -> Path:
    return build_once(tmp_path_factory, "plays", write_plays)


def shared_config(plays: Path, source: str = SHARED_CONFIG) -> dict:
    """.test/all.yaml (or ``source``) with the generated plays as its text source and paths relative
    to the run."""
    cfg = load_config(source)
    cfg["results_dir"], cfg["resources_dir"] = "results", "resources"
    cfg["nn"]["designs"]["plays"]["dataset_params"]["source"] = str(plays)
    return cfg


def _saved(proc: subprocess.CompletedProcess, folder: Path) -> subprocess.CompletedProcess:
    """Keep what a build's Snakemake printed beside its outputs, for the workers that read it."""
    (folder / "snakemake.stdout").write_text(proc.stdout)
    (folder / "snakemake.stderr").write_text(proc.stderr)
    return proc


def _read(folder: Path) -> subprocess.CompletedProcess:
    return subprocess.CompletedProcess([], 0, (folder / "snakemake.stdout").read_text(), (folder / "snakemake.stderr").read_text())


@pytest.fixture(scope="session")
def shared_run(tmp_path_factory, plays) -> SharedRun:
    cfg = shared_config(plays)

    def build(workdir: Path) -> None:
        configfile = workdir / "config.yaml"
        configfile.write_text(yaml.safe_dump(cfg, sort_keys=False))
        proc = _saved(snakemake(workdir, configfile, cores=2, timeout=1800, pythonpath=str(EXAMPLE)), workdir)
        assert proc.returncode == 0, proc.stderr[-5000:]

    workdir = build_once(tmp_path_factory, "shared_run", build)
    return SharedRun(workdir, workdir / "config.yaml", cfg, planned_jobs(_read(workdir)))


@pytest.fixture(scope="session")
def shared_report(tmp_path_factory, shared_run) -> Path:
    """results/report.html of the shared run (``snakemake --report``, its header from the run's
    report_metadata.yaml, as ``make report`` makes it)."""

    def build(folder: Path) -> None:
        proc = shared_run.snakemake("--report", "results/report.html", "--report-metadata", "results/report_metadata.yaml")
        assert proc.returncode == 0, proc.stderr[-3000:]

    build_once(tmp_path_factory, "shared_report", build)
    return shared_run.results / "report.html"


@dataclass(frozen=True)
class SecondRun:
    """A finished run of ``.test/slurm.yaml`` in ``workdir``, and how it was run."""

    workdir: Path
    proc: subprocess.CompletedProcess
    #: why it ran locally ("" when it ran through profiles/slurm)
    no_slurm: str
    seconds: float

    @property
    def results(self) -> Path:
        return self.workdir / "results"


@pytest.fixture(scope="session")
def second_run(tmp_path_factory, plays) -> SecondRun:
    cfg = shared_config(plays, SECOND_CONFIG)

    def build(workdir: Path) -> None:
        configfile = workdir / "config.yaml"
        configfile.write_text(yaml.safe_dump(cfg, sort_keys=False))
        partition, no_slurm = slurm_partition()
        start = time.monotonic()
        if partition:
            proc = snakemake_on_slurm(workdir, configfile, partition, timeout=SLURM_TIMEOUT_S)
        else:
            proc = snakemake(workdir, configfile, cores=2, timeout=900)
        _saved(proc, workdir)
        (workdir / "how.json").write_text(json.dumps({"no_slurm": no_slurm, "seconds": time.monotonic() - start}))
        assert proc.returncode == 0, (proc.stdout + proc.stderr)[-5000:]

    workdir = build_once(tmp_path_factory, "second_run", build)
    how = json.loads((workdir / "how.json").read_text())
    return SecondRun(workdir, _read(workdir), how["no_slurm"], how["seconds"])


@pytest.fixture(scope="session")
def paper_dry_run(tmp_path_factory) -> subprocess.CompletedProcess:
    """``snakemake -n --configfile config/paper.yaml`` in an empty folder: every job of the paper."""

    def build(workdir: Path) -> None:
        proc = _saved(snakemake(workdir, REPO / "config" / "paper.yaml", "-n", timeout=900), workdir)
        assert proc.returncode == 0, proc.stderr[-3000:]

    return _read(build_once(tmp_path_factory, "paper_dry_run", build))
