"""The README's "Results of the default run", written from one finished run's files, so that no number
in it is another run's.

    python analysis/readme_results.py [RESULTS_DIR] [--write README.md] [--details docs/results.md] [--figures docs/figures]

Prints the section (from its heading to the next ``## `` heading); with ``--write`` it replaces that
section of the README in place, with ``--details`` it writes the page that gives every claim's
numbers, and with ``--figures`` it copies the run's at-a-glance figures there (the README shows them).  Every number comes from the run at RESULTS_DIR: its provenance (commit, CPU,
PyTorch), the claims of ``analysis/claims.py`` with their status and numbers, and its tables.  The
README says which of them hold on every machine: a claim's numbers are this run's, but the claims are
statements of order and sign, and ``claims.py`` on another machine's run recomputes them there.
Torch-free.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from pathlib import Path

import pandas as pd

from unlearn_audit.atomic import write_text_atomic

sys.path.insert(0, str(Path(__file__).resolve().parent))
import claims as claims_module  # noqa: E402  (analysis/claims.py)

HEADING = "## Results of the default run"
FIGURES = ("finding", "nn_epsilon_vs_m")
#: Claims grouped as the section reads them: (title, keys).
GROUPS = [
    ("The audits can see and do not accuse", ["no-unlearning-rejected", "retrain-type-one", "controls-below-ceiling", "models-memorise",
                                              "no-power-nowhere", "pairwise-reference-rejects"]),
    ("The paper's finding: methods that look unlearned fail the audit", ["heuristics-rejected", "looks-unlearned-yet-rejected-uniform", "looks-unlearned-yet-rejected-adversarial", "uniform-guesses-as-papers",
                                                                        "forget-ascent-rejected", "uniform-over-adversarial",
                                                                        "ida-adversarial-rises-with-q", "hessian-moves-and-leaks-most"]),
    ("The audit's size and the bound's magnitude", ["bound-grows-with-m"]),
    ("The paper's trends", ["table3-logit-over-loss", "table4-mean-median-agree", "inverted-u-in-r", "table5-falls-with-b",
                            "table7-falls-with-sigma", "table7-accuracy-falls", "table1a-ida-grid", "table1a-ascent-undetectable",
                            "table1a-finetune-top"]),
    ("Certified audits (Section 7.1, App. F.4)", ["certified-below-claim", "table6-zero", "r2d-tighter-than-clipping",
                                                  "figure1a-uncertified-step1", "f4-first-step-near-zero", "table6-row3-at-chance",
                                                  "r2d-eps1-at-chance"]),
    ("Convex losses (Section 8) and Gaussian certified unlearning", ["convex-valid", "convex-tracks-epsilon", "convex-logistic-zero",
                                                                     "seed2-newton-slopes", "seed2-ued-newton-slopes",
                                                                     "seed2-gaussian-below-laplace", "seed2-ged-falls-with-eps", "seed2-ged-vs-m"]),
    ("True of every run of these designs (not evidence)", ["joint-controls-on-ceiling", "reference-never-weaker", "pairwise-eq3-zero"]),
]


def commit_of(results: Path) -> str:
    """The short commit that computed a run (its provenance.json), or ``unknown``."""
    path = results / "provenance.json"
    git = json.loads(path.read_text()).get("workflow", {}) if path.exists() else {}
    return (git.get("commit") or "unknown")[:7]


def provenance_line(results: Path) -> str:
    """Which code, machine and PyTorch computed the run (its provenance.json)."""
    path = results / "provenance.json"
    if not path.exists():
        return "a run without a provenance record"
    p = json.loads(path.read_text())
    git, cpu = p.get("workflow", {}), p.get("cpu", {})
    commit = commit_of(results) + (" with local changes" if git.get("dirty") else "")
    kernels = f", {cpu['torch_capability']} kernels" if cpu.get("torch_capability") else ""
    return f"commit {commit}, {cpu.get('model') or 'an unnamed CPU'} (PyTorch {p.get('versions', {}).get('torch', '?')}{kernels})"


def _flags(r) -> str:
    names = [f for f in ("not_forgotten", "no_op", "at_chance", "no_power") if bool(getattr(r, f, False))]
    return ", ".join(f"`{f}`" for f in names) or "-"


SPLITS = ("uniform", "adversarial")


def where(row) -> tuple[str, ...]:
    """A table row's (dataset, split), or (split,) for a table without datasets: the rows that share a Retrain."""
    return (str(row["dataset"]), str(row["split"])) if "dataset" in row and pd.notna(row["dataset"]) else (str(row["split"]),)


