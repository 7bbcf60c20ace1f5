"""Models of the audits (App. D): TinyNetCIFAR100 for images, CharLSTM for Shakespeare; each built-in
model's spec (factory, parameters, cost) is :data:`unlearn_audit.model_specs.MODEL_SPECS`
(docs/development.md#add-a-model).

Both are plain ``torch.nn.Module`` s.  :func:`build_model` builds one by name from config
parameters and :func:`initial_model` returns the fixed initial weights x0 of an experiment as a
state dict drawn from a seed, without touching torch's global random state.
"""

from __future__ import annotations

import inspect
from typing import Any, Callable, Mapping

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from .import_paths import import_object, is_import_path, keyword_binding_error
from .model_specs import MODEL_SPECS
from .seeds import torch_seed_of
from .torch_utils import clip_grad_norms_per_model_

__all__ = ["TinyNetCIFAR100", "GroupedTinyNet", "CharLSTM", "CausalLM", "MODELS", "MODEL_PATH_FORM", "model_factory", "model_parameter_problems", "build_model", "model_factories", "initial_model", "count_parameters"]

GROUPNORM_GROUPS = 8


def _width(base: int, width: float) -> int:
    n = int(round(base * width))
    if n < GROUPNORM_GROUPS or n % GROUPNORM_GROUPS:
        raise ValueError(
            f"width={width} gives {n} filters for a {base}-filter layer; it must be a positive multiple "
            f"of {GROUPNORM_GROUPS} (the GroupNorm groups of App. D.1)"
        )
    return n


