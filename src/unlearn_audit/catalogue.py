"""The paper's tables and figures that the workflow writes, the controls every neural-network audit
stands beside (each a :class:`ControlSpec`), the convex mechanisms it audits, the Gaussian
certified-unlearning experiments it runs (each a :class:`GUExperimentSpec`) and the membership
scores it computes: the one list of each, with the caption or title it is shown with.  Standard library only: the plan
(each Snakemake start), the report, the rules' wildcard constraints and the config schema's enums
(checked against these by the tests) all derive from it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

__all__ = ["NN_TABLES", "CERTIFIED_TABLES", "CERTIFIED_FIGURES", "SUMMARY_FIGURES", "CONVEX_MECHANISMS", "TRAINED", "RETRAIN",
           "CONTROL_METHOD", "ControlSpec", "CONTROLS", "base_of", "is_control", "control_of", "controls_on", "GUExperimentSpec",
           "GAUSSIAN_UNLEARNING_EXPERIMENTS", "SCORE_NAMES", "score_column",
           "PAPER_AUDIT_SIZES", "NAME_PATTERN", "pattern"]

#: The neural-network tables (paper Tables 1a, 1b, 3, 4, 5, 7; App. F.4) → caption; an experiment lists the ones it fills.
#: Every table leads with each row's claim (its pre-registered test's bound) and the claim's own ceiling, Theorem 4.2's beside it.
NN_TABLES = {
    "table1a": "Table 1a: epsilon lower bounds on Shakespeare (uncertified methods), the pre-registered claim first, Theorem 4.2's beside it",
    "table1b": "Table 1b: epsilon lower bounds on images, uniform and adversarial splits, the pre-registered claim first, Theorem 4.2's beside it",
    "table_baselines": "The field's baselines (NegGrad+, SCRUB, random labels, SalUn, Bad Teacher, SSD) on Table 1b's designs and Table 1a's Shakespeare, each at "
                       "the budget its utility chose on calibration runs: the pre-registered claim first, Theorem 4.2's beside it",
    "table3": "Table 3: logit score vs cross-entropy loss score over r (the claim's bounds, then Theorem 4.2's)",
    "table4": "Table 4: mean vs median aggregation of overlaps over r (the claim's bounds, then Theorem 4.2's)",
    "table5": "Table 5: batch size B and guess budget r, forget ascent (the claim's bound, then Theorem 4.2's)",
    "table7": "Table 7: Hessian-based unlearning, final noise sigma (the claim first, Theorem 4.2's beside it)",
    "appendix_f4": "App. F.4: uncertified model clipping just after its first noisy step, batchwise auditor at large batches "
    "and the joint auditor beside it (why the certified audits use the joint auditor)",
    "audit_size": "The audit's size: one method and its controls on the same digits design at growing m (r/m fixed), the claim "
    "growing with m at a fixed share of right guesses (why this reproduction's bounds are smaller than the paper's)",
    "llm_qa": "Language models: epsilon lower bounds on question-answer pairs about entities (a candidate batch is one entity's "
    "pairs, scores the answers' log-likelihood given the questions; accuracies are answer-token accuracies)",
}

#: The paper's audit size (m candidate batches, guess budget r) of each dataset's neural-network audits
#: (Section 7: CIFAR-100, whose small stand-in is digits, and Shakespeare): the size the tables'
#: ``epsilon_lb_theorem42_at_paper_size`` extrapolates an audit's fraction of right guesses to
#: (:func:`unlearn_audit.stats.guesses.theorem42_at_size`); another dataset has none (NaN).
PAPER_AUDIT_SIZES = {"cifar100": (4500, 3000), "digits": (4500, 3000), "shakespeare": (400, 100)}

#: The certified audits' tables (paper Table 6; Sec. 7.3's pairwise baseline on the uncertified methods) → caption.
CERTIFIED_TABLES = {
    "table6": "Table 6: model clipping on the certified (epsilon, C2, sigma) grid: noisy steps from the accountant, "
    "the claim (the pre-registered test's epsilon_LB) at the first noisy step and after fine-tuning with its own ceiling, "
    "Theorem 4.2's beside it (joint auditor, r = m, audited at the certified delta)",
    "pairwise_uncertified": "Sec. 7.3: the pairwise auditor (App. A.3) on the uncertified methods: the claim with its own ceiling, error counts, "
    "Eq. 3's bound and the largest bound its L runs allow (every guess right); where that is 0, as at the paper's L = 10, Eq. 3 cannot "
    "reject: the paper's point",
}

#: The certified audits' figures (paper Figures 1a–c) → caption.
CERTIFIED_FIGURES = {
    "figure1a": "Figure 1a: the claim epsilon_LB(t) along model clipping's trajectory, uncertified vs certified runs",
    "figure1b": "Figure 1b: joint vs pairwise auditor, their claims (rewind-to-delete, uniform split)",
    "figure1c": "Figure 1c: rewind-to-delete, the claim's epsilon_LB against the target epsilon",
}

#: The figures that show the findings at a glance, each drawn from tables' CSVs → (caption, the tables it reads:
#: the first is required, the others are drawn where the run has them).
SUMMARY_FIGURES = {
    "finding": ("Methods that look unlearned, audited: per method and split, forget accuracy minus Retrain's against the claim's "
                "share of its own ceiling (Table 1b's methods and controls, the field's baselines, the certified methods of Table 6 "
                "and Figure 1c)",
                ("table1b", "table_baselines", "table6", "figure1c")),
    "nn_epsilon_vs_m": ("The bound grows with m at a fixed share of right guesses: the audit-size table's claims and guess fractions",
                        ("audit_size",)),
}

#: The convex mechanisms of Section 8 (Table 2) → the title of their panels.
CONVEX_MECHANISMS = {
    "cubic_newton": "perturbed Newton, cubic loss",
    "output_perturbation": "output perturbation, linear regression",
    "logistic_newton": "perturbed Newton, logistic loss",
}


#: The base models an experiment starts from (its ``base``): the trained A(D(S)) of each run, or the
#: one retrained A(D_r) of its design, which also names that model's training chunk and run phase.
TRAINED, RETRAIN = "trained", "retrain"

#: The method the controls run: the trained or retrained model as is (the one built-in method whose
#: spec is a control, :data:`unlearn_audit.unlearning.params.METHOD_SPECS`; a test checks they agree).
CONTROL_METHOD = "no_unlearning"


@dataclass(frozen=True)
class ControlSpec:
    """A control every neural-network audit stands beside (paper §7;
    docs/workflow.md#neural-network-audits-designs-and-experiments): its name (the suffix of the
    experiment that :func:`unlearn_audit.pipeline.controls.add_controls` adds), its label in the
    tables' method column and the base model it runs :data:`CONTROL_METHOD` on."""

    name: str
    label: str
    base: str


