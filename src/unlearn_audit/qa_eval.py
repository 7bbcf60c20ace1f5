"""The model's side of the TOFU metrics of a question-answer design's evaluation runs (docs/metrics.md):
answer log-probabilities and greedy answers, on the run's forget pairs, the data's retain sample
and the held-out test pairs (:func:`qa_run_metrics`); the arithmetic is
:mod:`unlearn_audit.auditors.qa_metrics`'.

A greedy answer is decoded from ``<bos> question \\n`` with the model in eval mode and fp32, up to
the true answer's length plus :data:`GENERATION_MARGIN` tokens or ``<eos>``, whichever comes first
(and within the data's ``max_length``), in batches of :data:`GENERATION_BATCH` pairs: a Hugging Face
causal LM (``causal_lm``) by its own ``generate`` (left-padded prompts, its key-value cache), any
other model by one forward pass a token over the right-padded prompts (:func:`greedy_answers`).
"""

from __future__ import annotations

from typing import Callable, Mapping

import numpy as np
import torch

from .auditors.qa_metrics import rouge_l_recall, run_record, truth_ratios
from .data.qa import GENERATION_BATCH, GENERATION_MARGIN, decoding_batches, decoding_limits
from .scores import IGNORE, model_scores
from .torch_utils import full_precision, model_device

__all__ = ["GENERATION_MARGIN", "GENERATION_BATCH", "prompts_and_answers", "greedy_answers", "qa_run_metrics"]


def prompts_and_answers(x: np.ndarray, y: np.ndarray) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """Each encoded pair's prompt ``<bos> question \\n`` (the inputs up to its first scored target)
    and its answer's token ids (the scored targets, less the final ``<eos>``)."""
    prompts, answers = [], []
    for xi, yi in zip(np.asarray(x), np.asarray(y)):
        scored = np.flatnonzero(yi != IGNORE)
        prompts.append(xi[: scored[0] + 1])
        answers.append(yi[scored[:-1]])
    return prompts, answers


def _hf_model(model: torch.nn.Module):
    """The Hugging Face model inside a ``causal_lm`` (its ``generate``), else None."""
    lm = getattr(model, "lm", None)
    return lm if lm is not None and hasattr(lm, "generate") else None


def _cut(ids: np.ndarray, limit: int, eos: int) -> np.ndarray:
    """``ids`` up to ``limit`` tokens and before the first ``eos``."""
    ids = np.asarray(ids[:limit])
    stop = np.flatnonzero(ids == eos)
    return ids[: stop[0]] if stop.size else ids


@torch.no_grad()
def _generate_hf(lm, prompts: list[np.ndarray], new: int, eos: int, pad: int, device) -> list[np.ndarray]:
    """Greedy continuations of ``new`` tokens by ``lm.generate`` over left-padded prompts."""
    width = max(len(p) for p in prompts)
    ids = torch.full((len(prompts), width), pad, dtype=torch.long)
    mask = torch.zeros((len(prompts), width), dtype=torch.long)
    for i, p in enumerate(prompts):
        ids[i, width - len(p):] = torch.as_tensor(p)
        mask[i, width - len(p):] = 1
    out = lm.generate(input_ids=ids.to(device), attention_mask=mask.to(device), max_new_tokens=new, min_new_tokens=0, do_sample=False,
                      num_beams=1, use_cache=True, eos_token_id=eos, pad_token_id=pad)
    return [row for row in out[:, width:].cpu().numpy()]


@torch.no_grad()
def _generate_forward(model, prompts: list[np.ndarray], new: int, pad: int, length: int, device) -> list[np.ndarray]:
    """Greedy continuations of ``new`` tokens by one forward pass a token over right-padded prompts
    (a causal model's position never sees the padding after it)."""
    ids = torch.full((len(prompts), length), pad, dtype=torch.long)
    for i, p in enumerate(prompts):
        ids[i, : len(p)] = torch.as_tensor(p)
    ids = ids.to(device)
    at = torch.as_tensor([len(p) for p in prompts], device=device)
    rows = torch.arange(len(prompts), device=device)
    for _ in range(new):
        live = at < length
        if not bool(live.any()):
            break
        end = int(at.max())
        logits = model(ids[:, :end])
        nxt = logits[rows, (at - 1).clamp(max=end - 1)].argmax(dim=-1)
        ids[rows[live], at[live]] = nxt[live]
        at = torch.where(live, at + 1, at)
    return [ids[i, len(p):].cpu().numpy() for i, p in enumerate(prompts)]


