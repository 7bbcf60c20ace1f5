"""What TOFU's metrics add to an evaluation run of a question-answer design (docs/metrics.md).

Run: ``python benchmarks/qa_metrics.py [--config config/llm.yaml] [--design qa_gpt2] [--repeats 3]``.
Builds the design's data and model (randomly initialised: it never emits ``<eos>``, so every greedy
answer runs to its length + the margin, the longest decoding a run can take), one thread, and times,
best of the repeats: the forward passes an evaluation run already made for its accuracies (the
forget pool, the retain and test sets) and :func:`~unlearn_audit.qa_eval.qa_run_metrics` on half
the candidate entities' pairs (what the metrics add: greedy answers and the alternative answers'
losses of the forget pairs, the retain sample and the test pairs).  Not part of the test suite.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
import torch
import yaml

from unlearn_audit.data.qa import build_qa_data, load_qa_source, tokens_of
from unlearn_audit.models import build_model
from unlearn_audit.qa_eval import qa_run_metrics
from unlearn_audit.scores import model_scores

REPO = Path(__file__).resolve().parents[1]


def _best(fn, repeats: int) -> tuple[float, object]:
    best, out = float("inf"), None
    for _ in range(repeats):
        start = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - start)
    return best, out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--config", default=str(REPO / "config" / "llm.yaml"))
    ap.add_argument("--design", default="qa_gpt2")
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    torch.set_num_threads(1)
    design = yaml.safe_load(Path(args.config).read_text())["nn"]["designs"][args.design]
    params = dict(design["dataset_params"])
    source = {k: params.pop(k) for k in ("source", "n_entities", "pairs_per_entity", "source_seed", "format") if k in params}
    data = build_qa_data(load_qa_source(REPO / "resources", **source), split="uniform", batch_size=design["batch_size"], forget_fraction=None,
                         m=design["m"], seed=0, **params)
    torch.manual_seed(0)
    model = build_model(design["model"]["name"], **design["model"].get("params", {})).eval()
    in_forget = np.repeat(np.arange(data.m) % 2 == 0, data.batch_size)
    tokens = tokens_of(params.get("tokenizer", "char"))

    def accuracies():
        return {p: model_scores(model, getattr(data, f"{p}_x"), getattr(data, f"{p}_y"), kind="text")["loss"] for p in ("forget", "retain", "test")}

    before, losses = _best(accuracies, args.repeats)
    added, rec = _best(lambda: qa_run_metrics(model, data, in_forget, losses, tokens.decode, eos=tokens.eos, pad=tokens.pad), args.repeats)
    pairs = int(in_forget.sum()) + len(data.extra["qa_retain_sample"]) + len(data.test_x)
    alternates = sum(int(np.isin(data.extra[f"qa_{p}_alt_row"], r).sum()) for p, r in
                     (("forget", np.flatnonzero(in_forget)), ("retain", data.extra["qa_retain_sample"]), ("test", np.arange(len(data.test_x)))))
    print(f"{args.config}:{args.design}: {pairs} pairs decoded, {alternates} alternative answers scored")
    print(f"accuracies' forward passes (already in every evaluation run): {before:.2f} s")
    print(f"TOFU's metrics added per evaluation run: {added:.2f} s (model utility {rec['model_utility']:.3f})")


if __name__ == "__main__":
    main()
