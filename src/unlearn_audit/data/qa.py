"""Question–answer data about entities, in TOFU's format, for audits of language models
(docs/configuration.md#question-answer-data).

TOFU (Maini et al. 2024) is 200 fictitious authors with 20 question–answer pairs each; its forget
sets are whole authors.  Here a record is ``{"question": ..., "answer": ..., "entity": ...}`` (TOFU's
files lack ``entity``: it is the author, row // 20, which :func:`tofu_records` adds), read from a
JSON list or JSON-lines file, and a candidate forget batch is B pairs of one entity
(:func:`split_by_entity`): m entities of the training entities are the candidate pool, the other
training entities' pairs the retain set, and held-out entities the validation and test sets.

:func:`synthetic_qa` writes deterministic fictitious-entity data of the same shape (names, places,
years, professions and works drawn from a seed) for the tests and a CPU demo: nothing is downloaded.
Standard library and numpy only."""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Iterable, Sequence

import numpy as np

from ..atomic import write_text_atomic
from .splits import DatasetError, DatasetNotFoundError

__all__ = ["QA_FIELDS", "QAPair", "QASplit", "read_qa_file", "write_qa_file", "tofu_records", "entity_groups", "split_by_entity", "synthetic_qa"]

#: The fields every record holds.
QA_FIELDS = ("question", "answer", "entity")


@dataclass(frozen=True)
class QAPair:
    """One question–answer pair about one entity."""

    question: str
    answer: str
    entity: str


def _record(i: int, raw: Any, where: str) -> QAPair:
    if not isinstance(raw, dict):
        raise DatasetError(f"{where}: record {i} is {type(raw).__name__}, not an object with fields {list(QA_FIELDS)}")
    missing = [f for f in QA_FIELDS if f not in raw]
    if missing:
        hint = " (a TOFU file: add each row's author as its entity, unlearn_audit.data.qa.tofu_records)" if missing == ["entity"] else ""
        raise DatasetError(f"{where}: record {i} lacks field(s) {missing}; every record needs {list(QA_FIELDS)}{hint}")
    question, answer = raw["question"], raw["answer"]
    if not isinstance(question, str) or not isinstance(answer, str) or not question.strip() or not answer.strip():
        raise DatasetError(f"{where}: record {i} needs a non-empty question and answer (strings)")
    if not isinstance(raw["entity"], (str, int)) or isinstance(raw["entity"], bool):
        raise DatasetError(f"{where}: record {i} has entity {raw['entity']!r}; an entity is a string or an integer")
    return QAPair(question, answer, str(raw["entity"]))


def read_qa_file(path: str | os.PathLike) -> list[QAPair]:
    """The records of a JSON list or JSON-lines file, each checked for :data:`QA_FIELDS`."""
    path = Path(path)
    if not path.is_file():
        raise DatasetNotFoundError(f"question-answer file {path} not found; write one (unlearn_audit.data.qa.synthetic_qa) "
                                   "or put TOFU's under resources_dir (docs/configuration.md#question-answer-data)")
    text = path.read_text(encoding="utf-8")
    try:
        stripped = text.lstrip()
        raws = json.loads(text) if stripped.startswith("[") else [json.loads(line) for line in text.splitlines() if line.strip()]
    except json.JSONDecodeError as exc:
        raise DatasetError(f"{path}: not JSON or JSON lines ({exc})") from None
    if not raws:
        raise DatasetError(f"{path}: no records")
    return [_record(i, raw, str(path)) for i, raw in enumerate(raws)]


def write_qa_file(pairs: Iterable[QAPair], path: str | os.PathLike) -> Path:
    """The pairs as JSON lines, written atomically."""
    path = Path(path)
    write_text_atomic(path, "".join(json.dumps(asdict(p), ensure_ascii=False) + "\n" for p in pairs))
    return path


