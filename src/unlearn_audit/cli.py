"""Command line: ``unlearn-audit bound|pairwise|gdp|plan|audit``.

Bad input exits with status 2 and a single line on stderr (no traceback).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import os
import sys
import tempfile
from pathlib import Path

import numpy as np

from . import __version__
from .stats.bounds import (
    ALL_STATISTICS,
    STATISTICS,
    epsilon_lower_bound,
    gdp_epsilon,
    gdp_mu_lower_bound,
    gdp_mu_lower_bound_from_accuracy,
    pairwise_epsilon_lower_bound,
    pairwise_error_limits,
)
from .stats.gdp_overlaps import MU_METHODS, mu_lower_bound
from .stats.selection import TESTS
from .catalogue import SCORE_NAMES


class UsageError(Exception):
    """Raised for bad command-line input; reported as one line, exit status 2."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # one line instead of usage + message
        raise UsageError(f"{self.prog}: {message} (see --help)")


def _parse_overlap_list(text: str) -> list[float]:
    items = [t for t in text.replace(",", " ").split() if t]
    if not items:
        raise UsageError("--overlaps is empty; give comma-separated integers, e.g. --overlaps 60,58,61")
    try:
        return [float(t) for t in items]
    except ValueError:
        raise UsageError(f"--overlaps must be comma-separated integers, got {text!r}") from None


#: Parquet filter columns and the defaults of their options (None: required when the file holds several values).
FILTERS = {"experiment": None, "auditor": "batchwise", "score": "logit"}


def _one_line(exc: Exception) -> str:
    return " ".join(str(exc).split()) or type(exc).__name__


def _is_parquet(path: Path) -> bool:
    if path.suffix.lower() in (".parquet", ".pq"):
        return True
    with path.open("rb") as fh:
        return fh.read(4) == b"PAR1"


def _filter_parquet(df, where: str, r: int | None, chosen: dict) -> tuple[list[float], dict]:
    """Rows of one (experiment, auditor, score, r) cell; refuses repeated run ids."""
    used = {}
    for col, default in FILTERS.items():
        value = chosen.get(col)
        if col not in df.columns:
            if value is not None:
                raise UsageError(f"{where}: --{col} given but the file has no '{col}' column")
            continue
        present = sorted(map(str, df[col].unique()))
        value = value if value is not None else default
        if value is None:
            if len(present) > 1:
                raise UsageError(f"{where}: holds {col}s {', '.join(present)}; choose one with --{col}")
            value = present[0] if present else None
        if value is not None:
            df = df[df[col].astype(str) == value]
            if df.empty:
                raise UsageError(f"{where}: no rows with {col} = {value!r} ({col}s present: {', '.join(present)}); choose with --{col}")
            used[col] = value
    if r is not None and "r" in df.columns:
        df = df[df["r"] == r]
        if df.empty:
            raise UsageError(f"{where}: no rows with r = {r}")
    if "m" in df.columns:
        ms = sorted(int(v) for v in df["m"].dropna().unique())
        if len(ms) > 1:
            raise UsageError(f"{where}: its rows were computed with m = {', '.join(map(str, ms))}; filter the file to one audit")
        if ms:
            used["m"] = ms[0]
    if "run" in df.columns and df["run"].duplicated().any():
        dup = df["run"].duplicated(keep=False)
        run = df.loc[dup, "run"].iloc[0]
        others = [c for c in df.columns if c not in ("run", "overlap", *FILTERS, "r") and df.loc[dup, c].nunique() > 1]
        hint = f"filter the file on column(s) {', '.join(others)}" if others else "remove the repeated rows"
        raise UsageError(
            f"{where}: run {run} occurs {int((df['run'] == run).sum())} times after filtering on "
            f"{', '.join(f'{k}={v!r}' for k, v in {**used, 'r': r}.items())}; runs must be independent: "
            f"filter with --experiment/--auditor/--score/--r or {hint}"
        )
    return df["overlap"].astype(float).tolist(), used


