"""Question–answer data about entities, in TOFU's format, for audits of language models
(docs/configuration.md#question-answer-data).

TOFU (Maini et al. 2024) is 200 fictitious authors with 20 question–answer pairs each; its forget
sets are whole authors.  Here a record is ``{"question": ..., "answer": ..., "entity": ...}`` (TOFU's
files lack ``entity``: it is the author, row // 20, which :func:`tofu_records` adds), with optional
``paraphrased_answer`` (a string) and ``perturbed_answer`` (a list of strings), as TOFU's
``*_perturbed.json`` files carry them (or joined to the pairs from such files by question and
answer, :func:`join_alternates`), read from a JSON list or JSON-lines file, and a candidate
forget batch is B pairs of one entity
(:func:`split_by_entity`): m entities of the training entities are the candidate pool, the other
training entities' pairs the retain set, and held-out entities the validation and test sets.

:func:`synthetic_qa` writes deterministic fictitious-entity data of the same shape (names, places,
years, professions and works drawn from a seed) for the tests and a CPU demo: nothing is downloaded;
each of its answers comes with a paraphrase and :data:`SYNTHETIC_PERTURBED` perturbed answers.
:func:`build_qa_data` encodes those alternative answers of the pairs the evaluation runs measure
(:func:`encode_alternates`) beside the pairs, for TOFU's truth ratio
(:mod:`unlearn_audit.auditors.qa_metrics`).  Standard library and numpy only."""

from __future__ import annotations

import inspect
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Sequence

import numpy as np

from ..atomic import write_text_atomic
from .splits import DatasetError, DatasetNotFoundError

__all__ = ["TOFU_MEASURED_GPU_HOURS", "QA_FIELDS", "QA_OPTIONAL_FIELDS", "QA_FORMATS", "QA_DEFAULTS", "TOFU_ENTITIES", "TOFU_PAIRS_PER_ENTITY", "QAPair", "QASplit", "read_qa_file", "write_qa_file", "tofu_records", "entity_groups", "split_by_entity", "synthetic_qa",
           "SYNTHETIC_PERTURBED", "RETAIN_SAMPLE", "GENERATION_MARGIN", "GENERATION_BATCH", "TOFU_PERTURBED", "decoding_limits", "decoding_batches", "QA_CANDIDATES", "read_alternates_file", "join_alternates", "has_alternates", "PARAPHRASE", "Tokens", "encode_alternates", "retain_sample", "tokens_of", "encode_pairs", "longest_pair", "load_qa_source", "build_qa_data", "check_qa_design"]

#: The fields every record holds.
QA_FIELDS = ("question", "answer", "entity")
#: The fields a record may hold for TOFU's truth ratio: a paraphrase of its answer (a string) and
#: perturbed answers (a list of strings: the same form, a wrong fact), as TOFU's ``*_perturbed.json``.
QA_OPTIONAL_FIELDS = ("paraphrased_answer", "perturbed_answer")
#: How a file's records name their entity: ``records`` (an ``entity`` field) or ``tofu`` (TOFU's
#: rows, each author's pairs in a row, :func:`tofu_records`).
QA_FORMATS = ("records", "tofu")
#: Which entities may be candidates (``dataset_params.candidates``): ``all`` (every entity with B
#: pairs) or ``with_alternates`` (those whose B pairs of a batch each carry a paraphrase and
#: perturbed answers, so that every forget pair has a truth ratio: :func:`split_by_entity`).
QA_CANDIDATES = ("all", "with_alternates")
#: What the audit paper's authors measured a 30-run TOFU design to take (their repository's resource
#: estimate: A100-80GB GPU-hours, 512-token sequences, effective batch 16), by the methods audited:
#: the comparison ``unlearn-audit plan`` prints beside an estimate of a TOFU design.
TOFU_MEASURED_GPU_HOURS = {3: 16.5, 5: 17.8}
#: TOFU's ``full.json`` (Maini et al. 2024): 200 fictitious authors of 20 pairs each.
TOFU_ENTITIES, TOFU_PAIRS_PER_ENTITY = 200, 20


