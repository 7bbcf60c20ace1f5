"""The μ-GDP trade-off figures' plan (docs/bounds.md §8): which panels a config shows, decided from the
config alone (never from results), the rules' inputs and the figures' targets, read from the convex,
Gaussian-unlearning and nn sections' plans it is built with.  The figures themselves are drawn by the
rule steps of :mod:`unlearn_audit.pipeline.tradeoff`.  Torch-free."""

from __future__ import annotations

import numpy as np

from ... import catalogue
from .convex import ConvexPlan
from .experiment import certified_claim
from .gaussian_unlearning import GaussianUnlearningPlan
from .nn import NNPlan

__all__ = ["FIGURES", "MAX_PANELS", "GAUSSIAN_CLAIM_METHODS", "SIGN_VECTOR_AUDITORS", "SIGN_VECTOR_ORDER", "TradeoffPlan"]

#: The figures' names (``results/figures/<name>.{png,pdf,csv}``), one per audit family.
FIGURES = ("tradeoff_convex", "tradeoff_gaussian_unlearning", "tradeoff_sign_vector")
#: The most panels a figure shows (a readable small-multiples grid).
MAX_PANELS = 12
#: Methods whose certified release is the exact Gaussian mechanism calibrated at the claim's
#: (ε, δ) (rewind-to-delete, App. G.2: σ from ``gaussian_sigma`` for the sensitivity Δ), hence
#: μ-GDP with μ = Δ/σ = :func:`~unlearn_audit.stats.tradeoff.gaussian_mechanism_mu` (ε, δ).
#: Model clipping's claim comes from an accountant over many noisy steps: (ε, δ) only.
GAUSSIAN_CLAIM_METHODS = ("rewind_to_delete",)
#: The auditors that write a BOUNDS file with ``mu_lb`` (the pairwise baseline writes its own).
SIGN_VECTOR_AUDITORS = ("batchwise", "joint")
#: The order in which experiments are considered for the sign-vector figure (after those with a
#: claim): Table 1b first (the paper's main result), then the other tables and figures.
SIGN_VECTOR_ORDER = ("table1b", *(t for t in catalogue.NN_TABLES if t != "table1b"), *catalogue.CERTIFIED_TABLES, *catalogue.CERTIFIED_FIGURES)


class TradeoffPlan:
    """The trade-off figures' panels, inputs and targets, from the plans of the audits they show."""

    def __init__(self, nn: NNPlan, convex: ConvexPlan, gaussian_unlearning: GaussianUnlearningPlan):
        self.nn = nn
        self.convex = convex
        self.gaussian_unlearning = gaussian_unlearning
        self.files = nn.files

    def convex_cells(self) -> list[tuple[str, float]]:
        """(mechanism, ε) of every convex panel: per enabled mechanism (config order) at most
        ``MAX_PANELS // n_mechanisms`` of its certified ε, evenly spaced over the sorted list (its
        smallest and largest always in), so that the figure has at most :data:`MAX_PANELS` panels."""
        mechs = self.convex.mechanisms()
        if not mechs:
            return []
        per = max(1, MAX_PANELS // len(mechs))
        cells = []
        for m in mechs:
            eps = sorted(self.convex.epsilons(m), key=float)
            picks = sorted({int(round(k)) for k in np.linspace(0, len(eps) - 1, min(per, len(eps)))})
            cells += [(m, eps[k]) for k in picks]
        return cells[:MAX_PANELS]

    def convex_inputs(self) -> list[str]:
        """The summaries of the selected convex cells (:meth:`convex_cells`)."""
        return [self.files.convex_file(m, e, "summary.parquet") for m, e in self.convex_cells()]

    def gaussian_unlearning_inputs(self) -> list[str]:
        """The raw audit table of the Gaussian-unlearning audit, when that section is enabled."""
        return [self.files.gaussian_unlearning_file("audit.parquet")] if self.gaussian_unlearning.enabled() else []

    def sign_vector_experiments(self) -> list[str]:
        """The experiments of the sign-vector figure: those shown in a table or figure of
        :data:`SIGN_VECTOR_ORDER` whose auditor writes BOUNDS (:data:`SIGN_VECTOR_AUDITORS`); those with
        a certified claim first (config order), then the others in table order; at most :data:`MAX_PANELS`."""
        shown = self.nn.target_experiments()
        ordered: list[str] = []
        for name in SIGN_VECTOR_ORDER:
            ordered += [e for e in shown.get(name, []) if e not in ordered and self.nn.auditor(e) in SIGN_VECTOR_AUDITORS]
        claimed = [e for e in self.nn.experiments() if e in ordered and certified_claim(self.nn.experiment(e)) is not None]
        return (claimed + [e for e in ordered if e not in claimed])[:MAX_PANELS]

    def sign_vector_inputs(self) -> list[str]:
        return [self.files.experiment_file(e, "bounds.parquet") for e in self.sign_vector_experiments()]

    def sign_vector_summaries(self) -> dict[str, dict]:
        """What the sign-vector figure shows of each experiment (the rule's ``params``): label, dataset,
        split, method, auditor, the (ε, δ) claim (``None`` for a heuristic algorithm) and whether the
        claim is also a μ-GDP one (:data:`GAUSSIAN_CLAIM_METHODS`)."""
        out = {}
        for e in self.sign_vector_experiments():
            exp = self.nn.experiment(e)
            summary = self.nn.experiment_summary(e)
            claim = certified_claim(exp)
            out[e] = {
                **{key: summary[key] for key in ("label", "dataset", "split", "method")},
                "auditor": self.nn.auditor(e),
                "claim": None if claim is None else [float(claim[0]), float(claim[1])],
                "gaussian_claim": claim is not None and exp["method"] in GAUSSIAN_CLAIM_METHODS,
            }
        return out

    def targets(self) -> list[str]:
        """The trade-off figures whose inputs' sections the config enables (PNG and PDF; the CSV comes with them)."""
        out = []
        if self.convex_cells():
            out += self.files.figure_files("tradeoff_convex")
        if self.gaussian_unlearning_inputs():
            out += self.files.figure_files("tradeoff_gaussian_unlearning")
        if self.sign_vector_experiments():
            out += self.files.figure_files("tradeoff_sign_vector")
        return out
