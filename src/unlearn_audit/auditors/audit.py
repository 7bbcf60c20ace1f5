"""One sign-vector audit (Sections 4–5): runs in, validated and fitted once, bounds out.

:class:`SignVectorAudit` holds an audit's evaluation runs and the fit of its calibration runs;
its strategy says how a guess is made:

* :class:`~.batchwise.Batchwise` — Algorithm 2: per-example in/out Gaussians, Λ_j, r/2 + r/2;
* :class:`~.joint.Joint` — Algorithm 3: one Gaussian per S̃ ∈ S_m, the argmax guess, r = m;
* :class:`~.pairwise.Pairwise` — App. A.3: Algorithm 3 at m = 2, and Eq. 3 on its confusion counts.

The object offers each statistic as a method: :meth:`~SignVectorAudit.overlaps` (per r, computed
once), :meth:`~SignVectorAudit.epsilon_lower_bound` and :meth:`~SignVectorAudit.mu_lower_bound`
(one :class:`~unlearn_audit.stats.bounds.Bound` each, with its cell and ceiling),
:meth:`~SignVectorAudit.table` (the OVERLAPS and BOUNDS tables) and, for the pairwise strategy,
:meth:`~SignVectorAudit.pairwise`.  :func:`bounds_table` turns OVERLAPS rows of any audit into
BOUNDS rows, each made of the :class:`~unlearn_audit.stats.bounds.Bound` objects of
:func:`cell_bounds`; the workflow's rules and the CLI's ``audit`` reach both through
:mod:`.tables`.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Iterable, Sequence

import numpy as np
import pandas as pd

from ..checks import check_choice
from ..stats.bounds import STATISTICS, Bound, epsilon_lower_bound, unlearning_epsilon_lower_bound
from ..stats.gdp_overlaps import mu_lower_bound
from ..stats.reference import reference_bound
from ..stats.selection import DELTA_TESTS, SELECTIONS, TESTS, Cell, cell_zeta
from ..stats.signs import overlap
from .pairwise import PairwiseAudit, confusion, pairwise_result
from .runs import PhaseRuns
from .strategy import AuditStrategy

__all__ = ["CellBounds", "SignVectorAudit", "bounds_table", "cell_bounds", "claim_bound", "claim_ceiling"]

DELTA_KINDS = ("ldp", "unlearning")


@dataclass(frozen=True)
class CellBounds:
    """The bounds of one cell's overlaps (docs/bounds.md): Theorem 4.2's (the paper's), the exact
    test's (δ = 0 only, else None), the one under the pre-registered ``test`` (one of the two, the
    "mgf"/"adaptive" test of the mean or the reference test) and μ-GDP's (the trade-off test, §6a,
    never below Lemma C.1's)."""

    theorem42: Bound
    exact: Bound | None
    claim: Bound
    mu: Bound


def _check_test(test: str, delta: float) -> None:
    check_choice(test, TESTS, "test")
    if test not in DELTA_TESTS and delta > 0:
        raise ValueError(f"test {test!r} supports delta = 0 only (got delta = {delta:g}); pre-register test: reference "
                         "(against the retrained model) or theorem4.2 (Lemma C.1) for a delta > 0 claim")


def _theorem42(v, m: int, r: int, zeta: float, statistic: str, delta: float, delta_kind: str) -> Bound:
    bound = unlearning_epsilon_lower_bound if delta_kind == "unlearning" else epsilon_lower_bound
    return bound(v, m, r, zeta=zeta, statistic=statistic, delta=delta)


def _exact(v, m: int, r: int, zeta: float, statistic: str) -> Bound:
    return epsilon_lower_bound(v, m, r, zeta=zeta, statistic=statistic, method="exact")