class TinyNetCIFAR100(nn.Module):
    """The lightweight CNN of App. D.1.

    Two blocks of two 3x3 convolutions (padding 1) with 64 and then 128 filters, each followed by
    GroupNorm with 8 groups and ReLU; a 2x2 max pool ends each block; global average pooling and
    one linear layer give the logits.  Convolution and linear weights are Kaiming-normal
    initialised (fan-out, ReLU gain), biases zero, GroupNorm affine weights one and biases zero.
    No dropout, no batch normalisation.

    Parameters
    ----------
    in_channels
        Input channels (3 for CIFAR-100, 1 for the 8x8 digits).
    num_classes
        Output classes (100 for CIFAR-100).
    width
        Multiplier of the filter counts (0.25 gives 16 and 32 filters); each count must be a
        multiple of 8.
    """

    def __init__(self, in_channels: int = 3, num_classes: int = 100, width: float = 1.0) -> None:
        super().__init__()
        if in_channels < 1 or num_classes < 1:
            raise ValueError("in_channels and num_classes must be positive")
        f1, f2 = _width(64, width), _width(128, width)
        self.in_channels, self.num_classes, self.width = int(in_channels), int(num_classes), float(width)
        self.filters = (f1, f2)
        self.conv1 = nn.Conv2d(in_channels, f1, 3, padding=1)
        self.gn1 = nn.GroupNorm(GROUPNORM_GROUPS, f1)
        self.conv2 = nn.Conv2d(f1, f1, 3, padding=1)
        self.gn2 = nn.GroupNorm(GROUPNORM_GROUPS, f1)
        self.conv3 = nn.Conv2d(f1, f2, 3, padding=1)
        self.gn3 = nn.GroupNorm(GROUPNORM_GROUPS, f2)
        self.conv4 = nn.Conv2d(f2, f2, 3, padding=1)
        self.gn4 = nn.GroupNorm(GROUPNORM_GROUPS, f2)
        self.fc = nn.Linear(f2, num_classes)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Kaiming-normal weights (fan-out, ReLU), zero biases; GroupNorm at identity (App. D.1)."""
        for layer in (self.conv1, self.conv2, self.conv3, self.conv4, self.fc):
            nn.init.kaiming_normal_(layer.weight, mode="fan_out", nonlinearity="relu")
            nn.init.zeros_(layer.bias)
        for gn in (self.gn1, self.gn2, self.gn3, self.gn4):
            nn.init.ones_(gn.weight)
            nn.init.zeros_(gn.bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = F.relu(self.gn1(self.conv1(x)))
        x = F.relu(self.gn2(self.conv2(x)))
        x = F.max_pool2d(x, 2)
        x = F.relu(self.gn3(self.conv3(x)))
        x = F.relu(self.gn4(self.conv4(x)))
        x = F.max_pool2d(x, 2)
        return self.fc(x.mean(dim=(2, 3)))


class GroupedTinyNet(nn.Module):
    """K independent :class:`TinyNetCIFAR100` evaluated as one network
    (docs/workflow.md#many-models-per-job-threads-and-precision).

    Every convolution is a grouped convolution with K groups, every GroupNorm has 8·K groups
    (8 per model, over that model's channels only) and the read-out is a batched matrix product,
    so model k sees only its own inputs and weights: the output for model k equals
    ``TinyNetCIFAR100`` with model k's weights applied to model k's inputs.  Input
    ``(K, N, C, H, W)``, output ``(K, N, num_classes)``.  Used to train many tiny models at once.
    """

    def __init__(self, k: int, in_channels: int = 3, num_classes: int = 100, width: float = 1.0) -> None:
        super().__init__()
        if k < 1:
            raise ValueError("k must be >= 1")
        f1, f2 = _width(64, width), _width(128, width)
        self.k, self.in_channels, self.num_classes, self.width = int(k), int(in_channels), int(num_classes), float(width)
        self.filters = (f1, f2)
        self.conv1 = nn.Conv2d(k * in_channels, k * f1, 3, padding=1, groups=k)
        self.gn1 = nn.GroupNorm(GROUPNORM_GROUPS * k, k * f1)
        self.conv2 = nn.Conv2d(k * f1, k * f1, 3, padding=1, groups=k)
        self.gn2 = nn.GroupNorm(GROUPNORM_GROUPS * k, k * f1)
        self.conv3 = nn.Conv2d(k * f1, k * f2, 3, padding=1, groups=k)
        self.gn3 = nn.GroupNorm(GROUPNORM_GROUPS * k, k * f2)
        self.conv4 = nn.Conv2d(k * f2, k * f2, 3, padding=1, groups=k)
        self.gn4 = nn.GroupNorm(GROUPNORM_GROUPS * k, k * f2)
        self.fc_weight = nn.Parameter(torch.zeros(k, num_classes, f2))
        self.fc_bias = nn.Parameter(torch.zeros(k, num_classes))

    _LAYERS = ("conv1", "gn1", "conv2", "gn2", "conv3", "gn3", "conv4", "gn4")

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        k, n = x.shape[0], x.shape[1]
        if k != self.k:
            raise ValueError(f"expected inputs for {self.k} models, got {k}")
        x = x.transpose(0, 1).reshape(n, k * x.shape[2], *x.shape[3:])
        x = F.relu(self.gn1(self.conv1(x)))
        x = F.relu(self.gn2(self.conv2(x)))
        x = F.max_pool2d(x, 2)
        x = F.relu(self.gn3(self.conv3(x)))
        x = F.relu(self.gn4(self.conv4(x)))
        x = F.max_pool2d(x, 2)
        h = x.mean(dim=(2, 3)).view(n, k, -1).transpose(0, 1)  # (K, N, f2)
        return torch.baddbmm(self.fc_bias.unsqueeze(1), h, self.fc_weight.transpose(1, 2))

    @torch.no_grad()
    def load_state_dicts(self, states: "list[Mapping[str, torch.Tensor]]") -> "GroupedTinyNet":
        """Set model k's weights from the ``TinyNetCIFAR100`` state dict ``states[k]``."""
        if len(states) != self.k:
            raise ValueError(f"expected {self.k} state dicts, got {len(states)}")
        for name in self._LAYERS:
            layer = getattr(self, name)
            layer.weight.copy_(torch.cat([s[f"{name}.weight"] for s in states]))
            layer.bias.copy_(torch.cat([s[f"{name}.bias"] for s in states]))
        self.fc_weight.copy_(torch.stack([s["fc.weight"] for s in states]))
        self.fc_bias.copy_(torch.stack([s["fc.bias"] for s in states]))
        return self

    @torch.no_grad()
    def state_dicts(self) -> "list[dict[str, torch.Tensor]]":
        """The K ``TinyNetCIFAR100`` state dicts (copies)."""
        out: list[dict[str, torch.Tensor]] = [{} for _ in range(self.k)]
        for name in self._LAYERS:
            layer = getattr(self, name)
            for key in ("weight", "bias"):
                for i, chunk in enumerate(getattr(layer, key).chunk(self.k)):
                    out[i][f"{name}.{key}"] = chunk.detach().clone()
        for i in range(self.k):
            out[i]["fc.weight"] = self.fc_weight[i].detach().clone()
            out[i]["fc.bias"] = self.fc_bias[i].detach().clone()
        return out

    @torch.no_grad()
    def clip_grad_norms_(self, max_norm: float) -> None:
        """Clip each model's global gradient norm to ``max_norm`` separately."""
        grads = [p.grad for p in self.parameters() if p.grad is not None]
        if grads:  # model k's entries are the k-th contiguous chunk of every tensor
            clip_grad_norms_per_model_(grads, self.k, max_norm)


class CharLSTM(nn.Module):
    """The character model of App. D.2 (McMahan et al. 2017).

    Embedding of ``embed_dim`` (8) per character, ``num_layers`` (2) batch-first LSTM layers of
    ``hidden_size`` (256) units and a linear read-out to the vocabulary (100) at every position:
    input ``(N, T)`` int64, output ``(N, T, vocab_size)`` logits.  PyTorch's default
    initialisation (the paper specifies none for this model).  Under the CPU's bf16 autocast the LSTM
    layers run in fp32 (the CPU's oneDNN builds no bf16 LSTM primitive and raises), the read-out in bf16;
    on a GPU autocast applies to both.
    """

    def __init__(self, vocab_size: int = 100, embed_dim: int = 8, hidden_size: int = 256, num_layers: int = 2) -> None:
        super().__init__()
        if min(vocab_size, embed_dim, hidden_size, num_layers) < 1:
            raise ValueError("vocab_size, embed_dim, hidden_size and num_layers must be positive")
        self.vocab_size, self.embed_dim = int(vocab_size), int(embed_dim)
        self.hidden_size, self.num_layers = int(hidden_size), int(num_layers)
        self.embed = nn.Embedding(vocab_size, embed_dim)
        self.lstm = nn.LSTM(embed_dim, hidden_size, num_layers, batch_first=True)
        self.out = nn.Linear(hidden_size, vocab_size)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        e = self.embed(x)
        if e.device.type == "cpu" and torch.is_autocast_enabled("cpu"):
            with torch.autocast("cpu", enabled=False):
                h, _ = self.lstm(e.float())
        else:
            h, _ = self.lstm(e)
        return self.out(h)


#: What ``causal_lm`` needs beyond the base install (the config check says the same before any job).
LLM_EXTRA = "causal_lm needs transformers, which is not installed: pip install -e '.[llm]' (the optional extra for language models)"


def _without_dropout(config):
    """The config with every dropout probability at 0: dropout would draw from torch's global random
    state, and a run's randomness comes from its seeds alone (its runs are bitwise repeatable)."""
    for key, value in list(config.to_dict().items()):
        if isinstance(value, float) and (key.endswith("pdrop") or "dropout" in key):
            setattr(config, key, 0.0)
    return config


class CausalLM(nn.Module):
    """A Hugging Face ``transformers`` causal language model (docs/configuration.md#language-models):
    input ``(N, T)`` token ids, output ``(N, T, vocabulary)`` logits, as CharLSTM's.

    Exactly one source: ``config`` (a ``transformers`` config as a dict with its ``model_type``, e.g.
    ``{model_type: gpt2, vocab_size: 100, n_positions: 128, n_embd: 64, n_layer: 2, n_head: 2}``:
    random initialisation, drawn under the workflow's fixed seed like every model), ``path`` (a local
    directory of ``save_pretrained`` weights) or ``hub`` (a model name on the Hugging Face Hub, fetched
    when online).  Sequences are right-padded, so a causal model needs no attention mask: a
    position never sees the padding after it, and padded targets are not scored.  Dropout is off
    (:func:`_without_dropout`): a run draws its randomness from its seeds alone."""

    def __init__(self, config: dict | None = None, path: str | None = None, hub: str | None = None) -> None:
        super().__init__()
        given = [k for k, v in (("config", config), ("path", path), ("hub", hub)) if v is not None]
        if len(given) != 1:
            raise ValueError(f"causal_lm takes exactly one of config, path and hub, got {given or 'none'}")
        try:
            import transformers
        except ImportError:
            raise ValueError(LLM_EXTRA) from None
        if config is not None:
            cfg = dict(config)
            model_type = cfg.pop("model_type", None)
            if model_type is None:
                raise ValueError("causal_lm config needs its model_type (e.g. gpt2, llama)")
            self.lm = transformers.AutoModelForCausalLM.from_config(_without_dropout(transformers.AutoConfig.for_model(model_type, **cfg)))
        else:
            conf = _without_dropout(transformers.AutoConfig.from_pretrained(path or hub))
            self.lm = transformers.AutoModelForCausalLM.from_pretrained(path or hub, config=conf)
        self.lm.config.use_cache = False

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.lm(input_ids=x).logits


#: The built-in models by name: the factories their specs name (:data:`unlearn_audit.model_specs.MODEL_SPECS`).
MODELS: dict[str, Callable[..., nn.Module]] = {name: spec.load_factory() for name, spec in MODEL_SPECS.items()}
_ALIASES = {alias: name for name, spec in MODEL_SPECS.items() for alias in spec.aliases}


#: How a model of one's own is written (docs/configuration.md#your-own-model-and-data).
MODEL_PATH_FORM = "'package.module:factory' naming factory(**params) -> torch.nn.Module"


def model_factory(name: str) -> Callable[..., nn.Module]:
    """The class or function that builds model ``name``: a built-in one (``tinynet``, ``charlstm``) or
    one of one's own by import path ``package.module:factory`` (a class or a function of the
    design's ``model.params``, returning a fresh ``torch.nn.Module`` each call)."""
    if is_import_path(name):
        return import_object(name, "model", MODEL_PATH_FORM, kind="callable")
    return MODELS[canonical_model_name(name)]


def model_parameter_problems(name: str, params: Mapping[str, Any]) -> list[str]:
    """What is wrong with ``params`` for model ``name``, checked without building it: parameters its
    factory does not take (a factory with ``**kwargs`` takes any), or required ones missing."""
    factory = model_factory(name)
    error = keyword_binding_error(factory, dict(params))
    if error:
        allowed = [p for p, v in inspect.signature(factory).parameters.items() if v.kind in (v.KEYWORD_ONLY, v.POSITIONAL_OR_KEYWORD)]
        return [f"model {name!r} cannot be built from params {sorted(params)} ({error}); it takes {allowed}"]
    return []


def canonical_model_name(name: str) -> str:
    if is_import_path(name):
        return name
    key = str(name).lower()
    key = _ALIASES.get(key, key)
    if key not in MODELS:
        raise ValueError(f"unknown model {name!r}; known: {sorted(MODELS)}")
    return key


def build_model(name: str, **params: Any) -> nn.Module:
    """A freshly initialised model by name (``tinynet``/``TinyNetCIFAR100`` or ``charlstm``/``CharLSTM``)
    or import path (:func:`model_factory`).

    ``params`` are the constructor's keyword arguments; an unknown one raises ``ValueError``
    naming it and the model.
    """
    key = canonical_model_name(name)
    if is_import_path(key):
        problems = model_parameter_problems(key, params)
        if problems:
            raise ValueError(problems[0])
        model = model_factory(key)(**params)
        if not isinstance(model, nn.Module):
            raise ValueError(f"model {key!r} returned {type(model).__name__!r}, not a torch.nn.Module; its factory must return a fresh module ({MODEL_PATH_FORM})")
        return model
    cls = MODELS[key]
    allowed = set(inspect.signature(cls).parameters)
    unknown = sorted(set(params) - allowed)
    if unknown:
        raise ValueError(f"unknown parameter(s) {unknown} for model {key!r}; allowed: {sorted(allowed)}")
    return cls(**params)


def model_factories(name: str, params: Mapping[str, Any] | None = None) -> tuple[Callable[[], nn.Module], Callable[[int], nn.Module] | None]:
    """What :mod:`unlearn_audit.training` builds models with, by name: a function that builds one model
    and, for TinyNet, one that builds K of them as one :class:`GroupedTinyNet` (``None`` for a
    model that cannot be grouped).  The parameters are checked here, once."""
    params = dict(params or {})
    build_model(name, **params)  # an unknown model or parameter fails here, before any training
    key = canonical_model_name(name)
    grouped_cls = None if is_import_path(key) else MODEL_SPECS[key].load_grouped()
    grouped = (lambda k: grouped_cls(k, **params)) if grouped_cls is not None else None
    return (lambda: build_model(key, **params)), grouped


def initial_model(name: str, params: Mapping[str, Any] | None, seed: int | np.random.SeedSequence | np.random.Generator) -> dict[str, torch.Tensor]:
    """The experiment's fixed initial weights x0 as a state dict (the threat model of Section 3).

    The model is built under a forked torch RNG seeded with ``seed``, so the global random state
    is unchanged and the same ``(name, params, seed)`` always gives bitwise-identical weights.
    ``seed`` may be an int or a SeedSequence (e.g. the experiment's ``init`` stream).
    """
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(torch_seed_of(seed))
        model = build_model(name, **dict(params or {}))
    return {k: v.detach().clone() for k, v in model.state_dict().items()}


def count_parameters(model: nn.Module) -> int:
    """Number of trainable scalars."""
    return sum(p.numel() for p in model.parameters() if p.requires_grad)
