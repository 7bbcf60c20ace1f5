"""The documentation covers every config key of the schema and every column of every Parquet schema.

The configuration reference lives in ``docs/configuration.md`` and the Parquet schemas in
``docs/schemas.md``, both linked from README.md.  The reference is checked against
``workflow/schemas/config.schema.yaml`` (walked through ``properties``, ``$ref`` to ``$defs``,
``additionalProperties`` schemas of named maps as ``<name>`` and object ``items`` of lists as
``[]``); the schema tables against ``unlearn_audit.schemas``; the library layout of
``docs/development.md`` against ``src/``.  Pure text checks: no workflow run, no torch.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from unlearn_audit import schemas
from unlearn_audit.pipeline.plan import paths

REPO = Path(__file__).resolve().parents[2]
README = (REPO / "README.md").read_text()
CONFIGURATION = (REPO / "docs" / "configuration.md").read_text()
SCHEMAS = (REPO / "docs" / "schemas.md").read_text()
DEVELOPMENT = (REPO / "docs" / "development.md").read_text()
DOCS = {"README.md": README, "docs/configuration.md": CONFIGURATION, "docs/schemas.md": SCHEMAS,
        "docs/development.md": DEVELOPMENT, "docs/workflow.md": (REPO / "docs" / "workflow.md").read_text(),
        "docs/cli.md": (REPO / "docs" / "cli.md").read_text(), "docs/cluster.md": (REPO / "docs" / "cluster.md").read_text()}
SCHEMA = yaml.safe_load((REPO / "workflow" / "schemas" / "config.schema.yaml").read_text())


# ----------------------------------------------------------------------------- README parsing
def _lines_outside_code(text: str) -> list[tuple[str, bool]]:
    """(line, inside a fenced code block) for every line."""
    out, fenced = [], False
    for line in text.splitlines():
        if line.lstrip().startswith("```"):
            fenced = not fenced
            out.append((line, True))
            continue
        out.append((line, fenced))
    return out


def _section(title_pattern: str, text: str | None = None) -> str:
    """The text under the first heading matching ``title_pattern`` (a regex on the heading's
    text), up to the next heading of the same or a higher level; code blocks are not headings."""
    lines = _lines_outside_code(README if text is None else text)
    start = level = None
    for i, (line, fenced) in enumerate(lines):
        found = None if fenced else re.match(r"^(#+)\s+(.*)$", line)
        if not found:
            continue
        if start is None:
            if re.search(title_pattern, found.group(2)):
                start, level = i + 1, len(found.group(1))
        elif len(found.group(1)) <= level:
            return "\n".join(line for line, _ in lines[start:i])
    if start is None:
        raise AssertionError(f"{'README.md' if text is None else 'the page'} has no heading matching {title_pattern!r}")
    return "\n".join(line for line, _ in lines[start:])


def _table_rows(text: str) -> list[list[str]]:
    """Body rows of every Markdown table in ``text`` (header and separator rows dropped)."""
    rows, previous_was_table = [], False
    for line, fenced in _lines_outside_code(text):
        if fenced or not line.startswith("|"):
            previous_was_table = False
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if not previous_was_table:  # header row
            previous_was_table = True
            continue
        if all(re.fullmatch(r":?-+:?", c) for c in cells):
            continue
        rows.append(cells)
    return rows


def _code_spans(cell: str) -> list[str]:
    return re.findall(r"`([^`]*)`", cell)


def _keyed_rows(text: str) -> dict[str, list[str]]:
    """Rows of the tables in ``text`` keyed by the code span of their first cell."""
    out: dict[str, list[str]] = {}
    for cells in _table_rows(text):
        spans = _code_spans(cells[0])
        assert len(spans) == 1, f"first cell {cells[0]!r} must be one `key`"
        assert spans[0] not in out, f"{spans[0]} is documented twice"
        out[spans[0]] = cells
    return out


# ----------------------------------------------------------------------------- the config schema
def _resolve(node: dict) -> dict:
    while "$ref" in node:
        ref = node["$ref"]
        assert ref.startswith("#/$defs/"), ref
        node = SCHEMA["$defs"][ref.removeprefix("#/$defs/")]
    return node


def _walk(node: dict, path: str = ""):
    """(dotted path, resolved schema) of every key below ``node``."""
    node = _resolve(node)
    if path:
        yield path, node
    for key, sub in node.get("properties", {}).items():
        yield from _walk(sub, f"{path}.{key}" if path else key)
    extra = node.get("additionalProperties")
    if isinstance(extra, dict):
        yield from _walk(extra, f"{path}.<name>")
    items = node.get("items")
    if isinstance(items, dict) and _resolve(items).get("properties"):
        for key, sub in _resolve(items)["properties"].items():
            yield from _walk(sub, f"{path}[].{key}")


CONFIG_KEYS = dict(_walk(SCHEMA))


def _config_reference() -> dict[str, list[str]]:
    return _keyed_rows(_section(r"^Configuration reference$", CONFIGURATION))


def test_readme_links_the_moved_references():
    for page in ("docs/configuration.md", "docs/schemas.md", "docs/workflow.md", "docs/cluster.md", "docs/cli.md",
                 "docs/development.md", "benchmarks/RESULTS.md"):
        assert f"]({page}" in README, f"README.md does not link {page}"


def test_the_schema_walk_finds_nested_refs_and_named_maps():
    # the walk itself: $ref to $defs, additionalProperties of named maps, object items of lists
    for key in ("nn.designs.<name>.train.lr", "nn.experiments.<name>.statistic", "gaussian_unlearning.audit.settings",
                "convex.mechanisms.cubic_newton.epsilons", "perfect_prediction.grid[].r", "nn.fit.rel_var_floor",
                "nn.fit.pooled_variance", "nn.designs.<name>.runtime_minutes_per_run", "nn.experiments.<name>.selection"):
        assert key in CONFIG_KEYS, key
    assert len(CONFIG_KEYS) > 100


def test_every_config_key_is_in_the_readme_reference():
    documented = _config_reference()
    missing = [key for key in CONFIG_KEYS if key not in documented]
    assert not missing, f"config keys missing from docs/configuration.md 'Configuration reference': {missing}"
    for key in CONFIG_KEYS:
        assert f"`{key}`" in CONFIGURATION


def test_the_readme_reference_documents_no_stale_key():
    stale = sorted(set(_config_reference()) - set(CONFIG_KEYS))
    assert not stale, f"docs/configuration.md documents keys the schema does not have: {stale}"


def test_reference_rows_give_type_default_and_meaning():
    documented = _config_reference()
    for key, node in CONFIG_KEYS.items():
        cells = documented[key]
        assert len(cells) == 4, f"{key}: expected | key | type | default | meaning |, got {cells}"
        _, type_cell, default_cell, meaning = cells
        types = node.get("type", [])
        for name in [types] if isinstance(types, str) else types:
            assert name in type_cell, f"{key}: type {name!r} not in {type_cell!r}"
        enum = node.get("enum") or _resolve(node.get("items", {})).get("enum") or []
        row = " ".join(cells)
        for value in enum:
            assert f"`{value}`" in row, f"{key}: allowed value {value!r} not documented"
        if "default" in node:
            spans = _code_spans(default_cell)
            assert spans, f"{key}: default {node['default']!r} not documented (cell {default_cell!r})"
            assert yaml.safe_load(spans[0]) == node["default"], f"{key}: documented default {spans[0]!r} != schema {node['default']!r}"
        if "description" in node:
            assert node["description"] in meaning, f"{key}: the schema's description {node['description']!r} is not in {meaning!r}"
        assert meaning, f"{key}: no meaning given"


def test_required_keys_are_marked_required():
    documented = _config_reference()
    parents = {"": SCHEMA, **CONFIG_KEYS}
    for key in CONFIG_KEYS:
        parent_path, _, name = key.rpartition(".")
        if parent_path.endswith("[]"):
            parent = _resolve(parents[parent_path[:-2]].get("items", {}))
        else:
            parent = parents[parent_path]
        if name in parent.get("required", []):
            assert "required" in documented[key][2], f"{key} is required by the schema"


# ----------------------------------------------------------------------------- Parquet schemas
SCHEMA_FILES = {
    "SIGNS": paths.design_file("results", "<design>", "signs.parquet"),
    "SCORES": paths.run_file("results", "<group>", "<chunk>", "<experiment>", "<phase>", "<run>", "scores.parquet"),
    "RUN_METRICS": paths.run_file("results", "<group>", "<chunk>", "<experiment>", "<phase>", "<run>", "metrics.parquet"),
    "QA_RUN_METRICS": paths.run_file("results", "<group>", "<chunk>", "<experiment>", "<phase>", "<run>", "metrics.parquet"),
    "FIT": paths.experiment_file("results", "<experiment>", "fit.parquet"),
    "OVERLAPS": paths.experiment_file("results", "<experiment>", "overlaps.parquet"),
    "BOUNDS": paths.experiment_file("results", "<experiment>", "bounds.parquet"),
    "CHECKPOINT_SCORES": paths.run_file("results", "<group>", "<chunk>", "<experiment>", "<phase>", "<run>", "checkpoint_scores.parquet"),
    "CHECKPOINT_BOUNDS": paths.experiment_file("results", "<experiment>", "checkpoint_bounds.parquet"),
    "PAIRWISE": paths.experiment_file("results", "<experiment>", "pairwise.parquet"),
    "MEMBERSHIP": paths.experiment_file("results", "<experiment>", "membership.parquet"),
    "CONVEX_DECISIONS": "results/convex/<mechanism>/eps_<e>/decisions.parquet",
    "CONVEX_SUMMARY": "results/convex/<mechanism>/eps_<e>/summary.parquet",
}


def test_every_schema_has_a_file():
    assert set(SCHEMA_FILES) == set(schemas.__all__)


def test_convex_paths_match_the_rules():
    rules = (REPO / "workflow" / "rules" / "convex.smk").read_text()
    assert 'plan.files.convex_file("{mechanism}", "{epsilon}", "decisions.parquet")' in rules
    assert 'plan.files.convex_file("{mechanism}", "{epsilon}", "summary.parquet")' in rules
    assert paths.convex_file("results", "<mechanism>", "<e>", "decisions.parquet") == SCHEMA_FILES["CONVEX_DECISIONS"]
    assert paths.convex_file("results", "<mechanism>", "<e>", "summary.parquet") == SCHEMA_FILES["CONVEX_SUMMARY"]


@pytest.mark.parametrize("name", schemas.__all__)
def test_every_schema_column_is_in_its_docs_table(name):
    section = _section(rf"^`{name}`", SCHEMAS)
    heading = next(line for line in SCHEMAS.splitlines() if re.match(rf"^#+\s+`{name}`", line))
    assert f"`{SCHEMA_FILES[name]}`" in heading, f"the heading of {name} must name {SCHEMA_FILES[name]}"
    rows = _keyed_rows(section)
    schema = getattr(schemas, name)
    missing = [f.name for f in schema if f.name not in rows]
    assert not missing, f"columns of {name} missing from its docs/schemas.md table: {missing}"
    stale = sorted(set(rows) - set(schema.names))
    assert not stale, f"docs/schemas.md table of {name} documents columns it does not have: {stale}"
    for field in schema:
        cells = rows[field.name]
        assert len(cells) == 3, f"{name}.{field.name}: expected | column | type | meaning |"
        assert cells[1] == str(field.type), f"{name}.{field.name}: documented type {cells[1]!r} != {field.type}"
        assert cells[2], f"{name}.{field.name}: no meaning given"


# ----------------------------------------------------------------------------- other claims
def test_one_test_one_level_subsection():
    text = _section(r"^One test, one level$")
    for word in ("`report_r`", "`statistic`", "`score`", "`selection: bonferroni`", "`role`", "`preregistered`",
                 "`exploratory`", "ζ/K", "largest `r`", "`mean`", "`logit`"):
        assert word in text, word


def test_cifar100_path_is_one_path():
    from unlearn_audit.data.cifar100 import cifar100_folder

    assert cifar100_folder("resources").as_posix() == "resources/cifar-100-python"
    assert "`<resources_dir>/cifar-100-python/`" in README
    for page, text in DOCS.items():
        assert "resources/cifar100" not in text, page


def test_paper_config_results_dir_is_stated():
    paper = yaml.safe_load((REPO / "config" / "paper.yaml").read_text())
    assert f"`config/paper.yaml` sets its own `results_dir` (`{paper['results_dir']}`" in " ".join(README.split())


def test_troubleshooting_section():
    text = " ".join(_section(r"^Troubleshooting$").split())
    profile = yaml.safe_load((REPO / "profiles" / "default" / "config.yaml").read_text())
    assert profile["rerun-incomplete"] is True and "`rerun-incomplete: true`" in text
    assert "snakemake --unlock --configfile" in text
    rules = (REPO / "workflow" / "rules" / "nn.smk").read_text()
    assert 'f"{LOGS}/nn/{{design}}/train_{{chunk}}.log"' in rules
    assert 'f"{LOGS}/{{group}}/unlearn_{{chunk}}.log"' in rules
    assert "tail -f results/logs/nn/<design>/train_<chunk>.log" in text
    assert "tail -f results/logs/<group>/unlearn_<chunk>.log" in text
    assert "--configfile config/config.yaml mine.yaml" in README
    # a SIGKILLed Snakemake leaves its jobs running: find and end them, by their PIDs, before restarting;
    # never every Snakemake of the user's on a shared machine
    assert "SIGKILL" in text and 'pgrep -af "$PWD/.snakemake/scripts"' in text and 'kill $(pgrep -f "$PWD/.snakemake/scripts")' in text
    assert "pkill" not in README
    assert "`--rerun-incomplete`" in text


def test_layout_names_exist():
    text = _section(r"^Development$", DEVELOPMENT)
    src = REPO / "src" / "unlearn_audit"
    for cells in _table_rows(text):
        (module,) = _code_spans(cells[0])
        assert (src / module).exists(), f"docs/development.md names src/unlearn_audit/{module}, which does not exist"
        if module.endswith("/"):
            for sub in re.findall(r"`([a-z_0-9]+)`", cells[1]):
                if sub in ("__init__.py",):
                    continue
                exists = (src / module / f"{sub}.py").exists() or (src / module / sub / "__init__.py").exists()
                assert exists, f"docs/development.md names {module}{sub}.py (or the package {module}{sub}/), which does not exist"
    for path in src.iterdir():
        if path.name.startswith(("_", ".")):
            continue
        name = path.name + "/" if path.is_dir() else path.name
        assert f"`{name}`" in text, f"src/unlearn_audit/{name} is not in the docs/development.md layout"
    for rule in ("nn_fit", "convex_audit", "nn_train"):
        assert (REPO / "workflow" / "scripts" / f"{rule}.py").exists()
    smk = {p.stem for p in (REPO / "workflow" / "rules").glob("*.smk")}
    for section in smk:
        assert f"`{section}`" in text
    assert not re.search(r"^rule gu_", "".join(p.read_text() for p in (REPO / "workflow" / "rules").glob("*.smk")), re.M)