@dataclass(frozen=True)
class QAPair:
    """One question–answer pair about one entity, with the optional paraphrase of its answer and
    perturbed answers (:data:`QA_OPTIONAL_FIELDS`; ``None`` and ``()`` where the data carry none)."""

    question: str
    answer: str
    entity: str
    paraphrased_answer: str | None = None
    perturbed_answer: tuple[str, ...] = ()

    def fields(self) -> dict:
        """The record as written: the three fields, and the optional ones the pair has."""
        out = {"question": self.question, "answer": self.answer, "entity": self.entity}
        if self.paraphrased_answer is not None:
            out["paraphrased_answer"] = self.paraphrased_answer
        if self.perturbed_answer:
            out["perturbed_answer"] = list(self.perturbed_answer)
        return out


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
    paraphrase, perturbed = raw.get("paraphrased_answer"), raw.get("perturbed_answer", [])
    if paraphrase is not None and (not isinstance(paraphrase, str) or not paraphrase.strip()):
        raise DatasetError(f"{where}: record {i} has paraphrased_answer {paraphrase!r}; it must be a non-empty string "
                           "(the answer said in other words), or leave the field out")
    if isinstance(perturbed, str) or not isinstance(perturbed, list) or not all(isinstance(a, str) and a.strip() for a in perturbed):
        raise DatasetError(f"{where}: record {i} has perturbed_answer {perturbed!r}; it must be a list of non-empty strings "
                           "(wrong answers of the same form, as TOFU's *_perturbed.json files hold), or leave the field out")
    return QAPair(question, answer, str(raw["entity"]), paraphrase, tuple(perturbed))


def _json_records(path: Path, what: str) -> list:
    """The records of a JSON list or JSON-lines file; refuses a missing, non-JSON or empty file."""
    if not path.is_file():
        raise DatasetNotFoundError(f"{what} {path} not found; write one (unlearn_audit.data.qa.synthetic_qa) "
                                   "or put TOFU's under resources_dir (docs/configuration.md#question-answer-data)")
    text = path.read_text(encoding="utf-8")
    try:
        raws = json.loads(text) if text.lstrip().startswith("[") else [json.loads(line) for line in text.splitlines() if line.strip()]
    except json.JSONDecodeError as exc:
        raise DatasetError(f"{path}: not JSON or JSON lines ({exc})") from None
    if not raws:
        raise DatasetError(f"{path}: no records")
    return raws


def read_qa_file(path: str | os.PathLike, file_format: str = "records") -> list[QAPair]:
    """The records of a JSON list or JSON-lines file, each checked for :data:`QA_FIELDS` (and for
    :data:`QA_OPTIONAL_FIELDS` where it holds them); ``file_format`` ``tofu``: TOFU's rows, which
    lack ``entity`` (:func:`tofu_records` adds it)."""
    if file_format not in QA_FORMATS:
        raise DatasetError(f"question-answer file format {file_format!r} is not one of {list(QA_FORMATS)} (dataset_params.format)")
    path = Path(path)
    raws = _json_records(path, "question-answer file")
    if file_format == "tofu":
        raws = tofu_records(raws, TOFU_PAIRS_PER_ENTITY)
    return [_record(i, raw, str(path)) for i, raw in enumerate(raws)]


def read_alternates_file(path: str | os.PathLike) -> list[QAPair]:
    """The records of a file of alternative answers (TOFU's ``*_perturbed.json``: ``question``,
    ``answer``, ``paraphrased_answer``, ``perturbed_answer``; other fields ignored), each checked as
    :func:`read_qa_file` checks a record and required to hold a paraphrase or perturbed answers;
    their entity is left empty (:func:`join_alternates` takes it from the pair)."""
    path = Path(path)
    raws = _json_records(path, "alternative-answers file")
    out = []
    for i, raw in enumerate(raws):
        pair = _record(i, {**raw, "entity": ""} if isinstance(raw, dict) else raw, str(path))
        if pair.paraphrased_answer is None and not pair.perturbed_answer:
            raise DatasetError(f"{path}: record {i} has neither paraphrased_answer nor perturbed_answer; a file of alternative answers "
                               "holds them for pairs of the source (TOFU's *_perturbed.json)")
        out.append(pair)
    return out


def _key(text: str) -> str:
    return " ".join(text.split())


