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
        ({"model": {"name": "causal_lm", "params": {"path": str(tmp_path / "no_model")}}}, "model.params.path", ["not found"]),
        ({"model": {"name": "causal_lm", "params": {}}}, "model.params", ["exactly one of config"]),
    ]:
        bad = copy.deepcopy(cfg)
        bad["nn"]["designs"]["qa_gpt2"].update(change)
        with pytest.raises(ConfigError) as err:
            validate_config(bad, schema)
        assert f"nn.designs.qa_gpt2.{key}'" in str(err.value) and all(w in str(err.value) for w in words), err.value