def claim_bound(v: np.ndarray, m: int, r: int, *, zeta: float, statistic: str, delta: float = 0.0,
                delta_kind: str = "ldp", test: str = "theorem4.2", theorem42: Bound | None = None, exact: Bound | None = None) -> Bound:
    """The bound of the overlaps ``v`` under the pre-registered ``test`` only: Theorem 4.2's (δ read
    as ``delta_kind`` says), the exact test's, the "mgf"/"adaptive" test of the mean (tests of the
    mean, so a median cell's claim is the exact binomial tail, docs/bounds.md §4), or the reference
    test of the unlearning claim itself (§6b; its δ is the claim's, so ``delta_kind`` "ldp" with
    δ > 0 is refused).  ``theorem42`` and ``exact``, where the caller has them, are used instead of
    computing them."""
    check_choice(delta_kind, DELTA_KINDS, "delta_kind")
    _check_test(test, delta)
    if test == "reference":
        if delta > 0 and delta_kind != "unlearning":
            raise ValueError("the reference test bounds an (epsilon, delta) unlearning claim: give its delta as delta_kind='unlearning'")
        return reference_bound(v, m, r, zeta=zeta, statistic=statistic, delta=delta)
    if test == "theorem4.2":
        return theorem42 if theorem42 is not None else _theorem42(v, m, r, zeta, statistic, delta, delta_kind)
    if test == "exact" or statistic != "mean":
        return exact if exact is not None else _exact(v, m, r, zeta, statistic)
    return epsilon_lower_bound(v, m, r, zeta=zeta, statistic=statistic, method=test)


def claim_ceiling(m: int, r: int, L: int, *, test: str, zeta: float = 0.05, statistic: str = "mean", delta: float = 0.0,
                  delta_kind: str = "ldp") -> float:
    """The claim's ceiling of the cell (m, r, L): the bound of the pre-registered ``test`` when every
    guess of all L runs is right (overlaps [r] * L; App. F), halved as the BOUNDS rows'
    ``epsilon_lb_test`` are (:func:`_lb`); at ``test="theorem4.2"`` the perfect-prediction ceiling of
    :mod:`unlearn_audit.stats.perfect_prediction`.  Cached."""
    return _claim_ceiling(int(m), int(r), int(L), str(test), float(zeta), str(statistic), float(delta), str(delta_kind))


@lru_cache(maxsize=4096)
def _claim_ceiling(m: int, r: int, L: int, test: str, zeta: float, statistic: str, delta: float, delta_kind: str) -> float:
    perfect = np.full(L, r)
    return _lb(claim_bound(perfect, m, r, zeta=zeta, statistic=statistic, delta=delta, delta_kind=delta_kind, test=test), halve=True)


def cell_bounds(v: np.ndarray, m: int, r: int, *, zeta: float, statistic: str, delta: float = 0.0,
                delta_kind: str = "ldp", test: str = "theorem4.2") -> CellBounds:
    """Every bound of the overlaps ``v`` of one cell at level ``zeta``.

    ``delta_kind`` says whose δ ``delta`` is: "ldp", the induced LDP mechanism's (Lemma C.1
    directly), or "unlearning", an (ε, δ) unlearning claim's
    (:func:`~unlearn_audit.stats.bounds.unlearning_epsilon_lower_bound`); the claim is
    :func:`claim_bound`'s."""
    check_choice(delta_kind, DELTA_KINDS, "delta_kind")
    _check_test(test, delta)
    theorem42 = _theorem42(v, m, r, zeta, statistic, delta, delta_kind)
    exact = _exact(v, m, r, zeta, statistic) if delta == 0 else None
    claim = claim_bound(v, m, r, zeta=zeta, statistic=statistic, delta=delta, delta_kind=delta_kind, test=test, theorem42=theorem42, exact=exact)
    return CellBounds(theorem42, exact, claim, mu_lower_bound(v, m, r, zeta=zeta, statistic=statistic, method="tradeoff"))


def _lb(bound: Bound, halve: bool) -> float:
    """The row's unlearning bound: the LDP bound halved (Lemma 4.1), or a bound of the unlearning
    claim itself (the reference test's, which bounds no LDP mechanism), or the LDP bound unhalved."""
    return bound.lb if halve or bound.method == "reference" else bound.ldp


