"""What the SLURM profile (``profiles/slurm/config.yaml``) reads of the command line it is loaded for:
the run's ``results_dir``, under which the SLURM job logs go beside the run's other logs.  Plain
Python (the profile is templated before the config is read, so it reads the config files itself)."""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

import yaml

__all__ = ["results_dir_of", "slurm_logdir"]

#: Snakemake's options that take config files, and the one that sets config values.
CONFIGFILE_OPTIONS = ("--configfile", "--configfiles")
CONFIG_OPTIONS = ("--config", "-C")
DEFAULT_CONFIG = Path("config") / "config.yaml"
DEFAULT_RESULTS_DIR = "results"


def _option_values(argv: Sequence[str], names: Sequence[str]) -> list[str]:
    """The values given to the options ``names`` (``--name v1 v2`` or ``--name=v``), in order."""
    values: list[str] = []
    taking = False
    for arg in argv:
        if any(arg.startswith(name + "=") for name in names):
            values.append(arg.split("=", 1)[1])
            taking = False
        elif arg in names:
            taking = True
        elif arg.startswith("-"):
            taking = False
        elif taking:
            values.append(arg)
    return values


def results_dir_of(argv: Sequence[str], cwd: str | Path = ".") -> str:
    """The ``results_dir`` a Snakemake command line ``argv`` runs with: from ``--config
    results_dir=...``, else from the last config file named (``--configfile``) that sets it, else
    from ``config/config.yaml`` (the workflow's default, read when no config file is named), else
    ``results``.  A config file that cannot be read is passed over (Snakemake itself reports it)."""
    for item in reversed(_option_values(argv, CONFIG_OPTIONS)):
        key, _, value = item.partition("=")
        if key == "results_dir" and value:
            return value
    files = _option_values(argv, CONFIGFILE_OPTIONS) or [str(DEFAULT_CONFIG)]
    for name in reversed(files):
        try:
            loaded = yaml.safe_load((Path(cwd) / name).read_text())
        except (OSError, yaml.YAMLError):
            continue
        if isinstance(loaded, dict) and isinstance(loaded.get("results_dir"), str):
            return loaded["results_dir"]
    return DEFAULT_RESULTS_DIR


def slurm_logdir(argv: Sequence[str], cwd: str | Path = ".") -> str:
    """``<results_dir>/logs/slurm``: where the profile puts one log per SLURM job."""
    return str(Path(results_dir_of(argv, cwd)) / "logs" / "slurm")