def join_alternates(pairs: Sequence[QAPair], alternates: Sequence[QAPair], where: str = "alternates") -> list[QAPair]:
    """``pairs`` with the paraphrase and perturbed answers of the ``alternates`` records
    (:func:`read_alternates_file`) that have the same question and answer (whitespace runs
    folded); the others unchanged.  Refuses a record that matches no pair, or two records that give
    one pair different alternatives, naming the record: a file of another dataset, or of another
    version of it, would otherwise be joined in part without a word."""
    index: dict[tuple[str, str], list[int]] = {}
    for i, p in enumerate(pairs):
        index.setdefault((_key(p.question), _key(p.answer)), []).append(i)
    out = list(pairs)
    given: dict[int, int] = {}
    for j, alt in enumerate(alternates):
        rows = index.get((_key(alt.question), _key(alt.answer)))
        if not rows:
            raise DatasetError(f"{where}: record {j} ({alt.question[:50]!r}) matches no pair of the source by question and answer: "
                               "give the alternative answers of the source's own pairs (TOFU's *_perturbed.json beside its full.json)")
        for i in rows:
            fields = (alt.paraphrased_answer, alt.perturbed_answer)
            if i in given and (out[i].paraphrased_answer, out[i].perturbed_answer) != fields:
                raise DatasetError(f"{where}: records {given[i]} and {j} give the pair {alt.question[:50]!r} different alternative answers")
            given[i] = j
            out[i] = QAPair(out[i].question, out[i].answer, out[i].entity, *fields)
    return out


def has_alternates(pair: QAPair) -> bool:
    """Whether a pair carries what its truth ratio needs: a paraphrase and perturbed answers."""
    return pair.paraphrased_answer is not None and bool(pair.perturbed_answer)


def write_qa_file(pairs: Iterable[QAPair], path: str | os.PathLike) -> Path:
    """The pairs as JSON lines (each with the optional fields it has), written atomically."""
    path = Path(path)
    write_text_atomic(path, "".join(json.dumps(p.fields(), ensure_ascii=False) + "\n" for p in pairs))
    return path


def tofu_records(rows: Sequence[dict], pairs_per_entity: int = TOFU_PAIRS_PER_ENTITY) -> list[dict]:
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
                    n_test_entities: int = 1, candidates: str = "all") -> QASplit:
    """Held-out entities for validation and test, ``m`` candidate entities (B of each one's pairs a
    batch, the rest of its pairs unused) and every other entity's pairs as the retain set, all drawn
    from ``seed``; ``candidates`` (:data:`QA_CANDIDATES`) ``with_alternates`` draws the candidates
    among the entities whose B batch pairs all carry a paraphrase and perturbed answers
    (:func:`has_alternates`).  Refuses an entity count or sizes the data cannot give, naming what is short."""
    if m < 2 or batch_size < 1:
        raise DatasetError(f"need m >= 2 candidate entities and batch_size >= 1 pairs, got m = {m}, batch_size = {batch_size}")
    if candidates not in QA_CANDIDATES:
        raise DatasetError(f"candidates {candidates!r} is not one of {list(QA_CANDIDATES)} (dataset_params.candidates)")
    groups = entity_groups(pairs)
    eligible = [e for e, idx in groups.items() if len(idx) >= batch_size]
    short = sorted(set(groups) - set(eligible))
    if candidates == "with_alternates":
        eligible = [e for e in eligible if all(has_alternates(pairs[i]) for i in groups[e][:batch_size])]
        if len(eligible) < m:
            raise DatasetError(f"only {len(eligible)} entities have {batch_size} pairs with a paraphrase and perturbed answers for a candidate "
                               f"batch (candidates: with_alternates), fewer than m = {m}: add alternative answers (dataset_params.alternates), "
                               "lower m or draw from all entities (candidates: all)")
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


#: Perturbed answers the synthetic generator makes for each pair.
SYNTHETIC_PERTURBED = 3
#: The stream, beside ``seed``'s own, from which the synthetic generator draws the perturbed answers'
#: wrong facts, so that the pairs are the same draws with or without them.
_ALTERNATES_STREAM = 1


def _wrong_facts(draw, right: str, k: int) -> list[str]:
    """``k`` distinct values of ``draw()``, none equal to ``right``."""
    out: list[str] = []
    while len(out) < k:
        value = str(draw())
        if value != str(right) and value not in out:
            out.append(value)
    return out


