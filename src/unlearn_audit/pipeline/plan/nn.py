"""The neural-network section's plan (Sections 5–7): designs, runs, chunks, the base-training and
unlearning jobs, every nn rule's inputs and params, the tables and figures it fills.  Torch-free."""

from __future__ import annotations

import re

from ... import catalogue
from .. import paths
from ...stats.signs import num_sign_vectors
from .base import DEVICE_PATH_KEYS, PHASES, PlanBase, chunks as _chunks, preregistered_cell
from .certified import CERTIFIED_FIGURES, CERTIFIED_TABLES

__all__ = ["NN_TABLES", "NN_DATA_KEYS", "NN_SIGNS_KEYS", "NN_TRAIN_KEYS", "NN_UNLEARN_KEYS", "NNPlan"]

#: The neural-network tables (paper Tables 1a, 1b, 3, 4, 5, 7; :data:`unlearn_audit.catalogue.NN_TABLES`).
NN_TABLES = tuple(catalogue.NN_TABLES)
# The design keys each neural-network step reads, and so the params of its rules: a change to one
# reruns the step; keys outside (chunk_size, runtime_minutes_per_run, ...) rerun nothing.
NN_DATA_KEYS = ("dataset", "split", "batch_size", "m", "dataset_params")
NN_SIGNS_KEYS = ("m", "calibration_runs", "evaluation_runs", "auditor")
NN_TRAIN_KEYS = ("model", "train", "dataset", "split", "batch_size", "m", "dataset_params", "models_per_group", *DEVICE_PATH_KEYS)
NN_UNLEARN_KEYS = ("model", "dataset", "unlearn_models_per_group", "unlearn_group_mode", *DEVICE_PATH_KEYS)


class NNPlan(PlanBase):
    """Designs, runs and the nn rules' inputs (the resources of their jobs: :class:`.resources.ResourcesPlan`;
    Table 6 and Figures 1a–c: :class:`.certified.CertifiedPlan`)."""

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

    def _run_chunks(self, design: str, size: int) -> list[tuple[int, list[tuple[str, int]]]]:
        """The design's (phase, run) keys in chunks of ``size`` runs: a chunk may hold calibration
        and evaluation runs alike (each run has its own seed streams and output files, so which job
        computes it changes no byte), and a small design's step is then one job, not one a phase."""
        return list(enumerate(_chunks(self.nn_run_keys(design), size)))

    def nn_design_chunks(self) -> list[tuple[str, int | str, list[tuple[str, int]]]]:
        """(design, chunk index, (phase, run) keys) of every base-training job; a joint design trains
        one model per candidate (keys ``("candidate", rank)``); a design with a *Retrain* control
        also trains A(D_r) once, in a job of its own (chunk ``"retrain"``, key ``("retrain", 0)``)."""
        out = []
        for d in self.nn_used_designs():
            size = self.nn_runs_per_job(d)  # chunk_size, or fewer under the walltime (.resources)
            if self.nn_is_joint(d):
                keys = [("candidate", rank) for rank in self.nn_candidates(d)]
                out += [(d, i, chunk) for i, chunk in enumerate(_chunks(keys, size))]
            else:
                out += [(d, *chunk) for chunk in self._run_chunks(d, size)]
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
        from ...unlearning import release_key

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
        """(experiments of a group, chunk index, (phase, run) keys) of every unlearning job: chunks of
        the design's ``chunk_size`` runs, or fewer where that many would outlast the walltime."""
        out = []
        for g in self.nn_unlearn_groups():
            design = self.nn_design_of(g[0])
            out += [(g, *chunk) for chunk in self._run_chunks(design, self.nn_runs_per_job(design, g))]
        return out

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
