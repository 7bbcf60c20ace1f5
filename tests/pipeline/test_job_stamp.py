"""pipeline/job_stamp.py and io.write_parquet's stamp: a workflow job's Parquet files carry its
provenance under one schema-metadata key (docs/schemas.md#provenance), their data unchanged; the
stamp is the same for two runs of one job, and nothing is stamped outside a job."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq
import pytest

from unlearn_audit import io
from unlearn_audit.pipeline import job_stamp
from unlearn_audit.pipeline.provenance import git_state

REPO = Path(__file__).resolve().parents[2]
FIELDS = {"format", "library_sha256", "host", "device", "workflow", "versions", "user_modules"}
FRAME = pd.DataFrame({"run": [0, 1, 2], "score_logit": [0.5, -1.25, 2.0], "name": ["a", "b", "c"]})
CONFIG = {"nn": {"experiments": {"own": {"method": "json.decoder:JSONDecoder"}, "built_in": {"method": "forget_ascent"}},
                 "designs": {"d": {"dataset": "digits", "model": {"name": "never_imported_pkg.models:factory"}}}}}


@pytest.fixture
def stamped():
    """Stamp this process's Parquet writes as a job of ``CONFIG`` in this checkout would, for one test."""
    job_stamp.install(CONFIG, REPO)
    try:
        yield
    finally:
        io.set_parquet_stamp(None)


def test_the_library_writes_no_stamp_outside_a_job(tmp_path):
    io.write_parquet(FRAME, tmp_path / "plain.parquet")
    assert job_stamp.KEY not in (pq.read_schema(tmp_path / "plain.parquet").metadata or {})


def test_a_stamp_changes_the_metadata_by_its_key_alone_and_no_data(tmp_path, stamped):
    io.write_parquet(FRAME, tmp_path / "stamped.parquet")
    io.set_parquet_stamp(None)
    io.write_parquet(FRAME, tmp_path / "plain.parquet")
    stamped_table, plain_table = pq.read_table(tmp_path / "stamped.parquet"), pq.read_table(tmp_path / "plain.parquet")
    assert stamped_table.equals(plain_table) and stamped_table.schema.equals(plain_table.schema)
    stamped_meta, plain_meta = dict(stamped_table.schema.metadata), dict(plain_table.schema.metadata)
    assert set(stamped_meta) - set(plain_meta) == {job_stamp.KEY}
    assert {k: v for k, v in stamped_meta.items() if k != job_stamp.KEY} == plain_meta
    pd.testing.assert_frame_equal(pd.read_parquet(tmp_path / "stamped.parquet"), FRAME)


def test_the_stamp_names_the_library_host_device_checkout_versions_and_user_modules(tmp_path, stamped):
    import json.decoder  # noqa: F401  (the config's own "method": imported, as its job would)

    io.write_parquet(FRAME, tmp_path / "stamped.parquet")
    stamp = json.loads(pq.read_schema(tmp_path / "stamped.parquet").metadata[job_stamp.KEY])
    assert set(stamp) == FIELDS and stamp["format"] == job_stamp.FORMAT
    assert stamp["library_sha256"] == job_stamp.library_sha256() and len(stamp["library_sha256"]) == 64
    assert stamp["workflow"] == git_state(REPO)
    assert set(stamp["device"]) == {"cpu", "cuda"}
    assert {"python", "pandas", "pyarrow"} <= set(stamp["versions"])
    # the config names two import paths; only the imported module's source is hashed
    assert list(stamp["user_modules"]) == ["json.decoder:JSONDecoder"]
    assert stamp["user_modules"]["json.decoder:JSONDecoder"] == job_stamp._sha256_file(sys.modules["json.decoder"].__file__)


def test_the_stamp_is_the_same_for_two_writes_of_one_state(tmp_path, stamped):
    io.write_parquet(FRAME, tmp_path / "a.parquet")
    io.write_parquet(FRAME, tmp_path / "b.parquet")
    assert (tmp_path / "a.parquet").read_bytes() == (tmp_path / "b.parquet").read_bytes()


def test_config_import_paths_are_the_methods_datasets_and_models_given_by_path():
    assert job_stamp.config_import_paths(CONFIG) == ["json.decoder:JSONDecoder", "never_imported_pkg.models:factory"]
    assert job_stamp.config_import_paths({}) == []


def test_the_library_digest_follows_every_py_file_and_its_path(tmp_path):
    (tmp_path / "sub").mkdir()
    (tmp_path / "a.py").write_text("x = 1\n")
    (tmp_path / "sub" / "b.py").write_text("y = 2\n")
    (tmp_path / "notes.txt").write_text("not code")
    first = job_stamp.library_sha256(tmp_path)
    (tmp_path / "notes.txt").write_text("other")
    assert job_stamp.library_sha256(tmp_path) == first
    (tmp_path / "sub" / "b.py").write_text("y = 3\n")
    assert job_stamp.library_sha256(tmp_path) != first
    (tmp_path / "sub" / "b.py").write_text("y = 2\n")
    (tmp_path / "sub" / "b.py").rename(tmp_path / "sub" / "c.py")
    assert job_stamp.library_sha256(tmp_path) != first


def test_the_distribution_map_is_packages_distributions():
    from importlib import metadata

    ours, theirs = job_stamp._distributions(), metadata.packages_distributions()
    assert {k: sorted(v) for k, v in ours.items()} == {k: sorted(v) for k, v in theirs.items()}


def test_the_checkout_of_a_job_is_its_scripts_grandparent():
    assert job_stamp.job_checkout(REPO / "workflow" / "scripts") == REPO
    assert job_stamp.job_checkout(None) is None and job_stamp.job_checkout("https://example.org/workflow/scripts") is None


JOB = r"""
import sys, types
import pandas as pd
from unlearn_audit.io import write_parquet
from unlearn_audit.pipeline.job_log import start_job_log
log, out, scriptdir = sys.argv[1:4]
snakemake = types.SimpleNamespace(config={}, scriptdir=scriptdir)
start_job_log(log, [out], job=snakemake)
write_parquet(pd.DataFrame({"x": [1.0]}), out)
"""


def test_a_job_started_with_its_snakemake_object_stamps_its_outputs_the_same_each_run(tmp_path):
    outs = []
    for name in ("first", "second"):
        out = tmp_path / f"{name}.parquet"
        subprocess.run([sys.executable, "-c", JOB, str(tmp_path / f"{name}.log"), str(out), str(REPO / "workflow" / "scripts")],
                       check=True, capture_output=True)
        outs.append(out)
    stamp = json.loads(pq.read_schema(outs[0]).metadata[job_stamp.KEY])
    assert set(stamp) == FIELDS and stamp["workflow"] == git_state(REPO) and stamp["device"]["cuda"] is None
    assert outs[0].read_bytes() == outs[1].read_bytes()
