"""unlearn_audit.pipeline.provenance: the record of what a run was computed with
(docs/schemas.md#provenance).  The workflow's rule writes it in tests/workflow/test_shared_run.py."""

from __future__ import annotations

import hashlib
import json
import platform
import shutil
import subprocess
from pathlib import Path

import pytest

from unlearn_audit.pipeline.provenance import (
    FORMAT,
    PACKAGES,
    config_sha256,
    cpu_model,
    git_state,
    package_versions,
    provenance_record,
    report_header,
    write_provenance,
)

REPO = Path(__file__).resolve().parents[2]
needs_git = pytest.mark.skipif(shutil.which("git") is None, reason="no git on PATH")


def _git(cwd: Path, *args: str) -> str:
    cmd = ["git", "-c", "user.name=t", "-c", "user.email=t@example.org", "-c", "commit.gpgsign=false", *args]
    return subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, check=True).stdout.strip()


def test_the_config_hash_is_of_canonical_json():
    a = {"zeta": 0.05, "nn": {"designs": {"tiny": {"m": 24, "B": 1}}}, "seed": 1}
    b = {"seed": 1, "nn": {"designs": {"tiny": {"B": 1, "m": 24}}}, "zeta": 0.05}
    assert config_sha256(a) == config_sha256(b)  # key order is not content
    canonical = '{"nn":{"designs":{"tiny":{"B":1,"m":24}}},"seed":1,"zeta":0.05}'
    assert config_sha256(a) == hashlib.sha256(canonical.encode()).hexdigest()
    assert config_sha256({**a, "zeta": 0.1}) != config_sha256(a)
    assert config_sha256({"label": "σ"}) == hashlib.sha256('{"label":"σ"}'.encode()).hexdigest()


@needs_git
def test_git_state_names_the_commit_and_whether_tracked_files_changed(tmp_path):
    checkout = tmp_path / "checkout"
    checkout.mkdir()
    _git(checkout, "init", "-q")
    (checkout / "Snakefile").write_text("rule all:\n")
    _git(checkout, "add", "Snakefile")
    _git(checkout, "commit", "-q", "-m", "first")
    head = _git(checkout, "rev-parse", "HEAD")
    assert git_state(checkout) == {"commit": head, "dirty": False}
    (checkout / "results.txt").write_text("untracked\n")
    assert git_state(checkout) == {"commit": head, "dirty": False}  # untracked files are not dirt
    (checkout / "Snakefile").write_text("rule all:\n    input: []\n")
    assert git_state(checkout) == {"commit": head, "dirty": True}
    assert git_state(checkout / "sub_folder_that_is_not_there") == {"commit": None, "dirty": None}


@needs_git
def test_git_state_is_null_outside_a_git_checkout(tmp_path):
    if subprocess.run(["git", "-C", str(tmp_path), "rev-parse", "HEAD"], capture_output=True).returncode == 0:
        pytest.skip(f"{tmp_path} lies inside a git checkout")
    assert git_state(tmp_path) == {"commit": None, "dirty": None}
    empty = tmp_path / "no_commit_yet"
    empty.mkdir()
    _git(empty, "init", "-q")
    assert git_state(empty) == {"commit": None, "dirty": None}


def test_package_versions_and_cpu_model(tmp_path):
    versions = package_versions()
    assert list(versions) == ["python", *PACKAGES] and versions["python"] == platform.python_version()
    assert versions["numpy"] and versions["unlearn-audit"]
    assert package_versions(("no-such-distribution-here",)) == {"python": platform.python_version(), "no-such-distribution-here": None}
    cpuinfo = tmp_path / "cpuinfo"
    cpuinfo.write_text("processor\t: 0\nvendor_id\t: AuthenticAMD\nmodel name\t: AMD EPYC 9654 96-Core Processor\n\n"
                       "processor\t: 1\nmodel name\t: AMD EPYC 9654 96-Core Processor\n")
    assert cpu_model(cpuinfo) == "AMD EPYC 9654 96-Core Processor"
    assert cpu_model(tmp_path / "missing") == (platform.processor() or None)


def test_write_provenance_records_checkout_software_devices_and_config(tmp_path):
    torch = pytest.importorskip("torch")
    config = {"zeta": 0.05, "seed": 20260707}
    path = tmp_path / "results" / "provenance.json"
    path.parent.mkdir()
    record = write_provenance(config, REPO, path)
    assert path.read_text().endswith("}\n") and json.loads(path.read_text()) == record
    assert list(record) == ["format", "workflow", "config_sha256", "versions", "cpu", "cuda", "platform"]
    assert record["format"] == FORMAT and record["config_sha256"] == config_sha256(config)
    assert record["workflow"] == git_state(REPO)
    assert record["versions"]["torch"] == torch.__version__ and record["versions"]["python"] == platform.python_version()
    assert record["cpu"] == {"model": cpu_model(), "torch_capability": torch.backends.cpu.get_cpu_capability()}
    cuda = [torch.cuda.get_device_name(i) for i in range(torch.cuda.device_count())] if torch.cuda.is_available() else []
    assert record["cuda"] == {"version": torch.version.cuda, "devices": cuda}
    assert provenance_record(config, REPO) == record  # nothing in it changes from one call to the next


def test_the_reports_header_says_what_the_record_and_config_say_in_the_form_snakemake_takes(tmp_path):
    """report_header (rule provenance writes it as report_metadata.yaml for ``--report-metadata``):
    a flat mapping Snakemake accepts, naming a dirty checkout, a missing commit and the CUDA devices."""
    import yaml
    from snakemake.report import _validate_flat_dict

    config = {"seed": 7, "zeta": 0.05, "convex": {"enabled": True},
              "nn": {"enabled": True}, "gaussian_unlearning": {"enabled": False}}
    record = {"workflow": {"commit": "a" * 40, "dirty": True}, "config_sha256": "b" * 64,
              "versions": {"python": "3.11.7", "torch": "2.14.1", "unlearn-audit": "0.2.0"},
              "cpu": {"model": "Some CPU", "torch_capability": "AVX2"}, "cuda": {"version": "13.0", "devices": ["NVIDIA H100"]}}
    header = report_header(record, config)
    assert _validate_flat_dict(header)
    assert header["Commit"] == "a" * 40 + " with uncommitted changes" and header["Sections"] == "convex, nn"
    assert all(isinstance(v, (str, int, float)) for v in header.values())
    assert header["Configuration"] == "config.yaml beside the results (sha256 " + "b" * 16 + ")" and header["Root seed"] == 7
    assert header["Machine"] == "Some CPU (AVX2); CUDA 13.0: NVIDIA H100" and "torch 2.14.1" in header["Software"]
    clean = report_header({**record, "workflow": {"commit": None, "dirty": None}, "cuda": {"version": None, "devices": []}}, config)
    assert clean["Commit"] == "not a git checkout" and clean["Machine"] == "Some CPU (AVX2); no CUDA device"
    write_provenance(config, tmp_path, tmp_path / "p.json", tmp_path / "header.yaml")
    written = yaml.safe_load((tmp_path / "header.yaml").read_text())
    assert written == report_header(json.loads((tmp_path / "p.json").read_text()), config)
