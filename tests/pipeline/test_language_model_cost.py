"""What the cost model prices for a language model on question-answer pairs
(docs/configuration.md#what-a-language-model-costs): the weights and training FLOPs of a causal LM
against the model transformers builds and PyTorch's FLOP counter, the pairs of a design against the
split the workflow makes, and the steps and rows of the language-model methods against a real run."""

from __future__ import annotations

import json
import math

import pytest

from linear_passes import counted_linear_passes
from unlearn_audit.language_model_shapes import HUB_CONFIGS, lm_host_mem_mb, lm_label, lm_shape
from unlearn_audit.pipeline.plan.cost.runs import design_sizes, unlearning_images, unlearning_steps

transformers = pytest.importorskip("transformers", reason="the llm extra: pip install -e '.[llm]'")
torch = pytest.importorskip("torch")

TINY = {
    "gpt2": {"model_type": "gpt2", "vocab_size": 100, "n_positions": 64, "n_embd": 32, "n_layer": 2, "n_head": 2},
    "llama": {"model_type": "llama", "vocab_size": 120, "hidden_size": 32, "intermediate_size": 80, "num_hidden_layers": 2,
              "num_attention_heads": 4, "num_key_value_heads": 2, "tie_word_embeddings": False},
    "phi": {"model_type": "phi", "vocab_size": 90, "hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 2,
            "num_attention_heads": 4, "partial_rotary_factor": 0.5, "tie_word_embeddings": False},
}


def _built(cfg: dict, **kwargs):
    rest = dict(cfg)
    return transformers.AutoModelForCausalLM.from_config(transformers.AutoConfig.for_model(rest.pop("model_type"), **rest, **kwargs))


def _matrix_weights(model) -> int:
    """The weights of the model's matrices, a tied embedding counted once."""
    return sum(p.numel() for p in {id(p): p for p in model.parameters()}.values() if p.ndim == 2)


@pytest.mark.parametrize("kind", sorted(TINY))
def test_weights_and_training_flops_are_the_models(kind):
    from torch.utils.flop_counter import FlopCounterMode

    model = _built(TINY[kind], attn_implementation="eager")  # attention as matrix products the counter sees
    shape = lm_shape({"config": TINY[kind]})
    assert shape.weights() == _matrix_weights(model)
    tokens = 24
    with FlopCounterMode(display=False) as counter:
        model(input_ids=torch.randint(0, TINY[kind]["vocab_size"], (1, tokens))).logits.sum().backward()
    assert shape.training_flops(tokens) == counter.get_total_flops()


@pytest.mark.parametrize(("hub", "published"), [
    ("meta-llama/Llama-3.2-1B", 1_235_814_400), ("meta-llama/Llama-2-7b-chat-hf", 6_738_415_616), ("microsoft/phi-1_5", 1_418_270_720),
])
def test_a_hub_models_shape_is_its_published_config(hub, published):
    """Each Hub model the cost model knows, built on the meta device (no memory, nothing downloaded):
    its published parameter count, of which the shape's weights are the matrices (norms and biases
    aside, under 0.1 %)."""
    with torch.device("meta"):
        model = _built(HUB_CONFIGS[hub])
    shape = lm_shape({"hub": hub})
    assert sum(p.numel() for p in model.parameters()) == published
    assert shape.weights() == _matrix_weights(model) and 0.999 * published < shape.weights() < published
    assert lm_host_mem_mb({"hub": hub}) == math.ceil(3 * 4 * shape.weights() / 2**20)


def test_a_local_directory_is_read_and_an_unknown_model_is_not_priced(tmp_path):
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "config.json").write_text(json.dumps(TINY["llama"]))
    assert lm_shape({"path": str(tmp_path / "mine")}) == lm_shape({"config": TINY["llama"]})
    assert lm_label({"path": str(tmp_path / "mine")}) == "causal_lm mine"
    assert lm_shape({"path": str(tmp_path / "absent")}) is None and lm_shape({"hub": "someone/unlisted"}) is None
    assert lm_host_mem_mb({"hub": "someone/unlisted"}) == 0
    assert lm_shape({"config": {"model_type": "bert"}}) is None


def _tofu_shaped_file(path):
    """200 authors of 20 pairs, in TOFU's layout (no entity field, each author's pairs in a row)."""
    rows = [{"question": f"Question {k} about author {a}?", "answer": f"Answer {k} of author {a}."} for a in range(200) for k in range(20)]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))


@pytest.mark.parametrize("dataset_params", [
    {"source": "synthetic", "n_entities": 30, "pairs_per_entity": 6, "n_test_entities": 3},
    {"source": "tofu.jsonl", "format": "tofu", "max_length": 64},
])
def test_the_size_model_is_the_split_the_workflow_makes(tmp_path, dataset_params):
    from unlearn_audit.data import prepare_audit_data

    _tofu_shaped_file(tmp_path / "tofu.jsonl")
    design = {"dataset": "qa", "m": 6, "batch_size": 4, "dataset_params": dataset_params}
    data = prepare_audit_data("qa", batch_size=4, m=6, seed=3, resources_dir=tmp_path, **dataset_params)
    assert design_sizes(design) == (len(data.retain_x), len(data.forget_x), len(data.test_x))
    other_file = {**design, "dataset_params": {"source": "tofu.jsonl"}}  # records: only the file knows its count
    assert math.isnan(design_sizes(other_file)[0])


@pytest.mark.parametrize(("method", "params"), [
    ("gradient_ascent", {"epochs": 3, "batch_size": 4}),
    ("gradient_difference", {"epochs": 2, "batch_size": 4, "retain_weight": 1.0}),
    ("npo", {"epochs": 2, "batch_size": 3}),
    ("simnpo", {"epochs": 2, "batch_size": 4}),
])
def test_the_language_model_methods_pass_over_the_forget_pairs_as_priced(method, params):
    """Steps and training-image equivalents of a run of each method against a real run: passes over
    D_f(S) (10 pairs) only, a retain pair beside each forget pair for gradient difference, and NPO's
    reference model's forward passes at a third of a training pass."""
    from unlearn_audit.scores import IGNORE
    from unlearn_audit.unlearning import make_params, unlearn

    g = torch.Generator().manual_seed(0)

    def pairs(n):
        y = torch.randint(0, 3, (n, 6), generator=g)
        y[:, :2] = IGNORE  # the question's targets are not scored
        return torch.randn(n, 6, 5, generator=g), y

    retain, forget = pairs(100), pairs(10)
    with counted_linear_passes() as passes:
        unlearn(method, torch.nn.Linear(5, 3), retain, forget, params, generator=1)
    p = make_params(method, params)
    assert passes.rows + passes.eval_rows / 3 == pytest.approx(unlearning_images(method, p, 100, 10))
    steps = unlearning_steps(method, p, 100, 10)
    assert passes.calls == steps * (2 if method == "gradient_difference" else 1)
    assert steps == params["epochs"] * math.ceil(10 / params["batch_size"])
