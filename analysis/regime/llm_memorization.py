"""The memorising regime of config/llm.yaml's language-model demo, chosen by its controls alone.

    .venv/bin/snakemake --cores 2 --configfile analysis/regime/llm_memorization.yaml   # the sweep
    .venv/bin/python analysis/regime/llm_memorization.py [RESULTS_DIR]                 # default: results/regime_llm

For every design of the sweep (a training recipe, epochs and width of the demo's character-level
GPT-2) it prints what its controls show, from the run's own files:

* No unlearning's mean evaluation-run answer-token accuracies: ``retain_acc`` (the retain entities'
  pairs), ``forget_acc`` (the pairs of its candidate entities in D_f(S), trained on and kept) and
  ``test_acc`` (held-out entities), and ``gap`` = forget_acc - test_acc, what the model memorised of
  its own entities beyond what any entity's answer shows (names copied from the question, the
  sentence templates);
* its ``claim`` (the pre-registered test at the r its calibration runs chose), the claim's own
  perfect-prediction ``ceiling`` for that (m, r, L) and their ratio ``share``;
* Retrain's accuracies and claim beside it (0 with probability 1 - zeta: a check of the audit, not
  of the regime);
* ``cost``: epochs x parameters, the training's arithmetic per token up to a constant.

The rule, fixed in ``llm_memorization.yaml`` before the sweep ran: a setting qualifies when
gap >= :data:`MIN_GAP` and share <= :data:`MAX_CEILING_SHARE`; among qualifying settings the
smallest cost, then the larger gap.  Where none qualifies: among settings with the gap, the smallest
share (then the smallest cost), printed as not meeting the ceiling condition; where none has the
gap, the largest gap, printed as failing the rule.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pandas as pd
import yaml

from unlearn_audit.auditors.audit import claim_ceiling
from unlearn_audit.pipeline.plan.paths import finished_run_files

#: The rule's thresholds (module docstring).
MIN_GAP, MAX_CEILING_SHARE = 0.20, 0.70


def _parameters(model: dict) -> int:
    """The parameter count of a GPT-2 config (embeddings tied to the output layer, as transformers builds it)."""
    c = model["params"]["config"]
    d, layers, vocab, positions = int(c["n_embd"]), int(c["n_layer"]), int(c["vocab_size"]), int(c["n_positions"])
    block = 12 * d * d + 13 * d  # attention (4 d^2 + 4 d) + MLP (8 d^2 + 5 d) + two layer norms (4 d)
    return vocab * d + positions * d + layers * block + 2 * d


def _accuracies(results: Path, experiment: str) -> dict:
    frames = [pd.read_parquet(p) for p in finished_run_files(results, experiment, "eval", "metrics.parquet")]
    metrics = pd.concat(frames, ignore_index=True)
    return {k: float(metrics[k].mean()) for k in ("retain_acc", "forget_acc", "test_acc")}


def _claim(results: Path, experiment: str) -> dict:
    bounds = pd.read_parquet(results / experiment / "bounds.parquet")
    row = bounds[bounds.role == "preregistered"].iloc[0]
    ceiling = claim_ceiling(int(row.m), int(row.r), int(row.L), test=str(row.test), zeta=float(row.zeta), statistic=str(row.statistic))
    return {"r": int(row.r), "L": int(row.L), "claim": float(row.epsilon_lb_test), "ceiling": ceiling,
            "share": float(row.epsilon_lb_test) / ceiling if ceiling > 0 else float("nan")}


def control_rows(results: Path, cfg: dict) -> pd.DataFrame:
    """One row per design: No unlearning's accuracies, gap and claim, Retrain's beside them, the cost."""
    nn = cfg["nn"]
    controls = {(e["design"], e.get("base", "trained")): name for name, e in nn["experiments"].items() if e.get("method") == "no_unlearning"}
    rows = []
    for design, dcfg in nn["designs"].items():
        kept, retrained = controls.get((design, "trained")), controls.get((design, "retrain"))
        if kept is None or not (results / kept / "bounds.parquet").exists():
            continue
        acc = _accuracies(results, kept)
        row = {"design": design, "optimizer": dcfg["train"].get("optimizer", "sgd"), "epochs": int(dcfg["train"]["epochs"]),
               "width": int(dcfg["model"]["params"]["config"]["n_embd"]), **acc, "gap": acc["forget_acc"] - acc["test_acc"],
               **_claim(results, kept)}
        if retrained is not None and (results / retrained / "bounds.parquet").exists():
            racc, rclaim = _accuracies(results, retrained), _claim(results, retrained)
            row.update(retrain_forget_acc=racc["forget_acc"], retrain_test_acc=racc["test_acc"], retrain_claim=rclaim["claim"])
        row["cost"] = row["epochs"] * _parameters(dcfg["model"])
        rows.append(row)
    return pd.DataFrame(rows)


def chosen(rows: pd.DataFrame) -> tuple[str | None, str]:
    """The rule of the module docstring: the design it picks and whether it meets the rule."""
    if rows.empty:
        return None, "no design"
    with_gap = rows[rows.gap >= MIN_GAP - 1e-12]
    ok = with_gap[with_gap.share <= MAX_CEILING_SHARE + 1e-12]
    if not ok.empty:
        return str(ok.sort_values(["cost", "gap"], ascending=[True, False]).iloc[0].design), "meets the rule"
    if not with_gap.empty:
        return (str(with_gap.sort_values(["share", "cost"]).iloc[0].design),
                f"has the gap but not the ceiling condition (share > {MAX_CEILING_SHARE:.0%} everywhere it has the gap)")
    return str(rows.sort_values("gap", ascending=False).iloc[0].design), f"fails the rule: no design has a gap of {MIN_GAP}"


def main(argv: list[str]) -> int:
    results = Path(argv[1] if len(argv) > 1 else "results/regime_llm")
    if not (results / "config.yaml").exists():
        print(f"error: {results}/config.yaml not found: run the sweep first "
              "(snakemake --cores 2 --configfile analysis/regime/llm_memorization.yaml)", file=sys.stderr)
        return 2
    cfg = yaml.safe_load((results / "config.yaml").read_text())
    table = control_rows(results, cfg)
    with pd.option_context("display.width", 250, "display.max_columns", 40):
        print("# No unlearning per setting (qa, 40 synthetic entities, B = 4, m = 16; mean over evaluation runs; "
              "claim: reference test at the calibrated r) and Retrain beside it")
        print(table.round(3).to_string(index=False))
    design, verdict = chosen(table)
    print(f"\nrule: gap = forget_acc - test_acc >= {MIN_GAP}, claim <= {MAX_CEILING_SHARE:.0%} of its ceiling; "
          "the smallest cost (epochs x parameters), then the larger gap")
    print(f"chosen: {design} ({verdict})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
