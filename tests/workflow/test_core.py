"""The workflow's skeleton: the default and paper configs plan every table, lint is clean, a bad
config stops Snakemake with one line, and a finished run schedules nothing."""


from workflow_utils import planned_jobs, snakemake, write_config

EVERY_TABLE = [
    "attainable_bounds", "table1a", "table1b", "table2a", "table2b", "table3", "table4", "table5", "table7",
    "gaussian_unlearning_slopes", "gaussian_unlearning_audit",
]


def _missing_tables(proc) -> list[str]:
    planned = proc.stdout + proc.stderr
    return [t for t in EVERY_TABLE if f"/tables/{t}.csv" not in planned]


def test_dry_run_of_the_default_config_plans_every_table(tmp_path):
    proc = snakemake(tmp_path, write_config(tmp_path), "-n")
    assert proc.returncode == 0, proc.stderr
    assert "attainable_bounds" in planned_jobs(proc)
    assert not _missing_tables(proc)


def test_lint_is_clean(tmp_path):
    proc = snakemake(tmp_path, write_config(tmp_path), "--lint")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "Congratulations" in proc.stdout + proc.stderr


def test_a_bad_config_stops_snakemake_with_one_line_before_any_job(tmp_path):
    """What validate_config refuses (tests/pipeline/test_config.py has the messages) reaches the
    user as one ``Error: config key ...`` line, a non-zero exit and no traceback."""
    proc = snakemake(tmp_path, write_config(tmp_path, overrides={"zeta": 1.5}), "-n")
    assert proc.returncode != 0
    errors = [line for line in proc.stderr.splitlines() if line.startswith("Error")]
    assert errors == ["Error: config key 'zeta': 1.5 is greater than or equal to the maximum of 1"], proc.stderr
    assert "Traceback" not in proc.stderr and not (tmp_path / "results").exists()
