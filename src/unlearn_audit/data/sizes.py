"""The text datasets' size models: (|D_r|, m·B, |test|) of a design before its data are read, the
``size_model`` of their :class:`~unlearn_audit.data.DatasetSpec` (docs/development.md#add-a-dataset),
which ``unlearn-audit plan``'s cost model and the jobs' runtimes read.  An image dataset needs none:
its spec's training portion and test size give its sizes.  Torch-free.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from typing import Mapping

from .qa import (GENERATION_BATCH, QA_DEFAULTS, RETAIN_SAMPLE, SEPARATOR, SYNTHETIC_PERTURBED, TOFU_ENTITIES, TOFU_PAIRS_PER_ENTITY,
                 TOFU_PERTURBED, decoding_batches, decoding_limits, retain_sample, split_by_entity, synthetic_qa)
from .splits import DatasetError

__all__ = ["SHAKESPEARE_ROLES", "SHAKESPEARE_RETAIN_CHARACTERS", "SHAKESPEARE_FORGET_CHARACTERS", "shakespeare_sizes", "qa_sizes",
           "EvaluationCounts", "qa_evaluation_counts"]

#: App. D.2's Shakespeare at its 300 roles: training characters of the retain roles (D_r) and of the
#: forget roles (D_f), each role's blocks split 80/10/10 into train/validation/test.
SHAKESPEARE_ROLES = 300
SHAKESPEARE_RETAIN_CHARACTERS = 1_221_363
SHAKESPEARE_FORGET_CHARACTERS = 135_300


def shakespeare_sizes(design: Mapping, pool: float) -> tuple[float, float, float]:
    """Windows of a Shakespeare design from App. D.2's character counts (a window starts at every
    ``stride``-th character, so windows ≈ characters / stride), scaled by ``num_roles`` / 300 and
    capped by ``max_retain_windows`` / ``max_eval_windows``; the pool is m·B where B is given, else
    every window of the forget chunks.  An estimate: the counts are the paper's corpus, not the data."""
    dp = design.get("dataset_params", {})
    roles = dp.get("num_roles", SHAKESPEARE_ROLES)
    scale = (roles or SHAKESPEARE_ROLES) / SHAKESPEARE_ROLES
    stride = int(dp.get("stride", 1))
    forget_stride, eval_stride = int(dp.get("forget_stride") or stride), int(dp.get("eval_stride") or stride)
    test_characters = (SHAKESPEARE_RETAIN_CHARACTERS + SHAKESPEARE_FORGET_CHARACTERS) / 8  # 10 % against 80 %
    retain = SHAKESPEARE_RETAIN_CHARACTERS * scale / stride
    test = test_characters * scale / eval_stride
    if dp.get("max_retain_windows"):
        retain = min(retain, float(dp["max_retain_windows"]))
    if dp.get("max_eval_windows"):
        test = min(test, float(dp["max_eval_windows"]))
    if math.isnan(pool):
        pool = SHAKESPEARE_FORGET_CHARACTERS * scale / forget_stride
    return retain, pool, test


def qa_sizes(design: Mapping, pool: float) -> tuple[float, float, float]:
    """Pairs of a question-answer design: the synthetic source's ``n_entities`` × ``pairs_per_entity``,
    or TOFU's 200 authors × 20 for a file in ``format: tofu`` (its ``full.json``); the retain set is
    every entity but the m candidates and the held-out ones, the test set the test entities' pairs.
    NaN for another file (only the file knows its count)."""
    dp = {**QA_DEFAULTS, **design.get("dataset_params", {})}
    if dp["source"] == "synthetic":
        entities, per_entity = int(dp["n_entities"]), int(dp["pairs_per_entity"])
    elif dp["format"] == "tofu":
        entities, per_entity = TOFU_ENTITIES, TOFU_PAIRS_PER_ENTITY
    else:
        return math.nan, pool, math.nan
    held_out = int(dp["n_val_entities"]) + int(dp["n_test_entities"])
    retain = max(entities - int(design["m"]) - held_out, 0) * per_entity  # too few entities: the config check says so
    return float(retain), pool, float(int(dp["n_test_entities"]) * per_entity)


