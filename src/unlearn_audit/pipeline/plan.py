"""What the workflow runs for a validated config: experiments, chunks, per-rule inputs and targets.

``workflow/rules/common.smk`` makes one :class:`WorkflowPlan` of the config and the rules call its
methods (input functions take the rule's wildcards); the same object is what the tests check, so
the DAG's shape is plain, tested Python.  Paths come from :mod:`.paths`.  Torch-free.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Any, Mapping

from . import paths
from ..checks import check_positive_int
from ..stats.selection import DEFAULT_CELL, Cell
from ..stats.signs import num_sign_vectors

__all__ = ["NN_TABLES", "CERTIFIED_TABLES", "CERTIFIED_FIGURES", "preregistered_cell", "certified_claim", "audit_delta", "GAUSSIAN_UNLEARNING_EXPERIMENTS", "PHASES", "WorkflowPlan"]

#: The neural-network tables (paper Tables 1a, 1b, 3, 4, 5, 7); an experiment lists the ones it fills.
NN_TABLES = ("table1a", "table1b", "table3", "table4", "table5", "table7")
#: The Gaussian-unlearning experiments (DESIGN §7): the grid of each is ``p`` or ``epsilons``.
#: The certified audits' table and figures (paper Table 6, Figures 1a–c).
CERTIFIED_TABLES = ("table6",)
CERTIFIED_FIGURES = ("figure1a", "figure1b", "figure1c")
GAUSSIAN_UNLEARNING_EXPERIMENTS = ("ged_vs_p", "ged_vs_eps", "ged_vs_m")
PHASES = ("calib", "eval")
# The design keys each neural-network step reads, and so the params of its rules: a change to one
# reruns the step; keys outside (chunk_size, runtime_minutes_per_run, ...) rerun nothing.
DEVICE_PATH_KEYS = ("precision", "compile")
NN_DATA_KEYS = ("dataset", "split", "batch_size", "m", "dataset_params")
NN_SIGNS_KEYS = ("m", "calibration_runs", "evaluation_runs", "auditor")
NN_TRAIN_KEYS = ("model", "train", "dataset", "split", "batch_size", "m", "dataset_params", "models_per_group", *DEVICE_PATH_KEYS)
NN_UNLEARN_KEYS = ("model", "dataset", *DEVICE_PATH_KEYS)


def _chunks(runs: list[int], size: int) -> list[list[int]]:
    return [runs[i : i + size] for i in range(0, len(runs), size)]


def preregistered_cell(experiment_cfg: Mapping) -> Cell:
    """The experiment's pre-registered cell (report_r, statistic, score, test); defaults: largest r, mean, logit, theorem4.2."""
    r = experiment_cfg.get("report_r") or max(experiment_cfg["r"])
    return Cell(int(r), experiment_cfg.get("statistic", DEFAULT_CELL["statistic"]), experiment_cfg.get("score", DEFAULT_CELL["score"]),
                experiment_cfg.get("test", DEFAULT_CELL["test"]))


def _method_params(experiment_cfg: Mapping):
    """The experiment's hyperparameters as its method's dataclass (defaults filled in; torch-free)."""
    from ..unlearning import make_params

    return make_params(experiment_cfg["method"], experiment_cfg.get("params", {}))


def certified_claim(experiment_cfg: Mapping) -> tuple[float, float] | None:
    """The (ε, δ) an experiment's algorithm is certified at (its params' ``claim``), or ``None``."""
    return getattr(_method_params(experiment_cfg), "claim", None)


def audit_delta(experiment_cfg: Mapping) -> float:
    """The δ an experiment is audited at: the certified δ of its (ε, δ) claim (model clipping's
    fixed-step variant and the uncertified methods make none), else 0.  A δ = 0 bound is not a
    test of an (ε, δ) claim (Lemma C.1, App. A.3)."""
    claim = certified_claim(experiment_cfg)
    return 0.0 if claim is None else claim[1]


