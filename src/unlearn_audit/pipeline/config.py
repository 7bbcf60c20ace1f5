"""Workflow configuration: JSON-schema validation with defaults, plus semantic checks.

``validate_config(config, schema_path)`` fills defaults from the schema in place and
raises :class:`ConfigError` with one message naming the offending key (e.g.
``config key 'convex.cubic.epsilons[2]': -1 is less than the minimum of 0``) before any
job runs (docs/configuration.md#how-a-run-reads-its-configuration).  The schema file is plain
JSON Schema (draft 2020-12), so it also works with ``snakemake.utils.validate``.
"""

from __future__ import annotations

import contextvars
import math
import os
import re
from pathlib import Path
from typing import Any, Callable

import jsonschema
import yaml

__all__ = ["ConfigError", "validate_config", "load_yaml", "check_config_files", "config_summary", "SEMANTIC_CHECKS", "EXECUTION_ONLY_KEYS", "result_config", "config_snapshot"]


class ConfigError(ValueError):
    """A configuration value is missing, misspelled or out of range."""


class _UniqueKeyLoader(yaml.SafeLoader):
    """A safe YAML loader that refuses a key given twice in one mapping (YAML keeps the last)."""


def _mapping_without_duplicates(loader: _UniqueKeyLoader, node: yaml.MappingNode, deep: bool = False) -> dict:
    seen: dict = {}
    for key_node, _ in node.value:  # the keys written in this mapping (merged ones, <<: *anchor, may be overridden)
        if key_node.tag == "tag:yaml.org,2002:merge":
            continue
        key = loader.construct_object(key_node, deep=deep)
        if key in seen:
            raise ConfigError(f"{node.start_mark.name}, line {key_node.start_mark.line + 1}: key {key!r} appears twice in one "
                              f"mapping (first on line {seen[key] + 1}); YAML would keep only the last: remove one")
        seen[key] = key_node.start_mark.line
    loader.flatten_mapping(node)
    return loader.construct_mapping(node, deep=deep)


_UniqueKeyLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _mapping_without_duplicates)


def load_yaml(path: str | os.PathLike) -> Any:
    """A YAML file, refusing duplicate keys (:class:`ConfigError` naming the file, line and key)."""
    with open(path) as fh:
        return yaml.load(fh, Loader=_UniqueKeyLoader)


def check_config_files(paths) -> None:
    """Read every config file as :func:`load_yaml` does (Snakemake's own reader keeps the last of
    two equal keys without a word), raising :class:`ConfigError` on the first problem."""
    for path in paths:
        load_yaml(path)


#: The sections of a config that can be switched off, in the order of the DAG.
SECTIONS = ("perfect_prediction", "convex", "gaussian_unlearning", "nn")


def config_summary(config: dict, configfiles) -> str:
    """One line for the start of a run: the config files and which sections are enabled."""
    on = [s for s in SECTIONS if config.get(s, {}).get("enabled")]
    off = [s for s in SECTIONS if s not in on]
    nn = config.get("nn", {})
    if "nn" in on:
        on[on.index("nn")] = f"nn ({len(nn.get('designs', {}))} designs, {len(nn.get('experiments', {}))} experiments)"
    files = [str(f) for f in configfiles]  # read once: a generator would be empty the second time
    merged = "" if len(files) != 1 or files[0].endswith("config/config.yaml") else \
        "; the default config/config.yaml is not merged under it (name both to merge)"
    return f"unlearn-audit: config {', '.join(files)}{merged}; sections enabled: {', '.join(on) or 'none'}; off: {', '.join(off) or 'none'}"


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
    names = [alt["enum"] for alt in error.validator_value if "enum" in alt] if error.validator == "anyOf" else []
    if names and any("pattern" in alt for alt in error.validator_value):  # a built-in name, or one's own by import path
        return (f"{error.instance!r} is neither one of {names[0]} nor an import path 'package.module:attribute' "
                "(docs/configuration.md#your-own-model-and-data)")
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


