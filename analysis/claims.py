"""The paper's statements, and the README's about the default run, recomputed from a finished run's files.

    python analysis/claims.py [RESULTS_DIR]        (default: results)
    python analysis/claims.py RUN_A RUN_B ...      (the same config's runs on several CPUs)

Each claim reads the run's tables and figure CSVs (``tables/*.csv``, ``figures/*.csv``) and, where
it needs them, its Parquet files, and prints one line:

* ``PASS``: the run shows it;
* ``FAIL``: the run does not show it, and the README says the default run does (exit status 1);
* ``DIVERGES``: a statement of the paper that this run does not show, where the README says the
  default run diverges from it (the paper's number is printed beside this run's; README, "Where
  the default differs from the paper");
* ``BY-CONSTRUCTION``: true of every run of these designs whatever the algorithms do (printed so
  that it is not read as evidence: it is not counted as a PASS);
* ``SKIP``: the run lacks what the claim reads (a smaller config).

Every claim has a threshold that a run without the phenomenon fails: a method "is rejected" only
when more of its rows reject than a Retrain-level run would by chance (:func:`allowance`: the 95 %
quantile of Binomial(n, ζ), the type-I errors exact unlearning may make at level ζ), so replacing
the heuristics' overlaps by Retrain's turns the finding's claims to FAIL
(tests/workflow/test_nn.py feeds this script doctored copies of a run's tables).  The claims are
statements about the experiment (controls, separation, orderings, flags, trends), not another
machine's digits: the digits bounds depend on the CPU's kernels (README, "Results of the default
run").  Every check also returns its margins: for each condition it tests, how far the deciding
quantity sits inside its threshold.  Given several runs of one config (from CPUs whose kernels
differ: analysis/cpu_kernel_sensitivity.py), it prints each claim's status on each and whether it
holds on every CPU measured: the same status on all of them, with every margin larger than the
spread of that margin between the runs (:func:`across_runs`); a single CPU measured is said so.
Torch-free.
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np
import pandas as pd
import yaml
from scipy.stats import binom

from unlearn_audit.auditors import membership_signal
from unlearn_audit.pipeline.plan.paths import finished_run_files

#: The share of its own ceiling below which a control's claim is a measurement, not a ceiling (README, "Reading a table").
CEILING_SHARE = 0.8
#: Table 1b's heuristic methods (the paper's Section 7.2), as the tables label them.
HEURISTICS = ("Retain fine-tune", "Forget ascent", "IDA q=1", "IDA q=2", "IDA q=4", "Hessian")
CONTROLS = ("No unlearning", "Retrain")
STATUSES = ("PASS", "FAIL", "DIVERGES", "BY-CONSTRUCTION", "SKIP")


class Missing(Exception):
    """The run lacks a file or row a claim reads: the claim is skipped."""


@dataclass
class Run:
    """A finished run's results folder, its files read on demand."""

    results: Path

    def __post_init__(self) -> None:
        self.config = yaml.safe_load((self.results / "config.yaml").read_text())
        self.zeta = float(self.config.get("zeta", 0.05))
        self._cache: dict[str, pd.DataFrame] = {}

    def csv(self, kind: str, name: str) -> pd.DataFrame:
        key = f"{kind}/{name}"
        if key not in self._cache:
            path = self.results / kind / f"{name}.csv"
            if not path.exists():
                raise Missing(f"{kind}/{name}.csv")
            self._cache[key] = pd.read_csv(path)
        return self._cache[key]

    def table(self, name: str) -> pd.DataFrame:
        return self.csv("tables", name)

    def figure(self, name: str) -> pd.DataFrame:
        return self.csv("figures", name)

    def eval_scores(self, experiment: str) -> pd.DataFrame:
        paths = finished_run_files(self.results, experiment, "eval", "scores.parquet")
        if not paths:
            raise Missing(f"{experiment}'s evaluation scores")
        return pd.concat([pd.read_parquet(p) for p in paths], ignore_index=True)


def allowance(n: int, zeta: float) -> int:
    """How many of ``n`` level-ζ audits of exact unlearning may reject by chance: the 95 % quantile
    of Binomial(n, ζ).  A claim that a set of rows "is rejected" needs more rejections than this."""
    return int(binom.ppf(0.95, int(n), float(zeta))) if n else 0


def rows(table: pd.DataFrame, method: str | None = None, split: str | None = None, **eq) -> pd.DataFrame:
    sub = table
    if method is not None:
        sub = sub[sub["method"] == method]
    if split is not None:
        sub = sub[sub["split"] == split]
    for k, v in eq.items():
        sub = sub[sub[k] == v]
    if sub.empty:
        raise Missing(f"rows {method or ''} {split or ''} {eq}")
    return sub


def one(table: pd.DataFrame, method: str, split: str | None = None, **eq) -> pd.Series:
    sub = rows(table, method, split, **eq)
    if len(sub) != 1:
        raise Missing(f"one row {method} {split} {eq}, found {len(sub)}")
    return sub.iloc[0]


def reported(table: pd.DataFrame) -> pd.DataFrame:
    """The rows of a per-r table (Tables 3, 4, 5) that are their experiment's pre-registered cell."""
    return table[table["cell"].astype(str).str.startswith(("preregistered", "bonferroni-selected"))]


def fmt(x: float) -> str:
    return f"{x:.2f}" if np.isfinite(x) else "nan"


#: A check's margins: for each condition it tests, how far its deciding quantity sits inside the
#: condition's threshold, in that quantity's units (positive: the condition holds).  Counts of rows
#: use half-integers (k rows where more than a are needed: k - a - 0.5), so a margin is never 0.
Margins = dict[str, float]
Verdict = tuple[bool, str, Margins]


def count_margin(k: int, most: int) -> float:
    """The margin of "at most ``most`` rows" for ``k`` rows: positive when k <= most."""
    return most + 0.5 - k


def rejected_count(values, zeta: float) -> tuple[bool, str, float]:
    """Whether more of ``values`` (claims) are positive than :func:`allowance` permits, the count as
    text, and the margin in rows (k - allowance - 0.5)."""
    values = np.asarray(list(values), dtype=float)
    n, k, a = len(values), int((values > 0).sum()), allowance(len(values), zeta)
    return k > a, f"{k} of {n} rejected (a Retrain-level run: at most {a})", -count_margin(k, a)


# --------------------------------------------------------------------------- the audit can see and does not accuse

def control_claims(run: Run, base: str) -> pd.DataFrame:
    """``experiment, design, auditor, claim``: each control's reported claim (``bounds.parquet``; the
    pairwise controls, whose Eq. 3 ceiling is 0 at L = 10, are left out)."""
    out = []
    for name, e in run.config.get("nn", {}).get("experiments", {}).items():
        if e.get("method") != "no_unlearning" or e.get("base", "trained") != base:
            continue
        path = run.results / name / "bounds.parquet"
        if not path.exists():
            continue
        b = pd.read_parquet(path)
        r = b[b.role.isin(["preregistered", "selected"])].iloc[0]
        out.append({"experiment": name, "design": e["design"], "auditor": str(r.auditor), "claim": float(r.epsilon_lb_test)})
    if not out:
        raise Missing(f"controls with base {base}")
    return pd.DataFrame(out)