def read_overlaps_file(path: Path, r: int | None = None, **chosen) -> tuple[list[float], dict]:
    """Overlaps and the filters applied, from a text file (numbers separated by whitespace/commas;
    '#' comments) or a Parquet file with an ``overlap`` column (OVERLAPS schema): rows are filtered
    by ``r`` and by ``chosen`` experiment/auditor/score (defaults :data:`FILTERS`) where those columns exist."""
    where = f"--overlaps-file {path}"
    if not path.exists():
        raise UsageError(f"{where}: no such file")
    if path.is_dir():
        raise UsageError(f"{where}: is a directory; give the file inside it, e.g. {path / 'overlaps.parquet'}")
    parquet = None
    try:
        parquet = _is_parquet(path)
        if parquet:
            import pandas as pd

            df = pd.read_parquet(path)
        else:
            text = "\n".join(line.split("#", 1)[0] for line in path.read_text().splitlines())
    except Exception as exc:  # noqa: BLE001 - report any reader failure as one line
        kind = {True: "Parquet", False: "text", None: "file"}[parquet]
        raise UsageError(f"{where}: cannot read {kind} ({_one_line(exc)}); give a Parquet file with an 'overlap' column or a text file of integers") from None
    if parquet:
        if "overlap" not in df.columns:
            raise UsageError(f"{where}: no 'overlap' column (columns: {', '.join(map(str, df.columns))})")
        return _filter_parquet(df, where, r, chosen)
    if any(v is not None for v in chosen.values()):
        raise UsageError(f"{where}: --experiment/--auditor/--score apply only to Parquet files")
    if not text.strip():
        raise UsageError(f"{where}: no numbers in file")
    try:
        return _parse_overlap_list(text), {}
    except UsageError:
        raise UsageError(f"{where}: expected integers separated by commas or whitespace") from None


def _dump(obj: dict) -> str:
    return json.dumps(_clean(obj))


def _cmd_bound(args) -> dict:
    if (args.overlaps is None) == (args.overlaps_file is None):
        raise UsageError("give exactly one of --overlaps or --overlaps-file")
    chosen = {col: getattr(args, col) for col in FILTERS}
    if args.overlaps is not None:
        if any(v is not None for v in chosen.values()):
            raise UsageError("--experiment/--auditor/--score apply only to --overlaps-file; drop them when giving --overlaps")
        overlaps, used = _parse_overlap_list(args.overlaps), {}
    else:
        overlaps, used = read_overlaps_file(Path(args.overlaps_file), args.r, **chosen)
        if "m" in used and used["m"] != args.m:
            raise UsageError(f"--m {args.m} contradicts --overlaps-file {args.overlaps_file}, whose overlaps were computed "
                             f"with m = {used['m']} candidate batches; give --m {used['m']}")
    if args.method == "reference":  # the unlearning claim against the retrained model: its own δ, no LDP bound
        from .stats.reference import reference_bound

        if args.statistic not in STATISTICS:
            raise UsageError("--method reference tests the mean or the median, not --statistic perfect")
        res = reference_bound(overlaps, args.m, args.r, zeta=args.zeta, statistic=args.statistic, delta=args.delta)
    else:
        res = epsilon_lower_bound(overlaps, args.m, args.r, zeta=args.zeta, statistic=args.statistic, delta=args.delta,
                                  method=args.method)
    if args.statistic not in STATISTICS:  # the perfect-guess count has no μ-GDP test
        return {**used, **res.record(), "mu_ldp": None, "mu_lb": None}
    mu = mu_lower_bound(overlaps, args.m, args.r, zeta=args.zeta, statistic=args.statistic, method=args.mu_method)
    return {**used, **res.record(), "mu_ldp": mu.mu_ldp, "mu_lb": mu.mu_lb, "mu_method": mu.method}


def _cmd_pairwise(args) -> dict:
    res = pairwise_epsilon_lower_bound(args.fp, args.n_neg, args.fn, args.n_pos, zeta=args.zeta, delta=args.delta)
    fp_high, fn_high = pairwise_error_limits(args.fp, args.n_neg, args.fn, args.n_pos, zeta=args.zeta)
    return {"epsilon_lb": res.epsilon_lb, "fp_high": fp_high, "fn_high": fn_high, "fp": args.fp, "n_neg": args.n_neg, "fn": args.fn,
            "n_pos": args.n_pos, "zeta": res.zeta, "delta": res.delta,
            "mu_lb": gdp_mu_lower_bound(args.fp, args.n_neg, args.fn, args.n_pos, zeta=args.zeta)}