#: The controls, in the order the tables show them.
CONTROLS: dict[str, ControlSpec] = {s.name: s for s in (
    ControlSpec(CONTROL_METHOD, "No unlearning", TRAINED),
    ControlSpec(RETRAIN, "Retrain", RETRAIN),
)}


def base_of(experiment_cfg: Mapping) -> str:
    """The base model an experiment starts from: :data:`TRAINED` (the default) or :data:`RETRAIN`."""
    return experiment_cfg.get("base", TRAINED)


def is_control(experiment_cfg: Mapping) -> bool:
    """Whether an experiment is a control (it runs :data:`CONTROL_METHOD`)."""
    return experiment_cfg.get("method") == CONTROL_METHOD


def control_of(experiment_cfg: Mapping) -> ControlSpec | None:
    """The control an experiment is (by its base), or ``None`` for an unlearning experiment."""
    if not is_control(experiment_cfg):
        return None
    return next(spec for spec in CONTROLS.values() if spec.base == base_of(experiment_cfg))


def controls_on(experiments: Mapping[str, Mapping], base: str) -> dict[str, str]:
    """{design: the name of its control on ``base``} (:data:`TRAINED`: No unlearning; :data:`RETRAIN`:
    Retrain), the last in ``experiments``' order where a design has several."""
    return {e["design"]: name for name, e in experiments.items() if is_control(e) and base_of(e) == base}


