"""Question–answer data in TOFU's format (src/unlearn_audit/data/qa.py): reading and refusing files,
the synthetic fictitious-entity generator, and candidate batches of one entity each."""

from __future__ import annotations

import copy
import json

import numpy as np
import pytest

from unlearn_audit.data import DatasetError, DatasetNotFoundError, dataset_params_problems
from unlearn_audit.data.qa import QAPair, entity_groups, read_qa_file, split_by_entity, synthetic_qa, tofu_records, write_qa_file


def test_synthetic_data_is_deterministic_and_about_distinct_entities():
    a, b = synthetic_qa(12, 6, seed=1), synthetic_qa(12, 6, seed=1)
    assert a == b and a != synthetic_qa(12, 6, seed=2)
    groups = entity_groups(a)
    assert len(groups) == 12 and all(len(idx) == 6 for idx in groups.values())
    names = {p.question.split(" born")[0].removeprefix("Where was ") for p in a if p.question.startswith("Where was")}
    assert len(names) == 12  # every entity its own name
    assert all(p.answer.endswith(".") and p.question.endswith("?") for p in a)


def test_a_file_round_trips_and_a_tofu_file_gets_its_authors(tmp_path):
    pairs = synthetic_qa(3, 4, seed=0)
    assert read_qa_file(write_qa_file(pairs, tmp_path / "qa.jsonl")) == pairs
    rows = [{"question": f"q{i}?", "answer": f"a{i}."} for i in range(40)]
    (tmp_path / "tofu.json").write_text(json.dumps(tofu_records(rows)))
    read = read_qa_file(tmp_path / "tofu.json")
    assert [p.entity for p in read[18:22]] == ["0", "0", "1", "1"]  # 20 pairs an author
    # a TOFU file as downloaded (JSON lines, no entity) read in format tofu: the same pairs
    (tmp_path / "full.json").write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert read_qa_file(tmp_path / "full.json", "tofu") == read
    with pytest.raises(DatasetError, match=r"lacks field\(s\) \['entity'\]"):
        read_qa_file(tmp_path / "full.json")
    with pytest.raises(DatasetError, match="format 'tofoo' is not one of"):
        read_qa_file(tmp_path / "full.json", "tofoo")
    assert dataset_params_problems("qa", {"format": "tofoo"}) == ["format must be one of ['records', 'tofu'] (question-answer files), got 'tofoo'"]


@pytest.mark.parametrize(("content", "words"), [
    ('[{"question": "q?", "answer": "a."}]', ["lacks field(s) ['entity']", "tofu_records"]),
    ('{"question": "q?"', ["not JSON"]),
    ('[{"question": "", "answer": "a.", "entity": 1}]', ["non-empty question and answer"]),
    ("[]", ["no records"]),
])
def test_a_bad_file_is_refused_with_what_is_wrong(tmp_path, content, words):
    (tmp_path / "qa.json").write_text(content)
    with pytest.raises(DatasetError) as err:
        read_qa_file(tmp_path / "qa.json")
    assert all(w in str(err.value) for w in words), err.value
    with pytest.raises(DatasetNotFoundError, match="synthetic_qa"):
        read_qa_file(tmp_path / "missing.jsonl")


def test_candidate_batches_are_whole_entities_and_the_parts_disjoint():
    pairs = synthetic_qa(14, 5, seed=3)
    split = split_by_entity(pairs, m=10, batch_size=4, seed=7)
    assert len(split.forget) == 40 and np.array_equal(np.bincount(split.forget_batch), np.full(10, 4))
    for j, entity in enumerate(split.forget_entities):
        assert {pairs[i].entity for i in split.forget[split.forget_batch == j]} == {entity}
    entities = lambda idx: {pairs[i].entity for i in idx}  # noqa: E731
    parts = [set(split.forget_entities), entities(split.retain), entities(split.val), entities(split.test)]
    assert sum(map(len, parts)) == len(set().union(*parts)) == 14  # every entity in exactly one part
    again = split_by_entity(pairs, m=10, batch_size=4, seed=7)
    assert again.forget_entities == split.forget_entities and np.array_equal(again.retain, split.retain)
    assert split_by_entity(pairs, m=10, batch_size=4, seed=8).forget_entities != split.forget_entities


def test_too_few_entities_or_pairs_are_refused():
    pairs = synthetic_qa(6, 3, seed=0)
    with pytest.raises(DatasetError, match="6 entities, but m = 4 candidates"):
        split_by_entity(pairs, m=4, batch_size=2, seed=0)
    with pytest.raises(DatasetError, match="batch_size = 4 pairs"):
        split_by_entity(pairs + [QAPair("q?", "a.", "extra")], m=2, batch_size=4, seed=0)


