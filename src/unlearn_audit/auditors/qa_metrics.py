"""The metrics TOFU's users read (Maini et al. 2024), beside ε, on question-answer designs (docs/metrics.md).

An evaluation run of a ``qa`` design measures its unlearned model on three sets of pairs: its
forget pairs (D_f(S), the candidate entities with S_j = +1), a fixed sample of retain pairs
(:func:`~unlearn_audit.data.qa.retain_sample`) and the held-out test entities' pairs
(:mod:`unlearn_audit.qa_eval` runs the model; this module holds the arithmetic, torch-free):

* **answer probability** P(a|q)^(1/|a|), the answer's probability given its question normalised by
  its length (|a| its scored tokens, the answer's and its ``<eos>``), i.e. exp(−the mean token loss),
  averaged over the pairs (:func:`answer_probability`);
* **ROUGE-L recall**: the longest common subsequence of the words of the model's greedy answer and
  of the true answer over the true answer's words (:func:`rouge_l_recall`; words are the lower-cased
  runs of letters and digits, no stemming);
* **truth ratio** R = mean over the perturbed answers of P(â|q)^(1/|â|), over P(ã|q)^(1/|ã|) of the
  paraphrased answer (:func:`truth_ratios`), where the data carry both; the forget set reports the
  mean R, the retain and test sets the mean of max(0, 1 − R) (TOFU's utility form: 1 where the model
  prefers the paraphrased truth by far, 0 where it prefers the wrong answers);
* **model utility**: the harmonic mean of the retain and test sets' answer probability, ROUGE-L and
  truth-ratio scores (:func:`harmonic_mean`; of those the data give: without paraphrased and
  perturbed answers, of the four others);
* **forget quality**: the p-value of the two-sample Kolmogorov–Smirnov test between a method's
  forget-set truth ratios and those of its design's Retrain control on the same evaluation runs
  (:func:`forget_quality`; the runs share their sign vectors, so the two samples are ratios on the
  same pairs): 1 where the two are alike, small where the method's model tells its forget pairs'
  truth from the wrong answers unlike a model that never saw them;
* **damaged**: a model whose mean answer loss on the retain sample (nats a token) is at least
  :data:`DAMAGE_FRACTION` of log(vocabulary size), within 10 % of a model that guesses uniformly
  (:func:`is_damaged`).

:func:`run_record` turns one run's measurements into its RUN_METRICS columns
(:data:`~unlearn_audit.schemas.QA_RUN_METRICS`), :func:`experiment_columns` the evaluation runs'
into one row per experiment for the table ``llm_qa`` (:data:`~unlearn_audit.schemas.QA_COLUMNS`).
TOFU's released evaluation averages the perturbed answers' log-probabilities (a geometric mean)
where its paper, and this module, average their probabilities.  Describes; proves nothing about ε.
"""

from __future__ import annotations

import math
import re
from typing import Mapping, Sequence

import numpy as np
import pandas as pd

from ..catalogue import RETRAIN, controls_on
from ..schemas import QA_COLUMNS, QA_PARTS

__all__ = ["DAMAGE_FRACTION", "words", "lcs_length", "rouge_l_recall", "answer_probability", "truth_ratios", "utility_truth_ratio",
           "harmonic_mean", "forget_quality", "is_damaged", "run_record", "not_measured",
           "experiment_columns"]

#: A model whose mean answer loss reaches this fraction of log(vocabulary size) is flagged damaged.
DAMAGE_FRACTION = 0.9

_WORD = re.compile(r"[a-z0-9]+")


def words(text: str) -> list[str]:
    """The lower-cased runs of letters and digits of ``text`` (ROUGE's tokens, without stemming)."""
    return _WORD.findall(text.lower())