def pattern(names) -> str:
    """A wildcard constraint matching exactly ``names`` (no name of the catalogue needs escaping)."""
    return "|".join(names)


@dataclass(frozen=True)
class GUExperimentSpec:
    """A Gaussian certified-unlearning experiment (docs/calibrations.md §13;
    docs/development.md#add-a-gaussian-unlearning-experiment): a key of the config's
    ``gaussian_unlearning`` section with its grid, run as cells, each all replications at one p.

    ``x``, ``by`` and ``what`` are its figures' x column, the column of their lines and what x is
    (each experiment has a GED and a UED figure); ``fit_by`` the columns its log–log slopes are
    fitted per, besides the variants.  ``cell`` is the import path of its cell function, called as
    ``cell(p=, replication=, ms=, config=, seed=, n_over_p=, prob_clips=)`` with ``epsilon=`` (the
    section's one ε) or, for an ``epsilon_grid`` experiment, ``epsilons=`` (every ε of the
    section, evaluated on shared draws at the section's one p: the experiment is one cell)."""

    name: str
    x: str
    by: str
    what: str
    cell: str
    fit_by: tuple[str, ...]
    epsilon_grid: bool = False

    @property
    def axis(self) -> str:
        """What its figures' names say x is: ``p``, ``eps`` or ``m`` (``gaussian_unlearning_ged_vs_<axis>``)."""
        return self.name.removeprefix("ged_vs_")

    def grid(self, section: Mapping) -> list:
        """The p of each cell of the experiment's config ``section``."""
        return [section["p"]] if self.epsilon_grid else list(section["p"])

    def epsilon_arguments(self, section: Mapping) -> dict:
        """The cell function's ε argument from ``section``: ``epsilons`` (ε grid) or ``epsilon``."""
        if self.epsilon_grid:
            return {"epsilons": tuple(float(e) for e in section["epsilons"])}
        return {"epsilon": float(section["epsilon"])}


_CELLS = "unlearn_audit.gaussian_unlearning.experiments"

#: The Gaussian certified-unlearning experiments, by name (the figures' ``ged_vs_<axis>``).
GAUSSIAN_UNLEARNING_EXPERIMENTS: dict[str, GUExperimentSpec] = {s.name: s for s in (
    GUExperimentSpec("ged_vs_p", "p", "m", "dimension p", f"{_CELLS}:ged_vs_p_cell", ("noise", "m")),
    GUExperimentSpec("ged_vs_eps", "epsilon", "m", "certified ε", f"{_CELLS}:ged_vs_epsilon_cell", ("noise", "m", "p"), epsilon_grid=True),
    GUExperimentSpec("ged_vs_m", "m", "p", "number of removed points m", f"{_CELLS}:ged_vs_m_cell", ("noise", "p")),
)}


#: The membership scores of an example (Section 5): the logit score φ(f(x)_y) = log p_y − log(1 − p_y)
#: (text: −mean per-character CE) and the cross-entropy loss (Table 3).  The one list of them: the
#: score files' columns (:func:`score_column`), the auditors' choices, the CLI's ``--score`` and the
#: config schema's enum (checked against this list by the tests) derive from it.
SCORE_NAMES = ("logit", "loss")


def score_column(score: str) -> str:
    """The score files' column of a score name (SCORES schema): ``score_<name>``."""
    if score not in SCORE_NAMES:
        raise ValueError(f"score must be one of {list(SCORE_NAMES)}, got {score!r}")
    return f"score_{score}"


#: A design's or an experiment's name: it names folders, files and jobs, and the rules' wildcards
#: match it (the config check refuses any other).
NAME_PATTERN = r"[A-Za-z0-9][A-Za-z0-9_\-]*"