def _name_problems(kind: str, names) -> list[tuple[str, str]]:
    """Design and experiment names are folder and job names: the rules' wildcard pattern
    (:data:`unlearn_audit.catalogue.NAME_PATTERN`)."""
    from ..catalogue import NAME_PATTERN

    out = []
    for name in names:
        if not re.fullmatch(NAME_PATTERN, str(name)):
            fixed = re.sub(r"[^A-Za-z0-9_-]+", "_", str(name)).strip("_-") or "name"
            out.append((f"nn.{kind}s.{name}", f"{kind} name {name!r} names folders and jobs: use letters, digits, '_' and '-', "
                                               f"starting with a letter or digit (e.g. {fixed!r})"))
    return out


@semantic_check
def _output_folders(config: dict) -> list[tuple[str, str]]:
    """results_dir and resources_dir are folders (made where missing), never files."""
    return [(key, f"{config[key]!r} is a file, not a folder: name a folder (it is made where missing)")
            for key in ("results_dir", "resources_dir") if key in config and Path(config[key]).is_file()]


@semantic_check
def _nn_references(config: dict) -> list[tuple[str, str]]:
    nn = config.get("nn", {})
    designs = nn.get("designs", {})
    problems = _name_problems("design", designs) + _name_problems("experiment", nn.get("experiments", {}))
    for name, exp in nn.get("experiments", {}).items():
        key = f"nn.experiments.{name}"
        if name in RESERVED_RESULT_NAMES:
            problems.append((key, f"experiment name {name!r} is reserved for {config.get('results_dir', 'results')}/{name}"))
        design = designs.get(exp.get("design"))
        if design is None:
            problems.append((f"{key}.design", f"unknown design {exp.get('design')!r}; defined designs: {', '.join(sorted(designs)) or 'none'}"))
            continue
        problems += _auditor_problems(key, exp, design) or _pairwise_coverage(config, exp, design)
        for i, r in enumerate(exp.get("r", [])):
            if r > design["m"]:
                problems.append((f"{key}.r[{i}]", f"r = {r} must be <= m = {design['m']} of design {exp['design']!r}"))
        if exp.get("report_r") == "calibrated":
            if exp.get("params", {}).get("checkpoint_steps"):
                problems.append((f"{key}.report_r", "report_r: calibrated chooses r on the final models' calibration runs; "
                                 "an experiment audited at checkpoint steps needs a fixed report_r"))
        elif "report_r" in exp and exp["report_r"] not in exp.get("r", []):
            problems.append((f"{key}.report_r", f"report_r = {exp['report_r']} must be one of r = {exp.get('r')}"))
    for name, design in designs.items():
        if name in nn.get("experiments", {}):
            problems.append((f"nn.designs.{name}", "a design and an experiment cannot share a name"))
    return problems


def _pairwise_coverage(config: dict, exp: dict, design: dict) -> list[tuple[str, str]]:
    """A pairwise audit (App. A.3) compares the evaluation runs of its two forget sets, so its L
    evaluation runs must draw each at least once; the draws are a deterministic function of the
    seed, so this is known now."""
    if exp.get("auditor") != "pairwise":
        return []
    from ..auditors.runs import candidate_sign_table, sign_matrix
    from .plan.experiment import design_seed

    m, name = int(design["m"]), exp["design"]
    table = candidate_sign_table(name, m, int(design["calibration_runs"]), int(design["evaluation_runs"]), design_seed(design, int(config.get("seed", 0))))
    _, signs = sign_matrix(table, "eval")
    drawn = {tuple(int(v) for v in s) for s in signs}
    if len(drawn) < 2:
        return [(f"nn.designs.{name}.evaluation_runs", f"its {design['evaluation_runs']} evaluation runs all draw the forget set S = "
                 f"{next(iter(drawn))} (the draws are fixed by the seed); a pairwise audit needs runs of both: increase evaluation_runs")]
    return []


#: The largest m of a joint design: |S_m| candidates, each with its own base model and Γ runs.
MAX_JOINT_M = 12