def table1b_section(results: Path, table: str = "table1b") -> list[str]:
    """Table 1b (or another table of its shape), claim first, with what an accuracy check and the
    usual membership metrics see beside it."""
    t = pd.read_csv(results / "tables" / f"{table}.csv")
    rt = {where(r): r for r in t[t.method == "Retrain"].to_dict("records")}
    metrics = "auc" in t.columns
    several = t["dataset"].nunique() > 1 if "dataset" in t.columns else False
    lines = [f"| {'dataset, split' if several else 'split'} | method | forget acc. (Retrain's) | test acc. | claim (its ceiling) | right guesses | Theorem 4.2 [at the paper's size] "
             + ("| AUC [95 %] · TPR at 1 % FPR " if metrics else "") + "| flags |",
             "|---|---|---|---|---|---|---|" + ("---|" if metrics else "") + "---|"]
    for r in t.to_dict("records"):
        base = rt.get(where(r))
        forget = f"{r['forget_acc']:.3f}" + (f" ({base['forget_acc']:.3f})" if base is not None and r["method"] != "Retrain" else "")
        guesses = f"{r['guess_fraction']:.2f} [{r['guess_fraction_low']:.2f}, {r['guess_fraction_high']:.2f}]"
        auc = f"| {r['auc']:.3f} [{r['auc_low']:.3f}, {r['auc_high']:.3f}] · {r['tpr_at_1pct_fpr']:.3f} " if metrics else ""
        lines.append(f"| {' '.join(where(r)) if several else r['split']} | {r['method']} | {forget} | {r['test_acc']:.3f} | {r['epsilon_lb_claim']:.2f} ({r['epsilon_lb_ceiling_claim']:.2f}) "
                     f"| {guesses} | {r['epsilon_lb_theorem42']:.2f} [{r['epsilon_lb_theorem42_at_paper_size']:.1f}] {auc}| {_flags(pd.Series(r))} |")
    return lines


def disagreements(results: Path) -> str:
    """Where Table 1b's AUC and its claim disagree (docs/metrics.md): rows rejected while the AUC's
    interval holds 0.5, and rows not rejected while the AUC's interval lies above 0.5; "" without the metrics."""
    t = pd.read_csv(results / "tables" / "table1b.csv")
    if "auc" not in t.columns:
        return ""
    quiet = t[(t.epsilon_lb_claim > 0) & (t.auc_low <= 0.5)]
    loud = t[(t.epsilon_lb_claim == 0) & (t.auc_low > 0.5)]
    text = lambda sub: ", ".join(f"{r.split} {r.method} (claim {r.epsilon_lb_claim:.2f}, AUC {r.auc:.3f} [{r.auc_low:.3f}, {r.auc_high:.3f}], "  # noqa: E731
                                 f"the audit's per-example AUC {r.auc_lr:.3f})" for r in sub.itertuples()) or "none"
    return ("AUC and TPR describe, the claim proves ([docs/metrics.md](docs/metrics.md)); they disagree here: rejected while the raw-score "
            f"AUC's interval holds 0.5: {text(quiet)}; not rejected while it lies above 0.5: {text(loud)}.")


def baselines_section(results: Path) -> list[str]:
    """docs/results.md's table of the field's baselines beside their controls (``table_baselines``)."""
    if not (results / "tables" / "table_baselines.csv").exists():
        return []
    return ["## The field's baselines (`table_baselines`)", "",
            "Each at the budget its utility chose on calibration runs before any bound (`analysis/regime/budgets_baselines.out.txt`, "
            "`budgets_baselines_shakespeare.out.txt`), each beside its design's controls (Table 1b's; Table 1a's on Shakespeare).", "", *table1b_section(results, "table_baselines"), "",
            *headline(results, "table_baselines", "baselines"), ""]


