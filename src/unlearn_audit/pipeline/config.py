"""Workflow configuration: JSON-schema validation with defaults, plus semantic checks.

``validate_config(config, schema_path)`` fills defaults from the schema in place and
raises :class:`ConfigError` with one message naming the offending key (e.g.
``config key 'convex.cubic.epsilons[2]': -1 is less than the minimum of 0``) before any
job runs (DESIGN §9).  The schema file is plain JSON Schema (draft 2020-12), so it also
works with ``snakemake.utils.validate``.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Callable

import jsonschema
import yaml

__all__ = ["ConfigError", "validate_config", "load_yaml", "SEMANTIC_CHECKS", "EXECUTION_ONLY_KEYS", "result_config", "config_snapshot"]


class ConfigError(ValueError):
    """A configuration value is missing, misspelled or out of range."""


def load_yaml(path: str | os.PathLike) -> Any:
    with open(path) as fh:
        return yaml.safe_load(fh)


def _with_defaults(validator_class):
    validate_properties = validator_class.VALIDATORS["properties"]

    def set_defaults(validator, properties, instance, schema):
        if isinstance(instance, dict):
            for name, sub in properties.items():
                if isinstance(sub, dict) and "default" in sub and name not in instance:
                    instance[name] = _copy(sub["default"])
        yield from validate_properties(validator, properties, instance, schema)

    return jsonschema.validators.extend(validator_class, {"properties": set_defaults})


def _copy(value):
    import copy

    return copy.deepcopy(value)


def _key_path(error: jsonschema.ValidationError) -> str:
    out = ""
    for part in error.absolute_path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "<top level>"


def _message(error: jsonschema.ValidationError) -> str:
    if error.validator == "additionalProperties":
        extra = sorted(set(error.instance) - set(error.schema.get("properties", {})))
        allowed = ", ".join(sorted(error.schema.get("properties", {})))
        return f"unknown key(s) {', '.join(map(repr, extra))}; allowed keys here: {allowed}"
    if error.validator == "required":
        return error.message
    return error.message.replace("\n", " ")


# Semantic checks that JSON Schema cannot express.  Each takes the (defaulted) config and
# returns a list of (key path, message).
SEMANTIC_CHECKS: list[Callable[[dict], list[tuple[str, str]]]] = []


def semantic_check(fn):
    SEMANTIC_CHECKS.append(fn)
    return fn


@semantic_check
def _perfect_prediction_grid(config: dict) -> list[tuple[str, str]]:
    problems = []
    for i, cell in enumerate(config.get("perfect_prediction", {}).get("grid", [])):
        m, r = cell.get("m"), cell.get("r")
        if isinstance(m, int) and isinstance(r, int) and r > m:
            problems.append((f"perfect_prediction.grid[{i}].r", f"r = {r} must be <= m = {m}"))
    return problems


RESERVED_RESULT_NAMES = {"tables", "figures", "logs", "designs", "benchmarks", "convex", "gaussian_unlearning", "report.html", "paper"}


@semantic_check
def _nn_references(config: dict) -> list[tuple[str, str]]:
    nn = config.get("nn", {})
    designs = nn.get("designs", {})
    problems = []
    for name, exp in nn.get("experiments", {}).items():
        key = f"nn.experiments.{name}"
        if name in RESERVED_RESULT_NAMES:
            problems.append((key, f"experiment name {name!r} is reserved for {config.get('results_dir', 'results')}/{name}"))
        design = designs.get(exp.get("design"))
        if design is None:
            problems.append((f"{key}.design", f"unknown design {exp.get('design')!r}; defined designs: {', '.join(sorted(designs)) or 'none'}"))
            continue
        for i, r in enumerate(exp.get("r", [])):
            if r > design["m"]:
                problems.append((f"{key}.r[{i}]", f"r = {r} must be <= m = {design['m']} of design {exp['design']!r}"))
        if "report_r" in exp and exp["report_r"] not in exp.get("r", []):
            problems.append((f"{key}.report_r", f"report_r = {exp['report_r']} must be one of r = {exp.get('r')}"))
    for name, design in designs.items():
        if name in nn.get("experiments", {}):
            problems.append((f"nn.designs.{name}", "a design and an experiment cannot share a name"))
    return problems


@semantic_check
def _nn_method_params(config: dict) -> list[tuple[str, str]]:
    nn = config.get("nn", {})
    if not nn.get("enabled") or not nn.get("experiments"):
        return []
    from ..unlearning import make_params, method_names  # torch-free

    problems = []
    for name, exp in nn["experiments"].items():
        if exp["method"] not in method_names():
            problems.append((f"nn.experiments.{name}.method", f"unknown unlearning method {exp['method']!r}; known: {', '.join(method_names())}"))
            continue
        try:
            make_params(exp["method"], exp.get("params", {}))
        except (TypeError, ValueError) as exc:
            problems.append((f"nn.experiments.{name}.params", str(exc)))
    return problems


#: Constructor parameters of each model (checked against the classes in the tests), so that a
#: misspelled ``model.params`` key is refused before any job runs, without importing torch.
MODEL_PARAMETERS: dict[str, tuple[str, ...]] = {
    "tinynet": ("in_channels", "num_classes", "width"),
    "charlstm": ("vocab_size", "embed_dim", "hidden_size", "num_layers"),
}


@semantic_check
def _nn_designs(config: dict) -> list[tuple[str, str]]:
    nn = config.get("nn", {})
    if not nn.get("enabled"):
        return []
    from ..data import dataset_parameter_names
    from ..training.config import TrainConfig
    from ..checks import dataclass_from_mapping

    used = {exp.get("design") for exp in nn.get("experiments", {}).values()}
    problems = []
    for name, design in nn.get("designs", {}).items():
        if name not in used:
            continue
        key = f"nn.designs.{name}"
        model = design["model"]
        allowed = MODEL_PARAMETERS.get(model["name"], ())
        unknown = sorted(set(model.get("params", {})) - set(allowed))
        if unknown:
            problems.append((f"{key}.model.params", f"unknown parameter(s) {unknown} for model {model['name']!r}; allowed: {list(allowed)}"))
        accepted = dataset_parameter_names(design["dataset"])
        unknown = sorted(set(design.get("dataset_params", {})) - set(accepted))
        if unknown:
            problems.append((f"{key}.dataset_params", f"unknown parameter(s) {unknown} for dataset {design['dataset']!r}; accepted: {sorted(accepted)}"))
        try:
            dataclass_from_mapping(TrainConfig, design["train"], "training parameter(s)")
        except (TypeError, ValueError) as exc:
            problems.append((f"{key}.train", str(exc)))
        problems += _calibration_coverage(config, name, design)
    return problems


def _calibration_coverage(config: dict, name: str, design: dict) -> list[tuple[str, str]]:
    """Every candidate batch needs >= 2 calibration runs with it in and >= 2 with it out (Algorithm 2
    step 7); the sign vectors are a deterministic function of the seed, so this is known now."""
    from ..auditors.runs import sign_matrix, sign_table

    table = sign_table(name, int(design["m"]), int(design["calibration_runs"]), 0, int(config.get("seed", 0)))
    _, signs = sign_matrix(table, "calib")
    n_in = (signs == 1).sum(axis=0)
    n_out = (signs == -1).sum(axis=0)
    worst = int(min(n_in.min(), n_out.min()))
    if worst < 2:
        return [(f"nn.designs.{name}.calibration_runs", f"{design['calibration_runs']} calibration runs leave a candidate batch with only {worst} run(s) on one side; the Gaussian fits need >= 2 on each side: increase calibration_runs")]
    return []


@semantic_check
def _convex_params(config: dict) -> list[tuple[str, str]]:
    convex = config.get("convex", {})
    if not convex.get("enabled"):
        return []
    from .convex import make_params, make_settings

    problems = []
    try:
        make_settings({**convex.get("settings", {}), "zeta": config.get("zeta", 0.05)})
    except (TypeError, ValueError) as exc:
        problems.append(("convex.settings", str(exc)))
    tables: dict[str, str] = {}
    for name, mech in convex.get("mechanisms", {}).items():
        if not mech.get("enabled", True):
            continue
        try:
            make_params(name, mech.get("params", {}))
        except (TypeError, ValueError) as exc:
            problems.append((f"convex.mechanisms.{name}.params", str(exc)))
        if mech["table"] in tables:
            problems.append((f"convex.mechanisms.{name}.table", f"{mech['table']} is already rendered by {tables[mech['table']]}"))
        tables[mech["table"]] = name
    return problems


def validate_config(config: dict, schema_path: str | os.PathLike) -> dict:
    """Validate ``config`` against the schema, filling defaults in place; return it."""
    schema = load_yaml(Path(schema_path))
    cls = jsonschema.validators.validator_for(schema)
    validator = _with_defaults(cls)(schema)
    errors = sorted(validator.iter_errors(config), key=lambda e: (len(list(e.absolute_path)), str(list(e.absolute_path))))
    if errors:
        err = errors[0]
        raise ConfigError(f"config key '{_key_path(err)}': {_message(err)}")
    for check in SEMANTIC_CHECKS:
        for key, msg in check(config):
            raise ConfigError(f"config key '{key}': {msg}")
    return config


#: Keys that change how a run executes but not what it computes (where data is read from, how runs
#: are chunked into jobs, the cluster's time estimate); changing them reruns nothing.
EXECUTION_ONLY_KEYS = ("resources_dir", "nn.designs.*.chunk_size", "nn.designs.*.runtime_minutes_per_run")


def result_config(config: dict) -> dict:
    """The validated config less :data:`EXECUTION_ONLY_KEYS`: everything the results depend on."""
    out = _copy(config)
    for key in EXECUTION_ONLY_KEYS:
        parts = key.split(".")
        nodes = [out]
        for part in parts[:-1]:
            nodes = [child for node in nodes for child in (node.values() if part == "*" else [node.get(part, {})]) if isinstance(child, dict)]
        for node in nodes:
            node.pop(parts[-1], None)
    return out


def config_snapshot(config: dict, path: str | os.PathLike) -> None:
    """Rule ``config_snapshot``: ``<results_dir>/config.yaml``, the :func:`result_config` of the run
    (schema defaults filled in), so a reader of the results sees exactly what produced them."""
    from ..io import write_text_atomic

    header = "# The configuration these results were computed from (schema defaults filled in).\n"
    write_text_atomic(path, header + yaml.safe_dump(config, sort_keys=False))