def _auditor_problems(key: str, exp: dict, design: dict) -> list[tuple[str, str]]:
    """An experiment's auditor must fit its design: batchwise on a batchwise design (with its r
    grid), joint on a joint design (r = m), pairwise on a joint design with m = 2."""
    joint = design.get("auditor", "batchwise") == "joint"
    auditor = exp.get("auditor") or ("joint" if joint else "batchwise")
    if auditor == "batchwise":
        if joint:
            return [(f"{key}.auditor", f"design {exp['design']!r} is a joint design (auditor: joint); its experiments use auditor joint or pairwise")]
        if not exp.get("r"):
            return [(f"{key}.r", "the batchwise auditor needs a list of guess budgets r")]
        if {"table6", "pairwise_uncertified"} & set(exp.get("tables", [])) or exp.get("figures"):
            return [(f"{key}.tables", "Table 6, the pairwise table and Figures 1a-c show joint or pairwise audits; put this experiment on a joint design")]
        return []
    if not joint:
        return [(f"{key}.auditor", f"auditor {auditor!r} needs a joint design (auditor: joint); design {exp['design']!r} is batchwise")]
    if auditor == "pairwise" and int(design["m"]) != 2:
        return [(f"{key}.auditor", f"the pairwise auditor (App. A.3) needs m = 2; design {exp['design']!r} has m = {design['m']}")]
    from ..stats.selection import DEFAULT_CELL

    if auditor == "pairwise" and exp.get("test", DEFAULT_CELL["test"]) not in ("theorem4.2", "reference"):
        return [(f"{key}.test", f"a pairwise audit's claim is the reference test of its m = 2 overlaps (test reference, the default) "
                 f"or Eq. 3 (test theorem4.2), not {exp['test']!r}")]
    if exp.get("r") not in (None, [int(design["m"])]):
        return [(f"{key}.r", f"the {auditor} auditor guesses the whole sign vector: r = m = {design['m']} (omit r)")]
    allowed = {"table6", "pairwise_uncertified"} if auditor == "pairwise" else {"table6", "appendix_f4"}
    bad = sorted(set(exp.get("tables", [])) - allowed)
    if bad:
        return [(f"{key}.tables", f"{bad} show {'joint' if 'pairwise_uncertified' in bad else 'batchwise'} audits; a {auditor} audit can be in "
                 f"{' and '.join(sorted(allowed))} and figures")]
    from .plan.experiment import audit_delta

    if "appendix_f4" in exp.get("tables", []) and audit_delta(exp) != 0:
        return [(f"{key}.tables", "App. F.4 shows audits at delta = 0 (uncertified model clipping and the controls); this experiment is "
                 "certified and audited at its delta > 0: show it in table6")]
    from .controls import is_control

    if exp.get("figures") and "figure1a" in exp["figures"] and not is_control(exp) and not exp.get("params", {}).get("checkpoint_steps"):
        return [(f"{key}.params.checkpoint_steps", "Figure 1a plots epsilon_LB(t) at checkpoint steps: give params.checkpoint_steps")]
    return []


@semantic_check
def _nn_method_params(config: dict) -> list[tuple[str, str]]:
    nn = config.get("nn", {})
    if not nn.get("enabled") or not nn.get("experiments"):
        return []
    from ..stats.selection import DEFAULT_CELL, DELTA_TESTS
    from ..unlearning import import_method, is_import_path, make_params, method_names  # torch-free for built-in names

    problems = []
    for name, exp in nn["experiments"].items():
        if is_import_path(exp["method"]):
            try:  # imported now, so a bad path stops the run before any job (the jobs import it again)
                import_method(exp["method"])
            except ValueError as exc:
                problems.append((f"nn.experiments.{name}.method", str(exc)))
                continue
        elif exp["method"] not in method_names():
            problems.append((f"nn.experiments.{name}.method", (f"unknown unlearning method {exp['method']!r}; known: {', '.join(method_names())}; "
                                                                "or your own algorithm as an import path 'package.module:function'")))
            continue
        try:
            params = make_params(exp["method"], exp.get("params", {}))
        except (TypeError, ValueError) as exc:
            problems.append((f"nn.experiments.{name}.params", str(exc)))
            continue
        claim = getattr(params, "claim", None)
        if exp.get("test", DEFAULT_CELL["test"]) not in DELTA_TESTS and claim is not None and claim[1] > 0:
            problems.append((f"nn.experiments.{name}.test", f"the {exp['test']} test supports delta = 0 only, and this experiment is audited at its "
                             f"certified delta = {claim[1]:g}: pre-register test: reference (against the retrained model) or theorem4.2 (Lemma C.1)"))
        design = nn.get("designs", {}).get(exp.get("design"))
        if design is not None:
            problems += _method_problems(f"nn.experiments.{name}", exp["method"], params, exp["design"], design)
    return problems