def audit_size_section(results: Path) -> list[str]:
    """Why the bounds are smaller than the paper's, from the run: the growing-m series (the claim at each
    m beside its share of right guesses) and the uniform heuristics' shares at the paper's size."""
    path = results / "tables" / "audit_size.csv"
    if not path.exists():
        return []
    t = pd.read_csv(path)
    out = []
    for method, sub in t.groupby("method", sort=False):
        pts = ", ".join(f"m = {int(r.m)}: {r.epsilon_lb_claim:.2f} at {r.guess_fraction:.2f}" for r in sub.sort_values("m").itertuples())
        out.append(f"- {method}: {pts}")
    h = pd.read_csv(results / "tables" / "table1b.csv")
    h = h[(h.split == "uniform") & h.method.isin(claims_module.HEURISTICS) & ~h.not_forgotten.astype(bool)]
    if len(h):
        out += ["", f"A bound also rests on the share of right guesses. The uniform heuristics that look unlearned guess "
                f"{h.guess_fraction.min():.2f}-{h.guess_fraction.max():.2f} of their guesses right, where the paper's 79.5-100.5 at "
                "m = 4,500, r = 3,000 imply 0.66-0.68 (`uniform-guesses-as-papers`): at the paper's size these shares would give "
                f"Theorem 4.2 {h.epsilon_lb_theorem42_at_paper_size.min():.1f}-{h.epsilon_lb_theorem42_at_paper_size.max():.1f} "
                "(an extrapolation, not a bound of this audit). So the gap is the audit's size and, at the budget where they look "
                "unlearned, the smaller membership signal these methods keep on digits."]
    return out


def headline(results: Path, table: str = "table1b", noun: str = "heuristics") -> list[str]:
    """What the run shows of the paper's point, per split, in words: from Table 1b's heuristics, or
    (``table="table_baselines"``) from the field's baselines."""
    path = results / "tables" / f"{table}.csv"
    if not path.exists():
        return []
    t = pd.read_csv(path)
    methods = claims_module.HEURISTICS if table == "table1b" else tuple(m for m in t.method.unique() if m not in claims_module.CONTROLS)
    out = []
    keys = [where(r) for r in t.to_dict("records")]
    datasets = [k[:-1] for k in keys]
    several = len(set(datasets)) > 1
    order = lambda k: (datasets.index(k[:-1]), SPLITS.index(k[-1]) if k[-1] in SPLITS else len(SPLITS), keys.index(k))  # noqa: E731
    for key in sorted(set(keys), key=order):
        here = pd.Series([k == key for k in keys], index=t.index)
        split = " ".join(key) if several else key[-1]
        sub = t[here & t.method.isin(methods)]
        rt = t[here & (t.method == "Retrain")]
        if sub.empty or rt.empty:
            continue
        looks = sub[claims_module.looks_unlearned(sub, rt.iloc[0])]
        rejected = looks[looks.epsilon_lb_claim > 0]
        text = (f"- **{split}**: {len(looks)} of {len(sub)} {noun} look unlearned (forget and test accuracy within 0.05 of "
                f"Retrain's); {len(rejected)} of them are rejected")
        if len(rejected):
            text += f" (claims {span(rejected.epsilon_lb_claim)}, {span(rejected.guess_fraction)} of the guesses right)"
        others = sub[~sub.index.isin(looks.index)]
        if len(others):
            text += "; not looking unlearned: " + ", ".join(f"{r.method} ({fmt_flags(r)}, claim {r.epsilon_lb_claim:.2f})" for r in others.itertuples())
        out.append(text + ".")
    return out


def span(values) -> str:
    """``a-b`` of a column's smallest and largest values (two decimals), one number where they agree."""
    lo, hi = f"{min(values):.2f}", f"{max(values):.2f}"
    return lo if lo == hi else f"{lo}-{hi}"


def fmt_flags(r) -> str:
    return f"forget {r.forget_acc:.3f}" + (", no-op" if bool(r.no_op) else "")


