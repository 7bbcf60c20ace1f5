"""Device resolution and thread limits of workflow jobs."""

import os

import pytest
import torch

from unlearn_audit.models import build_model
from unlearn_audit.pipeline.runtime import resolve_device
from unlearn_audit.scores import model_scores
from unlearn_audit.torch_utils import model_device
from unlearn_audit.training import TrainConfig, train_model


def test_resolve_device():
    assert resolve_device("cpu") == torch.device("cpu")
    assert resolve_device("auto").type == ("cuda" if torch.cuda.is_available() else "cpu")
    with pytest.raises(ValueError, match="device must be"):
        resolve_device("tpu")
    if not torch.cuda.is_available():
        with pytest.raises(RuntimeError, match="set device: cpu or device: auto"):
            resolve_device("cuda")


def test_a_cuda_device_sets_cublas_for_deterministic_products_and_keeps_a_users_setting(monkeypatch):
    """Resolved as a GPU would resolve it (torch.cuda.is_available answering True): cuBLAS's workspace
    is set before any cuBLAS call, a value the user set is kept, and a CPU job leaves it alone."""
    monkeypatch.delenv("CUBLAS_WORKSPACE_CONFIG", raising=False)
    assert resolve_device("cpu").type == "cpu" and "CUBLAS_WORKSPACE_CONFIG" not in os.environ
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    assert resolve_device("cuda").type == "cuda" and resolve_device("auto").type == "cuda"
    assert os.environ["CUBLAS_WORKSPACE_CONFIG"] == ":4096:8"
    monkeypatch.setenv("CUBLAS_WORKSPACE_CONFIG", ":16:8")
    resolve_device("cuda")
    assert os.environ["CUBLAS_WORKSPACE_CONFIG"] == ":16:8"


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
def test_training_and_scores_follow_the_model_to_cuda():
    torch.manual_seed(0)
    x = torch.randn(32, 1, 8, 8)
    y = torch.randint(0, 10, (32,))
    model = build_model("tinynet", in_channels=1, num_classes=10, width=0.25).cuda()
    train_model(model, x.numpy(), y.numpy(), None, None, TrainConfig(epochs=1, batch_size=8), generator=0)
    assert model_device(model).type == "cuda"
    assert model_scores(model, x.numpy(), y.numpy())["loss"].shape == (32,)