def _method_problems(key: str, method: str, params, design_name: str, design: dict) -> list[tuple[str, str]]:
    """What the method's spec checks of an experiment before any job (its ``check``: e.g. the
    accountant and the budget of model clipping, the full-batch base training of rewind-to-delete),
    given the design's retain size where its dataset knows it exactly (a size model's estimate,
    e.g. Shakespeare's from the paper's corpus, is not held against the design)."""
    from ..data import DatasetError, dataset_spec
    from ..unlearning import method_spec
    from .plan.cost.runs import design_sizes

    spec = method_spec(method)
    if spec.check is None:
        return []
    try:
        dataset = dataset_spec(design.get("dataset"))
    except DatasetError:  # a loader of one's own that does not import: the design's dataset check says so
        dataset = None
    n_retain = design_sizes(design)[0] if dataset is not None and dataset.exact_sizes else math.nan
    return spec.config_problems(params, design, key=key, design_key=f"nn.designs.{design_name}",
                                n_retain=n_retain if math.isfinite(n_retain) else None)


def _dataset_problems(key: str, design: dict, resources_dir: str) -> list[tuple[str, str]]:
    """A built-in dataset's parameters and what the design asks of its data (question-answer pairs:
    the file, the entities, the pairs' length), or a dataset of one's own by import path: its loader
    importable (under ``dataset``), then taking the ``dataset_params`` (under ``dataset_params``)."""
    from ..data import DatasetError, dataset_design_problems, dataset_loader, dataset_params_problems
    from ..import_paths import is_import_path

    if is_import_path(design["dataset"]):
        try:
            dataset_loader(design["dataset"])
        except DatasetError as exc:
            return [(f"{key}.dataset", str(exc))]
    params = design.get("dataset_params", {})
    problems = [(f"{key}.dataset_params", p) for p in dataset_params_problems(design["dataset"], params)]
    if problems or not _READ_DATA.get():
        return problems
    return [(f"{key}.dataset_params" + (f".{sub}" if sub else ""), message) for sub, message in
            dataset_design_problems(design["dataset"], m=design["m"], batch_size=design["batch_size"], resources_dir=resources_dir, params=params)]


def _model_problems(key: str, model: dict) -> list[tuple[str, str]]:
    """A built-in model's parameters and its spec's check (torch-free;
    :data:`unlearn_audit.model_specs.MODEL_SPECS`), or a model of one's own by import path:
    importable, callable, taking its ``params`` (importing it imports torch)."""
    from ..import_paths import is_import_path

    if is_import_path(model["name"]):
        from ..models import model_parameter_problems

        try:
            return [(f"{key}.model.params", p) for p in model_parameter_problems(model["name"], model.get("params", {}))]
        except ValueError as exc:
            return [(f"{key}.model.name", str(exc))]
    from ..model_specs import MODEL_SPECS

    spec = MODEL_SPECS.get(model["name"])
    if spec is None:
        return [(f"{key}.model.name", f"unknown model {model['name']!r}; built-in: {sorted(MODEL_SPECS)}, "
                 "or a model of one's own as an import path 'package.module:factory'")]
    allowed = spec.parameters
    unknown = sorted(set(model.get("params", {})) - set(allowed))
    if unknown:
        return [(f"{key}.model.params", f"unknown parameter(s) {unknown} for model {model['name']!r}; allowed: {list(allowed)}")]
    return [(f"{key}.model{where}", problem) for where, problem in spec.config_problems(model.get("params", {}))]