def cpus_line(results: Path, others: list[Path]) -> str:
    """Which claims hold on every CPU measured, from ``others``: runs of the same config on other CPUs."""
    if not others:
        return "This section reads one CPU's run, so it shows no claim to hold on every CPU."
    table = claims_module.across_runs([results, *others])
    runs = [results, *others]
    cpus = sorted({claims_module.cpu_of(r) for r in runs})
    commits = {commit_of(r) for r in runs}
    named = cpus if len(commits) == 1 else sorted(f"{claims_module.cpu_of(r)}, commit {commit_of(r)}" for r in runs)
    differ = table[table.every_cpu == "differs"].key.tolist()
    close = table[table.every_cpu == "within spread"].key.tolist()
    return (f"Runs on {len(cpus)} CPU(s) ({'; '.join(named)}): {int((table.every_cpu == 'holds').sum())} claims hold on every one "
            "(the same status on each, every margin wider than its spread between them)"
            + (f"; the same status but a margin within the spread: {', '.join(f'`{k}`' for k in close)}" if close else "")
            + (f"; these differ: {', '.join(f'`{k}`' for k in differ)}." if differ else "."))


def section(results: Path, others: list[Path] = ()) -> str:
    """The README section, from its heading to its end; ``others``: the same config's runs on other CPUs."""
    others = list(others)
    table = claims_module.evaluate(results).set_index("key")
    counts = table.status.value_counts()
    lines = [HEADING, "",
             "<!-- Written by analysis/readme_results.py from one run's files; edit that script, not this section. -->",
             f"Every number below is one run of `config/config.yaml` (results dir `{results.name}`): {provenance_line(results)}. "
             "`python analysis/readme_results.py results` writes this section from any finished run, and `python analysis/claims.py "
             "results` recomputes each claim from the run's files: PASS, FAIL (the run lacks what this README says), DIVERGES (a "
             "statement of the paper this default does not show, with the measured cause) or BY-CONSTRUCTION (true of any run of these "
             "designs, so no evidence). The digits numbers depend on the CPU's kernels (`analysis/cpu_kernel_sensitivity.py`): "
             "another machine's run gives other digits, and the claims, statements of order and sign with their thresholds, are what "
             "`claims.py` checks there; `python analysis/claims.py RUN_A RUN_B ...` on runs from several CPUs says which claims hold on "
             "every CPU measured (the same status on each, every margin of its check wider than its spread between the runs). "
             + cpus_line(results, others),
             "",
             f"This run: {counts.get('PASS', 0)} PASS, {counts.get('FAIL', 0)} FAIL, {counts.get('DIVERGES', 0)} DIVERGES, "
             f"{counts.get('BY-CONSTRUCTION', 0)} BY-CONSTRUCTION, {counts.get('SKIP', 0)} SKIP. "
             "The paper's point, methods that pass an accuracy check and still fail the audit, on Table 1b:", "",
             *headline(results), ""]
    if (results / "figures" / "finding.png").exists():
        lines += ["![Forget accuracy minus Retrain's against the claim's share of its ceiling, per method and split](docs/figures/finding.png)", "",
                  "Each point is an audited method on one split (`figures/finding.csv`): how far its forget accuracy is from Retrain's "
                  "(0: an accuracy check calls the forget set forgotten) against its claim as a share of the claim's own ceiling (0: not "
                  "rejected, 1: every guess right).", ""]
    lines += ["### Table 1b: methods that look unlearned, audited", "",
              "Each heuristic runs at the budget its utility chose on calibration runs before any bound "
              "(`analysis/regime/budgets.out.txt`): the smallest at which its forget accuracy is within 0.05 of Retrain's and its test "
              "accuracy within 0.05 of Retrain's. The claim is the pre-registered reference test's, beside its own ceiling; the share "
              "of right guesses (overlap / r, mean over the L = "
              f"{int(pd.read_csv(results / 'tables' / 'table1b.csv').L.iloc[0])} evaluation runs, 95 % interval) is the same number at "
              "any audit size; Theorem 4.2's bound follows, and in brackets what the same share gives at the paper's m = 4,500, r = 3,000.",
              "", *table1b_section(results), ""]
    disagree, baselines = disagreements(results), headline(results, "table_baselines", "baselines")
    if disagree:
        lines += [disagree, ""]
    if baselines:
        lines += ["The field's baselines (NegGrad+, SCRUB, random labels, SalUn, Bad Teacher, SSD), each at its utility budget "
                  "(`analysis/regime/budgets_baselines.out.txt`, `budgets_baselines_shakespeare.out.txt`; their table in `docs/results.md`), "
                  "each beside its design's controls:", "", *baselines, ""]
    size = audit_size_section(results)
    if size:
        lines += ["### Why these bounds are smaller than the paper's", "",
                  "The paper audits m = 4,500 candidates with r = 3,000 guesses, this default m = 144 with r = 100, and a bound grows with "
                  "the number of guesses it rests on: retain fine-tuning and its controls at growing m, r/m fixed, the claim at each m "
                  "beside its share of right guesses (`figures/nn_epsilon_vs_m.png`):", "", *size, ""]
    lines += ["### What the claims say", "",
              "Each line counts the statuses of a group of claims; `docs/results.md` (written with this section) gives every claim "
              "with this run's numbers, and each DIVERGES with the paper's number and its measured cause.", ""]
    for title, keys in GROUPS:
        present = [k for k in keys if k in table.index]
        counts = table.loc[present].status.value_counts()
        summary = ", ".join(f"{counts[s]} {s}" for s in claims_module.STATUSES if counts.get(s, 0))
        odd = [f"`{k}` {table.loc[k].status}" for k in present if table.loc[k].status not in ("PASS", "BY-CONSTRUCTION")]
        lines.append(f"- **{title}**: {summary}" + (f" ({'; '.join(odd)})" if odd else ""))
    return "\n".join(lines).rstrip() + "\n"