def _cmd_gdp(args) -> dict:
    if args.correct is not None or args.total is not None:
        if args.correct is None or args.total is None:
            raise UsageError("--correct and --total go together")
        mu = gdp_mu_lower_bound_from_accuracy(args.correct, args.total, zeta=args.zeta)
        out = {"correct": args.correct, "total": args.total, "zeta": args.zeta, "mu_lb": mu}
    else:
        missing = [n for n in ("fp", "n_neg", "fn", "n_pos") if getattr(args, n) is None]
        if missing:
            raise UsageError("give --correct/--total or all of --fp --n-neg --fn --n-pos")
        mu = gdp_mu_lower_bound(args.fp, args.n_neg, args.fn, args.n_pos, zeta=args.zeta)
        out = {"fp": args.fp, "n_neg": args.n_neg, "fn": args.fn, "n_pos": args.n_pos, "zeta": args.zeta, "mu_lb": mu}
    if args.delta is not None:
        out["delta"] = args.delta
        out["epsilon"] = gdp_epsilon(mu, args.delta)
    return out


def _parse_r_list(text: str) -> list[int]:
    items = [t for t in text.replace(",", " ").split() if t]
    try:
        values = [int(t) for t in items]
    except ValueError:
        raise UsageError(f"--r must be comma-separated even integers, e.g. --r 20,40,60; got {text!r}") from None
    if not values:
        raise UsageError("--r is empty; give comma-separated even integers, e.g. --r 20,40,60")
    if len(set(values)) != len(values):
        raise UsageError(f"--r repeats a value: {text!r}")
    return values