def no_unlearning_rejected(run: Run) -> Verdict:
    """Every design's No-unlearning control is rejected (its claim is positive): each audit can detect
    the leakage its trained models carry, so a 0 of a method on it is evidence, not a lack of power."""
    c = control_claims(run, "trained")
    bad = c[c.claim <= 0]
    return bad.empty, (f"{len(c)} controls, smallest {fmt(c.claim.min())} ({c.loc[c.claim.idxmin(), 'design']})"
                       + (f"; not rejected: {', '.join(bad.design)}" if len(bad) else "")), {"smallest claim": float(c.claim.min())}


def retrain_type_one(run: Run) -> Verdict:
    """Retrain (exact unlearning) is rejected no more often than the level allows: of its n controls
    at most :func:`allowance` (n, zeta) reject, each a type-I error of probability <= zeta."""
    c = control_claims(run, "retrain")
    a = allowance(len(c), run.zeta)
    bad = c[c.claim > 0]
    listed = ", ".join(f"{r.design} {fmt(r.claim)}" for r in bad.itertuples()) or "none"
    return len(bad) <= a, f"{len(bad)} of {len(c)} rejected (allowed {a}): {listed}", {"rows": count_margin(len(bad), a)}


def controls_below_ceiling(run: Run) -> Verdict:
    """The image controls of Table 1b and of Table 5 at B = 1 and 2 sit below 80 % of their claim's own
    ceiling at the reported cell, so a method's comparison with them is not decided by the ceiling
    (Table 5's B = 4 control and Table 1a's text control are printed with their share, not compared:
    where a control nears its ceiling the audit's size limits what it can show)."""
    out, ok, shares = [], True, []
    for r in rows(run.table("table1b"), "No unlearning").drop_duplicates(["split"]).itertuples():
        share = r.epsilon_lb_claim / r.epsilon_lb_ceiling_claim
        ok &= share < CEILING_SHARE
        shares.append(share)
        out.append(f"table1b {r.split} {fmt(r.epsilon_lb_claim)}/{fmt(r.epsilon_lb_ceiling_claim)} = {share:.0%}")
    t5 = run.table("table5")
    for b in sorted(t5.batch_size.unique()):
        r = one(reported(t5), "No unlearning", batch_size=b)
        share = r.epsilon_lb_claim / r.epsilon_lb_ceiling_claim
        if b <= 2:
            ok &= share < CEILING_SHARE
            shares.append(share)
        out.append(f"table5 B={b} r={r.r}: {share:.0%}" + ("" if b <= 2 else " (not compared)"))
    try:
        for r in rows(run.table("table1a"), "No unlearning").itertuples():
            out.append(f"table1a {fmt(r.epsilon_lb_claim)}/{fmt(r.epsilon_lb_ceiling_claim)} = "
                       f"{r.epsilon_lb_claim / r.epsilon_lb_ceiling_claim:.0%} (not compared)")
    except Missing:
        pass
    return ok, "; ".join(out), {"share of ceiling": CEILING_SHARE - max(shares)}


def models_memorise(run: Run) -> Verdict:
    """The image models memorise: No unlearning on the uniform split fits D(S) (retain accuracy
    >= 0.99), tests below it, and its candidates' d' (in-minus-out gap of the logit score over its
    run-to-run spread, median over examples) is at least 1.5."""
    r = one(run.table("table1b"), "No unlearning", "uniform")
    exps = run.config["nn"]["experiments"]
    name = next((n for n, e in exps.items() if e.get("method") == "no_unlearning" and e.get("base", "trained") == "trained"
                 and "table1b" in e.get("tables", []) and run.config["nn"]["designs"][e["design"]]["split"] == "uniform"), None)
    if name is None:
        raise Missing("the uniform No-unlearning control")
    d = membership_signal(run.eval_scores(name))["d_prime"]
    ok = r.retain_acc >= 0.99 and r.test_acc < r.retain_acc and d >= 1.5
    return ok, f"retain {r.retain_acc:.3f}, test {r.test_acc:.3f}, d' {d:.2f}", \
        {"retain accuracy": r.retain_acc - 0.99 + 1e-9, "retain minus test": r.retain_acc - r.test_acc, "d'": d - 1.5 + 1e-9}


def no_power_nowhere(run: Run) -> Verdict:
    """No image or text design is flagged no_power."""
    flagged = []
    for name in ("table1a", "table1b", "table5", "table7"):
        t = run.table(name)
        flagged += [f"{name}: {m}" for m in t.loc[t.no_power.astype(bool), "method"].unique()]
    return not flagged, "; ".join(flagged) if flagged else "none flagged", {"rows": count_margin(len(flagged), 0)}


def joint_controls_on_ceiling(run: Run) -> Verdict:
    """A joint design's No-unlearning control sits on its claim's ceiling at any L: under the threat
    model (fixed x0 and order) its training is a deterministic function of S, so every guess is right
    (Figure 1a's controls; Retrain's are 0)."""
    f = run.figure("figure1a")
    ctl = f[f.variant == "control"]
    nu, rt = ctl[ctl.method == "No unlearning"], ctl[ctl.method == "Retrain"]
    if nu.empty:
        raise Missing("Figure 1a controls")
    ok = bool(nu.at_ceiling_claim.astype(bool).all()) and bool((rt.epsilon_lb_claim == 0).all())
    return ok, ", ".join(f"{r.split} {r.method} {fmt(r.epsilon_lb_claim)} (ceiling {fmt(r.ceiling_claim)})" for r in ctl.itertuples()), \
        {"controls off the ceiling": count_margin(int((~nu.at_ceiling_claim.astype(bool)).sum()), 0),
         "Retrain rows rejected": count_margin(int((rt.epsilon_lb_claim != 0).sum()), 0)}


def reference_never_weaker(run: Run) -> Verdict:
    """Every pre-registered reference-test claim is at least Theorem 4.2's bound of the same overlaps
    (and the exact test's, at δ = 0): the test dominates the sign-vector route on any data (docs/bounds.md §6b)."""
    worst, n, ratios = np.inf, 0, []
    for path in sorted(run.results.glob("*/bounds.parquet")):
        b = pd.read_parquet(path)
        r = b[b.role.isin(["preregistered", "selected"]) & (b.test == "reference")]
        if r.empty:
            continue
        r = r.iloc[0]
        others = max(float(r.epsilon_lb), float(r.epsilon_lb_exact) if np.isfinite(r.epsilon_lb_exact) else 0.0)
        worst = min(worst, float(r.epsilon_lb_test) - others)
        n += 1
        if others > 0:
            ratios.append(float(r.epsilon_lb_test) / others)
    if not n:
        raise Missing("a reference-test claim")
    text = f"{n} cells; claim minus the larger of Theorem 4.2 and exact: at least {worst:.3f}"
    return worst >= -1e-9, text + (f"; claim over it {min(ratios):.2f}-{max(ratios):.2f}" if ratios else ""), {"claim minus the others": worst + 1e-9}


def pairwise_zero(run: Run) -> Verdict:
    """Sec. 7.3: Eq. 3 at L = 10 gives 0 for every method, its ceiling 0 too (the paper's point: "even
    FPR = FNR = 0 yields a zero lower bound")."""
    t = run.table("pairwise_uncertified")
    return bool((t.epsilon_lb_eq3 == 0).all() and (t.epsilon_lb_ceiling_eq3 == 0).all()), f"{len(t)} rows, errors {int((t.fp + t.fn).max())} at most", \
        {"rows above 0": count_margin(int(((t.epsilon_lb_eq3 != 0) | (t.epsilon_lb_ceiling_eq3 != 0)).sum()), 0)}