def _row(keys: dict, v: np.ndarray, m: int, b: CellBounds, *, halve: bool, selection: str, test: str) -> dict:
    """One BOUNDS row, every number from the :class:`CellBounds` of its overlaps."""
    t = b.theorem42
    return {
        **keys, "m": m, "L": t.L, "zeta": t.zeta, "delta": t.delta, "mean_overlap": float(v.mean()),
        "epsilon_ldp": t.ldp, "epsilon_lb": _lb(t, halve), "rejected": t.rejected, "selection": selection, "test": test,
        "epsilon_ldp_exact": b.exact.ldp if b.exact else np.nan,
        "epsilon_lb_exact": _lb(b.exact, halve) if b.exact else np.nan,
        "epsilon_ldp_test": b.claim.ldp, "epsilon_lb_test": _lb(b.claim, halve),
        "mu_ldp": b.mu.ldp, "mu_lb": _lb(b.mu, halve),
    }


def _roles(rows: list[dict], primary: Cell | None, selection: str, test: str) -> None:
    if selection == "bonferroni":  # the largest claim: each row's bound under the pre-registered test
        best = max(range(len(rows)), key=lambda i: (rows[i]["epsilon_lb_test"], -i)) if rows else None
        for i, row in enumerate(rows):
            row["role"] = "selected" if i == best else "candidate"
        return
    for row in rows:
        is_primary = primary is not None and Cell(row["r"], row["statistic"], row["score"], test) == primary
        row["role"] = "preregistered" if is_primary else "exploratory"


def bounds_table(
    overlaps: pd.DataFrame,
    m: int,
    *,
    zeta: float = 0.05,
    statistics: Sequence[str] = STATISTICS,
    delta: float = 0.0,
    halve: bool = True,
    primary: Cell | None = None,
    selection: str = "preregistered",
    delta_kind: str = "ldp",
    test: str | None = None,
    r_rule: str = "config",
) -> pd.DataFrame:
    """One row per (experiment, auditor, score, r, statistic) of bounds (BOUNDS schema), each row the
    :func:`cell_bounds` of its overlaps (docs/bounds.md).

    ``overlaps`` has the columns of :data:`unlearn_audit.schemas.OVERLAPS`; a run id may occur
    only once per (experiment, auditor, score, r), since the runs must be independent.  ``halve``
    is True for the sign-vector audits (ε_lb = ε_ldp / 2, Lemma 4.1).  ``primary`` is the
    pre-registered cell (row ``role = "preregistered"``; every other row ``"exploratory"``);
    ``selection="bonferroni"`` tests every cell at ζ/K and marks the largest ``"selected"``.
    The ``zeta`` column is the level each row was tested at.

    ``delta_kind`` says whose δ ``delta`` is (:func:`cell_bounds`); with ``"unlearning"``,
    ``epsilon_lb`` is the unlearning bound and ``halve`` must stay True.

    Every row carries three bounds of its overlaps: ``epsilon_ldp``/``epsilon_lb`` (Theorem 4.2,
    the paper's), ``epsilon_ldp_exact``/``epsilon_lb_exact`` (the exact convolution test, δ = 0
    only: NaN when ``delta`` > 0) and ``mu_ldp``/``mu_lb`` (μ-GDP, for which δ does not apply).
    ``test`` names the audit's claim, fixed before the run (column ``test``; the pre-registered
    cell is (r, statistic, score, test), so it defaults to ``primary.test``, else Theorem 4.2), and
    ``epsilon_ldp_test``/``epsilon_lb_test`` hold each row's bound under it; the others are
    reported beside it, never instead.  ``r_rule`` records how the pre-registered r was fixed
    (``"config"``, or ``"calibrated"`` on the calibration runs, :mod:`.calibrated_r`).
    """
    check_choice(delta_kind, DELTA_KINDS, "delta_kind")
    if test is None:
        test = primary.test if primary is not None else TESTS[0]
    _check_test(test, delta)
    if primary is not None and primary.test != test:
        raise ValueError(f"the pre-registered cell's test is {primary.test!r} but test={test!r}")
    if delta_kind == "unlearning" and not halve:
        raise ValueError("delta_kind='unlearning' bounds the unlearning claim itself: halve must be True")
    if selection not in SELECTIONS:
        raise ValueError(f"selection must be one of {SELECTIONS}, got {selection!r}")
    keys = ["experiment", "auditor", "score", "r"]
    if overlaps.duplicated(keys + ["run"]).any():
        raise ValueError("overlaps hold a run twice for one (experiment, auditor, score, r): runs must be independent")
    cells = [
        ({"experiment": experiment, "auditor": auditor, "score": score, "statistic": statistic, "r": int(r)}, grp["overlap"].to_numpy())
        for (experiment, auditor, score, r), grp in overlaps.groupby(keys, sort=True)
        for statistic in statistics
    ]
    level = cell_zeta(zeta, max(len(cells), 1), selection)
    rows = [
        _row(k, v, m, cell_bounds(v, m, k["r"], zeta=level, statistic=k["statistic"], delta=delta, delta_kind=delta_kind, test=test),
             halve=halve, selection=selection, test=test)
        for k, v in cells
    ]
    _roles(rows, primary, selection, test)
    return pd.DataFrame(rows).assign(r_rule=r_rule) if rows else pd.DataFrame(rows)