def greedy_answers(model: torch.nn.Module, x: np.ndarray, y: np.ndarray, *, eos: int, pad: int,
                   margin: int = GENERATION_MARGIN, batch_size: int = GENERATION_BATCH) -> list[np.ndarray]:
    """The model's greedy answer to each encoded pair (module docstring): token ids, ``<eos>`` and
    what follows it left out."""
    model.eval()
    device = model_device(model)
    length = np.asarray(x).shape[1]
    prompts, answers = prompts_and_answers(x, y)
    prompt_lengths = [len(p) for p in prompts]
    limits = decoding_limits(prompt_lengths, [len(a) for a in answers], length, margin)
    lm = _hf_model(model)
    out: list[np.ndarray] = [np.zeros(0, np.int64)] * len(prompts)
    for batch in decoding_batches(prompt_lengths, limits, length, batch_size):
        new = max(limits[i] for i in batch)
        with full_precision(device):
            if lm is not None:
                rows = _generate_hf(lm, [prompts[i] for i in batch], new, eos, pad, device)
            else:
                rows = _generate_forward(model, [prompts[i] for i in batch], new, pad, length, device)
        for i, row in zip(batch, rows):
            out[i] = _cut(row, limits[i], eos)
    return out


def _unpadded(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``x`` and ``y`` without the columns after the last scored target of every row (a causal
    model's scores of the earlier positions do not depend on them)."""
    scored = np.flatnonzero((y != IGNORE).any(axis=0))
    width = int(scored[-1]) + 1 if scored.size else y.shape[1]
    return x[:, :width], y[:, :width]


def qa_run_metrics(model: torch.nn.Module, data, in_forget: np.ndarray, losses: Mapping[str, np.ndarray],
                   decode: Callable[[np.ndarray], str], *, eos: int, pad: int) -> dict:
    """One evaluation run's question-answer columns (:func:`~unlearn_audit.auditors.qa_metrics.run_record`)
    of the unlearned ``model``: on its forget pairs (``in_forget`` rows of the candidate pool), the
    retain sample (``data.extra["qa_retain_sample"]``) and the test pairs; ``losses``: each pair's
    mean answer token loss of the whole forget pool, retain set and test set (what the run's
    accuracies already computed); ``decode``: token ids → text (:class:`~unlearn_audit.data.qa.Tokens`)."""
    rows = {"forget": np.flatnonzero(in_forget), "retain": np.asarray(data.extra["qa_retain_sample"], np.int64),
            "test": np.arange(len(data.test_x))}
    xs = {part: getattr(data, f"{part}_x")[r] for part, r in rows.items()}
    ys = {part: getattr(data, f"{part}_y")[r] for part, r in rows.items()}
    # one batched pass for the three parts: their greedy answers, then their alternative answers' losses
    order = list(rows)
    answers = greedy_answers(model, np.concatenate([xs[p] for p in order]), np.concatenate([ys[p] for p in order]), eos=eos, pad=pad)
    alternates = {}
    for part in order:
        alt_row = np.asarray(data.extra[f"qa_{part}_alt_row"], np.int64)
        keep = np.isin(alt_row, rows[part])
        position = np.searchsorted(rows[part], alt_row[keep])  # rows are sorted: each alternative's pair in the part's order
        alternates[part] = (position, np.asarray(data.extra[f"qa_{part}_alt_kind"])[keep],
                            data.extra[f"qa_{part}_alt_x"][keep], data.extra[f"qa_{part}_alt_y"][keep])
    alt_x, alt_y = np.concatenate([alternates[p][2] for p in order]), np.concatenate([alternates[p][3] for p in order])
    alt_loss = model_scores(model, *_unpadded(alt_x, alt_y), kind="text")["loss"] if len(alt_x) else np.zeros(0)
    parts, start, alt_start = {}, 0, 0
    for part in order:
        n, (position, kind, ax, _) = len(rows[part]), alternates[part]
        refs = [decode(a) for a in prompts_and_answers(xs[part], ys[part])[1]]
        rouge = [rouge_l_recall(decode(g), ref) for g, ref in zip(answers[start : start + n], refs)]
        ratios = truth_ratios(n, position, kind, alt_loss[alt_start : alt_start + len(ax)])
        parts[part] = {"losses": np.asarray(losses[part])[rows[part]], "rouge": rouge, "ratios": ratios}
        start, alt_start = start + n, alt_start + len(ax)
    return run_record(parts, float(np.mean(parts["retain"]["losses"])) if len(rows["retain"]) else float("nan"), int(data.num_classes))