def pairwise_reference_rejects(run: Run) -> Verdict:
    """Sec. 7.3: the reference test of the pairwise guesses as m = 2 overlaps rejects the No-unlearning
    control at L = 10, where Eq. 3 cannot (its ceiling is 0), so the pairwise design is not without power."""
    t = run.table("pairwise_uncertified")
    ctl = one(t, "No unlearning")
    return bool(ctl.epsilon_lb_claim > 0 and ctl.epsilon_lb_eq3 == 0), \
        f"No unlearning: claim {fmt(ctl.epsilon_lb_claim)}, Eq. 3 {fmt(ctl.epsilon_lb_eq3)}; methods: " + \
        ", ".join(f"{r.method} {fmt(r.epsilon_lb_claim)}" for r in t[~t.method.isin(CONTROLS)].itertuples()), \
        {"control's claim": float(ctl.epsilon_lb_claim), "Eq. 3 rows above 0": count_margin(int(ctl.epsilon_lb_eq3 != 0), 0)}


# --------------------------------------------------------------------------- the paper's finding (Table 1b)

def _heuristic_rows(run: Run) -> pd.DataFrame:
    t = run.table("table1b")
    sub = t[t.method.isin(HEURISTICS)]
    if sub.empty:
        raise Missing("Table 1b's heuristic rows")
    return sub


def heuristics_rejected(run: Run) -> Verdict:
    """Table 1b, the paper's separation: the heuristic methods are rejected (more of their rows, both
    splits, reject than a Retrain-level run would)."""
    t = _heuristic_rows(run)
    ok, count, rows_ = rejected_count(t.epsilon_lb_claim, run.zeta)
    listed = "; ".join(f"{r.split} {r.method} {fmt(r.epsilon_lb_claim)}" for r in t.itertuples())
    return ok, f"{count}: {listed}", {"rows": rows_}


def _retrain(run: Run, split: str) -> pd.Series:
    return one(run.table("table1b"), "Retrain", split)


def looks_unlearned(rows: pd.DataFrame, retrain) -> pd.Series:
    """Which Table 1b ``rows`` an accuracy check calls unlearned beside their split's ``retrain`` row:
    forget accuracy within 0.05 of Retrain's (not flagged not_forgotten) and test accuracy within 0.05
    of Retrain's."""
    return ~rows.not_forgotten.astype(bool) & ((rows.test_acc - float(retrain.test_acc)).abs() <= 0.05)


def _looks_unlearned_yet_rejected(run: Run, split: str) -> Verdict:
    """Among Table 1b's heuristic rows on ``split`` whose forget accuracy is within 0.05 of Retrain's
    (not flagged not_forgotten) and whose test accuracy is within 0.05 of Retrain's, more are rejected
    than a Retrain-level run allows (and there is at least one such row)."""
    t = _heuristic_rows(run)
    t = t[t.split == split]
    if t.empty:
        raise Missing(f"Table 1b's {split} rows")
    rt = _retrain(run, split)
    return _rejected_among_lookalikes(t, looks_unlearned(t, rt), rt, run.zeta,
                                      lambda r: f"{r.method}: forget {r.forget_acc:.3f}, claim {fmt(r.epsilon_lb_claim)} at {r.guess_fraction:.2f} right")


def _rejected_among_lookalikes(rows: pd.DataFrame, looks: pd.Series, retrain, zeta: float, describe) -> Verdict:
    """Whether, among the ``rows`` an accuracy check calls unlearned (``looks``) beside ``retrain``,
    more are rejected than a Retrain-level run allows (and there is at least one such row); each row
    in the detail as ``describe`` words it."""
    ok, count, rows_ = rejected_count(rows[looks].epsilon_lb_claim, zeta)
    parts = [describe(r) + ("" if lk else " [does not look unlearned]") for r, lk in zip(rows.itertuples(), looks)]
    return ok and bool(looks.any()), f"looks unlearned: {count}; Retrain forget {retrain.forget_acc:.3f}, test {retrain.test_acc:.3f}; " \
        + "; ".join(parts), {"rows": rows_, "rows looking unlearned": int(looks.sum()) - 0.5}


def looks_unlearned_yet_rejected_uniform(run: Run) -> Verdict:
    """The paper's point, uniform split (Table 1b: forget accuracy 0.59 beside test 0.53-0.54, yet
    epsilon_LB 79.5-100.5): among the heuristics whose forget and test accuracies are within 0.05 of
    Retrain's, more are rejected than a Retrain-level run allows."""
    return _looks_unlearned_yet_rejected(run, "uniform")


def looks_unlearned_yet_rejected_adversarial(run: Run) -> Verdict:
    """The paper's point, adversarial split (Table 1b: retain fine-tune and forget ascent at forget
    accuracy 0.02-0.03, the class gone as after retraining, yet epsilon_LB 84 and 86): among the
    heuristics whose forget and test accuracies are within 0.05 of Retrain's, more are rejected than a
    Retrain-level run allows."""
    return _looks_unlearned_yet_rejected(run, "adversarial")


def llm_looks_unlearned_yet_rejected(run: Run) -> Verdict:
    """The paper's point on language models (config/llm.yaml's llm_qa): among the methods whose answer
    accuracy on the forgotten entities' pairs is at most Retrain's + 0.05 and whose held-out accuracy is
    within 0.05 of Retrain's, more are rejected than a Retrain-level run allows (and there is at least
    one such row)."""
    t = run.table("llm_qa")
    rt = one(t, "Retrain")
    methods = t[~t.method.isin(["No unlearning", "Retrain"])]
    if methods.empty:
        raise Missing("llm_qa's method rows")
    looks = ((methods.forget_acc - float(rt.forget_acc)) <= 0.05 + 1e-12) & ((methods.test_acc - float(rt.test_acc)).abs() <= 0.05 + 1e-12)
    return _rejected_among_lookalikes(methods, looks, rt, run.zeta,
                                      lambda r: f"{r.method}: forget {r.forget_acc:.3f}, test {r.test_acc:.3f}, claim {fmt(r.epsilon_lb_claim)}")


def uniform_guesses_as_papers(run: Run) -> Verdict:
    """Table 1b's magnitude, scale-free: the paper's uniform heuristics (79.5-100.5 at m = 4,500, r =
    3,000, L = 10) guessed 0.66-0.68 of their r guesses right; here each uniform fine-tuning heuristic
    that looks unlearned guesses within 0.05 of 0.67 (the share is the same number at any audit size)."""
    t = _heuristic_rows(run)
    t = t[(t.split == "uniform") & ~t.not_forgotten.astype(bool) & (t.method != "Hessian")]
    if t.empty:
        raise Missing("uniform heuristics that look unlearned")
    ok = bool((abs(t.guess_fraction - 0.67) <= 0.05).all())
    return ok, ", ".join(f"{r.method} {r.guess_fraction:.2f} (at the paper's size: Theorem 4.2 {fmt(r.epsilon_lb_theorem42_at_paper_size)})"
                         for r in t.itertuples()) + " (paper 0.66-0.68: 79.5-100.5)", \
        {"guess fraction": float(0.05 - abs(t.guess_fraction - 0.67).max()) + 1e-9}