def _clean(value):
    """JSON-ready: numpy scalars as Python numbers, NaN and infinities as null."""
    if isinstance(value, dict):
        return {k: _clean(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_clean(v) for v in value]
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def _check_output_file(path: Path, option: str) -> None:
    """Refuse, before any work, an output path that cannot become a file."""
    if path.is_dir():
        raise UsageError(f"{option} {path}: is a directory; give a file path, e.g. {path / 'bounds.parquet'}")
    parent = path.parent if str(path.parent) else Path(".")
    if parent.exists() and not parent.is_dir():
        raise UsageError(f"{option} {path}: {parent} is not a directory")
    existing = next((p for p in [parent, *parent.parents] if p.exists()), Path("."))
    if not os.access(existing, os.W_OK):
        raise UsageError(f"{option} {path}: {existing} is not writable")
    if existing == parent:  # a file must be creatable there (permissions alone do not say so, e.g. /proc)
        try:
            with tempfile.NamedTemporaryFile(dir=parent, prefix=f".{path.name}.", suffix=".check"):
                pass
        except OSError as exc:
            raise UsageError(f"{option} {path}: cannot create a file in {parent} ({exc.strerror or exc}); give another path") from None


def _cmd_audit(args) -> dict:
    """Fit on the calib runs and bound on the eval runs of per-run SCORES files (Algorithm 2)."""
    from . import schemas
    from .auditors.score_files import audit_scores, read_score_files, read_signs_file
    from .io import write_parquet

    r_values = _parse_r_list(args.r)
    if args.out:
        _check_output_file(Path(args.out), "--out")
    scores, n_files = read_score_files(args.scores, args.glob)
    if args.score_column:
        scores = _external_score(scores, args.score_column, args.score)
    retrain = _retrain_scores(args.retrain_scores, args.glob) if args.retrain_scores else None
    if retrain is not None and args.score_column:
        retrain = _external_score(retrain, args.score_column, args.score, "--retrain-scores")
    signs = read_signs_file(args.signs) if args.signs else None
    res = audit_scores(scores, r_values, score=args.score, zeta=args.zeta, signs=signs,
                       experiment=None if "experiment" in scores.columns else Path(args.scores).name)
    membership = _membership(scores, res, retrain)
    if args.score_column:  # the rows name the column the statistic came from
        res = dataclasses.replace(res, score=args.score_column, bounds=res.bounds.assign(score=args.score_column))
    audits = []
    for r in sorted(r_values):
        ov = res.overlaps[res.overlaps.r == r].sort_values("run")
        rows = res.bounds[res.bounds.r == r]
        audits.append({"r": r, "runs": ov["run"].tolist(), "overlaps": ov["overlap"].tolist(),
                       "bounds": [{k: row[k] for k in schemas.BOUNDS.names} for row in rows.to_dict("records")]})
    if args.out:
        write_parquet(res.bounds, args.out, schemas.BOUNDS)
    out = {"experiment": res.experiment, "score": res.score, "m": res.m, "zeta": args.zeta, "files": n_files,
           "calibration_runs": res.calibration_runs, "evaluation_runs": res.evaluation_runs,
           "signs": "signs file" if signs is not None else "in_forget", "audits": audits, "membership": membership}
    if args.out:
        out["out"] = str(args.out)
    return out


def _external_score(scores, column: str, score: str, option: str = "--scores"):
    """``--score-column``: any numeric column (an external attack's per-example statistic, e.g. a
    likelihood ratio computed elsewhere) audited in the slot of ``score_<score>``; refused, before any
    work, where the files lack it or it is not numeric."""
    import pandas as pd

    if column not in scores.columns:
        raise UsageError(f"--score-column {column}: {option} files have no such column (their columns: {', '.join(map(str, scores.columns))})")
    if not pd.api.types.is_numeric_dtype(scores[column]):
        raise UsageError(f"--score-column {column}: the column must be numeric, got {scores[column].dtype}")
    return scores.assign(**{f"score_{score}": scores[column].astype(float)})


def _retrain_scores(path: str, pattern: str):
    """``--retrain-scores``: Retrain's score files, refused before any work without calib and eval rows."""
    from .auditors.score_files import read_score_files

    frame, _ = read_score_files(path, pattern)
    phases = set(map(str, frame["phase"].unique())) if "phase" in frame.columns else set()
    if not {"calib", "eval"} <= phases:
        raise UsageError(f"--retrain-scores {path}: needs calib and eval rows (found phases {sorted(phases)}); give Retrain's score files of the same design")
    return frame


def _membership(scores, res, retrain) -> dict:
    """The membership metrics of the audited score (docs/metrics.md), with privleak against
    ``retrain`` (Retrain's scores of the same design, ``--retrain-scores``) where given."""
    from .auditors.membership_metrics import membership_metrics, privleak, privleak_interval

    def metrics(frame, fit=None):
        return membership_metrics(frame[frame.phase == "calib"], frame[frame.phase == "eval"], res.score, fit=fit)

    own = metrics(scores, res.fit[res.fit.score == res.score])
    out = {k: v for k, v in own.record().items() if k != "auc_draws"}
    out["privleak"] = out["privleak_low"] = out["privleak_high"] = None
    if retrain is not None:
        retrain = metrics(retrain)
        low, high = privleak_interval(own.auc, retrain.auc, own.auc_draws, retrain.auc_draws, min(own.runs, retrain.runs))
        out |= {"auc_retrain": retrain.auc, "privleak": privleak(own.auc, retrain.auc), "privleak_low": low, "privleak_high": high}
    return out


def _cmd_size(args) -> dict:
    """The ε_LB an audit of the given size can expect from a membership signal d′ (auditors/sizing.py)."""
    from .auditors.sizing import expected_bound

    if (args.d_prime is None) == (args.scores is None):
        raise UsageError("give exactly one of --d-prime or --scores (a pilot's or a No-unlearning control's score files)")
    source, measured = "--d-prime", None
    d_prime, rho = args.d_prime, args.batch_correlation
    if args.scores is not None:
        from .auditors.score_files import read_score_files
        from .auditors.signal import pilot_signal

        scores, n_files = read_score_files(args.scores, args.glob)
        pilot = pilot_signal(scores, args.score)
        if pilot.d_prime.size == 0:
            raise UsageError(f"--scores {args.scores}: no example is both in and out of the forget set in two runs each; "
                             "give a pilot with more runs")
        d_prime, measured = pilot.d_prime, float(np.median(pilot.measured))
        rho = pilot.batch_correlation if rho is None else rho
        source = (f"{args.scores} ({n_files} files; the {d_prime.size} examples' d' of the {args.score} score, "
                  "deconvolved of their sampling noise, resampled)")
    res = expected_bound(d_prime, args.m, args.r, args.calibration_runs, args.evaluation_runs, batch_size=args.batch_size,
                         batch_correlation=rho or 0.0, test=args.test, statistic=args.statistic, zeta=args.zeta,
                         simulations=args.simulations, seed=args.seed)
    return {"d_prime_from": source, "d_prime_measured": measured, **res.record()}


REPO = Path(__file__).resolve().parents[2]


def checkout() -> Path:
    """The repository the command runs in: the current directory when it is a clone of this
    workflow, else the one this package was installed from (``pip install -e``)."""
    here = Path.cwd()
    return here if (here / "workflow" / "schemas" / "config.schema.yaml").exists() else REPO


def _load_configs(paths: list[str]) -> dict:
    """The configs merged as ``snakemake --configfile A B`` merges them, validated with defaults (the
    checks that read a design's data left out: a config is priced before its data are downloaded)."""
    from .pipeline.config import load_yaml, validate_config

    schema = checkout() / "workflow" / "schemas" / "config.schema.yaml"
    if not schema.exists():
        raise UsageError(f"plan needs the workflow's schema {schema}; run it from a clone of the repository (pip install -e .)")

    def merge(a: dict, b: dict) -> dict:
        return {**a, **{k: merge(a[k], v) if isinstance(v, dict) and isinstance(a.get(k), dict) else v for k, v in b.items()}}

    config: dict = {}
    for path in paths:
        if not Path(path).exists():
            raise UsageError(f"--configfile {path}: no such file")
        config = merge(config, load_yaml(path) or {})
    return validate_config(config, schema, read_data=False)


def _cmd_plan(args) -> str:
    from .plan_reports.hours import format_plan, format_walltimes, plan_rows, read_throughputs, walltime_rows
    from .pipeline.plan.cost.throughput import read_unit_costs

    if args.results and not Path(args.results).is_file():
        raise UsageError(f"--results {args.results}: no such file (the throughput records, e.g. benchmarks/RESULTS.md)")
    config = _load_configs(args.configfile or [str(checkout() / "config" / "config.yaml")])
    results = args.results or str(checkout() / "benchmarks" / "RESULTS.md")
    if args.batched is not None and args.batched < 1:
        raise UsageError(f"--batched must be a number of models >= 1, got {args.batched}")
    cluster = config.get("cluster", {})  # the config's own cost device and assumed speed, unless given
    args.device = args.device or cluster.get("cost_device") or "cpu"
    if args.assume_tflops is None:
        args.assume_tflops = cluster.get("assume_tflops")
    if args.check:
        return _plan_check(args, config, results)
    throughputs = read_throughputs(results, args.device)
    rows = plan_rows(config, throughputs, args.assume_tflops, args.batched, read_unit_costs(results, args.device))
    notes = [f"throughput: rows of {results} whose device contains {args.device!r}, each design at its precision's (base training at the design's "
             "models_per_group K, unlearning of retain fine-tune, forget ascent, IDA and model clipping at its "
             "unlearn_models_per_group K, where that K's row was recorded, else K = 1); Hessian-vector products, model clipping's noisy "
             "steps, rewind-to-delete's full-batch micro-batches and question-answer designs' greedy decoding at their per-unit rows where "
             "recorded"]
    if args.batched:
        notes.append(f"hours at K = {args.batched}: every TinyNet base training and every groupable unlearning run {args.batched} "
                     "models at once, at that K's recorded rate (the K = 1 rate where none is recorded)")
        unrecorded = _models_without_rate(config, throughputs, args.batched)
        if unrecorded:
            notes.append(f"no K = {args.batched} row on {args.device!r} for {', '.join(unrecorded)}: "
                         f"their hours at K = {args.batched} are their K = 1 hours (record the row: benchmarks/workflow_loop.py "
                         f"--k {args.batched} --append, or benchmarks/gpu.sh on the device)")
    if args.assume_tflops:
        notes.append(f"estimates: models without a measured row at an assumed {args.assume_tflops:g} TFLOP/s sustained")
    if any(r.get("estimate") for r in rows) and _reads_tofu(config):
        from .data.qa import TOFU_MEASURED_GPU_HOURS

        (few, low), (many, high) = sorted(TOFU_MEASURED_GPU_HOURS.items())
        notes.append(f"for comparison, measured: the audit paper's authors report {low:g} A100-80GB hours for one 30-run TOFU design "
                     f"with {few} methods and {high:g} with {many} (512-token sequences, an effective batch of 16); the estimate above is "
                     "the assumed throughput's until a measured row of the model replaces it (benchmarks/gpu.sh, step lm)")
    walltimes = format_walltimes(walltime_rows(config), config.get("cluster", {}))
    return format_plan(rows, args.device, args.batched) + "\n" + "\n".join(notes) + "\n\n" + walltimes


def _reads_tofu(config: dict) -> bool:
    """Whether a neural-network design of the config reads TOFU's files (``dataset_params.format: tofu``)."""
    nn = config.get("nn") or {}
    return bool(nn.get("enabled")) and any((d.get("dataset_params") or {}).get("format") == "tofu" for d in (nn.get("designs") or {}).values())


def _models_without_rate(config: dict, throughputs, k: int) -> list[str]:
    """The models of the config's designs (``model input``) with no throughput row at K models."""
    from .pipeline.plan import WorkflowPlan
    from .pipeline.plan.cost.throughput import model_key

    plan = WorkflowPlan(config)
    models = {model_key(plan.nn.design(d))[:2] for d in plan.nn.used_designs()}
    return sorted(f"{m} {i}" for m, i in models if (m, i, k) not in throughputs)


def _plan_check(args, config: dict, results: str) -> str:
    """``plan --check RESULTS_DIR``: the cost model's seconds beside a finished run's, per kind of job."""
    from .pipeline.plan.cost.throughput import REFERENCE_JOB, read_step_costs, read_unit_costs, reference_rate
    from .plan_reports.check import check_kinds, format_check

    if not (Path(args.check) / "benchmarks").is_dir():
        raise UsageError(f"--check {args.check}: no benchmarks/ folder there (give the results_dir of a finished run)")
    if args.startup_s is not None and args.startup_s < 0:
        raise UsageError(f"--startup-s must be seconds >= 0, got {args.startup_s}")
    reference = None
    if args.reference_img_s is not None:
        if not args.reference_img_s > 0:
            raise UsageError(f"--reference-img-s must be images/s > 0, got {args.reference_img_s}")
        rows_rate = reference_rate(results, args.device)
        if rows_rate is None:
            raise UsageError(f"--reference-img-s: {results} has no {args.device!r} row of the reference job's case ({REFERENCE_JOB}); "
                             f"append one with that command and --append {results}")
        reference = (args.reference_img_s, rows_rate)
    try:
        rows, startup = check_kinds(config, args.check, read_step_costs(results, args.device), args.startup_s,
                                    read_unit_costs(results, args.device), speed=reference[0] / reference[1] if reference else 1.0)
    except ValueError as err:
        raise UsageError(str(err)) from None
    return format_check(rows, args.device, startup, calibrated=args.startup_s is None, reference=reference)


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="unlearn-audit", description="Lower bounds on the unlearning parameter epsilon.")
    p.add_argument("--version", action="version", version=f"unlearn-audit {__version__}")
    sub = p.add_subparsers(dest="command", parser_class=_Parser)

    b = sub.add_parser("bound", help="Theorem 4.2 (or --method exact|mgf|adaptive) and mu-GDP bounds from per-run overlaps V (prints JSON)")
    b.add_argument("--m", type=int, required=True, help="number of candidate forget batches")
    b.add_argument("--r", type=int, required=True, help="guess budget (even, 0 < r <= m)")
    b.add_argument("--overlaps", help="comma-separated overlaps, one per evaluation run, e.g. 60,58,61")
    b.add_argument("--overlaps-file", help="text file of overlaps, or Parquet with an 'overlap' column "
                   "(e.g. results/<experiment>/overlaps.parquet; rows filtered by --r and the options below)")
    b.add_argument("--experiment", help="Parquet rows of this experiment (required when the file holds several)")
    b.add_argument("--auditor", help="Parquet rows of this auditor (default: batchwise)")
    b.add_argument("--score", help="Parquet rows of this score, logit or loss (default: logit)")
    b.add_argument("--statistic", choices=ALL_STATISTICS, default="mean",
                   help="mean (Eq. 1), median (Eq. 2) or perfect (the number of runs with V = r; --method exact "
                   "only; no mu-GDP bound)")
    b.add_argument("--zeta", type=float, default=0.05, help="significance level in (0, 1)")
    b.add_argument("--delta", type=float, default=0.0,
                   help="delta of the LDP mechanism (Lemma C.1); with --method reference, of the unlearning claim")
    b.add_argument("--method", choices=TESTS, default="theorem4.2",
                   help="test: theorem4.2 (Eq. 1/2, Lemma C.1), exact (delta = 0: exact convolution / binomial "
                   "tail), mgf (delta = 0, mean: max-MGF Chernoff), adaptive (delta = 0, mean: the worst case "
                   "over adaptive runs) or reference (the unlearning claim against the retrained model, any delta: "
                   "epsilon_lb without halving, epsilon_ldp null); see docs/bounds.md. The output also "
                   "gives mu_ldp and mu_lb, the mu-GDP bounds from the same overlaps (--mu-method)")
    b.add_argument("--mu-method", choices=MU_METHODS, default="tradeoff",
                   help="the mu-GDP test: tradeoff (default: the trade-off-function test of docs/bounds.md section "
                   "6a beside Lemma C.1's, never smaller) or lemma_c1 (mu_lb = mu_ldp / 2)")
    b.set_defaults(func=_cmd_bound)

    pw = sub.add_parser("pairwise", help="Eq. 3 pairwise bound from error counts (prints JSON)")
    for name in ("fp", "n-neg", "fn", "n-pos"):
        pw.add_argument(f"--{name}", type=int, required=True)
    pw.add_argument("--zeta", type=float, default=0.05)
    pw.add_argument("--delta", type=float, default=0.0)
    pw.set_defaults(func=_cmd_pairwise)

    g = sub.add_parser("gdp", help="mu-GDP lower bound from error counts or accuracy (prints JSON)")
    for name in ("fp", "n-neg", "fn", "n-pos", "correct", "total"):
        g.add_argument(f"--{name}", type=int)
    g.add_argument("--zeta", type=float, default=0.05)
    g.add_argument("--delta", type=float, help="also convert mu_lb to epsilon at this delta")
    g.set_defaults(func=_cmd_gdp)

    from .pipeline.plan.cost.throughput import REFERENCE_JOB  # torch-free

    pl = sub.add_parser("plan", help="the base trainings, unlearning runs and score extractions of a config, per table "
                        "and figure, and their device-hours at a measured throughput (prints a table)")
    pl.add_argument("--configfile", nargs="+", help="config files, merged in order (default: config/config.yaml of the checkout)")
    pl.add_argument("--device", help="device whose benchmarks/RESULTS.md rows to use (substring, e.g. cpu, H200, A100; default: the "
                    "config's cluster.cost_device, else cpu)")
    pl.add_argument("--results", help="the throughput records (default: benchmarks/RESULTS.md of the checkout: the current "
                    "directory when it is a clone of the workflow, else the one the package was installed from)")
    pl.add_argument("--assume-tflops", type=float, help="estimate models without a measured row at this sustained TFLOP/s "
                    "(default: the config's cluster.assume_tflops, else none)")
    pl.add_argument("--batched", type=int, metavar="K", help="also the hours with K models at once wherever the work can be "
                    "grouped (TinyNet base training; retain fine-tune, forget ascent, IDA, model clipping), at K's recorded rate")
    pl.add_argument("--check", metavar="RESULTS_DIR", help="instead: the predicted beside the measured seconds of every "
                    "training and unlearning job of a finished run of the config (its benchmarks/ files), per kind of job")
    pl.add_argument("--startup-s", type=float, help="with --check: a job's start-up in seconds (default: calibrated on the "
                    "run's control jobs, which then are not checked)")
    pl.add_argument("--reference-img-s", type=float, metavar="IMG_S", help=f"with --check: the images/s the fixed reference job "
                    f"(python {REFERENCE_JOB}) gave beside the run; the measured seconds are scaled by it over its throughput row's, so "
                    "a machine faster or slower than on the rows' day does not read as a cost-model error")
    pl.set_defaults(func=_cmd_plan)

    a = sub.add_parser("audit", help="Algorithm 2 from per-run scores of any producer (SCORES schema): fit on the calib "
                       "runs, guess and bound on the eval runs (prints JSON)")
    a.add_argument("--scores", required=True, help="a Parquet file or a directory of them (searched recursively), "
                   "one row per example per run; each run's S is read from in_forget per batch")
    a.add_argument("--glob", default="*.parquet", help="file names read under --scores (default: *.parquet; the "
                   "workflow's results/<experiment>/runs: scores.parquet)")
    a.add_argument("--r", required=True, help="comma-separated guess budgets, each even and <= m, e.g. 20,40,60")
    a.add_argument("--score", choices=SCORE_NAMES, default="logit", help="the score column audited (default: logit)")
    a.add_argument("--zeta", type=float, default=0.05, help="significance level in (0, 1)")
    a.add_argument("--signs", help="SIGNS Parquet file giving each run's sign vector (matched by phase and run); "
                   "in_forget must agree with it")
    a.add_argument("--score-column", help="audit this numeric column instead (an external membership attack's per-example statistic, "
                   "e.g. a likelihood ratio computed elsewhere; either orientation): the bounds and metrics name it (docs/cli.md)")
    a.add_argument("--retrain-scores", help="Retrain's score files of the same design (SCORES schema, calib and eval runs): "
                   "adds privleak against Retrain's AUC to the membership metrics (docs/metrics.md)")
    a.add_argument("--out", help="also write the bounds here as Parquet (BOUNDS schema)")
    a.set_defaults(func=_cmd_audit)

    sz = sub.add_parser("size", help="the epsilon_LB an audit of given m, B, r, Gamma and L can expect from a membership "
                        "signal d' (a pilot's scores or a number), and its ceiling, before paying for the runs (prints JSON)")
    sz.add_argument("--d-prime", type=float, help="the membership signal: in-minus-out gap of a score over its run-to-run spread")
    sz.add_argument("--scores", help="a pilot's (or a No-unlearning control's) score files, SCORES schema: d' is measured on them")
    sz.add_argument("--glob", default="*.parquet", help="file names read under --scores (default: *.parquet)")
    sz.add_argument("--score", choices=SCORE_NAMES, default="logit", help="the score whose d' --scores measures (default: logit)")
    sz.add_argument("--m", type=int, required=True, help="candidate batches")
    sz.add_argument("--batch-size", type=int, default=1, help="examples per batch B (default 1)")
    sz.add_argument("--batch-correlation", type=float, help="correlation of two examples of one batch across runs "
                    "(default: measured on --scores, else 0)")
    sz.add_argument("--r", type=int, required=True, help="the guess budget (even, <= m)")
    sz.add_argument("--calibration-runs", type=int, required=True, help="Gamma")
    sz.add_argument("--evaluation-runs", type=int, required=True, help="L")
    sz.add_argument("--test", choices=TESTS, default="reference", help="the pre-registered test (default: reference)")
    sz.add_argument("--statistic", choices=STATISTICS, default="mean", help="mean or median (default: mean)")
    sz.add_argument("--zeta", type=float, default=0.05, help="significance level in (0, 1)")
    sz.add_argument("--simulations", type=int, default=100, help="simulated audits (default 100)")
    sz.add_argument("--seed", type=int, default=0, help="seed of the simulation (default 0)")
    sz.set_defaults(func=_cmd_size)
    return p


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
        if args.command is None:
            raise UsageError("unlearn-audit: missing command (bound, pairwise, gdp, plan, audit or size); see --help")
        out = args.func(args)
    except (UsageError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:  # a file that cannot be read or written: one line, not a traceback
        name = f" {exc.filename}" if getattr(exc, "filename", None) else ""
        print(f"error:{name}: {exc.strerror or _one_line(exc)}", file=sys.stderr)
        return 2
    print(out if isinstance(out, str) else _dump(out))
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
