#!/usr/bin/env bash
# The GPU check: minidl's GPU tests, its determinism on the GPU and its speed
# beside PyTorch's, in one run on a machine with an NVIDIA GPU.
#
#   bash benchmarks/gpu_check.sh OUT_DIR [SECTION ...]
#
# Sections (all by default, in this order):
#   env    the GPU, the driver, Python and the versions of what minidl uses
#   tests  the GPU tests (CuPy, cuDNN's kernels against the reference code, every
#          Function on the GPU against the CPU, determinism in two processes,
#          the vendor seam, the registered speech model on cuDNN against the CPU)
#          with -rs, so every skip and its reason is listed
#   bench  python -m benchmarks W3 W4 W5 Z2 on the GPU with FLOP rates, each
#          workload: both frameworks with PyTorch's cuDNN set deterministic (as
#          minidl runs), then PyTorch alone with its defaults (TF32 convolutions)
#
# Everything is written under OUT_DIR (env.txt, tests.log, bench-*.log with
# one JSON line per result and a table, summary.txt). Run from the repository root; minidl is used from
# the working tree. CuPy (cupy-cuda13x), cuDNN (nvidia-cudnn-cu13), PyTorch,
# pytest, h5py and tqdm must be importable; where they are not, wheels in
# .whl/ (pip download ... -d .whl) are installed into /tmp/site first.
# Time limits: GPU_CHECK_TEST_SECONDS (default 420) for the tests,
# GPU_CHECK_BENCH_SECONDS (default 120) for each workload and framework run;
# BENCH_WORKLOADS (W3 W4 W5 Z2), BENCH_STEPS (20) and BENCH_WARMUP (5) choose
# what is timed.

set -u
out=${1:?usage: bash benchmarks/gpu_check.sh OUT_DIR [env] [tests] [bench]}
shift
sections=${*:-env tests bench}
mkdir -p "$out"
python=${PYTHON:-python3}
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1
export CUBLAS_WORKSPACE_CONFIG=${CUBLAS_WORKSPACE_CONFIG:-:4096:8}

if ! "$python" -c 'import cupy, nvidia.cudnn, torch, pytest, h5py, tqdm' 2>/dev/null; then
    if ls .whl/*.whl >/dev/null 2>&1; then
        "$python" -m pip install -q --no-index --no-deps --no-compile --target /tmp/site \
            .whl/*.whl && export PYTHONPATH="$PYTHONPATH:/tmp/site"
    fi
fi

summary() { echo "$*" | tee -a "$out/summary.txt"; }

for section in $sections; do
    started=$SECONDS
    case $section in
    env)
        {
            nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm \
                --format=csv 2>&1
            "$python" - <<'EOF' 2>&1
import importlib.metadata as metadata, platform
print('python', platform.python_version())
for name in ('numpy', 'cupy-cuda13x', 'nvidia-cudnn-cu13', 'torch', 'h5py', 'tqdm', 'pytest'):
    try:
        print(name, metadata.version(name))
    except metadata.PackageNotFoundError:
        print(name, 'not installed')
import cupy
from minidl.compute.cuda.cudnn import library
print('CUDA runtime', cupy.cuda.runtime.runtimeGetVersion(),
      'device', cupy.cuda.runtime.getDeviceProperties(0)['name'].decode())
print('cuDNN loaded by minidl:', library.library().cudnnGetVersion(),
      'from', library.find_library_directory())
EOF
        } > "$out/env.txt"
        cat "$out/env.txt"
        ;;
    tests)
        timeout "${GPU_CHECK_TEST_SECONDS:-420}" \
            "$python" -m pytest -v --tb=short -rsfE -p no:cacheprovider \
            tests/minidl/compute/test_{gpu,cudnn,cuda}_*.py \
            tests/minidl/compute/test_{device,segments,vendor,cpu_never_imports_cupy}.py \
            tests/zoo/speech/test_gpu_open_model.py \
            > "$out/tests.log" 2>&1
        status=$?
        tail -n 40 "$out/tests.log"
        # Tests skipped because CuPy, a GPU or cuDNN is missing (require_gpu's and
        # require_cudnn's reasons): none may be, where a GPU is lent.
        missing="needs CuPy|no usable NVIDIA GPU|could not import 'cupy'|cuDNN 9 was not found"
        missing="$missing|cuDNN in .* could not be loaded"
        gpu_skips=$(grep -E "^SKIPPED \[[0-9]+\].*($missing)" "$out/tests.log" \
            | sed -E 's/^SKIPPED \[([0-9]+)\].*/\1/' | awk '{n += $1} END {print n + 0}')
        totals=$(grep -E "[0-9]+ (passed|failed)" "$out/tests.log" | tail -n 1)
        summary "tests: exit $status, $totals; skipped for want of CuPy, a GPU or cuDNN: $gpu_skips"
        ;;
    bench)
        # One workload per run, so that one that fails does not hide the others.
        steps=(--steps "${BENCH_STEPS:-20}" --warmup "${BENCH_WARMUP:-5}")
        limit=${GPU_CHECK_BENCH_SECONDS:-120}
        for workload in ${BENCH_WORKLOADS:-W3 W4 W5 Z2}; do
            timeout "$limit" "$python" -m benchmarks "$workload" --device gpu --flops \
                --torch-cudnn deterministic "${steps[@]}" >> "$out/bench-deterministic.log" 2>&1
            summary "bench $workload, PyTorch deterministic: exit $?"
            timeout "$limit" "$python" -m benchmarks "$workload" --device gpu --flops \
                --framework torch --torch-cudnn default "${steps[@]}" \
                >> "$out/bench-torch-default.log" 2>&1
            summary "bench $workload, PyTorch default: exit $?"
        done
        grep -v '^{' "$out/bench-deterministic.log" "$out/bench-torch-default.log" | tail -n 40
        ;;
    *)
        echo "unknown section $section (env, tests, bench)" >&2
        exit 2
        ;;
    esac
    summary "section $section took $((SECONDS - started)) s"
done