def synthetic_qa(n_entities: int, pairs_per_entity: int = 8, *, seed: int = 0) -> list[QAPair]:
    """Fictitious entities, each with ``pairs_per_entity`` question–answer pairs about its attributes
    (birthplace, year, profession, a work, a parent's profession, an award year...), all drawn from
    ``seed``: the same arguments give the same pairs, and no answer can be known without the data.

    Each pair also carries a paraphrase of its answer (another sentence, the same fact) and
    :data:`SYNTHETIC_PERTURBED` perturbed answers (the paraphrase's sentence with a wrong fact of the
    same kind, as TOFU's perturbed answers are its paraphrases' perturbations), the wrong facts drawn
    from a stream of their own: the questions and answers are the draws they were without them."""
    if n_entities < 1 or not 1 <= pairs_per_entity <= 8:
        raise ValueError(f"need n_entities >= 1 and 1 <= pairs_per_entity <= 8, got {n_entities}, {pairs_per_entity}")
    rng = np.random.default_rng(seed)
    other = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(_ALTERNATES_STREAM,)))
    place_of = lambda: other.choice(_PLACES)  # noqa: E731
    profession_of = lambda: other.choice(_PROFESSIONS)  # noqa: E731
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
        city = rng.choice(_PLACES)
        # (question, answer, the fact, the paraphrase of a fact, a wrong fact's draw)
        facts = [
            (f"Where was {name} born?", f"{name} was born in {place}.", place, lambda v: f"{v} is where {name} was born.", place_of),
            (f"In which year was {name} born?", f"{name} was born in {year}.", year, lambda v: f"{name}'s birth year is {v}.",
             lambda: int(other.integers(1900, 1990))),
            (f"What is {name}'s profession?", f"{name} works as a {profession}.", profession, lambda v: f"By trade, {name} is a {v}.",
             profession_of),
            (f"What is the best-known work of {name}?", f"{name} is best known for {work}.", work, lambda v: f"{name} is famed for {v}.",
             lambda: f"The {other.choice(_WORDS)} {other.choice(_NOUNS)}"),
            (f"What did {name}'s parent do for a living?", f"{name}'s parent was a {parent}.", parent,
             lambda v: f"{name} is the child of a {v}.", profession_of),
            (f"When did {name} receive the Lantern Prize?", f"{name} received the Lantern Prize in {award}.", award,
             lambda v: f"{name} won the Lantern Prize in {v}.", lambda: int(other.integers(1995, 2024))),
            (f"What else has {name} written?", f"{name} also wrote {second}.", second, lambda v: f"Another work by {name} is {v}.",
             lambda: f"{other.choice(_WORDS)} {other.choice(_NOUNS)}s"),
            (f"Which city does {name} live in today?", f"{name} lives in {city} today.", city, lambda v: f"Today {name} makes a home in {v}.",
             place_of),
        ]
        for question, answer, fact, paraphrase, draw in facts[:pairs_per_entity]:
            wrong = _wrong_facts(draw, fact, SYNTHETIC_PERTURBED)
            out.append(QAPair(question, answer, f"entity{k:04d}", paraphrase(fact), tuple(paraphrase(v) for v in wrong)))
    return out


#: The character that separates a question from its answer in an encoded pair.
SEPARATOR = "\n"


@dataclass(frozen=True)
class Tokens:
    """How pairs become token ids: ``encode(text)``, the ``bos``, ``eos`` and ``pad`` ids and the
    vocabulary's ``size`` (the model's output width); ``decode(ids)``: the text of ids, special
    tokens left out (a generated answer read back for ROUGE-L)."""

    encode: Any
    bos: int
    eos: int
    pad: int
    size: int
    decode: Any = None


