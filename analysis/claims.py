"""Every claim the README makes about the default run, recomputed from a finished run's files.

    python analysis/claims.py [RESULTS_DIR]        (default: results)

Each claim reads the run's tables and figure CSVs (``tables/*.csv``, ``figures/*.csv``) and, where
it needs them, its Parquet files, and prints one line: PASS or FAIL with this run's numbers, or SKIP
where the run lacks what the claim reads (a smaller config).  The exit status is 1 when a claim
fails.  The claims are statements about the experiment (controls, separation, orderings, flags,
trends), not another machine's digits: the digits of the image designs depend on the CPU's kernels
(README, "Results of the default run"), the claims must hold on every machine.

Torch-free; the library's own functions (``membership_signal``) where a number is recomputed.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np
import pandas as pd
import yaml

from unlearn_audit.auditors import membership_signal
from unlearn_audit.pipeline.plan.paths import finished_run_files

#: The share of its ceiling below which a control's bound is a measurement (README, "Reading a table").
CEILING_SHARE = 0.8


class Missing(Exception):
    """The run lacks a file or row a claim reads: the claim is skipped."""


@dataclass
class Run:
    """A finished run's results folder, its files read on demand."""

    results: Path

    def __post_init__(self) -> None:
        self.config = yaml.safe_load((self.results / "config.yaml").read_text())
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

    def experiment(self, name: str) -> dict:
        exps = self.config.get("nn", {}).get("experiments", {})
        if name not in exps:
            raise Missing(f"experiment {name}")
        return exps[name]

    def eval_scores(self, experiment: str) -> pd.DataFrame:
        paths = finished_run_files(self.results, experiment, "eval", "scores.parquet")
        if not paths:
            raise Missing(f"{experiment}'s evaluation scores")
        return pd.concat([pd.read_parquet(p) for p in paths], ignore_index=True)


def claim_column(table: pd.DataFrame) -> pd.Series:
    """Each row's claim: its pre-registered test's bound (``epsilon_lb_<test>`` where the table has
    one, the ``cell`` naming the test), else Theorem 4.2's ``epsilon_lb``."""
    out = table["epsilon_lb"].astype(float).copy()
    for test in ("reference", "adaptive", "mgf", "exact"):
        col = f"epsilon_lb_{test}"
        if col in table.columns and "cell" in table.columns:
            named = table["cell"].astype(str).str.contains(f"({test} test)", regex=False)
            out[named] = table.loc[named, col].astype(float)
    return out


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


def fmt(x: float) -> str:
    return f"{x:.2f}" if np.isfinite(x) else "nan"


# --------------------------------------------------------------------------- the claims

def control_claims(run: Run, base: str) -> pd.DataFrame:
    """``experiment, design, claim``: each control's reported bound under its pre-registered test
    (``bounds.parquet``; the pairwise controls, whose auditor's ceiling is 0 at L = 10, are left out)."""
    rows = []
    for name, e in run.config.get("nn", {}).get("experiments", {}).items():
        if e.get("method") != "no_unlearning" or e.get("base", "trained") != base:
            continue
        path = run.results / name / "bounds.parquet"
        if not path.exists():
            continue
        b = pd.read_parquet(path)
        r = b[b.role.isin(["preregistered", "selected"])].iloc[0]
        rows.append({"experiment": name, "design": e["design"], "claim": float(r.epsilon_lb_test)})
    if not rows:
        raise Missing(f"controls with base {base}")
    return pd.DataFrame(rows)


def no_unlearning_rejected(run: Run) -> tuple[bool, str]:
    """Every design's No-unlearning control is rejected (its claim is positive): each audit can detect
    the leakage its trained models carry, so a 0 of a method on it is evidence, not a lack of power."""
    c = control_claims(run, "trained")
    bad = c[c.claim <= 0]
    return bad.empty, (f"{len(c)} controls, smallest {fmt(c.claim.min())} ({c.loc[c.claim.idxmin(), 'design']})"
                       + (f"; not rejected: {', '.join(bad.design)}" if len(bad) else ""))


