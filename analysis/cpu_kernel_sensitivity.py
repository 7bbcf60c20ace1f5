"""The same training, bit for bit, on each of PyTorch's CPU kernel sets: why a default run's digits
numbers differ between machines while its Shakespeare numbers do not.

    python analysis/cpu_kernel_sensitivity.py                       # this machine's kernels
    ATEN_CPU_CAPABILITY=avx2 python analysis/cpu_kernel_sensitivity.py
    ATEN_CPU_CAPABILITY=default python analysis/cpu_kernel_sensitivity.py
    ONEDNN_MAX_CPU_ISA=AVX2 python analysis/cpu_kernel_sensitivity.py   # oneDNN's convolutions at AVX2

It trains a small convolutional network (the shape of the digits TinyNet) for 300 deterministic SGD
steps on fixed random data, one thread, and prints the CPU, the kernel set, oneDNN's instruction-set
cap, a hash of the final weights and their L1 norm.  Different kernel sets (AVX512, AVX2, the default
scalar path) round differently, and so do oneDNN's convolution kernels at different instruction-set
caps: training amplifies the difference, so the hashes differ, and base models trained on different
CPUs are different models (same code, same seeds).  PyTorch reported AVX512 on both an AMD EPYC and
an Intel Xeon that gave different digits numbers (README, "Results of the default run"); which of
oneDNN's choices differs between those two is not isolated.  analysis/cpu_kernel_sensitivity.out.txt
holds the five lines above on the Intel Xeon.
"""

import hashlib, os

import torch

from unlearn_audit.pipeline.provenance import cpu_model

cpu = cpu_model()
torch.manual_seed(0)
torch.use_deterministic_algorithms(True)
torch.set_num_threads(1)
net = torch.nn.Sequential(torch.nn.Conv2d(1, 16, 3, padding=1), torch.nn.GroupNorm(4, 16), torch.nn.ReLU(),
                          torch.nn.Conv2d(16, 32, 3, padding=1), torch.nn.ReLU(), torch.nn.AdaptiveAvgPool2d(1),
                          torch.nn.Flatten(), torch.nn.Linear(32, 10))
opt = torch.optim.SGD(net.parameters(), lr=0.05, momentum=0.9)
g = torch.Generator().manual_seed(1)
x = torch.randn(512, 1, 8, 8, generator=g); y = torch.randint(0, 10, (512,), generator=g)
for step in range(300):
    i = torch.randint(0, 512, (64,), generator=g)
    opt.zero_grad(); torch.nn.functional.cross_entropy(net(x[i]), y[i]).backward(); opt.step()
w = torch.cat([p.detach().flatten() for p in net.parameters()])
print(cpu, '|', torch.backends.cpu.get_cpu_capability(), 'oneDNN', os.environ.get('ONEDNN_MAX_CPU_ISA', 'ALL'), hashlib.sha256(w.numpy().tobytes()).hexdigest()[:16], float(w.abs().sum()))