@semantic_check
def _nn_designs(config: dict) -> list[tuple[str, str]]:
    nn = config.get("nn", {})
    if not nn.get("enabled"):
        return []
    from ..training.config import BaseTrainConfig
    from ..checks import dataclass_from_mapping
    from ..model_specs import model_spec

    used = {exp.get("design") for exp in nn.get("experiments", {}).values()}
    problems = []
    for name, design in nn.get("designs", {}).items():
        if name not in used:
            continue
        key = f"nn.designs.{name}"
        model = design["model"]
        problems += _model_problems(key, model)
        spec = model_spec(model["name"])
        grouped = spec.grouped if spec is not None else None
        problems += _dataset_problems(key, design, config.get("resources_dir", "resources"))
        problems += _pool_size(key, design)
        try:
            dataclass_from_mapping(BaseTrainConfig, design["train"], "training parameter(s)")
        except (TypeError, ValueError) as exc:
            problems.append((f"{key}.train", str(exc)))
        for group_key, what in (("models_per_group", "training"), ("unlearn_models_per_group", "unlearning")):
            if int(design.get(group_key, 1)) > 1:
                if grouped is None and not (group_key == "unlearn_models_per_group" and design.get("unlearn_group_mode") == "vmap"):
                    problems.append((f"{key}.{group_key}", f"grouped {what} ({group_key} = {design[group_key]}) exists for {_grouped_models()} only, not {model['name']!r}: set it to 1" + (" or unlearn_group_mode to vmap" if group_key == "unlearn_models_per_group" else "")))
                if design.get("compile"):
                    problems.append((f"{key}.{group_key}", f"grouped {what} does not compile the grouped network: set compile to false or {group_key} to 1"))
        if int(design.get("models_per_group", 1)) > 1 and design["train"].get("optimizer", "sgd") != "sgd":
            problems.append((f"{key}.models_per_group", f"grouped training takes SGD steps; train.optimizer {design['train']['optimizer']!r} "
                             "trains one model at a time: set models_per_group to 1"))
        if design.get("auditor", "batchwise") == "joint":
            if int(design["m"]) > MAX_JOINT_M:
                problems.append((f"{key}.m", f"a joint design enumerates all |S_m| candidates (one base model each); m = {design['m']} is more than {MAX_JOINT_M}: use the batchwise auditor"))
        else:
            problems += _calibration_coverage(config, name, design)
    return problems


def _grouped_models() -> str:
    """The built-in models that train as one grouped network, for messages."""
    from ..model_specs import MODEL_SPECS

    return " and ".join(name for name, spec in MODEL_SPECS.items() if spec.grouped)


def _pool_size(key: str, design: dict) -> list[tuple[str, str]]:
    """The pool of m·B candidates is cut out of the dataset's training portion and leaves a retain
    set (:func:`unlearn_audit.data.splits.resolve_forget_size`), known now for a dataset with a size."""
    from ..data import DATASETS

    spec = DATASETS.get(design["dataset"])
    portion = getattr(spec, "train_portion", None)
    if not design.get("batch_size") or not portion:
        return []
    pool = int(design["m"]) * int(design["batch_size"])
    if pool >= portion:
        return [(f"{key}.m", f"m·B = {design['m']}·{design['batch_size']} = {pool} candidate examples leave no retain set out of the "
                             f"{portion} training examples of {design['dataset']}: lower m or batch_size")]
    return []