class SignVectorAudit:
    """A sign-vector audit: the evaluation runs and the fit of the calibration runs, checked once.

    Build it with :meth:`calibrate` (calibration and evaluation :class:`~.runs.PhaseRuns`; fits
    once) or directly from a fit made earlier (the workflow's FIT files).  The strategy is a small
    frozen dataclass holding its fit's settings: ``Batchwise()``, ``Joint()``, ``Pairwise()``.  The strategy's
    prediction of every evaluation run is computed once, each r's overlaps once.  ``experiment``,
    ``score`` and ``auditor`` label the table rows; ``auditor`` defaults to the strategy's name.
    """

    def __init__(self, strategy: AuditStrategy, fit, evaluation: PhaseRuns, *, experiment: str = "audit", score: str = "logit",
                 auditor: str | None = None):
        if evaluation.phase != "eval":
            raise ValueError(f"an audit's bounds come from evaluation runs only, got {evaluation.phase!r} runs")
        strategy.check_design(evaluation.m)
        self.strategy, self.fit, self.evaluation = strategy, fit, evaluation
        self.experiment, self.score = str(experiment), str(score)
        self.auditor = auditor or strategy.name
        self._prediction: np.ndarray | None = None
        self._overlaps: dict[int, np.ndarray] = {}

    @classmethod
    def calibrate(cls, strategy: AuditStrategy, calibration: PhaseRuns, evaluation: PhaseRuns, *, experiment: str = "audit",
                  score: str = "logit", auditor: str | None = None) -> "SignVectorAudit":
        """Fit ``strategy`` on the calibration runs only and audit the evaluation runs (Section 5:
        the two must be independent runs of one design, scoring the same candidate examples)."""
        if calibration.phase != "calib":
            raise ValueError(f"the fit uses calibration runs only, got {calibration.phase!r} runs")
        if calibration.m != evaluation.m:
            raise ValueError(f"calibration sign vectors have m = {calibration.m}, evaluation ones m = {evaluation.m}")
        if not np.array_equal(calibration.examples, evaluation.examples):
            raise ValueError("calibration and evaluation runs must score the same candidate examples")
        strategy.check_design(evaluation.m)
        return cls(strategy, strategy.fit(calibration), evaluation, experiment=experiment, score=score, auditor=auditor)

    @property
    def m(self) -> int:
        return self.evaluation.m

    @property
    def L(self) -> int:
        return int(self.evaluation.runs.size)

    def guesses(self, r: int) -> np.ndarray:
        """Ŝ (L, m) of every evaluation run with guess budget r."""
        if self._prediction is None:
            self._prediction = self.strategy.predict(self.fit, self.evaluation)
        return self.strategy.guess(self._prediction, int(r))

    def overlaps(self, r: int) -> np.ndarray:
        """V (L,) of every evaluation run's guess with its true S (Algorithm 1, step 3)."""
        r = int(r)
        if r not in self._overlaps:
            v = np.atleast_1d(overlap(self.guesses(r), self.evaluation.signs)).astype(np.int64)
            v.flags.writeable = False
            self._overlaps[r] = v
        return self._overlaps[r]

    def overlap_table(self, r_values: Iterable[int]) -> pd.DataFrame:
        """OVERLAPS rows: one per (r, evaluation run)."""
        ev = self.evaluation
        rows = [
            {"experiment": self.experiment, "auditor": self.auditor, "score": self.score, "run": int(run), "sign_index": int(idx),
             "m": self.m, "r": int(r), "overlap": int(val)}
            for r in r_values for run, idx, val in zip(ev.runs, ev.sign_index, self.overlaps(r))
        ]
        return pd.DataFrame(rows)

    def cell_bounds(self, r: int, *, zeta: float = 0.05, statistic: str = "mean", delta: float = 0.0, test: str = "theorem4.2") -> CellBounds:
        """Every bound of the cell (r, statistic) at level ζ (:func:`cell_bounds`); δ is read as the
        strategy reads it (the induced mechanism's for the batchwise auditor, the unlearning claim's
        for the joint one)."""
        return cell_bounds(self.overlaps(r), self.m, int(r), zeta=zeta, statistic=statistic, delta=delta,
                           delta_kind=self.strategy.delta_kind, test=test)

    def epsilon_lower_bound(self, r: int, *, zeta: float = 0.05, statistic: str = "mean", delta: float = 0.0,
                            test: str = "theorem4.2") -> Bound:
        """The bound of the cell (r, statistic, score, test) under ``test``, with its cell and its
        ceiling: the same test's bound when all L runs guess all r right (App. F)."""
        r = int(r)
        kind = self.strategy.delta_kind
        claim = claim_bound(self.overlaps(r), self.m, r, zeta=zeta, statistic=statistic, delta=delta, delta_kind=kind, test=test)
        ceiling = claim_ceiling(self.m, r, self.L, test=test, zeta=zeta, statistic=statistic, delta=delta, delta_kind=kind)
        return claim.answering(Cell(r, statistic, self.score, test), ceiling)

    def mu_lower_bound(self, r: int, *, zeta: float = 0.05, statistic: str = "mean", method: str = "tradeoff") -> Bound:
        """μ_LB of the cell (r, statistic) (docs/bounds.md §6, §6a), with its ceiling."""
        r = int(r)
        res = mu_lower_bound(self.overlaps(r), self.m, r, zeta=zeta, statistic=statistic, method=method)
        ceiling = mu_lower_bound(np.full(self.L, r), self.m, r, zeta=zeta, statistic=statistic, method=method).lb
        return res.answering(ceiling=ceiling)

    def table(self, r_values: Iterable[int], *, zeta: float = 0.05, statistics: Sequence[str] = STATISTICS, delta: float = 0.0,
              primary: Cell | None = None, selection: str = "preregistered") -> tuple[pd.DataFrame, pd.DataFrame]:
        """(OVERLAPS, BOUNDS) of this audit for every r (:func:`bounds_table`)."""
        overlaps = self.overlap_table([int(r) for r in r_values])
        return overlaps, bounds_table(overlaps, self.m, zeta=zeta, statistics=statistics, delta=delta, primary=primary,
                                      selection=selection, delta_kind=self.strategy.delta_kind)

    def pairwise(self, *, zeta: float = 0.05, delta: float = 0.0) -> PairwiseAudit:
        """App. A.3: the confusion matrix of the m = 2 guesses and its Eq. 3 bounds on the unlearning
        claim (pairwise strategy only)."""
        if self.strategy.name != "pairwise":
            raise ValueError(f"the confusion-matrix bound (Eq. 3) is the pairwise auditor's; this audit's strategy is {self.strategy.name!r}")
        return pairwise_result(*confusion(self.guesses(2), self.evaluation.signs), zeta=zeta, delta=delta)