def test_encoded_pairs_score_only_the_answer_and_the_config_refuses_what_cannot_run(tmp_path):
    import yaml

    from unlearn_audit.data.qa import encode_pairs, longest_pair
    from unlearn_audit.data.vocab import default_vocab
    from unlearn_audit.pipeline.config import ConfigError, validate_config
    from unlearn_audit.scores import IGNORE
    from workflow_utils import REPO

    pairs = synthetic_qa(2, 2, seed=0)
    x, y = encode_pairs(pairs, longest_pair(pairs))
    vocab = default_vocab()
    for i, p in enumerate(pairs):
        assert vocab.decode(y[i][y[i] != IGNORE]) == p.answer + "<eos>"
        assert vocab.decode(x[i][: len(p.question) + 2]) == "<bos>" + p.question + "\n"
    with pytest.raises(DatasetError, match="longer than max_length"):
        encode_pairs(pairs, longest_pair(pairs) - 1)

    schema = REPO / "workflow" / "schemas" / "config.schema.yaml"
    cfg = yaml.safe_load((REPO / "config" / "llm.yaml").read_text())
    validate_config(cfg, schema)
    design = cfg["nn"]["designs"]["qa_gpt2"]
    for change, key, words in [
        ({"dataset_params": {**design["dataset_params"], "max_length": 64}}, "dataset_params.max_length", ["longest question-answer pair"]),
        ({"batch_size": 9}, "dataset_params", ["batch_size = 9 pairs"]),
        ({"dataset_params": {**design["dataset_params"], "source": str(tmp_path / "none.jsonl")}}, "dataset_params", ["not found"]),
        ({"dataset_params": {**design["dataset_params"], "alternates": [str(tmp_path / "none.json")]}}, "dataset_params",
         ["alternative-answers file", "none.json not found"]),
        ({"model": {"name": "causal_lm", "params": {"path": str(tmp_path / "no_model")}}}, "model.params.path", ["not found"]),
        ({"model": {"name": "causal_lm", "params": {}}}, "model.params", ["exactly one of config"]),
    ]:
        bad = copy.deepcopy(cfg)
        bad["nn"]["designs"]["qa_gpt2"].update(change)
        with pytest.raises(ConfigError) as err:
            validate_config(bad, schema)
        assert f"nn.designs.qa_gpt2.{key}'" in str(err.value) and all(w in str(err.value) for w in words), err.value


#: sha256 of [[question, answer, entity], ...] of synthetic_qa(n, k, seed=s) as the generator wrote
#: them before it made paraphrased and perturbed answers: existing runs' pairs stay the same bytes.
PAIRS_BEFORE_ALTERNATES = {(40, 8, 0): "e6033495dcdc809c783f72df6b90cfc250f187828610770246825091d94fbe27",
                           (16, 8, 0): "40a33737578e71fd0ef467e8a6416280bca2fde849dff070bee0723783e96a00",
                           (12, 6, 1): "b42cb15cdd88bd48858f6460df6f71d8850d49105357b819bdd3ad9a1ea01eb6"}


def test_synthetic_pairs_carry_a_paraphrase_and_perturbed_answers_and_are_the_pairs_they_were():
    import hashlib

    from unlearn_audit.data.qa import SYNTHETIC_PERTURBED

    for (n, k, seed), digest in PAIRS_BEFORE_ALTERNATES.items():
        pairs = synthetic_qa(n, k, seed=seed)
        assert hashlib.sha256(json.dumps([[p.question, p.answer, p.entity] for p in pairs]).encode()).hexdigest() == digest
    pairs = synthetic_qa(40, 8, seed=0)
    assert (pairs[0].question, pairs[0].answer) == ("Where was Casaltor Kalo born?", "Casaltor Kalo was born in Varnholt.")
    assert pairs[0].paraphrased_answer == "Varnholt is where Casaltor Kalo was born."
    assert pairs[7].answer == "Casaltor Kalo lives in Kestrel Ford today."
    assert pairs[7].paraphrased_answer == "Today Casaltor Kalo makes a home in Kestrel Ford."
    assert pairs == synthetic_qa(40, 8, seed=0)  # deterministic, the alternatives too
    for p in pairs:
        assert p.paraphrased_answer not in (None, p.answer) and len(p.perturbed_answer) == SYNTHETIC_PERTURBED
        assert len(set(p.perturbed_answer)) == SYNTHETIC_PERTURBED and p.paraphrased_answer not in p.perturbed_answer
        # a perturbed answer is the paraphrase's sentence with another fact: they share all but the fact's words
        para = p.paraphrased_answer.split()
        assert all(len(set(para) - set(a.split())) <= 3 for a in p.perturbed_answer)


