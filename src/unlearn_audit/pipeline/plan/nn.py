"""The neural-network section's plan (Sections 5–7): designs, runs, chunks, the base-training and
unlearning jobs, every nn rule's inputs and params, the tables and figures it fills.  Torch-free."""

from __future__ import annotations

import functools
import re

from ... import catalogue
from ...catalogue import RETRAIN, base_of, is_control
from .paths import chunk_keys, chunk_name
from ...stats.signs import num_sign_vectors
from .experiment import DEVICE_PATH_KEYS, PHASES, chunks as _chunks, design_seed as _design_seed, preregistered_cell
from .files import PlanFiles
from .pricing import ChunkPricing

__all__ = ["NN_TABLES", "NN_DATA_KEYS", "NN_SIGNS_KEYS", "NN_TRAIN_KEYS", "NN_UNLEARN_KEYS", "NNPlan"]

#: The neural-network tables (paper Tables 1a, 1b, 3, 4, 5, 7; :data:`unlearn_audit.catalogue.NN_TABLES`).
NN_TABLES = tuple(catalogue.NN_TABLES)
# The design keys each neural-network step reads, and so the params of its rules: a change to one
# reruns the step; keys outside (chunk_size, runtime_minutes_per_run, ...) rerun nothing.
NN_DATA_KEYS = ("dataset", "split", "batch_size", "m", "dataset_params")
NN_SIGNS_KEYS = ("m", "calibration_runs", "evaluation_runs", "auditor")
NN_TRAIN_KEYS = ("model", "train", "dataset", "split", "batch_size", "m", "dataset_params", "models_per_group", *DEVICE_PATH_KEYS)
NN_UNLEARN_KEYS = ("model", "dataset", "unlearn_models_per_group", "unlearn_group_mode", *DEVICE_PATH_KEYS)