def lcs_length(a: Sequence, b: Sequence) -> int:
    """The length of the longest common subsequence of ``a`` and ``b`` (dynamic programming, one row kept)."""
    if not a or not b:
        return 0
    previous = [0] * (len(b) + 1)
    for x in a:
        current = [0]
        for j, y in enumerate(b):
            current.append(previous[j] + 1 if x == y else max(previous[j + 1], current[j]))
        previous = current
    return previous[-1]


def rouge_l_recall(prediction: str, reference: str) -> float:
    """ROUGE-L recall: LCS(prediction's words, reference's words) / the reference's words; NaN for a
    reference without words."""
    ref = words(reference)
    return lcs_length(words(prediction), ref) / len(ref) if ref else float("nan")


def answer_probability(losses) -> float:
    """The mean over pairs of P(a|q)^(1/|a|) = exp(−mean token loss); NaN for no pairs."""
    losses = np.asarray(losses, float)
    return float(np.mean(np.exp(-losses))) if losses.size else float("nan")


def truth_ratios(n_rows: int, alt_row, alt_kind, alt_loss) -> np.ndarray:
    """Each of ``n_rows`` pairs' truth ratio R (module docstring) from its alternative answers'
    mean token losses (``alt_row``: the pair of each; ``alt_kind``: 0 its paraphrase, ≥ 1 a perturbed
    answer); NaN for a pair without a paraphrase or without a perturbed answer."""
    alt_row, alt_kind = np.asarray(alt_row, np.int64), np.asarray(alt_kind, np.int64)
    prob = np.exp(-np.asarray(alt_loss, float))
    out = np.full(n_rows, np.nan)
    for i in range(n_rows):
        mine = alt_row == i
        para, pert = prob[mine & (alt_kind == 0)], prob[mine & (alt_kind > 0)]
        if para.size and pert.size:
            out[i] = float(pert.mean() / para[0]) if para[0] > 0 else float("inf")
    return out


def _finite_mean(values) -> float:
    values = np.asarray(values, float)
    values = values[~np.isnan(values)]
    return float(values.mean()) if values.size else float("nan")


def utility_truth_ratio(ratios) -> float:
    """The mean over pairs with a ratio of max(0, 1 − R) (TOFU's retain and held-out form); NaN without one."""
    ratios = np.asarray(ratios, float)
    return _finite_mean(np.where(np.isnan(ratios), np.nan, np.maximum(0.0, 1.0 - ratios)))


def harmonic_mean(values) -> float:
    """The harmonic mean of the values that are not NaN (0 when one is 0; NaN when none is left)."""
    values = np.asarray(values, float)
    values = values[~np.isnan(values)]
    if not values.size:
        return float("nan")
    if (values <= 0).any():
        return 0.0
    return float(values.size / np.sum(1.0 / values))


def forget_quality(method_ratios, retrain_ratios) -> float:
    """The two-sample Kolmogorov–Smirnov p-value of a method's forget truth ratios against Retrain's
    (NaN values left out; NaN when either sample is empty)."""
    a, b = (np.asarray(v, float) for v in (method_ratios, retrain_ratios))
    a, b = a[~np.isnan(a)], b[~np.isnan(b)]
    if not a.size or not b.size:
        return float("nan")
    from scipy.stats import ks_2samp  # here: the table jobs that import this module start without scipy.stats

    return float(ks_2samp(a, b).pvalue)


def is_damaged(answer_loss: float, vocab_size: int) -> bool:
    """Whether a mean answer loss (nats a token) is at least :data:`DAMAGE_FRACTION` × log(vocabulary
    size): within 10 % of a uniform guess's; False where it is NaN."""
    if not (np.isfinite(answer_loss) and vocab_size > 1):
        return bool(np.isposinf(answer_loss))
    return bool(answer_loss >= DAMAGE_FRACTION * math.log(vocab_size))