def retrain_type_one(run: Run) -> tuple[bool, str]:
    """Retrain (exact unlearning) is rejected no more often than the level allows: of its n controls
    at most the 95 % quantile of Binomial(n, zeta) reject, each a type-I error of probability <= zeta."""
    from scipy.stats import binom

    c = control_claims(run, "retrain")
    zeta = float(run.config.get("zeta", 0.05))
    allowed = int(binom.ppf(0.95, len(c), zeta))
    rejected = c[c.claim > 0]
    listed = ", ".join(f"{r.design} {fmt(r.claim)}" for r in rejected.itertuples()) or "none"
    return len(rejected) <= allowed, f"{len(rejected)} of {len(c)} rejected (allowed {allowed}): {listed}"


def controls_below_ceiling(run: Run) -> tuple[bool, str]:
    """Tables 1b and 7 and Table 5 at B = 1, 2: No unlearning's bound is below 80 % of its ceiling
    at the reported cell, so a method's comparison with it is not decided by the ceiling."""
    out, ok = [], True
    for name in ("table1b", "table7"):
        for r in rows(run.table(name), "No unlearning").drop_duplicates(["split"]).itertuples():
            share = r.epsilon_lb / r.epsilon_lb_ceiling
            ok &= share < CEILING_SHARE
            out.append(f"{name} {r.split} {fmt(r.epsilon_lb)}/{fmt(r.epsilon_lb_ceiling)} = {share:.0%}")
    t5 = run.table("table5")
    for b in sorted(t5.batch_size.unique()):
        r = one(t5[t5.cell.isin(["preregistered", "selected"])], "No unlearning", batch_size=b)
        share = r.epsilon_lb / r.epsilon_lb_ceiling
        if b <= 2:
            ok &= share < CEILING_SHARE
        out.append(f"table5 B={b} r={r.r}: {share:.0%}" + ("" if b <= 2 else " (not compared)"))
    return ok, "; ".join(out)


def models_memorise(run: Run) -> tuple[bool, str]:
    """The image models memorise: No unlearning on the uniform split fits D(S) (retain accuracy
    >= 0.99), tests below it, and its candidates' d' (in-minus-out gap of the logit score over its
    run-to-run spread, median over examples) is at least 1.5."""
    r = one(run.table("table1b"), "No unlearning", "uniform")
    name = next((n for n, e in run.config["nn"]["experiments"].items()
                 if e.get("method") == "no_unlearning" and e.get("base", "trained") == "trained"
                 and "table1b" in e.get("tables", []) and run.config["nn"]["designs"][e["design"]]["split"] == "uniform"), None)
    if name is None:
        raise Missing("the uniform No-unlearning control")
    d = membership_signal(run.eval_scores(name))["d_prime"]
    ok = r.retain_acc >= 0.99 and r.test_acc < r.retain_acc and d >= 1.5
    return ok, f"retain {r.retain_acc:.3f}, test {r.test_acc:.3f}, d' {d:.2f}"


def no_power_nowhere(run: Run) -> tuple[bool, str]:
    """No image or text design is flagged no_power."""
    flagged = []
    for name in ("table1a", "table1b", "table5", "table7"):
        t = run.table(name)
        flagged += [f"{name}: {m}" for m in t.loc[t.no_power.astype(bool), "method"].unique()]
    return not flagged, "; ".join(flagged) if flagged else "none flagged"