class NNPlan:
    """Designs, runs and the nn rules' inputs for the ``nn`` section of a config, its files under
    ``files`` and its chunks cut at what ``pricing`` says a job holds (the resources of the jobs:
    :class:`.resources.ResourcesPlan`; Table 6 and Figures 1a–c: :class:`.certified.CertifiedPlan`)."""

    def __init__(self, nn_config: dict, files: PlanFiles, pricing: ChunkPricing, root_seed: int = 0):
        self._cfg = nn_config
        self.files = files
        self.pricing = pricing
        self.root_seed = int(root_seed)

    def designs(self) -> list[str]:
        """Every design the config defines (:meth:`used_designs`: those an experiment uses)."""
        return list(self._cfg["designs"])

    def experiments(self) -> list[str]:
        return list(self._cfg["experiments"]) if self._cfg["enabled"] else []

    def experiment(self, name: str) -> dict:
        return self._cfg["experiments"][name]

    def design(self, name: str, keys: tuple[str, ...] | None = None) -> dict:
        cfg = self._cfg["designs"][name]
        return dict(cfg) if keys is None else {k: cfg[k] for k in keys if k in cfg}

    def design_of(self, experiment: str) -> str:
        return self.experiment(experiment)["design"]

    def used_designs(self) -> list[str]:
        return sorted({self.design_of(e) for e in self.experiments()})

    def design_seed(self, design: str) -> int:
        """The root seed of a design's streams (:func:`.experiment.design_seed`)."""
        return _design_seed(self.design(design), self.root_seed)

    def is_joint(self, design: str) -> bool:
        """A joint (Algorithm 3) design: Γ calibration runs per candidate S̃ ∈ S_m, one base model per S̃."""
        return self.design(design).get("auditor", "batchwise") == "joint"

    def candidates(self, design: str) -> list[int]:
        """The ranks of every S̃ ∈ S_m of a joint design (one base model each)."""
        return list(range(num_sign_vectors(int(self.design(design)["m"])))) if self.is_joint(design) else []

    def phase_runs(self, design: str, phase: str) -> list[int]:
        cfg = self.design(design)
        if phase == "eval":
            return list(range(cfg["evaluation_runs"]))
        rounds = cfg["calibration_runs"]
        return list(range(rounds * len(self.candidates(design)) if self.is_joint(design) else rounds))

    def run_keys(self, design: str) -> list[tuple[str, int]]:
        """Every (phase, run) of a design: its calibration runs, then its evaluation runs."""
        return [(phase, run) for phase in PHASES for run in self.phase_runs(design, phase)]

    def design_chunks(self) -> list[tuple[str, str, list[tuple[str, int]]]]:
        """(design, chunk name, (phase, run) keys) of every base-training job (rule nn_train): the
        design's calibration-then-evaluation runs in chunks of ``chunk_size`` (fewer where that many
        would outlast the walltime, :mod:`.resources`), so a chunk may hold runs of both phases and a
        small design's training is one job; a joint design trains one model per candidate (keys
        ``("candidate", rank)``); a design with a *Retrain* control also trains A(D_r) once (rule
        nn_train_retrain; chunk ``"retrain"``, key ``("retrain", 0)``)."""
        out = []
        for d in self.used_designs():
            keys = [("candidate", rank) for rank in self.candidates(d)] if self.is_joint(d) else self.run_keys(d)
            out += [(d, chunk_name(chunk), chunk) for chunk in _chunks(keys, self.pricing.runs_per_job(d))]
            if self.retrains(d):
                out.append((d, RETRAIN, [(RETRAIN, 0)]))
        return out

    @functools.cached_property
    def _train_chunk_of(self) -> dict[str, dict[tuple[str, int], str]]:
        """design → (phase, run) → the name of the training chunk that holds that base model."""
        out: dict[str, dict[tuple[str, int], str]] = {}
        for design, chunk, keys in self.design_chunks():
            if chunk != RETRAIN:
                out.setdefault(design, {}).update({key: chunk for key in keys})
        return out

    def base_model(self, design: str, phase: str, run: int) -> str:
        """The base model of a design's (phase, run) (phase ``candidate``: the model of candidate rank
        ``run``), in the folder of the training chunk that holds it."""
        try:
            chunk = self._train_chunk_of[design][(phase, run)]
        except KeyError:
            raise ValueError(f"design {design!r} trains no base model for ({phase!r}, {run})") from None
        return self.files.base_model(design, chunk, phase, run)

    def base_of(self, experiment: str) -> str:
        """``trained`` (the experiment unlearns A(D(S))) or ``retrain`` (it starts from A(D_r))."""
        return base_of(self.experiment(experiment))

    def retrains(self, design: str) -> bool:
        """Whether an experiment on ``design`` starts from the retrained model A(D_r)."""
        return any(self.design_of(e) == design and self.base_of(e) == RETRAIN for e in self.experiments())

    def _planned_chunk(self, chunks: dict[str, list[str]], owner: str, chunk: str, what: str) -> list[tuple[str, int]]:
        if chunk not in chunks.get(owner, ()):
            raise ValueError(f"{what} {owner!r} has no chunk {chunk!r} in this config; its chunks: {chunks.get(owner, [])}")
        return chunk_keys(chunk)

    @functools.cached_property
    def _train_chunks(self) -> dict[str, list[str]]:
        """design → the names of its training chunks, in order."""
        return {design: list(dict.fromkeys(chunk_of.values())) for design, chunk_of in self._train_chunk_of.items()}

    def train_models(self, wildcards) -> list[str]:
        """Params of rule nn_train: the base model file of each run of chunk ``wildcards.chunk`` of
        design ``wildcards.design``, in its folder (the job reads its runs from these paths)."""
        keys = self._planned_chunk(self._train_chunks, wildcards.design, wildcards.chunk, "design")
        return [self.files.base_model(wildcards.design, wildcards.chunk, phase, run) for phase, run in keys]

    def retrain_designs_pattern(self) -> str:
        """A wildcard constraint matching exactly the designs that train A(D_r) (rule nn_train_retrain)."""
        names = [d for d in self.used_designs() if self.retrains(d)]
        return "|".join(re.escape(n) for n in names) if names else "(?!)"

    def release_key(self, experiment: str) -> str | None:
        """What the experiment's noiseless unlearning depends on (its design and every hyperparameter
        but the final noise release's), or None for a method without a noise release."""
        from ...unlearning import release_key

        exp = self.experiment(experiment)
        key = release_key(exp["method"], exp.get("params", {}))
        return None if key is None else f"{exp['design']}/{key}"

    def unlearn_groups(self) -> list[list[str]]:
        """The experiments that unlearn together: those on one design whose method and hyperparameters
        differ only in the final noise release (Table 7's σ, Figure 1c's target ε) share each run's
        noiseless part; every other experiment is a group of its own.  In config order; a group is
        named by its first experiment (the folder of its runs, :func:`.paths.unlearn_chunk_dir`)."""
        groups: dict[object, list[str]] = {}
        for e in self.experiments():
            key = self.release_key(e)
            groups.setdefault(e if key is None else key, []).append(e)
        return list(groups.values())

    @functools.cached_property
    def _group_of(self) -> dict[str, list[str]]:
        """experiment → its unlearning group (the group's first experiment names it)."""
        return {e: g for g in self.unlearn_groups() for e in g}

    def group(self, name: str) -> list[str]:
        """The experiments of the group named ``name`` (its first experiment)."""
        group = self._group_of.get(name)
        if group is None or group[0] != name:
            raise ValueError(f"{name!r} names no unlearning group; groups: {[g[0] for g in self.unlearn_groups()]}")
        return group

    def group_pattern(self) -> str:
        """A wildcard constraint matching exactly the unlearning groups' names (rule nn_unlearn)."""
        names = [g[0] for g in self.unlearn_groups()]
        return "|".join(re.escape(n) for n in names) if names else "(?!)"

    def experiment_chunks(self) -> list[tuple[list[str], str, list[tuple[str, int]]]]:
        """(experiments of a group, chunk name, (phase, run) keys) of every unlearning job (rule
        nn_unlearn): chunks of the design's ``chunk_size`` runs, or fewer where that many would outlast
        the walltime."""
        out = []
        for g in self.unlearn_groups():
            design = self.design_of(g[0])
            out += [(g, chunk_name(chunk), chunk) for chunk in _chunks(self.run_keys(design), self.pricing.runs_per_job(design, g))]
        return out

    @functools.cached_property
    def _unlearn_chunks(self) -> dict[str, list[str]]:
        out: dict[str, list[str]] = {}
        for g, chunk, _ in self.experiment_chunks():
            out.setdefault(g[0], []).append(chunk)
        return out

    def _unlearn_chunk_keys(self, wildcards) -> list[tuple[str, int]]:
        return self._planned_chunk(self._unlearn_chunks, wildcards.group, wildcards.chunk, "unlearning group")

    def unlearn_base(self, wildcards) -> list[str]:
        """Input of rule nn_unlearn: the base models its runs start from.  The retrained model A(D_r)
        for a group with ``base: retrain``; a joint design's candidate-model folders; a batchwise
        design's training-chunk folders that hold the chunk's runs."""
        group = self.group(wildcards.group)
        design = self.design_of(group[0])
        if self.base_of(group[0]) == RETRAIN:
            return [self.files.retrain_model(design)]
        if self.is_joint(design):
            return [self.files.base_chunk_dir(design, c) for c in self._train_chunks[design]]
        keys = self._unlearn_chunk_keys(wildcards)
        return list(dict.fromkeys(self.files.base_chunk_dir(design, self._train_chunk_of[design][key]) for key in keys))

    def unlearn_base_models(self, wildcards) -> list[str]:
        """Params of rule nn_unlearn: A(D_r) for a ``base: retrain`` group; every candidate model of a
        joint design (a run starts from the candidate of its sign vector); else each run's base model."""
        group = self.group(wildcards.group)
        design = self.design_of(group[0])
        if self.base_of(group[0]) == RETRAIN:
            return [self.files.retrain_model(design)]
        if self.is_joint(design):
            return [self.base_model(design, "candidate", rank) for rank in self.candidates(design)]
        return [self.base_model(design, phase, run) for phase, run in self._unlearn_chunk_keys(wildcards)]

    def unlearn_inputs(self, wildcards) -> dict[str, object]:
        """Inputs of rule nn_unlearn (one function, so that a large DAG evaluates one per job): the
        group's design's data and sign vectors and the base models its runs start from
        (:meth:`unlearn_base`)."""
        design = self.design_of(self.group(wildcards.group)[0])
        return {"data": self.files.design_file(design, "data.npz"), "signs": self.files.design_file(design, "signs.parquet"),
                "base": self.unlearn_base(wildcards)}

    def unlearn_job(self, wildcards) -> dict[str, object]:
        """Params of rule nn_unlearn, what :func:`~.nn_runs.unlearn` takes besides its inputs: the group's
        experiments, its design's :data:`NN_UNLEARN_KEYS`, the method and each experiment's
        hyperparameters, the shared release key, each run's base model and the per-run output files
        (each experiment's runs of the chunk in turn, in the chunk's folder; checkpoint scores only
        for a method that scores checkpoints, model clipping for Figure 1a)."""
        group = self.group(wildcards.group)
        keys = self._unlearn_chunk_keys(wildcards)

        def files(name: str) -> list[str]:
            return [self.files.run_file(group[0], wildcards.chunk, e, phase, run, name) for e in group for phase, run in keys]

        return {
            "experiments": group,
            "design_cfg": self.design(self.design_of(group[0]), keys=NN_UNLEARN_KEYS),
            "method": self.experiment(group[0])["method"],
            "method_params": [self.experiment(e)["params"] for e in group],
            "release_key": self.release_key(group[0]),
            "base_models": self.unlearn_base_models(wildcards),
            "scores": files("scores.parquet"),
            "metrics": files("metrics.parquet"),
            "checkpoints": files("checkpoint_scores.parquet") if any(self.checkpoint_steps(e) for e in group) else None,
        }

    def run_chunks(self, experiment: str, phase: str) -> list[tuple[str, list[int]]]:
        """(chunk name, runs) of each unlearning chunk of the experiment's group that holds runs of ``phase``."""
        group = self._group_of[experiment]
        out = []
        for chunk in self._unlearn_chunks[group[0]]:
            runs = [run for ph, run in chunk_keys(chunk) if ph == phase]
            if runs:
                out.append((chunk, runs))
        return out

    def run_dirs(self, experiment: str, phase: str) -> list[str]:
        """The chunk folders that hold the experiment's runs of ``phase`` (the inputs of the rules that
        read its per-run files, :meth:`run_files`)."""
        group = self._group_of[experiment][0]
        return [self.files.unlearn_chunk_dir(group, chunk) for chunk, _ in self.run_chunks(experiment, phase)]

    def run_file(self, experiment: str, phase: str, run: int, name: str) -> str:
        """The experiment's per-run ``name`` file of (``phase``, ``run``), in the chunk folder that holds it."""
        group = self._group_of[experiment][0]
        for chunk, runs in self.run_chunks(experiment, phase):
            if run in runs:
                return self.files.run_file(group, chunk, experiment, phase, run, name)
        raise ValueError(f"experiment {experiment!r} has no {phase} run {run}")

    def run_files(self, experiment: str, phase: str, name: str) -> list[str]:
        """The experiment's per-run ``name`` files of ``phase``, in run order."""
        group = self._group_of[experiment][0]
        return [self.files.run_file(group, chunk, experiment, phase, run, name) for chunk, runs in self.run_chunks(experiment, phase) for run in runs]

    def auditor(self, experiment: str) -> str:
        """``batchwise`` (Algorithm 2), ``joint`` (Algorithm 3) or ``pairwise`` (App. A.3)."""
        exp = self.experiment(experiment)
        return exp.get("auditor") or ("joint" if self.is_joint(exp["design"]) else "batchwise")

    def checkpoint_steps(self, experiment: str) -> list[int]:
        """Steps at which the unlearning trajectory is also scored (model clipping, Figure 1a)."""
        return [int(t) for t in self.experiment(experiment).get("params", {}).get("checkpoint_steps", [])]

    def table_experiments(self, table: str) -> list[str]:
        return [e for e in self.experiments() if table in self.experiment(e)["tables"]]

    def experiment_summary(self, name: str) -> dict:
        """What the tables and figures show of an experiment (design columns, label; an experiment
        with guess budgets, i.e. a batchwise one, also its ``r`` and pre-registered ``report_r``)."""
        exp = self.experiment(name)
        design = self.design(exp["design"])
        out = {
            "design": exp["design"],
            "dataset": design["dataset"],
            "split": design["split"],
            "batch_size": design["batch_size"],
            "m": design["m"],
            "method": exp["method"],
            "base": base_of(exp),
            "label": exp.get("label") or exp["method"],
            "params": exp["params"],
            "auditor": self.auditor(name),
        }
        if "r" in exp:
            out.update(report_r="calibrated" if exp.get("report_r") == "calibrated" else preregistered_cell(exp).r, r=exp["r"])
        return out

    def experiments_audited_by(self, *auditors: str) -> list[str]:
        return [e for e in self.experiments() if self.auditor(e) in auditors]

    def experiment_pattern(self, *auditors: str) -> str:
        """A wildcard constraint matching exactly the experiments audited by ``auditors``."""
        names = self.experiments_audited_by(*auditors)
        return "|".join(re.escape(n) for n in names) if names else "(?!)"

    def checkpointed_pattern(self, auditor: str) -> str:
        """A wildcard constraint matching exactly the experiments audited by ``auditor`` that score checkpoint steps."""
        names = [e for e in self.experiments_audited_by(auditor) if self.checkpoint_steps(e)]
        return "|".join(re.escape(n) for n in names) if names else "(?!)"

    def figure_experiments(self, figure: str) -> list[str]:
        return [e for e in self.experiments() if figure in self.experiment(e).get("figures", [])]

    def target_experiments(self) -> dict[str, list[str]]:
        """Every neural-network table and figure the config enables → the experiments it shows
        (tables first, in the paper's order)."""
        out = {t: self.table_experiments(t) for t in NN_TABLES + tuple(catalogue.CERTIFIED_TABLES)}
        out.update({f: self.figure_experiments(f) for f in catalogue.CERTIFIED_FIGURES})
        out["nn_epsilon_vs_r"] = self.experiments_audited_by("batchwise")
        for figure, (_, (first, *_others)) in catalogue.SUMMARY_FIGURES.items():
            out[figure] = out.get(first, [])
        return {name: experiments for name, experiments in out.items() if experiments}

    def summary_figure_tables(self, wildcards) -> dict[str, str]:
        """Inputs of rule nn_summary_figure: the CSVs of the tables and figures a summary figure reads
        (:data:`unlearn_audit.catalogue.SUMMARY_FIGURES`), those the config fills, by name."""
        targets = self.target_experiments()
        _, sources = catalogue.SUMMARY_FIGURES[wildcards.figure]
        stem = lambda name: self.files.figure_stem(name) if name in catalogue.CERTIFIED_FIGURES else self.files.table_stem(name)  # noqa: E731
        return {name: stem(name) + ".csv" for name in sources if name in targets}

    def targets(self) -> list[str]:
        targets = self.target_experiments()
        tables = [f for t in NN_TABLES + tuple(catalogue.CERTIFIED_TABLES) if t in targets for f in self.files.table_files(t)]
        return tables + [f for name in targets if name not in NN_TABLES + tuple(catalogue.CERTIFIED_TABLES) for f in self.files.figure_files(name)]

    # input and params functions of the nn rules (they take the rule's wildcards)
    def seed_of_design(self, wildcards) -> int:
        """The root seed of rules nn_prepare_data, nn_sample_signs and nn_train (:meth:`design_seed`)."""
        return self.design_seed(wildcards.design)

    def seed_of_group(self, wildcards) -> int:
        """The root seed of rule nn_unlearn: its group's design's (:meth:`design_seed`)."""
        return self.design_seed(self.design_of(self.group(wildcards.group)[0]))

    def data_params(self, wildcards) -> dict:
        return self.design(wildcards.design, keys=NN_DATA_KEYS)

    def signs_params(self, wildcards) -> dict:
        return self.design(wildcards.design, keys=NN_SIGNS_KEYS)

    def train_params(self, wildcards) -> dict:
        """What :func:`~.nn_runs.train` reads of design ``wildcards.design`` (:data:`NN_TRAIN_KEYS`)."""
        return self.design(wildcards.design, keys=NN_TRAIN_KEYS)

    def train_job(self, wildcards) -> dict[str, object]:
        """Params of rule nn_train: the design's :data:`NN_TRAIN_KEYS` and the model file of each run of
        the chunk (:meth:`train_models`; rule nn_train_retrain: the one model A(D_r))."""
        chunk = getattr(wildcards, "chunk", None)
        models = [self.files.retrain_model(wildcards.design)] if chunk is None else self.train_models(wildcards)
        return {"cfg": self.train_params(wildcards), "models": models}

    def calibration_dirs(self, wildcards) -> list[str]:
        return self.run_dirs(wildcards.experiment, "calib")

    def evaluation_dirs(self, wildcards) -> list[str]:
        return self.run_dirs(wildcards.experiment, "eval")

    def calibration_scores(self, wildcards) -> list[str]:
        return self.run_files(wildcards.experiment, "calib", "scores.parquet")

    def evaluation_scores(self, wildcards) -> list[str]:
        return self.run_files(wildcards.experiment, "eval", "scores.parquet")

    def evaluation_dirs_of(self, experiments: list[str]) -> list[str]:
        """The chunk folders holding the evaluation runs of ``experiments`` (each once)."""
        return list(dict.fromkeys(d for e in experiments for d in self.run_dirs(e, "eval")))

    def evaluation_metrics_of(self, experiments: list[str]) -> list[str]:
        """The per-run metrics of the evaluation runs of ``experiments``."""
        return [f for e in experiments for f in self.run_files(e, "eval", "metrics.parquet")]

    def _calibrated(self, wildcards) -> bool:
        return self.experiment(wildcards.experiment).get("report_r") == "calibrated"

    def audit_calibration_dirs(self, wildcards) -> list[str]:
        """The calibration chunk folders an audit reads besides the fit: under ``report_r: calibrated`` only."""
        return self.calibration_dirs(wildcards) if self._calibrated(wildcards) else []

    def audit_calibration_scores(self, wildcards) -> list[str]:
        """The calibration runs' scores an audit reads to choose r: under ``report_r: calibrated`` only."""
        return self.calibration_scores(wildcards) if self._calibrated(wildcards) else []

    def experiment_signs(self, wildcards) -> str:
        return self.files.design_file(self.design_of(wildcards.experiment), "signs.parquet")

    def audit_m(self, wildcards) -> int:
        return self.design(self.design_of(wildcards.experiment))["m"]

    def audit_cell(self, wildcards) -> dict:
        """What the audit's result depends on: the r grid and the pre-registered cell and selection."""
        exp = self.experiment(wildcards.experiment)
        return {k: exp[k] for k in ("r", "report_r", "statistic", "score", "test", "selection") if k in exp}

    def table_bounds(self, wildcards) -> list[str]:
        return [self.files.experiment_file(e, "bounds.parquet") for e in self.table_experiments(wildcards.table)]

    def table_overlaps(self, wildcards) -> list[str]:
        """The evaluation runs' overlaps of a table's experiments (its scale-free columns: :func:`..nn.with_guesses`)."""
        return [self.files.experiment_file(e, "overlaps.parquet") for e in self.table_experiments(wildcards.table)]

    def retrain_control(self, name: str) -> str | None:
        """The batchwise Retrain control of an experiment's design (method no_unlearning on the
        retrained base), against whose AUC its privleak is measured; None where the design has none."""
        design = self.experiment(name)["design"]
        return next((e for e in self.experiments_audited_by("batchwise") if self.experiment(e)["design"] == design
                     and is_control(self.experiment(e)) and self.base_of(e) == RETRAIN), None)

    def table_retrain_controls(self, wildcards) -> dict:
        """Each batchwise experiment of a table → its design's Retrain control (or None)."""
        return {e: self.retrain_control(e) for e in self.table_experiments(wildcards.table) if self.auditor(e) == "batchwise"}

    def table_membership(self, wildcards) -> list[str]:
        """The membership metrics of a table's batchwise experiments and of their designs' Retrain controls."""
        names = [n for pair in self.table_retrain_controls(wildcards).items() for n in pair if n is not None]
        return [self.files.experiment_file(e, "membership.parquet") for e in dict.fromkeys(names)]

    def table_checkpoint_bounds(self, wildcards) -> list[str]:
        """The checkpoint-step bounds of a table's experiments that score checkpoints (App. F.4's first step)."""
        return [self.files.experiment_file(e, "checkpoint_bounds.parquet") for e in self.table_experiments(wildcards.table) if self.checkpoint_steps(e)]

    def table_metric_dirs(self, wildcards) -> list[str]:
        return self.evaluation_dirs_of(self.table_experiments(wildcards.table))

    def table_metrics(self, wildcards) -> list[str]:
        return self.evaluation_metrics_of(self.table_experiments(wildcards.table))

    def table_summaries(self, wildcards) -> dict:
        return {e: self.experiment_summary(e) for e in self.table_experiments(wildcards.table)}