def test_alternative_answers_round_trip_and_a_bad_one_is_refused_naming_the_fix(tmp_path):
    pairs = synthetic_qa(3, 4, seed=0)
    assert read_qa_file(write_qa_file(pairs, tmp_path / "qa.jsonl")) == pairs
    plain = [QAPair(p.question, p.answer, p.entity) for p in pairs]
    written = write_qa_file(plain, tmp_path / "plain.jsonl").read_text()
    assert "perturbed" not in written and read_qa_file(tmp_path / "plain.jsonl") == plain  # the optional fields only where held
    for bad, words in [({"paraphrased_answer": ""}, ["record 1", "paraphrased_answer", "non-empty string"]),
                       ({"perturbed_answer": "wrong."}, ["record 1", "perturbed_answer", "list of non-empty strings", "_perturbed.json"]),
                       ({"perturbed_answer": ["fine.", 3]}, ["record 1", "list of non-empty strings"])]:
        rows = [{"question": "q?", "answer": "a.", "entity": 0}, {"question": "q?", "answer": "a.", "entity": 0, **bad}]
        (tmp_path / "bad.json").write_text(json.dumps(rows))
        with pytest.raises(DatasetError) as err:
            read_qa_file(tmp_path / "bad.json")
        assert all(w in str(err.value) for w in words), err.value


def test_the_data_file_keeps_the_alternatives_of_the_pairs_an_evaluation_run_measures(tmp_path):
    from unlearn_audit.data.qa import RETAIN_SAMPLE, build_qa_data, encode_pairs
    from unlearn_audit.data.splits import load_audit_data, save_audit_data

    pairs = synthetic_qa(16, 8, seed=0)
    data = build_qa_data(pairs, split="uniform", batch_size=4, forget_fraction=None, m=8, seed=3, max_length=112)
    sample = data.extra["qa_retain_sample"]
    assert len(sample) == RETAIN_SAMPLE and np.all(np.diff(sample) > 0) and sample.max() < len(data.retain_x)
    for part, ids in (("forget", data.forget_id), ("retain", data.retain_id), ("test", data.test_id)):
        rows, kinds = data.extra[f"qa_{part}_alt_row"], data.extra[f"qa_{part}_alt_kind"]
        assert len(rows) == 4 * (len(ids) if part != "retain" else RETAIN_SAMPLE) and set(kinds) == {0, 1, 2, 3}
        first = pairs[ids[rows[0]]]
        x, y = encode_pairs([QAPair(first.question, first.perturbed_answer[kinds[1] - 1], "e")], 112)
        assert np.array_equal(data.extra[f"qa_{part}_alt_x"][1], x[0]) and np.array_equal(data.extra[f"qa_{part}_alt_y"][1], y[0])
    save_audit_data(data, tmp_path / "data.npz")
    again = load_audit_data(tmp_path / "data.npz")
    assert set(again.extra) == set(data.extra) and all(np.array_equal(again.extra[k], v) for k, v in data.extra.items())
    assert np.array_equal(again.forget_x, data.forget_x) and again.forget_y.dtype == np.int64
    # an alternative longer than max_length is left out
    from unlearn_audit.data.qa import encode_alternates

    alt = encode_alternates([QAPair("q?", "a.", "e", "a paraphrase too long", ("b.", "c.")), QAPair("q?", "a.", "e")], 8)
    assert alt["row"].tolist() == [0, 0] and alt["kind"].tolist() == [1, 2] and alt["x"].shape == (2, 8)