def _calibration_coverage(config: dict, name: str, design: dict) -> list[tuple[str, str]]:
    """Every candidate batch needs >= 2 calibration runs with it in and >= 2 with it out (Algorithm 2
    step 7); the sign vectors are a deterministic function of the seed, so this is known now."""
    from ..auditors.runs import sign_matrix, sign_table
    from .plan.experiment import design_seed

    table = sign_table(name, int(design["m"]), int(design["calibration_runs"]), 0, design_seed(design, int(config.get("seed", 0))))
    _, signs = sign_matrix(table, "calib")
    n_in = (signs == 1).sum(axis=0)
    n_out = (signs == -1).sum(axis=0)
    worst = int(min(n_in.min(), n_out.min()))
    if worst < 2:
        return [(f"nn.designs.{name}.calibration_runs", f"{design['calibration_runs']} calibration runs leave a candidate batch with only {worst} run(s) on one side; the Gaussian fits need >= 2 on each side: increase calibration_runs")]
    return []


@semantic_check
def _gaussian_unlearning_audit_settings(config: dict) -> list[tuple[str, str]]:
    section = config.get("gaussian_unlearning", {})
    if not section.get("enabled") or "audit" not in section:
        return []
    from .gaussian_unlearning import audit_settings

    try:
        audit_settings(section["audit"].get("settings", {}), config.get("zeta", 0.05))
    except (TypeError, ValueError) as exc:
        return [("gaussian_unlearning.audit.settings", str(exc))]
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


@semantic_check
def _cpu_jobs(config: dict) -> list[tuple[str, str]]:
    """The jobs that need no GPU either run on the submitting host or go to ``cluster.cpu_partition``."""
    cluster = config.get("cluster", {})
    if cluster.get("cpu_jobs") == "local" and cluster.get("cpu_partition"):
        return [("cluster.cpu_partition", f"{cluster['cpu_partition']!r} is set while cluster.cpu_jobs is 'local' (the jobs that need no GPU "
                 "run on the submitting host): drop cpu_partition, or set cpu_jobs to submit")]
    return []


@semantic_check
def _nn_walltime(config: dict) -> list[tuple[str, str]]:
    """One run of a design or unlearning group priced above ``cluster.walltime_minutes`` fits in no
    job (the last check: it prices the runs of an otherwise valid config)."""
    if not config.get("nn", {}).get("enabled"):
        return []
    from .plan import WorkflowPlan

    return WorkflowPlan(config).resources.walltime_problems()


def validate_config(config: dict, schema_path: str | os.PathLike, *, read_data: bool = True) -> dict:
    """Validate ``config`` against the schema, filling defaults in place, and add the controls of
    every neural-network design (:func:`.controls.add_controls`) before the semantic checks; return it.
    ``read_data=False`` leaves out the checks that read a design's data (its question-answer file
    and tokenizer): ``unlearn-audit plan`` prices a config before its data are downloaded."""
    token = _READ_DATA.set(read_data)
    try:
        return _validated(config, schema_path)
    finally:
        _READ_DATA.reset(token)


#: Whether the semantic checks read the designs' data (:func:`validate_config`'s ``read_data``).
_READ_DATA: contextvars.ContextVar[bool] = contextvars.ContextVar("read_data", default=True)


def _validated(config: dict, schema_path: str | os.PathLike) -> dict:
    schema = load_yaml(Path(schema_path))
    cls = jsonschema.validators.validator_for(schema)
    validator = _with_defaults(cls)(schema)
    errors = sorted(validator.iter_errors(config), key=lambda e: (len(list(e.absolute_path)), str(list(e.absolute_path))))
    if errors:
        err = errors[0]
        raise ConfigError(f"config key '{_key_path(err)}': {_message(err)}")
    from .controls import add_controls

    add_controls(config)
    for check in SEMANTIC_CHECKS:
        for key, msg in check(config):
            raise ConfigError(f"config key '{key}': {msg}")
    return config


#: Keys that change how a run executes but not what it computes (where results are written and data
#: read from, how runs are chunked into jobs, the cluster's time estimate); changing chunk_size,
#: resources_dir or runtime_minutes_per_run reruns nothing, and the snapshot is the same wherever
#: the results live.  ``cluster`` (the walltime a job may ask for) sizes chunks only.
EXECUTION_ONLY_KEYS = ("results_dir", "resources_dir", "cluster", "nn.designs.*.chunk_size", "nn.designs.*.runtime_minutes_per_run")


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
