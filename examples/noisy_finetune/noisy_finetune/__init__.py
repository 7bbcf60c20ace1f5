"""A worked example of an unlearning algorithm audited by import path (no registration needed).

The workflow finds it as ``method: noisy_finetune.algorithm:noisy_finetune`` once this folder,
``examples/noisy_finetune``, is on ``PYTHONPATH``.
"""

from .algorithm import NoisyFinetuneParams, noisy_finetune

__all__ = ["NoisyFinetuneParams", "noisy_finetune"]