def details(results: Path) -> str:
    """docs/results.md: every claim of the run with its status and numbers, by group."""
    table = claims_module.evaluate(results).set_index("key")
    lines = ["# Every claim of the default run", "",
             "<!-- Written by analysis/readme_results.py from one run's files; edit that script, not this page. -->",
             f"One run of `config/config.yaml`: {provenance_line(results)}. README.md, \"Results of the default run\", summarises "
             "it; `python analysis/claims.py results` recomputes each line below from any run's files.", "", *baselines_section(results)]
    for title, keys in GROUPS:
        lines += [f"## {title}", ""]
        for key in keys:
            if key in table.index:
                r = table.loc[key]
                lines.append(f"- **{r.status}** `{key}`: {r.claim}  \n  *This run:* {r.numbers}")
        lines.append("")
    return "\n".join(lines).rstrip() + "\n"


def replace_section(readme: str, text: str) -> str:
    """``readme`` with its results section (from :data:`HEADING` to the next ``## `` heading) replaced by ``text``."""
    start = readme.index(HEADING)
    end = readme.find("\n## ", start + len(HEADING))
    end = len(readme) if end < 0 else end + 1
    return readme[:start] + text + "\n" + readme[end:]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("results", nargs="?", default="results")
    ap.add_argument("--write", help="the README to rewrite in place")
    ap.add_argument("--details", help="the page of every claim's numbers to write (docs/results.md)")
    ap.add_argument("--figures", help="copy the run's at-a-glance figures (PNG) into this folder")
    ap.add_argument("--other-cpus", nargs="*", default=[], help="runs of the same config on other CPUs (which claims hold on every CPU)")
    args = ap.parse_args(argv)
    results = Path(args.results)
    if not (results / "config.yaml").exists():
        print(f"error: {results}/config.yaml not found: give the results directory of a finished run", file=sys.stderr)
        return 2
    text = section(results, [Path(o) for o in args.other_cpus])
    if args.figures:
        Path(args.figures).mkdir(parents=True, exist_ok=True)
        for name in FIGURES:
            src = results / "figures" / f"{name}.png"
            if src.exists():
                shutil.copyfile(src, Path(args.figures) / src.name)
    if args.details:
        write_text_atomic(args.details, details(results))
    if args.write:
        path = Path(args.write)
        write_text_atomic(path, replace_section(path.read_text(), text))
    else:
        print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
