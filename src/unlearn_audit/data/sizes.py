"""The text datasets' size models: (|D_r|, m·B, |test|) of a design before its data are read, the
``size_model`` of their :class:`~unlearn_audit.data.DatasetSpec` (docs/development.md#add-a-dataset),
which ``unlearn-audit plan``'s cost model and the jobs' runtimes read.  An image dataset needs none:
its spec's training portion and test size give its sizes.  Torch-free.
"""

from __future__ import annotations

import math
from typing import Mapping

from .qa import QA_DEFAULTS, TOFU_ENTITIES, TOFU_PAIRS_PER_ENTITY

__all__ = ["SHAKESPEARE_ROLES", "SHAKESPEARE_RETAIN_CHARACTERS", "SHAKESPEARE_FORGET_CHARACTERS", "shakespeare_sizes", "qa_sizes"]

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