def heuristics_rejected(run: Run) -> tuple[bool, str]:
    """Table 1b, the paper's finding: on both splits retain fine-tuning and IDA (q = 1, 2, 4) are
    rejected (their claims are positive: heuristic unlearning is not epsilon-unlearning for small
    epsilon), each below its No-unlearning control, and the Hessian method sits at that control's
    level (at least 90 % of it, flagged no_op)."""
    t = run.table("table1b").assign(claim=lambda d: claim_column(d))
    out, ok = [], True
    for split in ("uniform", "adversarial"):
        ctl = float(one(t, "No unlearning", split).claim)
        for label in ("Retain fine-tune", "IDA q=1", "IDA q=2", "IDA q=4"):
            c = float(one(t, label, split).claim)
            ok &= 0 < c < ctl
            out.append(f"{split} {label} {fmt(c)}")
        h = one(t, "Hessian", split)
        ok &= float(h.claim) >= 0.9 * ctl and bool(h.no_op)
        out.append(f"{split} Hessian {fmt(h.claim)} of No unlearning {fmt(ctl)}")
    return ok, "; ".join(out)


def table3_logit_over_loss(run: Run) -> tuple[bool, str]:
    """Table 3: the logit score's bound is at least the cross-entropy score's in at least two thirds
    of the cells where either is positive (the paper prefers the logit score)."""
    t = run.table("table3")
    cells = t[(t.epsilon_lb_logit > 0) | (t.epsilon_lb_loss > 0)]
    if cells.empty:
        raise Missing("positive Table 3 cells")
    share = float((cells.epsilon_lb_logit >= cells.epsilon_lb_loss).mean())
    return share >= 2 / 3, f"logit >= loss in {share:.0%} of {len(cells)} cells"


def inverted_u_in_r(run: Run) -> tuple[bool, str]:
    """Table 3 at B = 1: No unlearning's bound first rises with r and then falls (the paper's
    inverted U), its largest at an r inside the grid, on both splits."""
    t = run.table("table3")
    out, ok = [], True
    for split in ("uniform", "adversarial"):
        sub = rows(t, "No unlearning", split).sort_values("r")
        best = int(sub.loc[sub.epsilon_lb_logit.idxmax(), "r"])
        ok &= sub.r.min() < best < sub.r.max()
        out.append(f"{split}: " + ", ".join(f"r={int(r)} {fmt(v)}" for r, v in zip(sub.r, sub.epsilon_lb_logit)))
    return ok, "; ".join(out)


def table5_falls_with_b(run: Run) -> tuple[bool, str]:
    """Table 5: at each batch size's reported cell, No unlearning's bound falls as B grows (fewer,
    larger candidate batches: a smaller largest bound), as the paper's rows do."""
    t5 = run.table("table5")
    reported = t5[t5.cell.isin(["preregistered", "selected"]) & (t5.method == "No unlearning")].sort_values("batch_size")
    if len(reported) < 2:
        raise Missing("Table 5 at two batch sizes")
    vals = reported.epsilon_lb.to_numpy()
    return bool(np.all(np.diff(vals) < 0)), ", ".join(f"B={int(b)} r={int(r)}: {fmt(v)}" for b, r, v in zip(reported.batch_size, reported.r, vals))


def f4_first_step(run: Run) -> tuple[bool, str]:
    """App. F.4: just after its first noisy step, uncertified model clipping is rejected by the
    batchwise auditor at every batch size, at the level of the design's No-unlearning control (at
    least 80 % of it): its noise of 1e-4 per weight leaves the trained models' membership signal."""
    t = run.table("appendix_f4")
    out, ok = [], True
    for (b, auditor), sub in t.groupby(["batch_size", "auditor"], sort=True):
        if auditor != "batchwise":
            continue
        method = sub[sub.step.notna()].iloc[0]
        ctl = sub[sub.method == "No unlearning"].iloc[0]
        ok &= 0.8 * ctl.epsilon_lb <= method.epsilon_lb
        out.append(f"B={int(b)}: step 1 {fmt(method.epsilon_lb)}, No unlearning {fmt(ctl.epsilon_lb)}")
    joint = t[(t.auditor == "joint") & t.step.notna()]
    out += [f"joint B={int(r.batch_size)}: step 1 {fmt(r.epsilon_lb)} (ceiling {fmt(r.epsilon_lb_ceiling)})" for r in joint.itertuples()]
    return ok and bool(len(out)), "; ".join(out)


