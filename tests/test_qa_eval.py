"""TOFU's metrics, the model's side (src/unlearn_audit/qa_eval.py): answer probability and truth ratio
of a model with known logits, greedy answers (a Hugging Face model's ``generate`` over left-padded
prompts gives the answers of one forward pass a token), and the damaged flag of a model that
guesses uniformly against one fitted to the pairs."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from unlearn_audit.auditors.qa_metrics import is_damaged
from unlearn_audit.data.qa import build_qa_data, synthetic_qa, tokens_of
from unlearn_audit.qa_eval import greedy_answers, prompts_and_answers, qa_run_metrics
from unlearn_audit.scores import IGNORE, model_scores

V = 100


@pytest.fixture(scope="module")
def data():
    return build_qa_data(synthetic_qa(12, 8, seed=0), split="uniform", batch_size=4, forget_fraction=None, m=4, seed=2, max_length=112)


class Fixed(torch.nn.Module):
    """The same next-token distribution softmax(w) at every position, whatever the input."""

    def __init__(self, w: torch.Tensor):
        super().__init__()
        self.w = torch.nn.Parameter(w.clone())

    def forward(self, x):
        return self.w.expand(*x.shape, V)


class Bigram(torch.nn.Module):
    """Next-token logits from the counts of (token, next token) in the pairs it is fitted to."""

    def __init__(self, x: np.ndarray, y: np.ndarray):
        super().__init__()
        counts = torch.full((V, V), 0.01)
        seen = y != IGNORE
        np.add.at(counts.numpy(), (x[seen], y[seen]), 1.0)
        self.table = torch.nn.Parameter(counts.log())

    def forward(self, x):
        return self.table[x]


def _losses(model, data) -> dict:
    return {part: model_scores(model, getattr(data, f"{part}_x"), getattr(data, f"{part}_y"), kind="text")["loss"]
            for part in ("forget", "retain", "test")}


def test_answer_probability_and_truth_ratio_of_known_logits(data):
    w = torch.linspace(-2, 2, V)
    model, logp = Fixed(w), torch.log_softmax(w, 0).numpy()
    in_forget = np.repeat([True, False, True, False], 4)
    tokens = tokens_of("char")
    rec = qa_run_metrics(model, data, in_forget, _losses(model, data), tokens.decode, eos=tokens.eos, pad=tokens.pad)

    def prob(y):  # P(a|q)^(1/|a|) over the scored tokens, the answer's and its <eos>
        return math.exp(logp[y[y != IGNORE]].mean())

    forget = np.flatnonzero(in_forget)
    assert rec["forget_answer_prob"] == pytest.approx(np.mean([prob(data.forget_y[i]) for i in forget]))
    sample = data.extra["qa_retain_sample"]
    assert rec["retain_answer_prob"] == pytest.approx(np.mean([prob(data.retain_y[i]) for i in sample]))
    assert rec["answer_loss"] == pytest.approx(np.mean([-math.log(prob(data.retain_y[i])) for i in sample]))
    want = []
    for i in forget:
        mine = data.extra["qa_forget_alt_row"] == i
        kinds, ys = data.extra["qa_forget_alt_kind"][mine], data.extra["qa_forget_alt_y"][mine]
        want.append(np.mean([prob(y) for y in ys[kinds > 0]]) / prob(ys[kinds == 0][0]))
    assert rec["forget_truth_ratios"] == pytest.approx(want) and rec["forget_truth_ratio"] == pytest.approx(np.mean(want))
    assert rec["vocab_size"] == V and 0 <= rec["model_utility"] <= 1
    # the same argmax at every step: the greedy answer is one token repeated up to the answer's length + the margin
    assert all(0 <= rec[f"{p}_rouge_l"] <= 1 for p in ("forget", "retain", "test"))


def test_a_uniform_model_is_damaged_and_a_fitted_one_not(data):
    tokens = tokens_of("char")
    uniform = Fixed(torch.zeros(V))
    rec = qa_run_metrics(uniform, data, np.ones(16, bool), _losses(uniform, data), tokens.decode, eos=tokens.eos, pad=tokens.pad)
    assert rec["answer_loss"] == pytest.approx(math.log(V)) and is_damaged(rec["answer_loss"], V)
    assert rec["forget_answer_prob"] == pytest.approx(1 / V) and rec["forget_truth_ratio"] == pytest.approx(1.0)  # no answer preferred
    assert rec["retain_truth_ratio"] == pytest.approx(0.0, abs=1e-12) and rec["model_utility"] == pytest.approx(0.0, abs=1e-9)
    fitted = Bigram(data.retain_x, data.retain_y)
    rec = qa_run_metrics(fitted, data, np.ones(16, bool), _losses(fitted, data), tokens.decode, eos=tokens.eos, pad=tokens.pad)
    assert rec["answer_loss"] < 0.6 * math.log(V) and not is_damaged(rec["answer_loss"], V)
    assert rec["retain_answer_prob"] > 10 / V and 0 <= rec["retain_rouge_l"] <= 1


def test_greedy_answers_follow_the_argmax_and_hugging_face_generate_agrees(data):
    pytest.importorskip("transformers")
    from unlearn_audit.models import build_model

    x, y = data.test_x[:6], data.test_y[:6]
    bigram = Bigram(data.retain_x, data.retain_y)
    prompts, answers = prompts_and_answers(x, y)
    got = greedy_answers(bigram, x, y, eos=3, pad=0, margin=4)
    for p, a, g in zip(prompts, answers, got):
        want, last = [], int(p[-1])
        for _ in range(len(a) + 4):
            last = int(bigram.table[last].argmax())
            if last == 3:
                break
            want.append(last)
        assert g.tolist() == want
    torch.manual_seed(0)
    gpt = build_model("causal_lm", config=dict(model_type="gpt2", vocab_size=V, n_positions=112, n_embd=16, n_layer=1, n_head=2,
                                               bos_token_id=2, eos_token_id=3, pad_token_id=0))
    with torch.no_grad():
        for w in gpt.parameters():
            w.mul_(20)  # a random model whose argmax varies from token to token

    class Forward(torch.nn.Module):  # the same model without its generate: one forward pass a token
        def __init__(self):
            super().__init__()
            self.inner = gpt

        def forward(self, ids):
            return self.inner(ids)

    x, y = data.test_x[::2], data.test_y[::2]
    by_generate = greedy_answers(gpt, x, y, eos=3, pad=0, batch_size=3)
    by_forward = greedy_answers(Forward(), x, y, eos=3, pad=0, batch_size=5)
    assert all(np.array_equal(a, b) for a, b in zip(by_generate, by_forward))
    assert len({tuple(a[:10]) for a in by_generate}) > 1 and max(len(a) for a in by_generate) > 20


def test_pairs_without_alternative_answers_have_no_truth_ratio_and_the_rest_is_measured():
    from unlearn_audit.data.qa import QAPair

    pairs = [QAPair(p.question, p.answer, p.entity) for p in synthetic_qa(12, 8, seed=0)]  # TOFU's full.json: no alternatives
    plain = build_qa_data(pairs, split="uniform", batch_size=4, forget_fraction=None, m=4, seed=2, max_length=112)
    assert all(len(plain.extra[f"qa_{p}_alt_row"]) == 0 for p in ("forget", "retain", "test"))
    model, tokens = Fixed(torch.linspace(-1, 1, V)), tokens_of("char")
    rec = qa_run_metrics(model, plain, np.ones(16, bool), _losses(model, plain), tokens.decode, eos=tokens.eos, pad=tokens.pad)
    assert all(np.isnan(rec[f"{p}_truth_ratio"]) for p in ("forget", "retain", "test")) and rec["forget_truth_ratios"] == []
    assert rec["retain_answer_prob"] > 0 and rec["model_utility"] == pytest.approx(0.0)  # its ROUGE-L is 0: one token repeated


def test_the_cost_models_counts_are_what_an_evaluation_run_decodes_and_scores(monkeypatch):
    """qa_evaluation_counts (what plan prices an evaluation run's TOFU metrics at) against the calls
    qa_run_metrics makes on the same split (seed 0, the first m/2 candidates forgotten): the pairs it
    decodes, the token steps and the prompts they carry, and the alternative answers it scores."""
    import unlearn_audit.qa_eval as qa_eval
    from unlearn_audit.data.sizes import qa_evaluation_counts

    design = {"dataset": "qa", "m": 4, "batch_size": 4, "dataset_params": {"source": "synthetic", "n_entities": 12, "pairs_per_entity": 8,
                                                                           "max_length": 112, "n_test_entities": 2}}
    data = build_qa_data(synthetic_qa(12, 8, seed=0), split="uniform", batch_size=4, forget_fraction=None, m=4, seed=0, max_length=112)
    counts = qa_evaluation_counts(design, 16.0)
    decoded, scored = [], []
    real_decode, real_scores = qa_eval._generate_forward, qa_eval.model_scores
    monkeypatch.setattr(qa_eval, "_generate_forward", lambda model, prompts, new, *a: decoded.append((len(prompts), new)) or real_decode(model, prompts, new, *a))
    monkeypatch.setattr(qa_eval, "model_scores", lambda model, x, y, **k: scored.append(len(x)) or real_scores(model, x, y, **k))
    model, tokens = Fixed(torch.linspace(-1, 1, V)), tokens_of("char")
    in_forget = np.repeat([True, True, False, False], 4)
    qa_run_metrics(model, data, in_forget, _losses(model, data), tokens.decode, eos=tokens.eos, pad=tokens.pad)
    assert counts.decoded == sum(n for n, _ in decoded) == 8 + 32 + 16 and len(decoded) > 1  # batches split where prompt + limit pass 112
    assert counts.decode_steps == sum(new for _, new in decoded) and counts.decode_examples == sum(n * new for n, new in decoded)
    assert counts.alternates == sum(scored) == 4 * counts.decoded  # a paraphrase and three perturbed answers a pair
