#!/usr/bin/env bash
# The prepared check for the first GPU hour, at most 8 minutes on one GPU.  Run from anywhere:
#   bash benchmarks/gpu.sh              on a machine with a CUDA GPU: rows go to benchmarks/RESULTS.md
#   bash benchmarks/gpu.sh --dry-run    every step on the CPU at tiny shapes (a check of the script,
#                                       about a minute; rows go to a temporary file, printed at the end)
# Steps, most decisive first, each under its own time limit; a step that fails, runs out of time or
# out of memory is reported and the next one runs, and each step's rows are appended as it finishes:
#   0 smoke        the workflow itself on the device (benchmarks/cuda_smoke.py): .test/cuda_smoke.yaml,
#                  every neural-network rule kind, through Snakemake; two of its experiments again from
#                  scratch (their score, fit, overlap and bound data must be equal) and at tf32 and bf16
#   1 cuda-tests   the CUDA tests (tests/test_cuda.py: grouped networks, unlearning, the CharLSTM
#                  Hessian with cuDNN off, bf16, a small causal LM's AdamW training, NPO and scores
#                  under bf16; tests/pipeline/test_runtime.py: GPU slots)
#   2 loop-k1      the workflow's training loop and model-clipping runs, K = 1, fp32 (what `plan` reads)
#   3 loop-k8      the same, K = 8 models as one grouped network
#   4 loop-k32     the same, K = 32
#   5 noisy        200 noisy model-clipping steps (projection and noise on the device)
#   6 r2d          20 micro-batches of rewind-to-delete's full-batch gradient
#   7 lstm         50 Shakespeare CharLSTM training steps (batch 256 x 80 characters)
#   8 lissa        50 LiSSA iterations of the Hessian method, TinyNet and CharLSTM, minibatches of 10 and 256
#   9 lm           10 AdamW steps of config/tofu.yaml's language model (Llama-3.2-1B's architecture,
#                  randomly initialised; 32 x 256 tokens, bf16 autocast): what `plan` prices it at;
#                  then 10 greedy token steps of it over 64 prompts (fp32, as evaluation runs decode
#                  TOFU's answers): what `plan` prices an evaluation run's TOFU metrics at
#  10 two-procs    K = 1 and 8 with 2 processes sharing the GPU
#  11 bf16         K = 1, 8 and 32, and the noisy and CharLSTM steps, under bf16 autocast
#  12 vmap         K = 8 and 32 by torch.func.vmap instead of the grouped network
#  13 epoch        one base-training epoch of config/paper.yaml's cifar_uniform design
#  14 compile      K = 1 with torch.compile beside eager (compilation included)
# Memory guard: every measuring process may use 90 % of the GPU's memory shared among the processes
# of its step (an out-of-memory case is written as such), and a step does not start while another
# process holds more than half of the GPU's memory.  Steps past the 8-minute budget are skipped.
# `unlearn-audit plan` reads the fp32 rows of steps 2-4 and the bf16 row of step 9 (the throughput
# table of RESULTS.md), and prices the noisy steps, rewind-to-delete's micro-batches, the LiSSA
# products and the greedy decoding at the rows of steps 5, 6, 8 and 9 (the per-unit and
# Hessian-vector product tables).
set -uo pipefail
cd "$(dirname "$0")/.."
if [[ -x .venv/bin/python ]]; then PY=.venv/bin/python; else PY=${PYTHON:-python3}; fi
export PYTHONPATH="$PWD/src${PYTHONPATH:+:$PYTHONPATH}"

DRY=0
RESULTS=benchmarks/RESULTS.md
for arg in "$@"; do
  case "$arg" in
    --dry-run) DRY=1 ;;
    *) echo "usage: bash benchmarks/gpu.sh [--dry-run]" >&2; exit 2 ;;
  esac
done
BUDGET_S=480
if (( DRY )); then
  DEVICE=cpu
  RESULTS=$(mktemp -t gpu-dry-run.XXXXXX.md)
  LOOP_SHAPES=(--width 0.25 --size 8 --channels 3 --classes 10 --batch 16 --steps 4)
  CASE_SHAPES=(--tiny --units 3)
  EPOCH=(--k 1 --width 0.25 --size 8 --classes 10 --batch 16 --steps 3 --warmup 1)
  echo "dry run: every step on the CPU at tiny shapes; rows go to $RESULTS"
else
  DEVICE=cuda
  LOOP_SHAPES=()
  CASE_SHAPES=()
  EPOCH=(--epoch config/paper.yaml:cifar_uniform)
  "$PY" -c "import torch; assert torch.cuda.is_available(), 'no CUDA GPU visible (bash benchmarks/gpu.sh --dry-run checks the script on a CPU)'; print(torch.cuda.get_device_name(0), torch.__version__, 'CUDA', torch.version.cuda)" || exit 1