def certified_below_claim(run: Run) -> tuple[bool, str]:
    """Every certified audit's bound, Theorem 4.2's and the pre-registered claim, lies below its
    certified epsilon (Table 6, Figures 1b, 1c)."""
    out, ok = [], True
    t6 = run.table("table6")
    cert = t6[t6.certified.astype(str) == "True"]
    cols = [c for c in ("epsilon_lb_first_step", "epsilon_lb_final", "epsilon_lb_claim_first_step", "epsilon_lb_claim") if c in t6.columns]
    for r in cert.itertuples():
        top = float(np.nanmax([getattr(r, c) for c in cols]))
        ok &= top <= r.epsilon
        out.append(f"Table 6 {r.split} eps={r.epsilon:g}: {fmt(top)}")
    for fig, col in (("figure1b", "epsilon"), ("figure1c", "target_epsilon")):
        f = run.figure(fig)
        f = f[f[col].notna()]
        top = f[[c for c in ("epsilon_lb", "epsilon_lb_claim") if c in f.columns]].max(axis=1)
        ok &= bool((top <= f[col]).all())
        out.append(f"{fig}: largest {fmt(top.max())} (eps {f.loc[top.idxmax(), col]:g})")
    return ok, "; ".join(out)


def table6_zero(run: Run) -> tuple[bool, str]:
    """Table 6: Theorem 4.2 (the paper's number) gives 0 for the certified rows at the first noisy step and
    after fine-tuning, on both splits (the claim beside it: certified-below-claim)."""
    t6 = run.table("table6")
    cert = t6[t6.certified.astype(str) == "True"]
    vals = pd.concat([cert.epsilon_lb_first_step, cert.epsilon_lb_final]).astype(float)
    return bool((vals.fillna(0) == 0).all()), f"{len(cert)} rows, largest {fmt(vals.max())}"


def table6_row3_at_chance(run: Run) -> tuple[bool, str]:
    """Table 6's eps = 1e5 rows are flagged at_chance: its projection leaves only the class prior."""
    t6 = run.table("table6")
    r3 = t6[t6.epsilon == 1e5]
    if r3.empty:
        raise Missing("Table 6 row 3")
    return bool(r3.at_chance.astype(bool).all()), ", ".join(f"{r.split} test {r.test_acc:.3f}" for r in r3.itertuples())


def figure1a_uncertified_step1(run: Run) -> tuple[bool, str]:
    """Figure 1a: the uncertified variant is rejected at its first noisy step on both splits, and
    every certified step bound is 0."""
    f = run.figure("figure1a")
    unc = f[(f.variant == "uncertified") & (f.step == f[f.variant == "uncertified"].step.min())]
    cert = f[f.variant == "certified"]
    ok = len(unc) >= 1 and bool(unc.rejected.astype(bool).all()) and bool((cert.epsilon_lb == 0).all())
    return ok, "step 1: " + ", ".join(f"{r.split} {fmt(r.epsilon_lb)}" for r in unc.itertuples()) + f"; certified steps: largest {fmt(cert.epsilon_lb.max())}"


def figure1a_controls_at_ceiling(run: Run) -> tuple[bool, str]:
    """Figure 1a's No-unlearning controls sit on their ceiling (deterministic base training: the
    mechanism copies its input), and Retrain's are 0."""
    f = run.figure("figure1a")
    ctl = f[f.variant == "control"]
    nu, rt = ctl[ctl.method == "No unlearning"], ctl[ctl.method == "Retrain"]
    if nu.empty:
        raise Missing("Figure 1a controls")
    ok = bool(nu.at_ceiling.astype(bool).all()) and bool((rt.epsilon_lb == 0).all())
    return ok, ", ".join(f"{r.split} {r.method} {fmt(r.epsilon_lb)} (ceiling {fmt(r.ceiling)})" for r in ctl.itertuples())