def run_record(parts: Mapping[str, Mapping[str, object]], answer_loss: float, vocab_size: int) -> dict:
    """One evaluation run's RUN_METRICS columns of :data:`~unlearn_audit.schemas.QA_RUN_METRICS` from
    its measurements: ``parts`` maps forget, retain and test to ``losses`` (each pair's mean answer
    token loss), ``rouge`` (each pair's ROUGE-L recall) and ``ratios`` (each pair's truth ratio, NaN
    without one); ``answer_loss`` is the retain sample's mean token loss."""
    out: dict = {}
    for part in QA_PARTS:
        m = parts[part]
        ratios = np.asarray(m["ratios"], float)
        out[f"{part}_answer_prob"] = answer_probability(m["losses"])
        out[f"{part}_rouge_l"] = _finite_mean(m["rouge"])
        out[f"{part}_truth_ratio"] = _finite_mean(ratios) if part == "forget" else utility_truth_ratio(ratios)
    out["model_utility"] = harmonic_mean([out[f"{part}_{k}"] for part in ("retain", "test") for k in ("answer_prob", "rouge_l", "truth_ratio")])
    forget_ratios = np.asarray(parts["forget"]["ratios"], float)
    return out | {"answer_loss": float(answer_loss), "vocab_size": int(vocab_size),
                  "forget_truth_ratios": [float(v) for v in forget_ratios[~np.isnan(forget_ratios)]]}


def not_measured() -> dict:
    """The QA columns of a run that measured none of them (a calibration run)."""
    out = {c: float("nan") for c in _RUN_MEANS}
    return out | {"vocab_size": 0, "forget_truth_ratios": []}


#: The per-run columns :func:`experiment_columns` averages over an experiment's evaluation runs.
_RUN_MEANS = tuple(c for c in QA_COLUMNS if c not in ("forget_quality", "damaged", "no_retrain"))


def _pooled_ratios(runs: pd.DataFrame, keep) -> np.ndarray:
    """The forget truth ratios of the runs ``keep`` of ``runs`` (one experiment's), pooled."""
    rows = runs[runs.run.isin(keep)]
    return np.concatenate([np.asarray(v, float) for v in rows.forget_truth_ratios]) if len(rows) else np.zeros(0)


def experiment_columns(metrics: pd.DataFrame, experiments: Mapping[str, Mapping]) -> pd.DataFrame:
    """One row per experiment: ``experiment`` and :data:`~unlearn_audit.schemas.QA_COLUMNS`, the means
    over its evaluation runs of the runs' columns, ``forget_quality`` (:func:`forget_quality` of its
    runs' pooled forget truth ratios against its design's Retrain control's on the runs both have),
    ``damaged`` (:func:`is_damaged` of the mean answer loss) and ``no_retrain`` (its design has no
    Retrain control here: forget quality and privleak are then NaN, never measured against a
    stand-in).  NaN (and False) for an experiment without question-answer metrics."""
    ev = metrics[metrics.phase == "eval"]
    retrain = controls_on(experiments, RETRAIN)
    rows = []
    for name, e in experiments.items():
        runs = ev[ev.experiment == name]
        measured = bool(len(runs)) and "forget_truth_ratios" in runs.columns and bool(runs["vocab_size"].fillna(0).gt(0).any())
        row = {"experiment": name, **{c: float(runs[c].mean()) if measured else float("nan") for c in _RUN_MEANS}}
        control = retrain.get(e.get("design"))
        quality = float("nan")
        if measured and control is not None:
            theirs = ev[ev.experiment == control]
            both = sorted(set(runs.run) & set(theirs.run))
            if "forget_truth_ratios" in theirs.columns and both:
                quality = forget_quality(_pooled_ratios(runs, both), _pooled_ratios(theirs, both))
        vocab = int(runs["vocab_size"].max()) if measured else 0
        rows.append(row | {"forget_quality": quality, "damaged": is_damaged(row["answer_loss"], vocab) if measured else False,
                           "no_retrain": control is None})
    return pd.DataFrame(rows, columns=["experiment", *QA_COLUMNS])