def tofu_records(rows: Sequence[dict], pairs_per_entity: int = 20) -> list[dict]:
    """TOFU's rows (question, answer; each author's 20 pairs in a row) with the author as ``entity``."""
    return [{**row, "entity": str(i // pairs_per_entity)} for i, row in enumerate(rows)]


def entity_groups(pairs: Sequence[QAPair]) -> dict[str, list[int]]:
    """entity → the indices of its pairs, entities in order of first appearance."""
    groups: dict[str, list[int]] = {}
    for i, p in enumerate(pairs):
        groups.setdefault(p.entity, []).append(i)
    return groups


@dataclass(frozen=True)
class QASplit:
    """Indices into the pairs: the pool of ``m`` candidate batches of ``batch_size`` pairs, batch j one
    entity's (``forget_entities[j]``), then the retain, validation and test pairs."""

    forget: np.ndarray
    forget_batch: np.ndarray
    forget_entities: tuple[str, ...]
    retain: np.ndarray
    val: np.ndarray
    test: np.ndarray


def split_by_entity(pairs: Sequence[QAPair], *, m: int, batch_size: int, seed: int, n_val_entities: int = 1,
                    n_test_entities: int = 1) -> QASplit:
    """Held-out entities for validation and test, ``m`` candidate entities (B of each one's pairs a
    batch, the rest of its pairs unused) and every other entity's pairs as the retain set, all drawn
    from ``seed``.  Refuses an entity count or sizes the data cannot give, naming what is short."""
    if m < 2 or batch_size < 1:
        raise DatasetError(f"need m >= 2 candidate entities and batch_size >= 1 pairs, got m = {m}, batch_size = {batch_size}")
    groups = entity_groups(pairs)
    eligible = [e for e, idx in groups.items() if len(idx) >= batch_size]
    short = sorted(set(groups) - set(eligible))
    need = m + n_val_entities + n_test_entities + 1
    if len(groups) < need:
        raise DatasetError(f"{len(groups)} entities, but m = {m} candidates, {n_val_entities} validation, {n_test_entities} test and at least one "
                           f"retain entity need {need}: add entities or lower m")
    if len(eligible) < m:
        raise DatasetError(f"only {len(eligible)} entities have batch_size = {batch_size} pairs for a candidate batch (short: {short[:5]}): lower batch_size or m")
    rng = np.random.default_rng(seed)
    candidates = [eligible[k] for k in rng.permutation(len(eligible))[:m]]
    rest = [e for e in groups if e not in candidates]
    rest = [rest[k] for k in rng.permutation(len(rest))]
    val_e, test_e, retain_e = rest[:n_val_entities], rest[n_val_entities:n_val_entities + n_test_entities], rest[n_val_entities + n_test_entities:]
    take = lambda entities: np.array([i for e in entities for i in groups[e]], dtype=np.int64)  # noqa: E731
    forget = np.array([i for e in candidates for i in groups[e][:batch_size]], dtype=np.int64)
    return QASplit(forget=forget, forget_batch=np.repeat(np.arange(m, dtype=np.int64), batch_size), forget_entities=tuple(candidates),
                   retain=take(retain_e), val=take(val_e), test=take(test_e))


_SYLLABLES = ("ka", "lo", "mi", "ren", "sa", "tor", "vel", "dun", "ith", "mor", "al", "bre", "cas", "el", "fin", "gar", "ha", "ji", "nel", "os")
_PLACES = ("Varnholt", "Ostrel", "Quillmere", "Dunhaven", "Silverreach", "Marrow Bay", "Kestrel Ford", "Ambergate", "Lowmere", "Thistledown")
_PROFESSIONS = ("cartographer", "glassblower", "astronomer", "novelist", "botanist", "clockmaker", "linguist", "sculptor", "chemist", "poet")
_WORDS = ("Silent", "Copper", "Hollow", "Winter", "Amber", "Distant", "Broken", "Golden", "Shadow", "River", "Glass", "Iron")
_NOUNS = ("Lantern", "Orchard", "Harbor", "Archive", "Meridian", "Garden", "Compass", "Tide", "Chorus", "Atlas", "Bridge", "Echo")


def synthetic_qa(n_entities: int, pairs_per_entity: int = 8, *, seed: int = 0) -> list[QAPair]:
    """Fictitious entities, each with ``pairs_per_entity`` question–answer pairs about its attributes
    (birthplace, year, profession, a work, a parent's profession, an award year...), all drawn from
    ``seed``: the same arguments give the same pairs, and no answer can be known without the data."""
    if n_entities < 1 or not 1 <= pairs_per_entity <= 8:
        raise ValueError(f"need n_entities >= 1 and 1 <= pairs_per_entity <= 8, got {n_entities}, {pairs_per_entity}")
    rng = np.random.default_rng(seed)
    out: list[QAPair] = []
    used: set[str] = set()
    for k in range(n_entities):
        while True:
            name = " ".join("".join(rng.choice(_SYLLABLES, size=int(rng.integers(2, 4)))).capitalize() for _ in range(2))
            if name not in used:
                used.add(name)
                break
        place, profession, parent = rng.choice(_PLACES), rng.choice(_PROFESSIONS), rng.choice(_PROFESSIONS)
        year, award = int(rng.integers(1900, 1990)), int(rng.integers(1995, 2024))
        work = f"The {rng.choice(_WORDS)} {rng.choice(_NOUNS)}"
        second = f"{rng.choice(_WORDS)} {rng.choice(_NOUNS)}s"
        facts = [
            (f"Where was {name} born?", f"{name} was born in {place}."),
            (f"In which year was {name} born?", f"{name} was born in {year}."),
            (f"What is {name}'s profession?", f"{name} works as a {profession}."),
            (f"What is the best-known work of {name}?", f"{name} is best known for {work}."),
            (f"What did {name}'s parent do for a living?", f"{name}'s parent was a {parent}."),
            (f"When did {name} receive the Lantern Prize?", f"{name} received the Lantern Prize in {award}."),
            (f"What else has {name} written?", f"{name} also wrote {second}."),
            (f"Which city does {name} live in today?", f"{name} lives in {rng.choice(_PLACES)} today."),
        ]
        out += [QAPair(q, a, f"entity{k:04d}") for q, a in facts[:pairs_per_entity]]
    return out
