#!/usr/bin/env bash
# The prepared GPU check (issue: performance), under 8 minutes on one GPU.  Run from anywhere:
#   bash benchmarks/gpu.sh
# 1. the CUDA tests; 2. the workflow's own loops (benchmarks/workflow_loop.py: sgd_run and the grouped
# network over a resident schedule, and model-clipping unlearning runs) of the paper's TinyNet
# (width 1, 32x32x3, 100 classes, batch 128 per model) for K = 1, 8, 32, 64 models at once, fp32 and
# bf16, deterministic kernels on and off, 1, 2 and 4 processes sharing the GPU, and the same K with
# torch.func.vmap instead of the grouped network (fp32 and bf16, one process); 3. one base-training
# epoch of config/paper.yaml's cifar_uniform design (random data of its training-set size); 4. K = 1
# with torch.compile beside eager (bare steps).
# Every number is appended, with the GPU named, to benchmarks/RESULTS.md; `unlearn-audit plan` reads
# the fp32 rows of step 2 (the workflow's default: deterministic, one process per GPU).
set -euo pipefail
cd "$(dirname "$0")/.."
if [[ -x .venv/bin/python ]]; then PY=.venv/bin/python; else PY=${PYTHON:-python3}; fi
export PYTHONPATH="$PWD/src${PYTHONPATH:+:$PYTHONPATH}"
"$PY" -c "import torch; assert torch.cuda.is_available(), 'no CUDA GPU visible'; print(torch.cuda.get_device_name(0), torch.__version__)"
echo "== CUDA tests"
timeout 90 "$PY" -m pytest -q -p no:xdist -p no:cacheprovider tests/pipeline/test_runtime.py tests/test_cuda.py
echo "== the workflow's loops, K models at once, fp32 vs bf16, deterministic on/off, 1/2/4 processes per GPU"
timeout 200 "$PY" benchmarks/workflow_loop.py --device cuda --k 1 8 32 64 --dtype fp32 bf16 --deterministic on off \
  --processes 1 2 4 --append benchmarks/RESULTS.md
echo "== the same loops by torch.func.vmap instead of the grouped network"
timeout 50 "$PY" benchmarks/workflow_loop.py --device cuda --k 8 32 64 --group vmap --dtype fp32 bf16 --append benchmarks/RESULTS.md \
  || echo "the vmap cases did not finish in 50 s"
echo "== one paper-config base-training epoch"
timeout 60 "$PY" benchmarks/throughput.py --device cuda --epoch config/paper.yaml:cifar_uniform --dtype fp32 bf16 --append benchmarks/RESULTS.md
echo "== torch.compile, K = 1, eager and compiled side by side (compilation included in the minute)"
timeout 60 "$PY" benchmarks/throughput.py --device cuda --k 1 --dtype fp32 bf16 --steps 30 --compile --append benchmarks/RESULTS.md \
  || echo "torch.compile check did not finish in 60 s (compilation time is part of what it measures)"
echo "== appended to benchmarks/RESULTS.md"
tail -n 12 benchmarks/RESULTS.md