fi
LOOP=("$PY" benchmarks/workflow_loop.py --device "$DEVICE" --append "$RESULTS" "${LOOP_SHAPES[@]}")
CASES=("$PY" benchmarks/gpu_cases.py --device "$DEVICE" --append "$RESULTS" "${CASE_SHAPES[@]}")
units() { if (( DRY )); then echo 3; else echo "$1"; fi; }

START=$SECONDS
SUMMARY=()
gpu_memory_held() {  # percent of the GPU's memory in use now (0 without nvidia-smi or on the CPU)
  (( DRY )) && { echo 0; return; }
  command -v nvidia-smi >/dev/null || { echo 0; return; }
  nvidia-smi --query-gpu=memory.used,memory.total --format=csv,noheader,nounits | head -n 1 \
    | awk -F', *' '{ printf "%d\n", 100 * $1 / $2 }'
}
step() {  # step NAME SECONDS COMMAND...: run COMMAND under its own time limit; record how it ended
  local name=$1 limit=$2; shift 2
  local left=$(( BUDGET_S - (SECONDS - START) ))
  if (( left < 10 )); then SUMMARY+=("$(printf '%-10s skipped: the 8-minute budget is spent' "$name")"); return; fi
  (( limit > left )) && limit=$left
  local held; held=$(gpu_memory_held)
  if (( held > 50 )); then SUMMARY+=("$(printf '%-10s skipped: another process holds %d%% of the GPU memory' "$name" "$held")"); return; fi
  echo "== $name (at most ${limit} s): $*"
  local t0=$SECONDS status
  timeout --kill-after=10 "$limit" "$@"
  case $? in
    0) status=ok ;;
    124|137) status="stopped at its ${limit}-s limit; the rows of the cases it finished are kept" ;;
    *) status="failed" ;;
  esac
  local detail=""; [[ $status == *" "* ]] && detail=" (${status#* })"
  SUMMARY+=("$(printf '%-10s %-8s %4d s' "$name" "${status%% *}" $(( SECONDS - t0 )))$detail")
}

SMOKE_DIR=$(mktemp -d -t cuda-smoke.XXXXXX)
step smoke      120 "$PY" benchmarks/cuda_smoke.py --device "$DEVICE" --out "$SMOKE_DIR" $( (( DRY )) && echo --quick )
step cuda-tests 50 "$PY" -m pytest -q -p no:xdist -p no:cacheprovider tests/test_cuda.py tests/pipeline/test_runtime.py
step loop-k1    30 "${LOOP[@]}" --k 1 --dtype fp32
step loop-k8    20 "${LOOP[@]}" --k 8 --dtype fp32
step loop-k32   25 "${LOOP[@]}" --k 32 --dtype fp32
step noisy      20 "${CASES[@]}" noisy --units "$(units 200)"
step r2d        20 "${CASES[@]}" r2d --units "$(units 20)"
step lstm       20 "${CASES[@]}" lstm --units "$(units 50)"
step lissa      25 "${CASES[@]}" lissa lissa-lstm --units "$(units 50)" --hvp-batch 10 256
step lm         25 "${CASES[@]}" lm decode --dtype bf16 --units "$(units 10)"
step two-procs  30 "${LOOP[@]}" --k 1 8 --dtype fp32 --processes 2 --no-clipping
step bf16       30 bash -c "$(printf '%q ' "${LOOP[@]}") --k 1 8 32 --dtype bf16 --no-clipping && $(printf '%q ' "${CASES[@]}") noisy lstm --dtype bf16 --units $(units 100)"
step vmap       25 "${LOOP[@]}" --k 8 32 --group vmap --dtype fp32 --no-clipping
step epoch      20 "$PY" benchmarks/throughput.py --device "$DEVICE" "${EPOCH[@]}" --dtype fp32 --append "$RESULTS"
step compile    20 "$PY" benchmarks/throughput.py --device "$DEVICE" --k 1 --dtype fp32 --steps 30 --compile --append "$RESULTS" \
  $( (( DRY )) && echo --width 0.25 --size 8 --classes 10 --batch 16 --warmup 1 )

echo "== steps ($(( SECONDS - START )) s in all; load average $(cut -d' ' -f1-3 /proc/loadavg))"
printf '%s\n' "${SUMMARY[@]}"
echo "== rows appended to $RESULTS"
tail -n 30 "$RESULTS"