def table7_falls_with_sigma(run: Run) -> tuple[bool, str]:
    """Table 7: the Hessian method's claim falls as its final noise sigma grows."""
    t7 = run.table("table7")
    h = t7[t7.sigma.notna()].sort_values("sigma")
    claims = claim_column(h).to_numpy()
    return bool(np.all(np.diff(claims) <= 0)), " -> ".join(f"{s:g}: {fmt(c)}" for s, c in zip(h.sigma, claims))


def shakespeare_ida_grid(run: Run) -> tuple[bool, str]:
    """Table 1a: IDA's bound falls with lambda and with the forget epochs E_f (the paper's
    13.15 -> 0.17), and is at most the No-unlearning control's."""
    t = run.table("table1a").assign(claim=lambda d: claim_column(d))
    get = lambda label: float(one(t, label).claim)  # noqa: E731
    base, ef3, lam, both = get("IDA q=1"), get("IDA q=1, Ef=3"), get("IDA q=1, lambda=1.5"), get("IDA q=1, lambda=1.5, Ef=3")
    ctl = get("No unlearning")
    ok = base >= ef3 >= both and base >= lam >= both and max(base, ef3, lam, both) <= ctl
    return ok, f"(0.5, 2) {fmt(base)}, (0.5, 3) {fmt(ef3)}, (1.5, 2) {fmt(lam)}, (1.5, 3) {fmt(both)}; No unlearning {fmt(ctl)}"


def reference_never_weaker(run: Run) -> tuple[bool, str]:
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
    return worst >= -1e-9, f"{n} cells; claim minus the larger of Theorem 4.2 and exact: at least {worst:.3f}; " \
                          f"claim over it {min(ratios):.2f}-{max(ratios):.2f}" if ratios else f"{n} cells"


def pairwise_reference_rejects(run: Run) -> tuple[bool, str]:
    """Sec. 7.3: the reference test of the pairwise guesses as m = 2 overlaps rejects the No-unlearning
    control at L = 10, where Eq. 3 cannot (its ceiling is 0), so the pairwise design is not without power."""
    t = run.table("pairwise_uncertified")
    ctl = one(t, "No unlearning")
    if "epsilon_lb_reference" not in t.columns:
        raise Missing("the reference column of the pairwise table")
    return bool(ctl.epsilon_lb_reference > 0 and ctl.epsilon_lb == 0), \
        f"No unlearning: reference {fmt(ctl.epsilon_lb_reference)}, Eq. 3 {fmt(ctl.epsilon_lb)}; methods: " + \
        ", ".join(f"{r.method} {fmt(r.epsilon_lb_reference)}" for r in t[~t.method.isin(["No unlearning", "Retrain"])].itertuples())


def pairwise_zero(run: Run) -> tuple[bool, str]:
    """Sec. 7.3: Eq. 3 at L = 10 gives 0 for every method, its ceiling 0 too (the paper's point)."""
    t = run.table("pairwise_uncertified")
    return bool((t.epsilon_lb == 0).all() and (t.ceiling == 0).all()), f"{len(t)} rows, errors {int((t.fp + t.fn).max())} at most"


def r2d_eps1_at_chance(run: Run) -> tuple[bool, str]:
    """Figure 1c: rewind-to-delete at eps = 1 is flagged at chance (its certificate's noise destroys the model)."""
    f = run.figure("figure1c")
    r = f[f.target_epsilon == 1.0]
    if r.empty:
        raise Missing("rewind-to-delete at eps = 1")
    return bool(r.at_chance.astype(bool).all()), ", ".join(f"{x.split} test {x.test_acc:.3f}" for x in r.itertuples())


