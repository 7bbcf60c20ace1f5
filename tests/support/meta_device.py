"""Runs at the paper's shapes on PyTorch's ``meta`` device: tensors with a shape, a dtype and a
device but no data, so that a training step of the paper's TinyNet or CharLSTM costs only Python.

A tensor created on the host where the data's device was meant (a CPU index, a CPU noise draw)
meets a meta tensor in an out-of-place operation and raises ("Tensor on device cpu is not on the
expected device meta"), as it would on a GPU; an in-place operation with a host operand is not
caught on meta.  A host read of a meta tensor (``item``, ``float``, ``bool``, ``int``) has no value
to read: :func:`host_reads_answered` answers it with 1 and counts it, as a GPU would block on it.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass

import torch

META = torch.device("meta")


@dataclass
class HostReads:
    """The host reads of meta tensors seen inside :func:`host_reads_answered`."""

    count: int = 0


@contextlib.contextmanager
def host_reads_answered(value: float = 1.0):
    """Within the block, a host read of a meta tensor returns ``value`` (or True) and is counted."""
    reads = HostReads()
    originals = {name: getattr(torch.Tensor, name) for name in ("item", "__float__", "__bool__", "__int__", "__index__")}

    def answered(name):
        original = originals[name]

        def read(self, *args):
            if self.device.type != "meta":
                return original(self, *args)
            reads.count += 1
            return {"__bool__": True, "__int__": int(value), "__index__": int(value)}.get(name, float(value))

        return read

    try:
        for name in originals:
            setattr(torch.Tensor, name, answered(name))
        yield reads
    finally:
        for name, original in originals.items():
            setattr(torch.Tensor, name, original)


@dataclass
class HostCopies:
    """The copies between the host and ``meta`` seen inside :func:`host_copies_counted`."""

    count: int = 0


@contextlib.contextmanager
def host_copies_counted():
    """Within the block, count every copy of a tensor between the CPU and ``meta`` (``.to``, ``copy_``):
    on a GPU each is a transfer the step waits for (an index tensor made on the host each step)."""
    from torch.utils._python_dispatch import TorchDispatchMode

    copies = HostCopies()

    def devices(args, kwargs):
        found = {a.device.type for a in list(args) + list((kwargs or {}).values()) if isinstance(a, torch.Tensor)}
        if kwargs and kwargs.get("device") is not None:
            found.add(torch.device(kwargs["device"]).type)
        return found

    class _Copies(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            if func.overloadpacket in (torch.ops.aten._to_copy, torch.ops.aten.copy_) and devices(args, kwargs) >= {"cpu", "meta"}:
                copies.count += 1
            return func(*args, **(kwargs or {}))

    with _Copies():
        yield copies
