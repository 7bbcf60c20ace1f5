"""What a Hugging Face causal language model costs (docs/configuration.md#what-a-language-model-costs):
its weight count and the FLOPs of one training sequence, from its shape, read from the design's
``config``, from the ``config.json`` of a local ``path``, or, for a Hub model, from the published
config this module holds (so that ``plan`` prices it before anything is downloaded).  Read by the
models' specs (:mod:`.model_specs`), hence the cost model and the jobs' memory.  Torch- and
transformers-free.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping

__all__ = ["HUB_CONFIGS", "LMShape", "lm_config", "lm_shape", "lm_tokens", "lm_label", "lm_host_mem_mb"]

#: The published ``config.json`` fields (those a shape needs) of the Hub models the configs name.
HUB_CONFIGS: dict[str, dict] = {
    # huggingface.co/meta-llama/Llama-3.2-1B/blob/main/config.json (1.24 B parameters): config/tofu.yaml's
    "meta-llama/Llama-3.2-1B": {"model_type": "llama", "hidden_size": 2048, "intermediate_size": 8192, "num_hidden_layers": 16,
                                "num_attention_heads": 32, "num_key_value_heads": 8, "vocab_size": 128256,
                                "tie_word_embeddings": True, "max_position_embeddings": 131072},
    # TOFU's original two (Maini et al. 2024): Llama-2-7b-chat (6.74 B) and Phi-1.5 (1.42 B)
    "meta-llama/Llama-2-7b-chat-hf": {"model_type": "llama", "hidden_size": 4096, "intermediate_size": 11008, "num_hidden_layers": 32,
                                      "num_attention_heads": 32, "num_key_value_heads": 32, "vocab_size": 32000,
                                      "tie_word_embeddings": False, "max_position_embeddings": 4096},
    "microsoft/phi-1_5": {"model_type": "phi", "hidden_size": 2048, "intermediate_size": 8192, "num_hidden_layers": 24,
                          "num_attention_heads": 32, "vocab_size": 51200, "tie_word_embeddings": False, "partial_rotary_factor": 0.5,
                          "max_position_embeddings": 2048},
}

#: Model types with GPT-2's layout (learned positions, a two-matrix MLP), with Llama's (rotary
#: positions, a gated three-matrix MLP, grouped key-value heads) and with Phi's (Llama's keys, a
#: two-matrix MLP).
_GPT2_TYPES = ("gpt2",)
_LLAMA_TYPES = ("llama", "mistral", "qwen2", "qwen3", "olmo", "olmo2", "gemma", "gemma2")
_PHI_TYPES = ("phi",)


@dataclass(frozen=True)
class LMShape:
    """The matrices of a decoder-only transformer: ``layers`` blocks of width ``width`` (attention with
    ``heads`` query and ``kv_heads`` key-value heads, an MLP of hidden width ``ffn``, gated or not),
    a vocabulary of ``vocab`` tokens (the output head tied to the embedding or not) and ``positions``
    learned position embeddings (0 for rotary)."""

    layers: int
    width: int
    ffn: int
    heads: int
    kv_heads: int
    vocab: int
    tied: bool
    gated: bool
    positions: int = 0

    def block_weights(self) -> int:
        """Weights of one block's matrices: query and output (d × d each), key and value (d × kv-width
        each), and the MLP's two (or, gated, three) d × ffn matrices."""
        kv_width = self.kv_heads * (self.width // self.heads)
        return 2 * self.width * self.width + 2 * self.width * kv_width + (3 if self.gated else 2) * self.width * self.ffn

    def weights(self) -> int:
        """Every matrix's weights, a tied embedding counted once (norms and biases, < 0.1 %, left out)."""
        return self.layers * self.block_weights() + self.vocab * self.width * (1 if self.tied else 2) + self.positions * self.width

    def training_flops(self, tokens: int) -> float:
        """FLOPs of a forward and backward pass (3 × forward) over one sequence of ``tokens`` tokens:
        2 FLOPs per weight of the blocks and the output head for each token, and the attention's
        scores and weighted sum, 2 · 2 · tokens² · width a block (the full square, as the kernels
        compute it before the causal mask); the embedding is a lookup."""
        matmul = 2 * tokens * (self.layers * self.block_weights() + self.vocab * self.width)
        attention = 4 * self.layers * tokens * tokens * self.width
        return 3.0 * (matmul + attention)


def _shape_of(cfg: Mapping) -> LMShape | None:
    """The shape of a ``transformers`` config mapping of a known layout; None for another."""
    kind = cfg.get("model_type")
    if kind in _GPT2_TYPES:
        width = int(cfg.get("n_embd", 768))
        return LMShape(int(cfg.get("n_layer", 12)), width, int(cfg.get("n_inner") or 4 * width), int(cfg.get("n_head", 12)),
                       int(cfg.get("n_head", 12)), int(cfg.get("vocab_size", 50257)), bool(cfg.get("tie_word_embeddings", True)), False,
                       int(cfg.get("n_positions", 1024)))
    if kind in _LLAMA_TYPES + _PHI_TYPES:
        heads = int(cfg.get("num_attention_heads", 32))
        return LMShape(int(cfg.get("num_hidden_layers", 32)), int(cfg.get("hidden_size", 4096)), int(cfg.get("intermediate_size", 11008)),
                       heads, int(cfg.get("num_key_value_heads") or heads), int(cfg.get("vocab_size", 32000)),
                       bool(cfg.get("tie_word_embeddings", False)), kind not in _PHI_TYPES)
    return None


def lm_config(params: Mapping) -> dict | None:
    """The ``transformers`` config mapping of a ``causal_lm`` model's ``params``: its ``config``, the
    ``config.json`` in its ``path`` (None while the directory is not there), or its ``hub`` name's
    entry in :data:`HUB_CONFIGS` (None for a Hub model not listed)."""
    if params.get("config") is not None:
        return dict(params["config"])
    if params.get("path") is not None:
        file = Path(params["path"]) / "config.json"
        return json.loads(file.read_text()) if file.is_file() else None
    cfg = HUB_CONFIGS.get(str(params.get("hub")))
    return dict(cfg) if cfg is not None else None


def lm_shape(params: Mapping) -> LMShape | None:
    """The shape of a ``causal_lm`` model's ``params`` (:func:`lm_config`); None where its config is
    not known or of another layout."""
    cfg = lm_config(params)
    return _shape_of(cfg) if cfg is not None else None


def lm_tokens(design: Mapping) -> int:
    """The tokens a question-answer pair of a design is padded to: its ``dataset_params.max_length``."""
    from .data.qa import QA_DEFAULTS

    return int(design.get("dataset_params", {}).get("max_length", QA_DEFAULTS["max_length"]))


def lm_label(params: Mapping) -> str:
    """How the cost model's rows name a ``causal_lm``: its Hub name, its directory's name, or its
    configured width and depth."""
    if params.get("hub") is not None:
        return f"causal_lm {params['hub']}"
    if params.get("path") is not None:
        return f"causal_lm {Path(params['path']).name}"
    shape = lm_shape(params)
    return f"causal_lm {params['config'].get('model_type')} d={shape.width} L={shape.layers}" if shape else "causal_lm"


#: fp32 copies of a language model's weights a job holds in host memory: the model as loaded, its
#: state dict as saved, and NPO's frozen reference model.
HOST_COPIES = 3


def lm_host_mem_mb(params: Mapping) -> int:
    """Host memory (MB) a job needs for a ``causal_lm`` beside the process and the data:
    :data:`HOST_COPIES` fp32 copies of its weights; 0 where its shape is unknown."""
    shape = lm_shape(params)
    return 0 if shape is None else -(-HOST_COPIES * 4 * shape.weights() // 2**20)
