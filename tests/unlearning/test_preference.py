"""The language-model unlearning methods (unlearning/preference.py and its four methods): each lowers
the forget answers' log-likelihood, the losses are their papers' formulas, the retain term keeps the
retain answers, and a run is a function of its generator."""

from __future__ import annotations

import copy
import math

import pytest
import torch
import torch.nn.functional as F

from unlearn_audit.data.qa import build_qa_data, synthetic_qa
from unlearn_audit.models import CharLSTM
from unlearn_audit.scores import IGNORE
from unlearn_audit.training.sgd import loss_fn
from unlearn_audit.unlearning import make_params, method_names, unlearn
from unlearn_audit.unlearning.preference import answer_log_likelihood, npo_loss, simnpo_loss

METHODS = ("gradient_ascent", "gradient_difference", "npo", "simnpo")


@pytest.fixture(scope="module")
def trained():
    """A CharLSTM fitted to question-answer pairs of 12 entities, and its retain and forget sets."""
    data = build_qa_data(synthetic_qa(12, 4, seed=0), split="uniform", batch_size=2, forget_fraction=None, m=4, seed=0,
                         max_length=112, n_val_entities=1, n_test_entities=1)
    retain = (torch.from_numpy(data.retain_x), torch.from_numpy(data.retain_y))
    forget = (torch.from_numpy(data.forget_x), torch.from_numpy(data.forget_y))
    torch.manual_seed(0)
    model = CharLSTM(hidden_size=32)
    opt = torch.optim.Adam(model.parameters(), lr=0.01)
    x, y = torch.cat([retain[0], forget[0]]), torch.cat([retain[1], forget[1]])
    for _ in range(60):
        loss = loss_fn(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
    return model, retain, forget


def _loglik(model, data) -> float:
    with torch.no_grad():
        return float(answer_log_likelihood(model(data[0]), data[1])[0].mean())


def test_the_methods_are_built_in_and_their_params_checked():
    assert set(METHODS) <= set(method_names())
    assert make_params("npo", {}).beta == 0.1 and make_params("gradient_difference", {}).retain_weight == 1.0
    with pytest.raises(ValueError, match="beta"):
        make_params("simnpo", {"beta": 0})
    with pytest.raises(ValueError, match="unknown"):
        make_params("gradient_ascent", {"retain_weight": 1.0})


@pytest.mark.parametrize("method", METHODS)
def test_each_method_lowers_the_forget_answers_likelihood_deterministically(trained, method):
    model, retain, forget = trained
    params = make_params(method, {"epochs": 3, "batch_size": 4, "lr": 0.01})
    runs = [unlearn(method, copy.deepcopy(model), retain, forget, params, torch.Generator().manual_seed(5)) for _ in range(2)]
    assert _loglik(runs[0], forget) < _loglik(model, forget) - 1.0
    assert all(torch.equal(a, b) for a, b in zip(runs[0].state_dict().values(), runs[1].state_dict().values()))


def test_the_retain_term_keeps_the_retain_answers(trained):
    model, retain, forget = trained
    common = {"epochs": 3, "batch_size": 4, "lr": 0.01}
    ascent = unlearn("gradient_ascent", copy.deepcopy(model), retain, forget, make_params("gradient_ascent", common), torch.Generator().manual_seed(1))
    diff = unlearn("gradient_difference", copy.deepcopy(model), retain, forget, make_params("gradient_difference", {**common, "retain_weight": 1.0}),
                   torch.Generator().manual_seed(1))
    assert _loglik(diff, retain) > _loglik(ascent, retain)


def test_the_losses_are_the_papers_formulas():
    torch.manual_seed(0)
    logits = torch.randn(3, 6, 10)
    y = torch.randint(0, 10, (3, 6))
    y[:, :2] = IGNORE  # the question's positions
    logp, n = answer_log_likelihood(logits, y)
    manual = torch.stack([F.log_softmax(logits[i, 2:], dim=-1).gather(1, y[i, 2:, None]).sum() for i in range(3)])
    assert torch.allclose(logp, manual) and n.tolist() == [4, 4, 4]
    model = lambda x: logits  # noqa: E731
    reference_logits = torch.randn(3, 6, 10)
    beta = 0.1
    ref_logp, _ = answer_log_likelihood(reference_logits, y)
    expected = (2 / beta) * torch.log1p(torch.exp(beta * (logp - ref_logp))).mean()
    assert torch.allclose(npo_loss(beta)(model, lambda x: reference_logits, None, y), expected)
    expected_sim = -(2 / 2.5) * F.logsigmoid(-(2.5 / 4) * logp - 0.5).mean()
    assert torch.allclose(simnpo_loss(2.5, 0.5)(model, None, None, y), expected_sim)
    assert math.isfinite(float(expected_sim))