def _tofu_files(tmp_path, authors=8, covered=(5, 6, 7), per_author=4):
    """A TOFU-shaped source (rows without entity, ``per_author`` pairs an author, as full.json) and a
    file of alternative answers of the covered authors' pairs, shuffled, with a field the join
    ignores (as TOFU's *_perturbed.json hold paraphrased_question), written as TOFU ships them."""
    pairs = synthetic_qa(authors, per_author, seed=4)
    rows = [{"question": p.question, "answer": p.answer} for p in pairs]
    (tmp_path / "full.json").write_text(json.dumps(rows))
    alt = [{"question": p.question, "answer": " " + p.answer, "paraphrased_answer": p.paraphrased_answer,
            "perturbed_answer": list(p.perturbed_answer), "paraphrased_question": "?"}
           for i, p in enumerate(pairs) if i // per_author in covered]
    alt = [alt[k] for k in np.random.default_rng(0).permutation(len(alt))]
    (tmp_path / "perturbed.json").write_text("".join(json.dumps(r) + "\n" for r in alt))
    return pairs


def test_a_tofu_source_gets_the_alternative_answers_of_its_perturbed_files_joined_by_question_and_answer(tmp_path, monkeypatch):
    import unlearn_audit.data.qa as qa
    from unlearn_audit.data.qa import has_alternates, load_qa_source

    monkeypatch.setattr(qa, "TOFU_PAIRS_PER_ENTITY", 4)
    pairs = _tofu_files(tmp_path)
    joined = load_qa_source(tmp_path, source="full.json", format="tofu", alternates=("perturbed.json",))
    assert [(p.question, p.answer) for p in joined] == [(p.question, p.answer) for p in pairs]
    for i, (got, want) in enumerate(zip(joined, pairs)):
        assert got.entity == str(i // 4)
        if i // 4 in (5, 6, 7):  # the covered authors' pairs carry exactly their file's alternatives
            assert (got.paraphrased_answer, got.perturbed_answer) == (want.paraphrased_answer, want.perturbed_answer)
        else:
            assert not has_alternates(got) and got.paraphrased_answer is None
    assert load_qa_source(tmp_path, source="full.json", format="tofu") == [QAPair(p.question, p.answer, p.entity) for p in joined]

    # author-level candidates drawn among the covered authors only: every forget pair has a truth ratio
    for seed in range(4):
        split = split_by_entity(joined, m=3, batch_size=4, seed=seed, n_test_entities=1, candidates="with_alternates")
        assert set(split.forget_entities) == {"5", "6", "7"}
        assert all(has_alternates(joined[i]) for i in split.forget)
    assert set(split_by_entity(joined, m=3, batch_size=4, seed=1, n_test_entities=1).forget_entities) != {"5", "6", "7"}
    with pytest.raises(DatasetError, match=r"only 3 entities have 4 pairs with a paraphrase and perturbed answers .* m = 4: add alternative"):
        split_by_entity(joined, m=4, batch_size=4, seed=0, n_test_entities=1, candidates="with_alternates")
    assert dataset_params_problems("qa", {"candidates": "covered"}) == [
        "candidates must be one of ['all', 'with_alternates'] (question-answer designs), got 'covered'"]
    assert dataset_params_problems("qa", {"alternates": "perturbed.json"}) == ["alternates must be a list, got 'perturbed.json'"]


@pytest.mark.parametrize(("change", "words"), [
    (lambda alt: alt + [{"question": "Who wrote nothing?", "answer": "Nobody.", "paraphrased_answer": "No one."}],
     ["perturbed.json: record 12", "'Who wrote nothing?'", "matches no pair of the source by question and answer"]),
    (lambda alt: alt + [{**alt[0], "perturbed_answer": ["Something else."]}],
     ["records 0 and 12 give the pair", "different alternative answers"]),
    (lambda alt: alt + [{"question": alt[0]["question"], "answer": alt[0]["answer"]}],
     ["record 12 has neither paraphrased_answer nor perturbed_answer"]),
    (lambda alt: alt[:1] + [{**alt[1], "perturbed_answer": "wrong."}],
     ["record 1", "perturbed_answer", "list of non-empty strings"]),
])
def test_a_perturbed_file_that_does_not_fit_its_source_is_refused_naming_the_record(tmp_path, change, words):
    from unlearn_audit.data.qa import load_qa_source

    _tofu_files(tmp_path, authors=8, covered=(6, 7), per_author=6)
    alt = [json.loads(line) for line in (tmp_path / "perturbed.json").read_text().splitlines()]
    (tmp_path / "perturbed.json").write_text(json.dumps(change(alt)))
    rows = [{**r, "entity": str(i // 6)} for i, r in enumerate(json.loads((tmp_path / "full.json").read_text()))]
    (tmp_path / "records.json").write_text(json.dumps(rows))
    with pytest.raises(DatasetError) as err:
        load_qa_source(tmp_path, source="records.json", alternates=("perturbed.json",))
    assert all(w in str(err.value) for w in words), err.value
    with pytest.raises(DatasetNotFoundError, match="alternative-answers file .*missing.json not found"):
        load_qa_source(tmp_path, source="records.json", alternates=("missing.json",))