class WorkflowPlan:
    """The DAG's shape for one validated config (see :func:`.config.validate_config`)."""

    def __init__(self, config: dict[str, Any]):
        self.config = config
        self.results = config["results_dir"]
        self.nn = config["nn"]

    # ------------------------------------------------------------------ files
    def table_files(self, name: str) -> list[str]:
        return paths.table_files(self.results, name)

    def figure_files(self, name: str) -> list[str]:
        return paths.figure_files(self.results, name)

    def table_stem(self, name: str) -> str:
        return f"{self.results}/tables/{name}"

    def figure_stem(self, name: str) -> str:
        return f"{self.results}/figures/{name}"

    def log(self, name: str) -> str:
        return f"{self.results}/logs/{name}"

    def benchmark(self, name: str) -> str:
        return f"{self.results}/benchmarks/{name}"

    def design_file(self, design: str, name: str) -> str:
        return paths.design_file(self.results, design, name)

    def base_model(self, design: str, phase: str, run: int | str) -> str:
        return paths.base_model(self.results, design, phase, run)

    def base_model_list(self, design: str, phase: str) -> str:
        return paths.base_model_list(self.results, design, phase)

    def experiment_file(self, experiment: str, name: str) -> str:
        return paths.experiment_file(self.results, experiment, name)

    def run_file(self, experiment: str, phase: str, run: int | str, name: str) -> str:
        return paths.run_file(self.results, experiment, phase, run, name)

    def all_targets(self) -> list[str]:
        """Every table and figure the config enables."""
        targets = self.table_files("attainable_bounds") if self.config["perfect_prediction"]["enabled"] else []
        return targets + self.convex_targets() + self.gaussian_unlearning_targets() + self.nn_targets() + self.tradeoff_targets()

    def tradeoff_targets(self) -> list[str]:
        """The μ-GDP trade-off figures (:mod:`.tradeoff`) of the audits whose sections are enabled."""
        from .tradeoff import targets

        return targets(self)

    # ------------------------------------------------------------------ neural-network audits
    def nn_experiments(self) -> list[str]:
        return list(self.nn["experiments"]) if self.nn["enabled"] else []

    def nn_experiment(self, name: str) -> dict:
        return self.nn["experiments"][name]

    def nn_design(self, name: str, keys: tuple[str, ...] | None = None) -> dict:
        cfg = self.nn["designs"][name]
        return dict(cfg) if keys is None else {k: cfg[k] for k in keys if k in cfg}

    def nn_design_of(self, experiment: str) -> str:
        return self.nn_experiment(experiment)["design"]

    def nn_used_designs(self) -> list[str]:
        return sorted({self.nn_design_of(e) for e in self.nn_experiments()})

    def nn_is_joint(self, design: str) -> bool:
        """A joint (Algorithm 3) design: Γ calibration runs per candidate S̃ ∈ S_m, one base model per S̃."""
        return self.nn_design(design).get("auditor", "batchwise") == "joint"

    def nn_candidates(self, design: str) -> list[int]:
        """The ranks of every S̃ ∈ S_m of a joint design (one base model each)."""
        return list(range(num_sign_vectors(int(self.nn_design(design)["m"])))) if self.nn_is_joint(design) else []

    def nn_phase_runs(self, design: str, phase: str) -> list[int]:
        cfg = self.nn_design(design)
        if phase == "eval":
            return list(range(cfg["evaluation_runs"]))
        rounds = cfg["calibration_runs"]
        return list(range(rounds * len(self.nn_candidates(design)) if self.nn_is_joint(design) else rounds))

    def nn_run_keys(self, design: str) -> list[tuple[str, int]]:
        """Every (phase, run) of a design: its calibration runs, then its evaluation runs."""
        return [(phase, run) for phase in PHASES for run in self.nn_phase_runs(design, phase)]

    def _run_chunks(self, design: str) -> list[tuple[int, list[tuple[str, int]]]]:
        """The design's (phase, run) keys in chunks of ``chunk_size``: a chunk may hold calibration
        and evaluation runs alike (each run has its own seed streams and output files, so which job
        computes it changes no byte), and a small design's step is then one job, not one a phase."""
        return list(enumerate(_chunks(self.nn_run_keys(design), self.nn_design(design)["chunk_size"])))

    def nn_design_chunks(self) -> list[tuple[str, int | str, list[tuple[str, int]]]]:
        """(design, chunk index, (phase, run) keys) of every base-training job; a joint design trains
        one model per candidate (keys ``("candidate", rank)``); a design with a *Retrain* control
        also trains A(D_r) once, in a job of its own (chunk ``"retrain"``, key ``("retrain", 0)``)."""
        out = []
        for d in self.nn_used_designs():
            if self.nn_is_joint(d):
                size = self.nn_design(d)["chunk_size"]
                keys = [("candidate", rank) for rank in self.nn_candidates(d)]
                out += [(d, i, chunk) for i, chunk in enumerate(_chunks(keys, size))]
            else:
                out += [(d, *chunk) for chunk in self._run_chunks(d)]
            if self.nn_retrains(d):
                out.append((d, "retrain", [("retrain", 0)]))
        return out

    def nn_base_of(self, experiment: str) -> str:
        """``trained`` (the experiment unlearns A(D(S))) or ``retrain`` (it starts from A(D_r))."""
        return self.nn_experiment(experiment).get("base", "trained")

    def nn_retrains(self, design: str) -> bool:
        """Whether an experiment on ``design`` starts from the retrained model A(D_r)."""
        return any(self.nn_design_of(e) == design and self.nn_base_of(e) == "retrain" for e in self.nn_experiments())

    def nn_train_outputs(self, design: str, keys: list[tuple[str, int]]) -> list[str]:
        """The base model of each (phase, run) key (a candidate model for phase ``"candidate"``, the
        retrained model A(D_r) for ``"retrain"``)."""
        def path(phase: str, run: int) -> str:
            if phase == "candidate":
                return paths.candidate_model(self.results, design, run)
            if phase == "retrain":
                return paths.retrain_model(self.results, design)
            return self.base_model(design, phase, run)

        return [path(phase, run) for phase, run in keys]

    def nn_unlearn_base(self, experiment: str) -> list[str]:
        """The base-model input of an experiment's unlearning chunks, the same for every chunk (Snakemake
        reruns a job whose set of input files changed, so it must not depend on chunk_size): the
        retrained model A(D_r) for an experiment with ``base: retrain``; else a joint design's every
        candidate model; a batchwise design's two lists of its base models, one per
        phase (rule nn_base_models), from which a chunk reads its own runs' models.  Lists, not
        every model in every chunk: that made the DAG quadratic in the runs of a design."""
        design = self.nn_design_of(experiment)
        if self.nn_base_of(experiment) == "retrain":
            return [paths.retrain_model(self.results, design)]
        if self.nn_is_joint(design):
            return self.nn_train_outputs(design, [("candidate", rank) for rank in self.nn_candidates(design)])
        return [self.base_model_list(design, phase) for phase in PHASES]

    def nn_base_models_of_phase(self, wildcards) -> list[str]:
        """Input function of rule nn_base_models: every base model of the ``design``'s ``phase``."""
        runs = self.nn_phase_runs(wildcards.design, wildcards.phase)
        return self.nn_train_outputs(wildcards.design, [(wildcards.phase, run) for run in runs])

    def nn_batchwise_design_pattern(self) -> str:
        """A wildcard constraint matching exactly the used designs that are not joint."""
        names = [d for d in self.nn_used_designs() if not self.nn_is_joint(d)]
        return "|".join(re.escape(n) for n in names) if names else "(?!)"

    def nn_release_key(self, experiment: str) -> str | None:
        """What the experiment's noiseless unlearning depends on (its design and every hyperparameter
        but the final noise release's), or None for a method without a noise release."""
        from ..unlearning import release_key

        exp = self.nn_experiment(experiment)
        key = release_key(exp["method"], exp.get("params", {}))
        return None if key is None else f"{exp['design']}/{key}"

    def nn_unlearn_groups(self) -> list[list[str]]:
        """The experiments that unlearn together: those on one design whose method and hyperparameters
        differ only in the final noise release (Table 7's σ, Figure 1c's target ε) share each run's
        noiseless part; every other experiment is a group of its own.  In config order."""
        groups: dict[object, list[str]] = {}
        for e in self.nn_experiments():
            key = self.nn_release_key(e)
            groups.setdefault(e if key is None else key, []).append(e)
        return list(groups.values())

    def nn_experiment_chunks(self) -> list[tuple[list[str], int, list[tuple[str, int]]]]:
        """(experiments of a group, chunk index, (phase, run) keys) of every unlearning job."""
        return [(g, *chunk) for g in self.nn_unlearn_groups() for chunk in self._run_chunks(self.nn_design_of(g[0]))]

    def nn_auditor(self, experiment: str) -> str:
        """``batchwise`` (Algorithm 2), ``joint`` (Algorithm 3) or ``pairwise`` (App. A.3)."""
        exp = self.nn_experiment(experiment)
        return exp.get("auditor") or ("joint" if self.nn_is_joint(exp["design"]) else "batchwise")

    def nn_checkpoint_steps(self, experiment: str) -> list[int]:
        """Steps at which the unlearning trajectory is also scored (model clipping, Figure 1a)."""
        return [int(t) for t in self.nn_experiment(experiment).get("params", {}).get("checkpoint_steps", [])]

    def nn_unlearn_outputs(self, experiments: str | list[str], keys: list[tuple[str, int]]) -> dict[str, list[str]]:
        """Per-run output files of an unlearning job: each experiment's (phase, run) keys in turn."""
        group = [experiments] if isinstance(experiments, str) else list(experiments)
        names = ["scores", "metrics"] + (["checkpoints"] if any(self.nn_checkpoint_steps(e) for e in group) else [])
        files = {"scores": "scores.parquet", "metrics": "metrics.parquet", "checkpoints": "checkpoint_scores.parquet"}
        return {name: [self.run_file(e, phase, run, files[name]) for e in group for phase, run in keys] for name in names}

    def nn_run_files(self, experiment: str, phase: str, name: str) -> list[str]:
        runs = self.nn_phase_runs(self.nn_design_of(experiment), phase)
        return [self.run_file(experiment, phase, run, name) for run in runs]

    # ------------------------------------------------------------------ job resources (SLURM)
    #: Host memory (MB) of one neural-network job: the Python + torch process ...
    NN_BASE_MEM_MB = 1500
    #: ... plus its dataset's arrays and loaders (by ``dataset``; an unlisted one gets the largest) ...
    NN_DATASET_MEM_MB = {"digits": 500, "shakespeare": 1000, "cifar100": 4000}
    #: ... plus the host side of a CUDA context when the job requests a GPU.
    NN_CUDA_MEM_MB = 2000
    #: CPU cores per GPU of a GPU job (the nn rules run one thread, ``threads: 1``).
    NN_CPUS_PER_GPU = 1

    def _check_resource_args(self, design: str, attempt: int) -> None:
        if design not in self.nn["designs"]:
            raise ValueError(f"unknown design {design!r}; nn.designs defines {sorted(self.nn['designs'])}")
        if isinstance(attempt, bool) or not isinstance(attempt, int) or attempt < 1:
            raise ValueError(f"attempt must be an integer >= 1 (Snakemake counts from 1), got {attempt!r}")

    def nn_mem_mb(self, design: str, attempt: int = 1, *, cuda: bool | None = None) -> int:
        """SLURM ``mem_mb`` of a job of ``design``: process + dataset (+ CUDA when ``cuda``, by
        default when the config's jobs request a GPU), times ``attempt`` (so that each retry under
        ``--retries`` asks for more)."""
        self._check_resource_args(design, attempt)
        dataset = self.nn_design(design)["dataset"]
        base = self.NN_BASE_MEM_MB + self.NN_DATASET_MEM_MB.get(dataset, max(self.NN_DATASET_MEM_MB.values()))
        cuda = bool(self.nn_gpus()) if cuda is None else cuda
        return (base + (self.NN_CUDA_MEM_MB if cuda else 0)) * attempt

    def nn_runtime_minutes(self, design: str, n_runs: int, attempt: int = 1) -> int:
        """SLURM ``runtime`` of a chunk job: the design's minutes per run times its runs, plus 5,
        times ``attempt``."""
        self._check_resource_args(design, attempt)
        return (int(self.nn_design(design).get("runtime_minutes_per_run", 5) * n_runs) + 5) * attempt

    def nn_gpus(self) -> int:
        return 1 if self.config["device"] == "cuda" else 0

    def nn_job_resources(self, design: str, n_runs: int) -> dict[str, Any]:
        """``resources:`` of a training or unlearning chunk job of ``design`` over ``n_runs`` runs:
        ``mem_mb`` and ``runtime`` as functions of the attempt, ``gpu`` (the SLURM executor's
        ``--gpus``) and, for a GPU job only, ``cpus_per_gpu``."""
        self._check_resource_args(design, 1)
        resources: dict[str, Any] = {
            "mem_mb": lambda wildcards, attempt: self.nn_mem_mb(design, attempt),
            "runtime": lambda wildcards, attempt: self.nn_runtime_minutes(design, n_runs, attempt),
            "gpu": self.nn_gpus(),
        }
        if resources["gpu"]:
            resources["cpus_per_gpu"] = self.NN_CPUS_PER_GPU
        return resources

    def nn_step_resources(self, minutes: int) -> dict[str, Any]:
        """``resources:`` of a CPU job of one design or experiment (wildcard ``design`` or
        ``experiment``): the design's ``mem_mb`` without CUDA and ``minutes`` of runtime, both
        times the attempt."""

        def design_of(wildcards) -> str:
            design = getattr(wildcards, "design", None)
            return design if design is not None else self.nn_design_of(wildcards.experiment)

        return {
            "mem_mb": lambda wildcards, attempt: self.nn_mem_mb(design_of(wildcards), attempt, cuda=False),
            "runtime": lambda wildcards, attempt: minutes * attempt,
        }

    @staticmethod
    def attempt_resources(mem_mb: int, runtime: int) -> dict[str, Any]:
        """``resources:`` ``mem_mb`` and ``runtime`` (minutes) that grow linearly with the attempt."""
        check_positive_int(mem_mb, "mem_mb")
        check_positive_int(runtime, "runtime")
        return {"mem_mb": lambda wildcards, attempt: mem_mb * attempt, "runtime": lambda wildcards, attempt: runtime * attempt}

    def nn_table_experiments(self, table: str) -> list[str]:
        return [e for e in self.nn_experiments() if table in self.nn_experiment(e)["tables"]]

    def nn_experiment_summary(self, name: str) -> dict:
        """What the tables and figures show of an experiment (design columns, label; an experiment
        with guess budgets, i.e. a batchwise one, also its ``r`` and pre-registered ``report_r``)."""
        exp = self.nn_experiment(name)
        design = self.nn_design(exp["design"])
        out = {
            "design": exp["design"],
            "dataset": design["dataset"],
            "split": design["split"],
            "batch_size": design["batch_size"],
            "m": design["m"],
            "method": exp["method"],
            "base": exp.get("base", "trained"),
            "label": exp.get("label") or exp["method"],
            "params": exp["params"],
        }
        if "r" in exp:
            out.update(report_r=preregistered_cell(exp).r, r=exp["r"])
        return out

    def nn_experiments_audited_by(self, *auditors: str) -> list[str]:
        return [e for e in self.nn_experiments() if self.nn_auditor(e) in auditors]

    def nn_experiment_pattern(self, *auditors: str) -> str:
        """A wildcard constraint matching exactly the experiments audited by ``auditors``."""
        names = self.nn_experiments_audited_by(*auditors)
        return "|".join(re.escape(n) for n in names) if names else "(?!)"

    def nn_figure_experiments(self, figure: str) -> list[str]:
        return [e for e in self.nn_experiments() if figure in self.nn_experiment(e).get("figures", [])]

    def nn_target_experiments(self) -> dict[str, list[str]]:
        """Every neural-network table and figure the config enables → the experiments it shows
        (tables first, in the paper's order)."""
        out = {t: self.nn_table_experiments(t) for t in NN_TABLES + CERTIFIED_TABLES}
        out.update({f: self.nn_figure_experiments(f) for f in CERTIFIED_FIGURES})
        out["nn_epsilon_vs_r"] = self.nn_experiments_audited_by("batchwise")
        return {name: experiments for name, experiments in out.items() if experiments}

    def nn_targets(self) -> list[str]:
        targets = self.nn_target_experiments()
        tables = [f for t in NN_TABLES + CERTIFIED_TABLES if t in targets for f in self.table_files(t)]
        return tables + [f for name in targets if name not in NN_TABLES + CERTIFIED_TABLES for f in self.figure_files(name)]

    # input and params functions of the nn rules (they take the rule's wildcards)
    def nn_data_params(self, wildcards) -> dict:
        return self.nn_design(wildcards.design, keys=NN_DATA_KEYS)

    def nn_signs_params(self, wildcards) -> dict:
        return self.nn_design(wildcards.design, keys=NN_SIGNS_KEYS)

    def nn_train_params(self, design: str) -> dict:
        """What :func:`~.nn_runs.train` reads of the design (:data:`NN_TRAIN_KEYS`)."""
        return self.nn_design(design, keys=NN_TRAIN_KEYS)

    def nn_unlearn_design_params(self, design: str) -> dict:
        """What :func:`~.nn_runs.unlearn` reads of the design (:data:`NN_UNLEARN_KEYS`)."""
        return self.nn_design(design, keys=NN_UNLEARN_KEYS)

    def nn_calibration_scores(self, wildcards) -> list[str]:
        return self.nn_run_files(wildcards.experiment, "calib", "scores.parquet")

    def nn_evaluation_scores(self, wildcards) -> list[str]:
        return self.nn_run_files(wildcards.experiment, "eval", "scores.parquet")

    def nn_experiment_signs(self, wildcards) -> str:
        return self.design_file(self.nn_design_of(wildcards.experiment), "signs.parquet")

    def nn_audit_m(self, wildcards) -> int:
        return self.nn_design(self.nn_design_of(wildcards.experiment))["m"]

    def nn_audit_cell(self, wildcards) -> dict:
        """What the audit's result depends on: the r grid and the pre-registered cell and selection."""
        exp = self.nn_experiment(wildcards.experiment)
        return {k: exp[k] for k in ("r", "report_r", "statistic", "score", "test", "selection") if k in exp}

    def nn_table_bounds(self, wildcards) -> list[str]:
        return [self.experiment_file(e, "bounds.parquet") for e in self.nn_table_experiments(wildcards.table)]

    def nn_table_metrics(self, wildcards) -> list[str]:
        return [f for e in self.nn_table_experiments(wildcards.table) for f in self.nn_run_files(e, "eval", "metrics.parquet")]

    def nn_table_summaries(self, wildcards) -> dict:
        return {e: self.nn_experiment_summary(e) for e in self.nn_table_experiments(wildcards.table)}

    # the certified audits (joint and pairwise auditors; Table 6, Figures 1a–c)
    def nn_all_scores(self, wildcards) -> list[str]:
        return self.nn_calibration_scores(wildcards) + self.nn_evaluation_scores(wildcards)

    def nn_all_checkpoint_scores(self, wildcards) -> list[str]:
        if not self.nn_checkpoint_steps(wildcards.experiment):
            return []
        return [f for phase in PHASES for f in self.nn_run_files(wildcards.experiment, phase, "checkpoint_scores.parquet")]

    def nn_certified_cell(self, wildcards) -> dict:
        """What a joint or pairwise audit's result depends on: the pre-registered statistic and score,
        the selection rule and the δ it is audited at."""
        exp = self.nn_experiment(wildcards.experiment)
        cell = {k: exp[k] for k in ("statistic", "score", "test", "selection") if k in exp}
        return {**cell, "delta": audit_delta(exp)}

    def nn_certified_summary(self, name: str) -> dict:
        """What Table 6 and Figures 1a–c show of an experiment."""
        exp = self.nn_experiment(name)
        design = self.nn_design(exp["design"])
        resolved = _method_params(exp)  # a dataclass, or a plain dict for an unannotated import-path method
        params = dataclasses.asdict(resolved) if dataclasses.is_dataclass(resolved) else dict(resolved)
        return {
            "design": exp["design"],
            "dataset": design["dataset"],
            "split": design["split"],
            "m": design["m"],
            "method": exp["method"],
            "base": exp.get("base", "trained"),
            "label": exp.get("label") or exp["method"],
            "params": params,
            "auditor": self.nn_auditor(name),
            "score": exp.get("score", DEFAULT_CELL["score"]),
            "variant": "control" if exp["method"] == "no_unlearning" else ("uncertified" if certified_claim(exp) is None else "certified"),
        }

    def nn_certified_table_inputs(self, wildcards) -> dict[str, list[str]]:
        names = self.nn_table_experiments(wildcards.table)
        return {
            "bounds": [self.experiment_file(e, "bounds.parquet") for e in names],
            "checkpoint_bounds": [self.experiment_file(e, "checkpoint_bounds.parquet") for e in names],
            "metrics": [f for e in names for f in self.nn_run_files(e, "eval", "metrics.parquet")],
        }

    def nn_certified_figure_inputs(self, wildcards) -> dict[str, list[str]]:
        names = self.nn_figure_experiments(wildcards.figure)
        joint = [e for e in names if self.nn_auditor(e) == "joint"]
        return {
            "bounds": [self.experiment_file(e, "bounds.parquet") for e in joint],
            "checkpoint_bounds": [self.experiment_file(e, "checkpoint_bounds.parquet") for e in joint if wildcards.figure == "figure1a"],
            "pairwise": [self.experiment_file(e, "pairwise.parquet") for e in names if self.nn_auditor(e) == "pairwise"],
            "metrics": [f for e in names for f in self.nn_run_files(e, "eval", "metrics.parquet")],
        }

    def nn_certified_table_summaries(self, wildcards) -> dict:
        return {e: self.nn_certified_summary(e) for e in self.nn_table_experiments(wildcards.table)}

    def nn_certified_figure_summaries(self, wildcards) -> dict:
        return {e: self.nn_certified_summary(e) for e in self.nn_figure_experiments(wildcards.figure)}

    # ------------------------------------------------------------------ convex audits
    def convex_mechanisms(self) -> list[str]:
        convex = self.config["convex"]
        return [name for name, m in convex["mechanisms"].items() if m["enabled"]] if convex["enabled"] else []

    def convex_file(self, mechanism: str, epsilon, name: str) -> str:
        return paths.convex_file(self.results, mechanism, epsilon, name)

    def convex_file_details(self, table: str) -> str:
        """The per-row details of a convex table: ``results/convex/<table>_details.csv``."""
        return f"{self.results}/convex/{table}_details.csv"

    def convex_summaries(self, mechanism: str) -> list[str]:
        eps = self.config["convex"]["mechanisms"][mechanism]["epsilons"]
        return [self.convex_file(mechanism, e, "summary.parquet") for e in eps]

    def convex_table_mechanism(self, table: str) -> str:
        for name in self.convex_mechanisms():
            if self.config["convex"]["mechanisms"][name]["table"] == table:
                return name
        raise ValueError(f"no enabled convex mechanism renders {table}")

    def convex_mechanism_params(self, wildcards) -> dict:
        return self.config["convex"]["mechanisms"][wildcards.mechanism]["params"]

    def convex_table_summaries(self, wildcards) -> list[str]:
        return self.convex_summaries(self.convex_table_mechanism(wildcards.table))

    def convex_all_summaries(self) -> list[str]:
        return [f for mech in self.convex_mechanisms() for f in self.convex_summaries(mech)]

    def convex_targets(self) -> list[str]:
        mechs = self.convex_mechanisms()
        tables = [f for m in mechs for f in self.table_files(self.config["convex"]["mechanisms"][m]["table"])]
        return tables + (self.figure_files("convex_epsilon_lb") if mechs else [])

    # ------------------------------------------------------------------ Gaussian certified unlearning
    def gaussian_unlearning_file(self, name: str) -> str:
        return paths.gaussian_unlearning_file(self.results, name)

    def gaussian_unlearning_cell(self, experiment: str, x) -> str:
        return paths.gaussian_unlearning_cell(self.results, experiment, x)

    def gaussian_unlearning_grid(self, experiment: str) -> list:
        """The p of each cell: ``ged_vs_eps`` is one cell (its p, every ε on shared draws)."""
        spec = self.config["gaussian_unlearning"][experiment]
        return [spec["p"]] if experiment == "ged_vs_eps" else spec["p"]

    def gaussian_unlearning_cells(self, wildcards) -> list[str]:
        experiment = wildcards.gu_experiment
        return [self.gaussian_unlearning_cell(experiment, x) for x in self.gaussian_unlearning_grid(experiment)]

    def gaussian_unlearning_spec(self, wildcards) -> dict:
        return self.config["gaussian_unlearning"][wildcards.gu_experiment]

    def gaussian_unlearning_targets(self) -> list[str]:
        if not self.config["gaussian_unlearning"]["enabled"]:
            return []
        targets = self.table_files("gaussian_unlearning_slopes") + self.table_files("gaussian_unlearning_audit")
        # a GED and a UED figure per experiment: gaussian_unlearning_{ged,ued}_vs_{p,eps,m}
        targets += [f for e in GAUSSIAN_UNLEARNING_EXPERIMENTS for err in ("ged", "ued")
                    for f in self.figure_files(f"gaussian_unlearning_{err}_{e.removeprefix('ged_')}")]
        # the clip-sensitivity figures of the m-slopes, when ged_vs_m evaluates several clipped losses
        if len(self.config["gaussian_unlearning"]["ged_vs_m"].get("prob_clip") or []) > 1:
            targets += [f for err in ("ged", "ued") for f in self.figure_files(f"gaussian_unlearning_{err}_m_slope_vs_clip")]
        return targets