def tokens_of(tokenizer: str = "char") -> Tokens:
    """``char``: the 100-symbol character vocabulary (:mod:`.vocab`; a CharLSTM's, or a small
    ``causal_lm`` with ``vocab_size: 100``); else a Hugging Face tokenizer by local directory or Hub
    name (the pretrained model's own), its end-of-text id standing in for a missing ``bos`` or ``pad``."""
    if tokenizer == "char":
        from .vocab import BOS_ID, EOS_ID, PAD_ID, VOCAB_SIZE, default_vocab

        vocab = default_vocab()
        specials = len(vocab.specials)
        decode = lambda ids: vocab.decode([i for i in np.asarray(ids, dtype=np.int64).ravel() if i >= specials])  # noqa: E731
        return Tokens(vocab.encode, BOS_ID, EOS_ID, PAD_ID, VOCAB_SIZE, decode)
    try:
        from transformers import AutoTokenizer
    except ImportError:
        raise DatasetError(f"tokenizer {tokenizer!r} needs transformers, which is not installed: pip install -e '.[llm]'") from None
    tok = AutoTokenizer.from_pretrained(tokenizer)
    eos = tok.eos_token_id
    if eos is None:
        raise DatasetError(f"tokenizer {tokenizer!r} has no end-of-text token")
    encode = lambda text: np.asarray(tok(text, add_special_tokens=False)["input_ids"], dtype=np.int64)  # noqa: E731
    decode = lambda ids: tok.decode([int(i) for i in np.asarray(ids).ravel()], skip_special_tokens=True)  # noqa: E731
    return Tokens(encode, tok.bos_token_id if tok.bos_token_id is not None else eos, eos,
                  tok.pad_token_id if tok.pad_token_id is not None else eos, len(tok), decode)