@dataclass(frozen=True)
class EvaluationCounts:
    """What a dataset's own metrics add to one evaluation run of one experiment (TOFU's on a
    question-answer design, docs/metrics.md): ``decoded`` pairs answered greedily in
    ``decode_steps`` token steps over batches of prompts (``decode_examples``: the prompts those
    steps carry, summed over the steps), and ``alternates`` alternative answers scored (one forward
    pass each).  The ``evaluation_counts`` of a :class:`~unlearn_audit.data.DatasetSpec`, which the
    cost model prices."""

    decoded: float
    decode_steps: float
    decode_examples: float
    alternates: float


def qa_evaluation_counts(design: Mapping, pool: float) -> EvaluationCounts:
    """TOFU's metrics of an evaluation run (:func:`unlearn_audit.qa_eval.qa_run_metrics`): the run's
    forget pairs (half the pool), the retain sample and the test pairs, decoded as
    :func:`.qa.decoding_batches` batches them, each batch to its longest answer's limit (the answer's
    length plus the margin: the most a run decodes; a model that ends its answers where the data
    do stops sooner), and each pair's paraphrase and perturbed answers scored.  The synthetic source
    with the character tokenizer is counted on its own pairs (the split of seed 0, its first m/2
    candidates forgotten: another seed's pairs are drawn alike); any other source at batches of
    :data:`~.qa.GENERATION_BATCH` of half ``max_length`` tokens each (an assumption), a synthetic
    source's :data:`~.qa.SYNTHETIC_PERTURBED` perturbed answers a pair and a file's at most TOFU's
    :data:`~.qa.TOFU_PERTURBED`, none where only ``full.json`` (format ``tofu``, no ``alternates``)
    is read.  NaN where the sizes are unknown."""
    retain, pool, test = qa_sizes(design, pool)
    dp = {**QA_DEFAULTS, **design.get("dataset_params", {})}
    length = int(dp["max_length"])
    decoded = pool / 2 + min(RETAIN_SAMPLE, retain) + test
    if not math.isfinite(decoded):
        return EvaluationCounts(math.nan, math.nan, math.nan, math.nan)
    if dp["source"] == "synthetic":
        alternatives = 1 + SYNTHETIC_PERTURBED  # a paraphrase and the perturbed answers, a pair
        if dp["tokenizer"] == "char":
            steps, examples, decoded = _synthetic_decoding(int(dp["n_entities"]), int(dp["pairs_per_entity"]), int(dp["source_seed"]),
                                                           int(design["m"]), int(design["batch_size"]), int(dp["n_val_entities"]),
                                                           int(dp["n_test_entities"]), length)
            return EvaluationCounts(float(decoded), float(steps), float(examples), float(decoded * alternatives))
    else:
        alternatives = 1 + TOFU_PERTURBED if (dp["alternates"] or dp["format"] == "records") else 0
    batches = math.ceil(decoded / GENERATION_BATCH)
    return EvaluationCounts(decoded, float(batches * (length // 2)), decoded * (length // 2), decoded * alternatives)


@lru_cache(maxsize=None)
def _synthetic_decoding(n_entities: int, pairs_per_entity: int, source_seed: int, m: int, b: int, n_val_entities: int,
                        n_test_entities: int, length: int) -> tuple[int, int, int]:
    """(token steps, prompts carried over those steps, pairs) of one evaluation run's greedy
    decoding on the synthetic source with the character tokenizer (:func:`qa_evaluation_counts`);
    computed once a design (the plan asks it of every chunk)."""
    pairs = synthetic_qa(n_entities, pairs_per_entity, seed=source_seed)
    try:
        parts = split_by_entity(pairs, m=m, batch_size=b, seed=0, n_val_entities=n_val_entities, n_test_entities=n_test_entities)
    except DatasetError:  # too few entities: the config check says so
        return 0, 0, 0
    rows = [*parts.forget[: (m // 2) * b], *parts.retain[retain_sample(pairs, parts.retain, 0)], *parts.test]
    prompts = [len(pairs[i].question + SEPARATOR) + 1 for i in rows]  # <bos> question \n, a character each
    limits = decoding_limits(prompts, [len(pairs[i].answer) for i in rows], length)
    batches = decoding_batches(prompts, limits, length)
    steps = [max(limits[i] for i in batch) for batch in batches]
    return sum(steps), sum(s * len(batch) for s, batch in zip(steps, batches)), len(rows)