def seed2_newton_slopes(run: Run) -> tuple[bool, str]:
    """Seed 2: GED falls like p^-1/2 with Gaussian noise after one Newton step (slope within 0.1 of
    -0.5), stays flat with l2-Laplace noise (|slope| < 0.1), and falls like p^-1/2 with l2-Laplace
    noise after two steps (within 0.1 of -0.5)."""
    path = run.results / "tables" / "gaussian_unlearning_slopes.csv"
    if not path.exists():
        raise Missing(str(path))
    s = pd.read_csv(path)
    s = s[(s.experiment == "ged_vs_p") & (s.analysis == "primary") & (s.n_over_p == 1.0)]
    if s.empty:
        raise Missing("GED-vs-p slopes")
    get = lambda steps, noise: s[(s.newton_steps == steps) & (s.noise == noise)].slope  # noqa: E731
    g1, l1, l2 = get(1, "gaussian"), get(1, "laplace"), get(2, "laplace")
    if l2.empty:
        raise Missing("two-step slopes")
    ok = bool((abs(g1 + 0.5) < 0.1).all() and (abs(l1) < 0.1).all() and (abs(l2 + 0.5) < 0.1).all())
    return ok, f"one step Gaussian {fmt(g1.min())}..{fmt(g1.max())}, l2-Laplace {fmt(l1.min())}..{fmt(l1.max())}; two steps l2-Laplace {fmt(l2.min())}..{fmt(l2.max())}"


@dataclass(frozen=True)
class Claim:
    key: str
    check: Callable[[Run], tuple[bool, str]]

    @property
    def text(self) -> str:
        return " ".join((self.check.__doc__ or "").split())


CLAIMS = [
    Claim("no-unlearning-rejected", no_unlearning_rejected),
    Claim("retrain-type-one", retrain_type_one),
    Claim("controls-below-ceiling", controls_below_ceiling),
    Claim("models-memorise", models_memorise),
    Claim("no-power-nowhere", no_power_nowhere),
    Claim("heuristics-rejected", heuristics_rejected),
    Claim("table3-logit-over-loss", table3_logit_over_loss),
    Claim("inverted-u-in-r", inverted_u_in_r),
    Claim("table5-falls-with-b", table5_falls_with_b),
    Claim("f4-first-step", f4_first_step),
    Claim("certified-below-claim", certified_below_claim),
    Claim("table6-zero", table6_zero),
    Claim("table6-row3-at-chance", table6_row3_at_chance),
    Claim("figure1a-uncertified-step1", figure1a_uncertified_step1),
    Claim("figure1a-controls-at-ceiling", figure1a_controls_at_ceiling),
    Claim("table7-falls-with-sigma", table7_falls_with_sigma),
    Claim("table1a-ida-grid", shakespeare_ida_grid),
    Claim("pairwise-zero", pairwise_zero),
    Claim("pairwise-reference-rejects", pairwise_reference_rejects),
    Claim("reference-never-weaker", reference_never_weaker),
    Claim("r2d-eps1-at-chance", r2d_eps1_at_chance),
    Claim("seed2-newton-slopes", seed2_newton_slopes),
]


def evaluate(results: Path) -> pd.DataFrame:
    """``key, status, numbers, claim`` for every claim on the run at ``results``."""
    run = Run(results)
    out = []
    for c in CLAIMS:
        try:
            ok, numbers = c.check(run)
            status = "PASS" if ok else "FAIL"
        except (Missing, KeyError) as why:
            status, numbers = "SKIP", f"the run lacks {why}"
        out.append({"key": c.key, "status": status, "numbers": numbers, "claim": c.text})
    return pd.DataFrame(out)


def main(argv: list[str]) -> int:
    results = Path(argv[1] if len(argv) > 1 else "results")
    if not (results / "config.yaml").exists():
        print(f"error: {results}/config.yaml not found: give the results directory of a finished run", file=sys.stderr)
        return 2
    table = evaluate(results)
    for r in table.itertuples():
        print(f"{r.status}  {r.key}: {r.claim}\n      {r.numbers}")
    counts = table.status.value_counts()
    print(f"\n{counts.get('PASS', 0)} PASS, {counts.get('FAIL', 0)} FAIL, {counts.get('SKIP', 0)} SKIP")
    return 1 if counts.get("FAIL", 0) else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
