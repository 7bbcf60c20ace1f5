"""What a model is, apart from its torch implementation: :class:`ModelSpec` (docs/development.md#add-a-model).

A model's spec says what the config check, the plan and the cost model ask of it: the factory that
builds it (by import path, so that reading the spec imports no torch) and, where it has one, the
factory of K of them as one grouped network; its constructor's parameters and aliases; its label,
input and training FLOPs per example for the cost model (:meth:`ModelSpec.cost_key`); the host
memory a job needs for its weights; and what its config must fix.  :data:`MODEL_SPECS` holds the
built-in models' specs (:data:`unlearn_audit.models.MODELS` reads it); a model of one's own
(``model.name: package.module:factory``) gets a spec with the defaults (:func:`model_spec`).
Standard library only.
"""

from __future__ import annotations

import importlib.util
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Mapping

from .import_paths import is_import_path

__all__ = ["ModelSpec", "MODEL_SPECS", "model_spec", "tinynet_training_flops", "charlstm_training_flops"]


def tinynet_training_flops(width: float, size: int, channels: int, classes: int) -> float:
    """FLOPs of one training image (forward + backward ≈ 3 × forward) of TinyNet (App. D.1)."""
    f1, f2 = round(64 * width), round(128 * width)
    half = (size // 2) ** 2
    macs = size * size * (channels * f1 + f1 * f1) * 9 + half * (f1 * f2 + f2 * f2) * 9 + f2 * classes
    return 3 * 2 * macs


def charlstm_training_flops(hidden: int, embed: int, vocab: int, layers: int, window: int) -> float:
    """FLOPs of one training window (forward + backward ≈ 3 × forward) of the CharLSTM (App. D.2): at
    each of the ``window`` positions, every layer's four gates (input and recurrent matrices) and the
    read-out to the vocabulary (the embedding is a lookup)."""
    per_position = sum(4 * hidden * ((embed if layer == 0 else hidden) + hidden) for layer in range(layers)) + hidden * vocab
    return 3 * 2 * window * per_position


def _unpriced(design: Mapping) -> tuple[str, str, float]:
    """A model without a FLOP count: its name, no input label, NaN FLOPs (priced by recorded rows only)."""
    return design["model"]["name"], "-", math.nan


def _tinynet_cost(design: Mapping) -> tuple[str, str, float]:
    """TinyNet at its width on the dataset's image shape (none for a dataset without one)."""
    from .data import DATASETS

    p = design["model"].get("params", {})
    dataset = DATASETS.get(design["dataset"])
    if dataset is None or dataset.image is None:
        return _unpriced(design)
    size, channels = dataset.image
    width = float(p.get("width", 1.0))
    return f"tinynet w={width:g}", f"{size}x{size}x{channels}", tinynet_training_flops(width, size, channels, int(p.get("num_classes", 100)))


def _charlstm_cost(design: Mapping) -> tuple[str, str, float]:
    """The CharLSTM at its hidden size on windows of the design's ``window`` characters."""
    p = design["model"].get("params", {})
    hidden, window = int(p.get("hidden_size", 256)), int(design.get("dataset_params", {}).get("window", 80))
    flops = charlstm_training_flops(hidden, int(p.get("embed_dim", 8)), int(p.get("vocab_size", 100)), int(p.get("num_layers", 2)), window)
    return f"charlstm h={hidden}", f"T={window}", flops


def _causal_lm_cost(design: Mapping) -> tuple[str, str, float]:
    """A causal language model per sequence of its tokens, from its shape
    (:mod:`unlearn_audit.language_model_shapes`)."""
    from .language_model_shapes import lm_label, lm_shape, lm_tokens

    p = design["model"].get("params", {})
    tokens = lm_tokens(design)
    shape = lm_shape(p)
    return lm_label(p), f"T={tokens}", shape.training_flops(tokens) if shape else math.nan


def _causal_lm_host_mem_mb(params: Mapping) -> int:
    from .language_model_shapes import lm_host_mem_mb

    return lm_host_mem_mb(params)


def _causal_lm_check(params: Mapping) -> list[tuple[str, str]]:
    """A Hugging Face causal LM: the optional extra installed, one source, a local directory that exists."""
    if importlib.util.find_spec("transformers") is None:
        return [(".name", "causal_lm needs transformers, which is not installed: pip install -e '.[llm]' (the optional extra for language models)")]
    given = [k for k in ("config", "path", "hub") if params.get(k) is not None]
    if len(given) != 1:
        return [(".params", f"causal_lm takes exactly one of config (random initialisation), path (a local model directory) and hub "
                            f"(a Hub name, online), got {given or 'none'}")]
    if given == ["config"] and "model_type" not in params["config"]:
        return [(".params.config", "a causal_lm config needs its model_type (e.g. gpt2, llama)")]
    if given == ["path"] and not Path(params["path"]).is_dir():
        return [(".params.path", f"model directory {params['path']} not found: save the model there (save_pretrained) or give hub or config")]
    return []


@dataclass(frozen=True)
class ModelSpec:
    """A model as the config check, the plan and the cost model see it.

    Attributes
    ----------
    name
        The config's ``model.name``.
    factory
        Import path ``package.module:factory`` of the class or function that builds one model from
        the design's ``model.params``.
    parameters
        The factory's keyword parameters (checked against it by the tests), so that a misspelled
        ``model.params`` key is refused before any job, without torch; ``None``: whatever the
        factory takes (read from it, which imports it).
    grouped
        Import path of the factory of K models as one network (``grouped(k, **params)``), or
        ``None``: the model trains one at a time (grouped training, ``models_per_group`` > 1,
        needs one).
    aliases
        Other names :func:`unlearn_audit.models.build_model` accepts for it.
    cost
        ``cost(design)`` → (label, input label, training FLOPs per example) as the throughput rows
        of ``benchmarks/RESULTS.md`` name them; default: its name, ``-`` and NaN.
    host_mem_mb
        ``host_mem_mb(params)`` → host memory (MB) a job needs for its weights beyond the process
        and the data, or ``None``: none to speak of.
    check
        ``check(params)`` → (config key under the design's ``model``, message) for what the config
        must fix, known before any job, or ``None``.
    """

    name: str
    factory: str
    parameters: tuple[str, ...] | None = None
    grouped: str | None = None
    aliases: tuple[str, ...] = ()
    cost: Callable[[Mapping], tuple[str, str, float]] = _unpriced
    host_mem_mb: Callable[[Mapping], int] | None = None
    check: Callable[[Mapping], list[tuple[str, str]]] | None = None

    def cost_key(self, design: Mapping) -> tuple[str, str, float]:
        """(label, input label, training FLOPs per example) of the model of ``design`` (:attr:`cost`)."""
        return self.cost(design)

    def job_mem_mb(self, params: Mapping) -> int:
        """Host memory (MB) a job that loads the model needs for its weights (:attr:`host_mem_mb`; 0 without)."""
        return self.host_mem_mb(params) if self.host_mem_mb is not None else 0

    def config_problems(self, params: Mapping) -> list[tuple[str, str]]:
        """:attr:`check` of a design's ``model.params`` (none without one)."""
        return self.check(params) if self.check is not None else []

    def load_factory(self) -> Callable[..., Any]:
        """The factory :attr:`factory` names (imports its module: torch for the built-in ones)."""
        return _resolve(self.factory)

    def load_grouped(self) -> Callable[..., Any] | None:
        """The grouped factory :attr:`grouped` names, or ``None``."""
        return _resolve(self.grouped) if self.grouped is not None else None


def _resolve(path: str) -> Callable[..., Any]:
    from .import_paths import import_object

    return import_object(path, "model", "'package.module:factory'", kind="callable")


#: The built-in models' specs, one each (docs/development.md#add-a-model).
MODEL_SPECS: dict[str, ModelSpec] = {s.name: s for s in (
    ModelSpec("tinynet", "unlearn_audit.models:TinyNetCIFAR100", ("in_channels", "num_classes", "width"),
              grouped="unlearn_audit.models:GroupedTinyNet", aliases=("tinynetcifar100", "tinynet_cifar100"), cost=_tinynet_cost),
    ModelSpec("charlstm", "unlearn_audit.models:CharLSTM", ("vocab_size", "embed_dim", "hidden_size", "num_layers"),
              aliases=("char_lstm", "lstm"), cost=_charlstm_cost),
    ModelSpec("causal_lm", "unlearn_audit.models:CausalLM", ("config", "path", "hub"), cost=_causal_lm_cost,
              host_mem_mb=_causal_lm_host_mem_mb, check=_causal_lm_check),
)}


def model_spec(name: str) -> ModelSpec | None:
    """The spec of model ``name``: a built-in one's, a spec with the defaults for a model of one's own
    by import path (its factory), ``None`` for an unknown name."""
    if name in MODEL_SPECS:
        return MODEL_SPECS[name]
    if is_import_path(name):
        return ModelSpec(name, name)
    return None
