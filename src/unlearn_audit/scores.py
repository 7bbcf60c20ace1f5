"""Per-example membership scores of a model (paper Section 5, App. D.2, E.1;
docs/workflow.md#the-dag-step-by-step, step 4).

* logit score φ(f(x)_y) = log p_y − log(1 − p_y), computed stably as
  z_y − logsumexp_{j≠y} z_j (a float32 softmax followed by log(1 − p) overflows for
  confident points);
* loss score: the cross-entropy −log p_y;
* text (App. D.2): the mean per-character cross-entropy of a sequence; its logit-type
  score is its negation (higher = more member-like, like φ).
"""

from __future__ import annotations

import numpy as np
import torch

from .torch_utils import full_precision, model_device

__all__ = ["IGNORE", "logit_scores", "loss_scores", "sequence_scores", "answer_logit_scores", "sequence_accuracy", "model_scores"]


def logit_scores(logits: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
    """φ = z_y − logsumexp_{j≠y} z_j for each row, in float64."""
    z = logits.to(torch.float64)
    zy = z.gather(1, labels.view(-1, 1)).squeeze(1)
    others = z.scatter(1, labels.view(-1, 1), float("-inf"))
    return zy - torch.logsumexp(others, dim=1)


def loss_scores(logits: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
    """Cross-entropy −log p_y for each row, in float64."""
    z = logits.to(torch.float64)
    return torch.logsumexp(z, dim=1) - z.gather(1, labels.view(-1, 1)).squeeze(1)


#: A sequence target that is not scored (a question–answer sequence's question and padding).
IGNORE = -100


def sequence_scores(logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """Mean per-character cross-entropy of each sequence: logits (N, T, V), targets (N, T); with
    targets equal to ``IGNORE`` (a question–answer pair: only the answer's tokens are scored) the
    mean runs over the scored targets, −(1/|A|) Σ_{t∈A} log p(a_t | q, a_<t)."""
    n, t, v = logits.shape
    scored = targets != IGNORE
    if not bool(scored.all()):
        ce = loss_scores(logits.reshape(n * t, v), targets.clamp(min=0).reshape(n * t)).view(n, t)
        return (ce * scored).sum(dim=1) / scored.sum(dim=1).clamp(min=1)
    ce = loss_scores(logits.reshape(n * t, v), targets.reshape(n * t))
    return ce.view(n, t).mean(dim=1)


def answer_logit_scores(logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """A question-answer pair's logit-style score: the mean over its answer's tokens (targets not
    ``IGNORE``) of φ_t = z_{y_t} − logsumexp_{j≠y_t} z_j, the per-example score of
    :func:`logit_scores` taken token by token (a text window keeps −loss, the paper's)."""
    n, t, v = logits.shape
    scored = targets != IGNORE
    phi = logit_scores(logits.reshape(n * t, v), targets.clamp(min=0).reshape(n * t)).view(n, t)
    return (phi * scored).sum(dim=1) / scored.sum(dim=1).clamp(min=1)


def sequence_accuracy(logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """Per sequence, the fraction of its scored targets (not ``IGNORE``) predicted exactly (argmax)."""
    hits = (logits.argmax(dim=2) == targets).to(torch.float64)
    scored = targets != IGNORE
    if not bool(scored.all()):
        return (hits * scored).sum(dim=1) / scored.sum(dim=1).clamp(min=1)
    return hits.mean(dim=1)


@torch.no_grad()
def model_scores(model: torch.nn.Module, x, y, *, kind: str = "image", batch_size: int = 1024) -> dict[str, np.ndarray]:
    """Scores and correctness of ``model`` on (x, y): {"logit", "loss", "correct"} as numpy arrays.

    ``kind`` is "image" or "classification" (one label per example) or "text" (next-token prediction
    over a window, or a question-answer pair's answer given its question: "correct" is then the
    per-sequence fraction of correctly predicted scored tokens; the logit score of a pair is
    :func:`answer_logit_scores`, of a window −loss).
    The forward pass runs in fp32 even inside a bf16 autocast region.
    """
    model.eval()
    device = model_device(model)
    x = torch.as_tensor(x)
    y = torch.as_tensor(y)
    logit, loss, correct = [], [], []
    for start in range(0, len(x), batch_size):
        xb, yb = x[start : start + batch_size].to(device), y[start : start + batch_size].to(device)
        with full_precision(device):  # fp32 scores under a bf16 design too
            out = model(xb)
        if kind in ("image", "classification"):
            logit.append(logit_scores(out, yb))
            loss.append(loss_scores(out, yb))
            correct.append((out.argmax(dim=1) == yb).to(torch.float64))
        elif kind == "text":
            ce = sequence_scores(out, yb)
            loss.append(ce)
            logit.append(answer_logit_scores(out, yb) if bool((yb == IGNORE).any()) else -ce)
            correct.append(sequence_accuracy(out, yb))
        else:
            raise ValueError(f"kind must be 'image', 'classification' or 'text', got {kind!r}")
    cat = lambda parts: torch.cat(parts).cpu().numpy() if parts else np.zeros(0)  # noqa: E731
    return {"logit": cat(logit), "loss": cat(loss), "correct": cat(correct)}