def forget_ascent_rejected(run: Run) -> Verdict:
    """Tables 1b and 5: ascent on the forget set is readily audited (paper: U = 79.5, A = 86; B = 1:
    90.1): more of its rows (both splits, each batch size) reject than a Retrain-level run would."""
    t1 = rows(run.table("table1b"), "Forget ascent")
    t5 = rows(reported(run.table("table5")), "Forget ascent")
    claims = list(t1.epsilon_lb_claim) + list(t5[t5.batch_size > 1].epsilon_lb_claim)
    ok, count, rows_ = rejected_count(claims, run.zeta)
    return ok, f"{count}: " + ", ".join(f"{r.split} {fmt(r.epsilon_lb_claim)} (forget {r.forget_acc:.3f})" for r in t1.itertuples()) + \
        "; " + ", ".join(f"B={int(r.batch_size)} {fmt(r.epsilon_lb_claim)}" for r in t5.itertuples()), {"rows": rows_}


def uniform_over_adversarial(run: Run) -> Verdict:
    """Section 7.3: the bound under the uniform split typically exceeds the adversarial one (paper:
    every method but pure retain fine-tuning and forget ascent, the mild exceptions): uniform above
    adversarial for more than half of Table 1b's methods."""
    t = _heuristic_rows(run)
    pairs = []
    for m in HEURISTICS:
        sub = t[t.method == m]
        if set(sub.split) >= {"uniform", "adversarial"}:
            u, a = float(one(sub, m, "uniform").epsilon_lb_claim), float(one(sub, m, "adversarial").epsilon_lb_claim)
            pairs.append((m, u, a))
    if not pairs:
        raise Missing("methods on both splits")
    above = sum(u > a for _, u, a in pairs)
    return above > len(pairs) / 2, f"U > A for {above} of {len(pairs)}: " + ", ".join(f"{m} {fmt(u)} / {fmt(a)}" for m, u, a in pairs), \
        {"methods": above - len(pairs) // 2 - 0.5}


def ida_adversarial_rises_with_q(run: Run) -> Verdict:
    """Section 7.3: on the adversarial split IDA's bound rises with q (paper: 0 -> 18 -> 66), unlearning
    degrading as the interleaving thins: the claim at q = 4 exceeds q = 1's, and q = 2's lies between."""
    t = run.table("table1b")
    c = [float(one(t, f"IDA q={q}", "adversarial").epsilon_lb_claim) for q in (1, 2, 4)]
    return c[0] <= c[1] <= c[2] and c[2] > c[0], " -> ".join(fmt(x) for x in c) + " (paper 0 -> 18 -> 66)", \
        {"q=2 over q=1": c[1] - c[0] + 1e-9, "q=4 over q=2": c[2] - c[1] + 1e-9, "q=4 over q=1": c[2] - c[0]}


def hessian_moves_and_leaks_most(run: Run) -> Verdict:
    """Section 7.3: the Hessian method, certified only for convex losses, moves the model (paper: retain
    accuracy 0.69) and gives the largest uniform bound of the heuristics (paper: 142.5): not a no-op,
    and its uniform claim at least every other heuristic's."""
    t = _heuristic_rows(run)
    u = t[t.split == "uniform"]
    h = one(u, "Hessian")
    others = u[u.method != "Hessian"].epsilon_lb_claim
    ok = not bool(h.no_op) and float(h.epsilon_lb_claim) >= float(others.max())
    return ok, f"Hessian {fmt(h.epsilon_lb_claim)} (no_op {bool(h.no_op)}, forget {h.forget_acc:.3f}); the others at most {fmt(others.max())}", \
        {"no-op rows": count_margin(int(bool(h.no_op)), 0), "claim over the others'": float(h.epsilon_lb_claim) - float(others.max()) + 1e-9}


# --------------------------------------------------------------------------- trends

def table3_logit_over_loss(run: Run) -> Verdict:
    """Table 3 (App. E.1): the logit score's claim is at least the cross-entropy score's in at least two
    thirds of the cells where either is positive (the paper: slightly tighter in most settings)."""
    t = run.table("table3")
    cells = t[(t.epsilon_lb_claim_logit > 0) | (t.epsilon_lb_claim_loss > 0)]
    if cells.empty:
        return False, "no positive cell", {"cells": -0.5}
    share = float((cells.epsilon_lb_claim_logit >= cells.epsilon_lb_claim_loss).mean())
    return share >= 2 / 3, f"logit >= loss in {share:.0%} of {len(cells)} cells", {"share of cells": share - 2 / 3 + 1e-9}


def table4_mean_median_agree(run: Run) -> Verdict:
    """Table 4 (App. E.2): the mean and median statistics agree (the paper: within a few percent): their
    claims differ by at most 10 % of the larger in every cell where either is positive."""
    t = run.table("table4")
    cells = t[(t.epsilon_lb_claim_mean > 0) | (t.epsilon_lb_claim_median > 0)]
    if cells.empty:
        return False, "no positive cell", {"cells": -0.5}
    rel = (cells.epsilon_lb_claim_mean - cells.epsilon_lb_claim_median).abs() / cells[["epsilon_lb_claim_mean", "epsilon_lb_claim_median"]].max(axis=1)
    return bool((rel <= 0.10).all()), f"largest difference {rel.max():.0%} over {len(cells)} cells ({cells.loc[rel.idxmax(), 'method']}, r = {int(cells.loc[rel.idxmax(), 'r'])})", \
        {"relative difference": 0.10 - float(rel.max()) + 1e-9}


def inverted_u_in_r(run: Run) -> Verdict:
    """Table 3 at B = 1 (App. F.3): No unlearning's claim first rises with r and then falls (the
    paper's inverted U), its largest at an r inside the grid, on both splits."""
    t = run.table("table3")
    out, ok, margins = [], True, {}
    for split in ("uniform", "adversarial"):
        sub = rows(t, "No unlearning", split).sort_values("r")
        best = int(sub.loc[sub.epsilon_lb_claim_logit.idxmax(), "r"])
        ok &= sub.r.min() < best < sub.r.max()
        c = sub.epsilon_lb_claim_logit.to_numpy()
        margins[f"{split} inner peak over the ends"] = float(c[1:-1].max(initial=-np.inf) - max(c[0], c[-1]))
        out.append(f"{split}: " + ", ".join(f"r={int(r)} {fmt(v)}" for r, v in zip(sub.r, sub.epsilon_lb_claim_logit)))
    return ok, "; ".join(out), margins


def table5_falls_with_b(run: Run) -> Verdict:
    """Table 5 (App. F.3): at each batch size's reported cell, No unlearning's claim falls as B grows
    (fewer, larger candidate batches), as the paper's rows do."""
    t5 = run.table("table5")
    rep = reported(t5)
    rep = rep[rep.method == "No unlearning"].sort_values("batch_size")
    if len(rep) < 2:
        raise Missing("Table 5 at two batch sizes")
    vals = rep.epsilon_lb_claim.to_numpy()
    return bool(np.all(np.diff(vals) < 0)), ", ".join(f"B={int(b)} r={int(r)}: {fmt(v)}" for b, r, v in zip(rep.batch_size, rep.r, vals)), \
        {"smallest fall": float(-np.diff(vals).max())}


def table7_falls_with_sigma(run: Run) -> Verdict:
    """Table 7 (App. G.4): the Hessian method's claim falls as its final noise sigma grows."""
    t7 = run.table("table7")
    h = t7[t7.sigma.notna()].sort_values("sigma")
    return bool(np.all(np.diff(h.epsilon_lb_claim.to_numpy()) <= 0)), " -> ".join(f"{s:g}: {fmt(c)}" for s, c in zip(h.sigma, h.epsilon_lb_claim)), \
        {"smallest fall": float(-np.diff(h.epsilon_lb_claim.to_numpy()).max(initial=-np.inf)) + 1e-9}


def table7_accuracy_falls(run: Run) -> Verdict:
    """Table 7 (App. G.4): the noise that lowers the bound costs accuracy (paper: test 0.51 -> 0.42 ->
    0.19): test accuracy at the largest sigma at least 0.05 below the smallest's."""
    t7 = run.table("table7")
    h = t7[t7.sigma.notna()].sort_values("sigma")
    drop = float(h.test_acc.iloc[0] - h.test_acc.iloc[-1])
    return drop >= 0.05, " -> ".join(f"{s:g}: {a:.3f}" for s, a in zip(h.sigma, h.test_acc)) + \
        " (paper 0.51 -> 0.42 -> 0.19)", {"accuracy drop": drop - 0.05 + 1e-9}


def bound_grows_with_m(run: Run) -> Verdict:
    """The audit's size, not the method, sets the bound's magnitude (README, "Why the bounds are smaller
    than the paper's"): at a fixed share of right guesses, the method's claim grows with m; the largest
    m's claim exceeds the smallest's, the claims do not fall with m, and every m's guess fraction lies
    within the others' intervals."""
    f = run.figure("nn_epsilon_vs_m")
    method = f[~f.method.isin(CONTROLS)].sort_values("m")
    if method.m.nunique() < 2:
        raise Missing("the growing-m series")
    c = method.epsilon_lb_claim.to_numpy()
    lo, hi = method.guess_fraction_low.max(), method.guess_fraction_high.min()
    fixed = bool(method.guess_fraction.between(lo, hi).all()) if lo <= hi else False
    ok = bool(np.all(np.diff(c) >= 0) and c[-1] > c[0] and fixed)
    inside = float(min(method.guess_fraction.min() - lo, hi - method.guess_fraction.max()))
    return ok, ", ".join(f"m={int(r.m)}: {fmt(r.epsilon_lb_claim)} at {r.guess_fraction:.2f}" for r in method.itertuples()) + \
        f" (guess fractions {'within' if fixed else 'outside'} a common interval)", \
        {"smallest rise": float(np.diff(c).min()) + 1e-9, "largest m over smallest": float(c[-1] - c[0]),
         "guess fraction inside the common interval": inside + 1e-9}


# --------------------------------------------------------------------------- Shakespeare (Table 1a)

def shakespeare_ida_grid(run: Run) -> Verdict:
    """Table 1a: IDA's bound falls with lambda and with the forget epochs E_f (the paper's 13.15 ->
    0.17), and is at most the No-unlearning control's."""
    t = run.table("table1a")
    get = lambda label: float(one(t, label).epsilon_lb_claim)  # noqa: E731
    base, ef3, lam, both = get("IDA q=1"), get("IDA q=1, Ef=3"), get("IDA q=1, lambda=1.5"), get("IDA q=1, lambda=1.5, Ef=3")
    ctl = get("No unlearning")
    ok = base >= ef3 >= both and base >= lam >= both and max(base, ef3, lam, both) <= ctl and base > both
    return ok, f"(0.5, 2) {fmt(base)}, (0.5, 3) {fmt(ef3)}, (1.5, 2) {fmt(lam)}, (1.5, 3) {fmt(both)}; No unlearning {fmt(ctl)}", \
        {"falls with E_f": min(base - ef3, lam - both) + 1e-9, "falls with lambda": min(base - lam, ef3 - both) + 1e-9,
         "control over the grid": ctl - max(base, ef3, lam, both) + 1e-9, "first over last": base - both}


def shakespeare_ascent_undetectable(run: Run) -> Verdict:
    """Table 1a: ascent on the forget set is essentially undetectable on Shakespeare (paper: 0.17) while
    the other methods are rejected: its claim below 0.5, and more of the other methods' rows reject than
    a Retrain-level run would."""
    t = run.table("table1a")
    fa = float(one(t, "Forget ascent").epsilon_lb_claim)
    others = t[~t.method.isin(CONTROLS + ("Forget ascent",))]
    ok, count, rows_ = rejected_count(others.epsilon_lb_claim, run.zeta)
    return fa < 0.5 and ok, f"forget ascent {fmt(fa)}; the others: {count}", {"forget ascent's claim": 0.5 - fa, "rows": rows_}


def shakespeare_finetune_top(run: Run) -> Verdict:
    """Table 1a: pure retain fine-tuning gives the largest bound of the methods (paper: 16.06, above
    IDA's 13.15-14.42 and the Hessian's 4.18)."""
    t = run.table("table1a")
    methods = t[~t.method.isin(CONTROLS)]
    top = methods.loc[methods.epsilon_lb_claim.idxmax()]
    ft = float(one(t, 'Retain fine-tune').epsilon_lb_claim)
    others = methods[methods.method != "Retain fine-tune"].epsilon_lb_claim
    rest = float(others.max()) if len(others) else -np.inf
    return top.method == "Retain fine-tune", f"largest: {top.method} {fmt(top.epsilon_lb_claim)}; retain fine-tune " \
        f"{fmt(ft)} (paper 16.06)", {"over the next method": ft - rest}


# --------------------------------------------------------------------------- certified audits (Section 7.1, App. F.4)

def certified_below_claim(run: Run) -> Verdict:
    """Every certified audit's claim (and Theorem 4.2's) lies below its certified epsilon (Table 6,
    Figures 1b, 1c): the audit does not accuse a certificate that holds."""
    out, ok, gaps = [], True, []
    t6 = run.table("table6")
    cert = t6[t6.certified.astype(str) == "True"]
    cols = [c for c in ("epsilon_lb_claim_first_step", "epsilon_lb_claim", "epsilon_lb_theorem42_first_step", "epsilon_lb_theorem42") if c in t6.columns]
    for r in cert.itertuples():
        top = float(np.nanmax([getattr(r, c) for c in cols]))
        ok &= top <= r.epsilon
        gaps.append(r.epsilon - top)
        out.append(f"Table 6 {r.split} eps={r.epsilon:g}: {fmt(top)}")
    for fig, col in (("figure1b", "epsilon"), ("figure1c", "target_epsilon")):
        f = run.figure(fig)
        f = f[f[col].notna()]
        top = f[[c for c in ("epsilon_lb_claim", "epsilon_lb_theorem42", "epsilon_lb_eq3") if c in f.columns]].max(axis=1)
        ok &= bool((top <= f[col]).all())
        gaps.append(float((f[col] - top).min()))
        out.append(f"{fig}: largest {fmt(top.max())} (eps {f.loc[top.idxmax(), col]:g})")
    return ok, "; ".join(out), {"epsilon minus the bound": min(gaps, default=np.inf) + 1e-9}


def table6_zero(run: Run) -> Verdict:
    """Table 6 (Section 7.1): the audit yields epsilon_LB ~ 0 for model clipping at its certified
    stopping time: every certified row's claim is 0 at the first noisy step and after fine-tuning."""
    t6 = run.table("table6")
    cert = t6[t6.certified.astype(str) == "True"]
    vals = pd.concat([cert.epsilon_lb_claim_first_step, cert.epsilon_lb_claim]).astype(float)
    return bool((vals.fillna(0) == 0).all()), f"{len(cert)} rows, largest claim {fmt(vals.max())}", {"rows above 0": count_margin(int((vals.fillna(0) != 0).sum()), 0)}


def r2d_tighter_than_clipping(run: Run) -> Verdict:
    """Section 7.1: rewind-to-delete attains tighter lower bounds than model clipping across the sweep:
    its largest claim (Figure 1c) exceeds model clipping's largest certified claim (Table 6)."""
    f = run.figure("figure1c")
    r2d = f[f.target_epsilon.notna()].epsilon_lb_claim.max()
    t6 = run.table("table6")
    mc = t6[t6.certified.astype(str) == "True"][["epsilon_lb_claim", "epsilon_lb_claim_first_step"]].max().max()
    return bool(r2d > mc), f"rewind-to-delete up to {fmt(r2d)}, model clipping up to {fmt(mc)}", {"over model clipping": float(r2d - mc)}


def figure1a_uncertified_step1(run: Run) -> Verdict:
    """Figure 1a: the uncertified variant (C2 = 5, sigma = 1e-4) is rejected at its first noisy step on
    both splits, and every certified step's claim is 0."""
    f = run.figure("figure1a")
    unc = f[(f.variant == "uncertified") & (f.step == f[f.variant == "uncertified"].step.min())]
    cert = f[f.variant == "certified"]
    ok = len(unc) >= 1 and bool((unc.epsilon_lb_claim > 0).all()) and bool((cert.epsilon_lb_claim == 0).all())
    return ok, "step 1: " + ", ".join(f"{r.split} {fmt(r.epsilon_lb_claim)}" for r in unc.itertuples()) + \
        f"; certified steps: largest {fmt(cert.epsilon_lb_claim.max())}", \
        {"step 1's smallest claim": float(unc.epsilon_lb_claim.min()) if len(unc) else -1.0,
         "certified rows above 0": count_margin(int((cert.epsilon_lb_claim != 0).sum()), 0)}


def f4_first_step_near_zero(run: Run) -> Verdict:
    """App. F.4: just after its first noisy step, uncertified model clipping audited by the batchwise
    auditor gives ~0 (paper: 0.112 at B = 750, r = 6; 0.007 at B = 100, r = 40): its claim below 0.5
    at every batch size."""
    t = run.table("appendix_f4")
    out, ok, worst = [], True, -np.inf
    for (b, auditor), sub in t.groupby(["batch_size", "auditor"], sort=True):
        if auditor != "batchwise":
            continue
        method = sub[sub.step.notna()].iloc[0]
        ctl = sub[sub.method == "No unlearning"].iloc[0]
        ok &= float(method.epsilon_lb_claim) < 0.5
        worst = max(worst, float(method.epsilon_lb_claim))
        out.append(f"B={int(b)}: step 1 {fmt(method.epsilon_lb_claim)} (No unlearning {fmt(ctl.epsilon_lb_claim)})")
    if not out:
        raise Missing("App. F.4's batchwise rows")
    return ok, "; ".join(out) + " (paper 0.112 at B = 750, 0.007 at B = 100)", {"largest claim under 0.5": 0.5 - worst}


def table6_row3_at_chance(run: Run) -> Verdict:
    """Table 6's eps = 1e5 rows are flagged at_chance: its projection leaves only the class prior."""
    t6 = run.table("table6")
    r3 = t6[t6.epsilon == 1e5]
    if r3.empty:
        raise Missing("Table 6 row 3")
    return bool(r3.at_chance.astype(bool).all()), ", ".join(f"{r.split} test {r.test_acc:.3f}" for r in r3.itertuples()), \
        {"rows not at chance": count_margin(int((~r3.at_chance.astype(bool)).sum()), 0)}


def r2d_eps1_at_chance(run: Run) -> Verdict:
    """Figure 1c: rewind-to-delete at eps = 1 is flagged at chance (its certificate's noise destroys the model)."""
    f = run.figure("figure1c")
    r = f[f.target_epsilon == 1.0]
    if r.empty:
        raise Missing("rewind-to-delete at eps = 1")
    return bool(r.at_chance.astype(bool).all()), ", ".join(f"{x.split} test {x.test_acc:.3f}" for x in r.itertuples()), \
        {"rows not at chance": count_margin(int((~r.at_chance.astype(bool)).sum()), 0)}


# --------------------------------------------------------------------------- Section 8: convex losses

def _convex(run: Run, name: str) -> pd.DataFrame:
    return run.table(name).sort_values("epsilon")


def convex_valid(run: Run) -> Verdict:
    """Section 8, Table 2: every bound of the certified convex mechanisms, pairwise and joint, lies
    below its certified epsilon."""
    out, ok, gap = [], True, np.inf
    for name in ("table2a", "table2b", "table2c"):
        try:
            t = _convex(run, name)
        except Missing:
            continue
        top = t[["epsilon_lb_pairwise", "epsilon_lb_joint"]].max(axis=1)
        ok &= bool((top <= t.epsilon).all())
        gap = min(gap, float((t.epsilon - top).min()))
        out.append(f"{name}: largest bound over epsilon {float((top / t.epsilon).max()):.2f}")
    if not out:
        raise Missing("Table 2")
    return ok, "; ".join(out), {"epsilon minus the bound": gap + 1e-9}


def convex_tracks_epsilon(run: Run) -> Verdict:
    """Section 8: on convex losses the audit tracks the certificate: the pairwise bound of Tables 2a and
    2b never falls as epsilon grows and rises by more than 5 over the grid (paper: 0 -> 10.20 and
    0.02 -> 10.20, saturating near 10.19 at 2L = 200,000)."""
    out, ok, margins = [], True, {}
    for name in ("table2a", "table2b"):
        t = _convex(run, name)
        p = t.epsilon_lb_pairwise.to_numpy()
        ok &= bool(np.all(np.diff(p) >= -1e-9) and p[-1] - p[0] > 5)
        margins[f"{name} smallest rise"] = float(np.diff(p).min()) + 2e-9
        margins[f"{name} rise over 5"] = float(p[-1] - p[0] - 5)
        out.append(f"{name}: {fmt(p[0])} -> {fmt(p[-1])}")
    return ok, "; ".join(out), margins


def convex_logistic_zero(run: Run) -> Verdict:
    """Section 8 / App. H.4.2: the logistic loss yields a 0 bound at every certified epsilon."""
    t = _convex(run, "table2c")
    top = t[["epsilon_lb_pairwise", "epsilon_lb_joint"]].max(axis=1)
    return bool((top == 0).all()), f"{len(t)} epsilons, largest {fmt(top.max())}", {"rows above 0": count_margin(int((top != 0).sum()), 0)}


# --------------------------------------------------------------------------- Gaussian certified unlearning

def _slopes(run: Run, experiment: str) -> pd.DataFrame:
    path = run.results / "tables" / "gaussian_unlearning_slopes.csv"
    if not path.exists():
        raise Missing(str(path))
    s = pd.read_csv(path)
    s = s[(s.experiment == experiment) & (s.analysis == "primary") & (s.n_over_p == 1.0)]
    if s.empty:
        raise Missing(f"{experiment} slopes")
    return s


def _newton_slopes(run: Run, error: str) -> Verdict:
    s = _slopes(run, f"{error}_vs_p")
    get = lambda steps, noise: s[(s.newton_steps == steps) & (s.noise == noise)].slope  # noqa: E731
    g1, l1, l2 = get(1, "gaussian"), get(1, "laplace"), get(2, "laplace")
    if l2.empty or g1.empty:
        raise Missing("one- and two-step slopes")
    ok = bool((abs(g1 + 0.5) < 0.1).all() and (abs(l1) < 0.1).all() and (abs(l2 + 0.5) < 0.1).all())
    return ok, f"one step Gaussian {fmt(g1.min())}..{fmt(g1.max())}, l2-Laplace {fmt(l1.min())}..{fmt(l1.max())}; two steps l2-Laplace {fmt(l2.min())}..{fmt(l2.max())}", \
        {"one step Gaussian slope": float(0.1 - abs(g1 + 0.5).max()), "one step l2-Laplace slope": float(0.1 - abs(l1).max()),
         "two steps l2-Laplace slope": float(0.1 - abs(l2 + 0.5).max())}


def seed2_newton_slopes(run: Run) -> Verdict:
    """The second paper (Fig. 1): with one Newton step and Gaussian noise the GED vanishes like p^-1/2 (slope within
    0.1 of -0.5); the l2-Laplace noise leaves it flat (|slope| < 0.1), and two Newton steps make it fall
    like p^-1/2 too (within 0.1 of -0.5)."""
    return _newton_slopes(run, "ged")


def seed2_ued_newton_slopes(run: Run) -> Verdict:
    """The second paper (Fig. 2): the error on the removed points (UED) behaves as the GED does: with one Newton step
    it falls like p^-1/2 under Gaussian noise and stays flat under l2-Laplace noise, two steps make it fall too
    (the same thresholds as the GED's)."""
    return _newton_slopes(run, "ued")


def seed2_gaussian_below_laplace(run: Run) -> Verdict:
    """The second paper: with one Newton step the Gaussian noise's GED lies far below the l2-Laplace noise's at every
    p, epsilon and m: at every point of the three GED figures, Gaussian's mean plus two standard errors below
    l2-Laplace's mean minus two."""
    worst = []
    for axis in ("p", "eps", "m"):
        f = run.figure(f"gaussian_unlearning_ged_vs_{axis}")
        f = f[f.newton_steps == 1]
        keys = ["error_loss", "line", "x"]
        both = f[f.noise == "gaussian"].merge(f[f.noise == "laplace"], on=keys, suffixes=("_g", "_l"))
        if both.empty:
            raise Missing(f"both noises in the GED-vs-{axis} figure")
        gap = (both.mean_l - 2 * both.se_l) - (both.mean_g + 2 * both.se_g)
        worst.append((axis, float(gap.min()), float((both.mean_l / both.mean_g).min()), len(both)))
    ok = all(gap > 0 for _, gap, _, _ in worst)
    return ok, "; ".join(f"vs {a}: {n} points, l2-Laplace / Gaussian at least {fmt(r)}" + ("" if gap > 0 else " (intervals overlap)")
                         for a, gap, r, n in worst), {f"gap between the intervals vs {a}": gap for a, gap, _, _ in worst}


def seed2_ged_falls_with_eps(run: Run) -> Verdict:
    """The second paper: the Gaussian noise's GED falls as epsilon grows (towards retraining's): for one Newton step
    and every m, each larger epsilon's mean GED is below the smaller one's by more than two standard errors."""
    f = run.figure("gaussian_unlearning_ged_vs_eps")
    f = f[(f.newton_steps == 1) & (f.noise == "gaussian")].sort_values("x")
    if f.empty:
        raise Missing("Gaussian GED-vs-epsilon points")
    lines = []
    ok, margin = True, np.inf
    for m, line in f.groupby("line"):
        drop = line["mean"].diff().iloc[1:]
        band = 2 * (line.se.pow(2) + line.se.shift().pow(2)).pow(0.5).iloc[1:]
        ok &= bool((drop < -band).all())
        margin = min(margin, float((-band - drop).min()))
        lines.append(f"m={int(m)}: {fmt(line['mean'].iloc[0])} -> {fmt(line['mean'].iloc[-1])}")
    return ok, f"epsilon {fmt(f.x.min())} -> {fmt(f.x.max())}: " + ", ".join(lines), {"fall beyond two standard errors": margin}


def seed2_ged_vs_m(run: Run) -> Verdict:
    """The second paper: the GED grows with the number m of removed points, Gaussian noise like m^1.4 and
    l2-Laplace noise like m^0.24 (one Newton step): both slopes within 0.2 of the paper's."""
    s = _slopes(run, "ged_vs_m")
    s = s[s.newton_steps == 1]
    get = lambda noise: float(s[s.noise == noise].slope.mean())  # noqa: E731
    g, l2 = get("gaussian"), get("laplace")
    return abs(g - 1.4) <= 0.2 and abs(l2 - 0.24) <= 0.2, f"Gaussian {fmt(g)} (paper 1.4), l2-Laplace {fmt(l2)} (paper 0.24)", \
        {"Gaussian slope": 0.2 - abs(g - 1.4) + 1e-9, "l2-Laplace slope": 0.2 - abs(l2 - 0.24) + 1e-9}


# --------------------------------------------------------------------------- the list

@dataclass(frozen=True)
class Claim:
    """A statement and its check; ``diverges`` is the README's measured cause where the default run
    is known not to show a statement of the paper (the check's failure then prints DIVERGES), and
    ``by_construction`` marks a statement every run of these designs shows."""

    key: str
    check: Callable[[Run], Verdict]
    diverges: str | None = None
    by_construction: bool = False

    @property
    def text(self) -> str:
        return " ".join((self.check.__doc__ or "").split())


CLAIMS = [
    Claim("no-unlearning-rejected", no_unlearning_rejected),
    Claim("retrain-type-one", retrain_type_one),
    Claim("controls-below-ceiling", controls_below_ceiling),
    Claim("models-memorise", models_memorise),
    Claim("no-power-nowhere", no_power_nowhere),
    Claim("joint-controls-on-ceiling", joint_controls_on_ceiling, by_construction=True),
    Claim("reference-never-weaker", reference_never_weaker, by_construction=True),
    Claim("pairwise-eq3-zero", pairwise_zero, by_construction=True),
    Claim("pairwise-reference-rejects", pairwise_reference_rejects),
    Claim("heuristics-rejected", heuristics_rejected),
    Claim("looks-unlearned-yet-rejected-uniform", looks_unlearned_yet_rejected_uniform),
    Claim("looks-unlearned-yet-rejected-adversarial", looks_unlearned_yet_rejected_adversarial,
          diverges="once the class is forgotten as after retraining, the heuristics keep almost no membership signal an audit of "
                   "m = 144 detects (d' near 0 against No unlearning's; analysis/divergences.py)"),
    Claim("llm-looks-unlearned-yet-rejected", llm_looks_unlearned_yet_rejected),
    Claim("uniform-guesses-as-papers", uniform_guesses_as_papers,
          diverges="at the budget where they look unlearned, the digits heuristics keep little of their models' memorisation "
                   "(d' in analysis/divergences.py, against No unlearning's); the paper's CIFAR-100 models test at 0.53"),
    Claim("forget-ascent-rejected", forget_ascent_rejected),
    Claim("uniform-over-adversarial", uniform_over_adversarial),
    Claim("ida-adversarial-rises-with-q", ida_adversarial_rises_with_q,
          diverges="at the budget where it looks unlearned IDA keeps almost no membership signal on the adversarial split, at any q "
                   "(d' in analysis/divergences.py)"),
    Claim("hessian-moves-and-leaks-most", hessian_moves_and_leaks_most,
          diverges="on models that fit D(S) the retain gradient is ~0, so LiSSA's step leaves the model where it was at every grid "
                   "point (analysis/regime/budgets.out.txt); the paper's models test at 0.51 and retain 0.69"),
    Claim("bound-grows-with-m", bound_grows_with_m),
    Claim("table3-logit-over-loss", table3_logit_over_loss),
    Claim("table4-mean-median-agree", table4_mean_median_agree,
          diverges="with L = 10 runs the median moves in steps of a whole run"),
    Claim("inverted-u-in-r", inverted_u_in_r),
    Claim("table5-falls-with-b", table5_falls_with_b),
    Claim("table7-falls-with-sigma", table7_falls_with_sigma),
    Claim("table7-accuracy-falls", table7_accuracy_falls,
          diverges="the noise swamps the membership gap long before the digits margins (analysis/noise_accuracy.py)"),
    Claim("table1a-ida-grid", shakespeare_ida_grid),
    Claim("table1a-ascent-undetectable", shakespeare_ascent_undetectable),
    Claim("table1a-finetune-top", shakespeare_finetune_top,
          diverges="no row can exceed the models' own leakage at 20 roles and 64 units (test 0.36)"),
    Claim("certified-below-claim", certified_below_claim),
    Claim("table6-zero", table6_zero),
    Claim("r2d-tighter-than-clipping", r2d_tighter_than_clipping),
    Claim("figure1a-uncertified-step1", figure1a_uncertified_step1),
    Claim("f4-first-step-near-zero", f4_first_step_near_zero,
          diverges="sigma = 1e-4 per weight is far below memorising models' membership signal (analysis/divergences.py)"),
    Claim("table6-row3-at-chance", table6_row3_at_chance),
    Claim("r2d-eps1-at-chance", r2d_eps1_at_chance),
    Claim("convex-valid", convex_valid),
    Claim("convex-tracks-epsilon", convex_tracks_epsilon),
    Claim("convex-logistic-zero", convex_logistic_zero),
    Claim("seed2-newton-slopes", seed2_newton_slopes),
    Claim("seed2-ued-newton-slopes", seed2_ued_newton_slopes),
    Claim("seed2-gaussian-below-laplace", seed2_gaussian_below_laplace),
    Claim("seed2-ged-falls-with-eps", seed2_ged_falls_with_eps),
    Claim("seed2-ged-vs-m", seed2_ged_vs_m,
          diverges="both follow the noise's m^1.5; the l2-Laplace slope depends on the loss's clip c, which the paper does not state"),
]


def status_of(claim: Claim, ok: bool) -> str:
    """PASS, or for a failed check BY-CONSTRUCTION's opposite FAIL, DIVERGES where the README names the cause, else FAIL."""
    if claim.by_construction:
        return "BY-CONSTRUCTION" if ok else "FAIL"
    if ok:
        return "PASS"
    return "DIVERGES" if claim.diverges else "FAIL"


def evaluate(results: Path) -> pd.DataFrame:
    """``key, status, numbers, claim, margins`` for every claim on the run at ``results`` (``margins``:
    the check's :data:`Margins`, empty for a skipped claim)."""
    run = Run(results)
    out = []
    for c in CLAIMS:
        margins: Margins = {}
        try:
            ok, numbers, margins = c.check(run)
            status = status_of(c, ok)
            if status == "DIVERGES":
                numbers += f" [cause: {c.diverges}]"
        except (Missing, KeyError) as why:
            status, numbers = "SKIP", f"the run lacks {why}"
        out.append({"key": c.key, "status": status, "numbers": numbers, "claim": c.text, "margins": margins})
    return pd.DataFrame(out)


def cpu_of(results: Path) -> str:
    """The CPU and kernel set that computed a run (its provenance.json), or the folder's name without one."""
    path = results / "provenance.json"
    if not path.exists():
        return f"unrecorded CPU ({results})"
    cpu = json.loads(path.read_text()).get("cpu", {})
    return f"{cpu.get('model') or 'unnamed CPU'} ({cpu.get('torch_capability') or 'unknown'} kernels)"


def beyond_spread(margins: list[Margins], passing: bool) -> tuple[bool, str]:
    """Whether a claim's status is farther from flipping than the runs differ: each of its conditions'
    margins (one dict per run) spreads by ``max - min`` between the runs; a passing claim needs every
    condition's smallest margin above that spread, a failing one some condition whose largest margin
    lies below minus its spread.  Returns the verdict and the deciding condition as text."""
    keys = set.intersection(*(set(m) for m in margins)) if margins else set()
    if not keys:
        return False, "no margin"
    slack = {}
    for k in sorted(keys):
        values = np.array([m[k] for m in margins], dtype=float)
        spread = 0.0 if np.all(values == values[0]) else float(values.max() - values.min())  # inf where one run's is infinite
        slack[k] = (float(values.min()) - spread if passing else -float(values.max()) - spread, float(values.min() if passing else values.max()), spread)
    pick = min(slack, key=lambda k: slack[k][0]) if passing else max(slack, key=lambda k: slack[k][0])
    s, margin, spread = slack[pick]
    return s > 0, f"{pick}: margin {margin:.3g}, spread {spread:.3g}"


def across_runs(runs: list[Path]) -> pd.DataFrame:
    """``key``, one status column per run (named by the run's folder), ``every_cpu`` and ``deciding``
    (the condition and its margin beside its spread, :func:`beyond_spread`).  ``every_cpu`` is
    ``holds`` where every run gives the claim the same status, its margins exceed the spread between
    the runs and the runs come from at least two CPUs or kernel sets; ``within spread`` where the
    status is the same but a margin does not exceed that spread (another CPU may flip it);
    ``differs`` where the statuses differ; ``one CPU measured`` where the runs share one."""
    tables = [evaluate(r).set_index("key") for r in runs]
    out = pd.concat([t.status.rename(str(r)) for t, r in zip(tables, runs)], axis=1)
    several = len({cpu_of(r) for r in runs}) > 1
    every, deciding = [], []
    for key in out.index:
        statuses = set(out.loc[key])
        robust, why = beyond_spread([t.loc[key, "margins"] for t in tables], passing=bool(statuses & {"PASS", "BY-CONSTRUCTION"}))
        deciding.append(why)
        if len(statuses) > 1:
            every.append("differs")
        elif not several:
            every.append("one CPU measured")
        else:
            every.append("holds" if robust else "within spread")
    out["every_cpu"], out["deciding"] = every, deciding
    return out.reset_index()


def main(argv: list[str]) -> int:
    runs = [Path(a) for a in argv[1:]] or [Path("results")]
    for results in runs:
        if not (results / "config.yaml").exists():
            print(f"error: {results}/config.yaml not found: give the results directory of a finished run", file=sys.stderr)
            return 2
    if len(runs) > 1:
        table = across_runs(runs)
        for r in runs:
            print(f"{r}: {cpu_of(r)}")
        for row in table.itertuples(index=False):
            print(f"{row.every_cpu:17s} {row.key}: " + " / ".join(str(row[i + 1]) for i in range(len(runs))) + f" ({row.deciding})")
        print("\n" + ", ".join(f"{n} {k}" for k, n in table.every_cpu.value_counts().items()))
        return 1 if (table.iloc[:, 1:-1] == "FAIL").any().any() else 0
    results = runs[0]
    table = evaluate(results)
    for r in table.itertuples():
        print(f"{r.status}  {r.key}: {r.claim}\n      {r.numbers}")
    counts = table.status.value_counts()
    print("\n" + ", ".join(f"{counts.get(s, 0)} {s}" for s in STATUSES))
    return 1 if counts.get("FAIL", 0) else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