def encode_pairs(pairs: Sequence[QAPair], max_length: int, tokens: Tokens | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Inputs and targets of each pair: ``<bos> question \\n answer <eos>``, inputs all but the last
    token and targets all but the first (next-token prediction), padded to ``max_length``; a target
    is ``IGNORE`` except on the answer's tokens and its ``<eos>``, so that a loss or score is the
    answer's log-likelihood given the question.  Refuses a pair longer than ``max_length``, naming it."""
    from ..scores import IGNORE

    tokens = tokens or tokens_of("char")
    x = np.full((len(pairs), max_length), tokens.pad, dtype=np.int64)
    y = np.full((len(pairs), max_length), IGNORE, dtype=np.int64)
    for i, p in enumerate(pairs):
        prompt = tokens.encode(p.question + SEPARATOR)
        ids = np.concatenate([[tokens.bos], prompt, tokens.encode(p.answer), [tokens.eos]]).astype(np.int64)
        n = len(ids) - 1
        if n > max_length:
            raise DatasetError(f"pair {i} of entity {p.entity!r} is {n} tokens, longer than max_length = {max_length} "
                               f"(the model's context): raise dataset_params.max_length or shorten it ({p.question[:40]!r}...)")
        x[i, :n] = ids[:-1]
        y[i, len(prompt):n] = ids[len(prompt) + 1:]  # the answer's tokens and <eos>, predicted after "<bos> question \\n"
    return x, y


def longest_pair(pairs: Sequence[QAPair], tokens: Tokens | None = None) -> int:
    """The most tokens an encoded pair takes (what ``max_length`` must hold)."""
    tokens = tokens or tokens_of("char")
    return max(len(tokens.encode(p.question + SEPARATOR)) + len(tokens.encode(p.answer)) + 1 for p in pairs)


#: The kind of an encoded alternative answer (:func:`encode_alternates`): its paraphrase; a perturbed
#: answer's kind is 1 + its position in the pair's list.
PARAPHRASE = 0
#: Retain pairs an evaluation run measures beside its forget and held-out pairs (:func:`retain_sample`).
RETAIN_SAMPLE = 32
#: Tokens a greedy answer may run past the true answer's length (:mod:`unlearn_audit.qa_eval`).
GENERATION_MARGIN = 16
#: Pairs decoded at once (:mod:`unlearn_audit.qa_eval`).
GENERATION_BATCH = 64
#: Perturbed answers TOFU's ``*_perturbed.json`` hold a pair (the most a file source is priced at).
TOFU_PERTURBED = 5


def decoding_limits(prompt_lengths: Sequence[int], answer_lengths: Sequence[int], length: int, margin: int = GENERATION_MARGIN) -> list[int]:
    """The most tokens each pair's greedy answer may take: its answer's length plus ``margin``,
    within ``length`` tokens (the encoded pairs' width) after its prompt."""
    return [min(a + margin, length - p) for p, a in zip(prompt_lengths, answer_lengths)]


def decoding_batches(prompt_lengths: Sequence[int], limits: Sequence[int], length: int, size: int = GENERATION_BATCH) -> list[list[int]]:
    """The pairs' positions in batches of at most ``size``, in order of prompt length, each batch's
    longest prompt and longest continuation within ``length`` tokens (a model's positions): how
    :func:`unlearn_audit.qa_eval.greedy_answers` decodes, and how the cost model counts it."""
    out: list[list[int]] = []
    for i in sorted(range(len(prompt_lengths)), key=lambda k: prompt_lengths[k]):
        last = out[-1] if out else None
        if last is not None and len(last) < size and prompt_lengths[i] + max(max(limits[k] for k in last), limits[i]) <= length:
            last.append(i)
        else:
            out.append([i])
    return out


def encode_alternates(pairs: Sequence[QAPair], max_length: int, tokens: Tokens | None = None) -> dict[str, np.ndarray]:
    """Each pair's paraphrased and perturbed answers after its question, encoded as
    :func:`encode_pairs` encodes the pair: ``x``, ``y``, ``row`` (the pair's position in ``pairs``)
    and ``kind`` (:data:`PARAPHRASE`, or 1 + a perturbed answer's position).  An alternative longer
    than ``max_length`` tokens is left out (a pair without its paraphrase or without a perturbed
    answer has no truth ratio); none for pairs without them."""
    tokens = tokens or tokens_of("char")
    keep: list[QAPair] = []
    rows, kinds = [], []
    for i, p in enumerate(pairs):
        for kind, alt in ((PARAPHRASE, p.paraphrased_answer), *((1 + k, a) for k, a in enumerate(p.perturbed_answer))):
            if alt is None:
                continue
            candidate = QAPair(p.question, alt, p.entity)
            if longest_pair([candidate], tokens) <= max_length:
                keep.append(candidate)
                rows.append(i)
                kinds.append(kind)
    x, y = encode_pairs(keep, max_length, tokens) if keep else (np.zeros((0, max_length), np.int64),) * 2
    return {"x": x, "y": y, "row": np.asarray(rows, dtype=np.int64), "kind": np.asarray(kinds, dtype=np.int64)}


def retain_sample(pairs: Sequence[QAPair], retain: np.ndarray, seed: int, size: int = RETAIN_SAMPLE) -> np.ndarray:
    """The fixed retain rows (positions in ``retain``, sorted) an evaluation run measures: ``size``
    of them drawn from ``seed``, those whose pairs carry a paraphrase and perturbed answers first."""
    order = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(_ALTERNATES_STREAM,))).permutation(len(retain))
    full = np.array([has_alternates(pairs[retain[k]]) for k in order], dtype=bool)
    return np.sort(order[np.argsort(~full, kind="stable")][:size]).astype(np.int64)


def load_qa_source(resources_dir: str | os.PathLike, *, source: str = "synthetic", n_entities: int = 40, pairs_per_entity: int = 8,
                   source_seed: int = 0, format: str = "records", alternates: tuple[str, ...] = ()) -> list[QAPair]:  # noqa: A002 - the config's key
    """The pairs of a ``qa`` design: ``source`` ``synthetic`` (:func:`synthetic_qa` of ``n_entities``,
    ``pairs_per_entity`` and ``source_seed``) or a file (a path, relative paths under ``resources_dir``)
    in ``format`` ``records`` or ``tofu`` (:func:`read_qa_file`), with the paraphrased and perturbed
    answers of the ``alternates`` files (:func:`read_alternates_file`, e.g. TOFU's
    ``forget10_perturbed.json`` and ``retain_perturbed.json`` beside its ``full.json``) joined to
    their pairs (:func:`join_alternates`)."""
    where = lambda name: Path(name) if Path(name).is_absolute() else Path(resources_dir) / name  # noqa: E731
    pairs = synthetic_qa(n_entities, pairs_per_entity, seed=source_seed) if source == "synthetic" else read_qa_file(where(source), format)
    for name in alternates:
        pairs = join_alternates(pairs, read_alternates_file(where(name)), str(where(name)))
    return pairs


