"""The workflow's skeleton: config validation, dry runs, lint, a real run and a no-op rerun."""

import pandas as pd
import pytest

from workflow_utils import planned_jobs, small_config, snakemake, write_config

pytestmark = pytest.mark.workflow


EVERY_TABLE = [
    "attainable_bounds", "table1a", "table1b", "table2a", "table2b", "table3", "table4", "table5", "table7",
    "gaussian_unlearning_slopes", "gaussian_unlearning_audit",
]


def test_dry_run_default_and_paper_configs_plan_every_table(tmp_path):
    for name in ("config/config.yaml", "config/paper.yaml"):
        cfg = write_config(tmp_path, name)
        proc = snakemake(tmp_path, cfg, "-n")
        assert proc.returncode == 0, proc.stderr
        assert "attainable_bounds" in planned_jobs(proc)
        planned = proc.stdout + proc.stderr
        missing = [t for t in EVERY_TABLE if f"results/tables/{t}.csv" not in planned]
        assert not missing, f"{name}: no job writes {missing}"


def test_lint_is_clean(tmp_path):
    proc = snakemake(tmp_path, write_config(tmp_path), "--lint")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "Congratulations" in proc.stdout + proc.stderr


@pytest.mark.parametrize(
    "override,needle",
    [
        ({"zeta": 1.5}, "config key 'zeta'"),
        ({"zetta": 0.05}, "unknown key(s) 'zetta'"),
        ({"perfect_prediction": {"grid": [{"m": 10, "r": 3}]}}, "config key 'perfect_prediction.grid[0].r'"),
        ({"perfect_prediction": {"grid": [{"m": 10, "r": 12}]}}, "r = 12 must be <= m = 10"),
    ],
)
def test_bad_config_is_refused_naming_the_key(tmp_path, override, needle):
    proc = snakemake(tmp_path, write_config(tmp_path, overrides=override), "-n")
    assert proc.returncode != 0
    assert needle in proc.stderr
    assert "Traceback" not in proc.stderr


def test_run_then_rerun_schedules_nothing(tmp_path):
    cfg = write_config(tmp_path, small_config("statistics"))
    proc = snakemake(tmp_path, cfg)
    assert proc.returncode == 0, proc.stderr
    table = pd.read_csv(tmp_path / "results" / "tables" / "attainable_bounds.csv")
    assert table["epsilon_ldp_mean"].round(2).tolist() == [4.00, 40.83]
    for ext in ("md", "tex"):
        assert (tmp_path / "results" / "tables" / f"attainable_bounds.{ext}").stat().st_size > 0
    again = snakemake(tmp_path, cfg, "-n")
    assert again.returncode == 0
    assert planned_jobs(again) == {}
    assert "Nothing to be done" in again.stdout + again.stderr
