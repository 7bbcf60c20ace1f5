import numpy as np
import pytest
import torch

from unlearn_audit.scores import logit_scores, loss_scores, model_scores, sequence_scores


def test_logit_score_matches_definition_and_is_stable():
    torch.manual_seed(0)
    z = torch.randn(50, 7, dtype=torch.float64) * 3
    y = torch.randint(0, 7, (50,))
    p = torch.softmax(z, dim=1).gather(1, y.view(-1, 1)).squeeze(1)
    expected = torch.log(p) - torch.log1p(-p)
    torch.testing.assert_close(logit_scores(z, y), expected, rtol=1e-10, atol=1e-10)
    # confident float32 logits: a naive softmax gives p = 1 and an infinite score
    zc = torch.tensor([[60.0, 0.0, -5.0]], dtype=torch.float32)
    yc = torch.tensor([0])
    naive = torch.softmax(zc, 1)[0, 0]
    assert torch.isinf(torch.log(naive) - torch.log1p(-naive))
    s = logit_scores(zc, yc)
    assert torch.isfinite(s).all() and s.item() == pytest.approx(60.0 - np.logaddexp(0.0, -5.0), rel=1e-12)


def test_loss_and_sequence_scores():
    z = torch.tensor([[2.0, 0.0], [0.0, 3.0]])
    y = torch.tensor([0, 0])
    ce = torch.nn.functional.cross_entropy(z.double(), y, reduction="none")
    torch.testing.assert_close(loss_scores(z, y), ce)
    zs = torch.randn(3, 5, 4)
    ts = torch.randint(0, 4, (3, 5))
    expected = torch.nn.functional.cross_entropy(zs.reshape(15, 4).double(), ts.reshape(15), reduction="none").view(3, 5).mean(1)
    torch.testing.assert_close(sequence_scores(zs, ts), expected)


def test_model_scores_image_and_text():
    lin = torch.nn.Linear(4, 3)
    x = torch.randn(10, 4)
    y = torch.randint(0, 3, (10,))
    out = model_scores(lin, x, y, batch_size=3)
    assert out["logit"].shape == (10,) and out["loss"].shape == (10,)
    assert set(np.unique(out["correct"])) <= {0.0, 1.0}

    class Seq(torch.nn.Module):
        def forward(self, x):
            return torch.nn.functional.one_hot(x, 5).float() * 4

    xt = torch.randint(0, 5, (6, 8))
    res = model_scores(Seq(), xt, xt, kind="text")
    assert np.all(res["correct"] == 1.0)
    np.testing.assert_allclose(res["logit"], -res["loss"])
    with pytest.raises(ValueError, match="kind"):
        model_scores(lin, x, y, kind="audio")


def test_a_question_answer_pair_is_scored_on_its_answer_tokens_only():
    import torch

    from unlearn_audit.scores import IGNORE, logit_scores, model_scores

    torch.manual_seed(0)
    logits = torch.randn(2, 5, 7)
    y = torch.randint(0, 7, (2, 5))
    y[0, :2] = IGNORE
    y[1, :4] = IGNORE
    model = lambda x: logits  # noqa: E731
    scores = model_scores(model_of(model), torch.zeros(2, 5, dtype=torch.long), y, kind="text")
    for i, first in enumerate((2, 4)):
        tokens = logits[i, first:].double()
        nll = (torch.logsumexp(tokens, dim=1) - tokens.gather(1, y[i, first:, None]).squeeze(1)).mean()
        phi = logit_scores(logits[i, first:], y[i, first:]).mean()
        hits = (logits[i, first:].argmax(dim=1) == y[i, first:]).double().mean()
        assert np.isclose(scores["loss"][i], float(nll)) and np.isclose(scores["logit"][i], float(phi))
        assert np.isclose(scores["correct"][i], float(hits))


def model_of(fn):
    """A module whose forward is ``fn`` (no parameters)."""
    import torch

    class Wrapped(torch.nn.Module):
        def forward(self, x):
            return fn(x)

    return Wrapped()