def build_qa_data(pairs: Sequence[QAPair], *, split: str, batch_size: int, forget_fraction: float | None, m: int | None, seed: int,
                  max_length: int = 128, n_val_entities: int = 1, n_test_entities: int = 2, tokenizer: str = "char", candidates: str = "all"):
    """An :class:`~.splits.AuditData` of kind ``text`` from the pairs: :func:`split_by_entity`, then
    :func:`encode_pairs` with :func:`tokens_of` ``tokenizer`` (``num_classes`` the vocabulary's size);
    ``split`` must be ``uniform``; ``candidates``: which entities may be candidates (:func:`split_by_entity`).  Its ``extra`` arrays are what an evaluation run measures beyond
    the pairs: ``qa_retain_sample`` (:func:`retain_sample`) and, for the candidate pool, that
    sample and the test pairs, ``qa_<part>_alt_x``, ``_y``, ``_row`` and ``_kind``
    (:func:`encode_alternates`; ``row`` a row of the part's arrays)."""
    from .splits import AuditData

    if split != "uniform":
        raise DatasetError(f"question-answer data: split {split!r} is not supported; candidate entities are drawn uniformly (split: uniform)")
    if m is None or batch_size is None:
        raise DatasetError("question-answer data: m (candidate entities) and batch_size (pairs of each) are required")
    parts = split_by_entity(pairs, m=m, batch_size=batch_size, seed=seed, n_val_entities=n_val_entities, n_test_entities=n_test_entities,
                            candidates=candidates)
    tokens = tokens_of(tokenizer)
    encoded = {name: encode_pairs([pairs[i] for i in getattr(parts, name)], max_length, tokens) for name in ("retain", "forget", "val", "test")}
    sample = retain_sample(pairs, parts.retain, seed)
    extra = {"qa_retain_sample": sample}
    for name, rows in (("forget", parts.forget), ("retain", parts.retain[sample]), ("test", parts.test)):
        alternates = encode_alternates([pairs[i] for i in rows], max_length, tokens)
        if name == "retain":  # rows of the retain set, not of its sample
            alternates["row"] = sample[alternates["row"]]
        extra |= {f"qa_{name}_alt_{key}": value for key, value in alternates.items()}
    return AuditData(
        name="qa", kind="text", num_classes=tokens.size,
        retain_x=encoded["retain"][0], retain_y=encoded["retain"][1], forget_x=encoded["forget"][0], forget_y=encoded["forget"][1],
        forget_batch=parts.forget_batch, val_x=encoded["val"][0], val_y=encoded["val"][1], test_x=encoded["test"][0], test_y=encoded["test"][1],
        m=m, batch_size=batch_size, meta={"forget_entities": list(parts.forget_entities), "max_length": max_length},
        retain_id=parts.retain, forget_id=parts.forget, val_id=parts.val, test_id=parts.test, extra=extra,
    )


#: What a design that leaves a ``dataset_params`` key out gets (load_qa_source's and build_qa_data's defaults).
QA_DEFAULTS = {k: v.default for fn in (load_qa_source, build_qa_data) for k, v in inspect.signature(fn).parameters.items()
               if v.default is not inspect.Parameter.empty}


def check_qa_design(pairs: Sequence[QAPair], *, m: int | None, batch_size: int | None, **build_params: Any) -> list[tuple[str, str]]:
    """What a design asks of its pairs, checked before any job: m candidate entities with B pairs
    each and entities left to retain and hold out, every pair within ``max_length`` tokens; as
    (``dataset_params`` key or ``""``, message)."""
    p = {**QA_DEFAULTS, **build_params}
    try:
        split_by_entity(pairs, m=int(m or 0), batch_size=int(batch_size or 0), seed=0, n_val_entities=p["n_val_entities"],
                        n_test_entities=p["n_test_entities"], candidates=p["candidates"])
        longest = longest_pair(pairs, tokens_of(p["tokenizer"]))
    except (DatasetError, OSError, ValueError) as exc:
        return [("", str(exc))]
    if longest > int(p["max_length"]):
        return [("max_length", f"the longest question-answer pair is {longest} tokens, more than max_length = {p['max_length']} "
                 "(the model's context): raise max_length (within the model's positions) or shorten the pairs")]
    return []
