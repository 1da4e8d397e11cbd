"""Workloads W0-W6 (``benchmarks/workloads``) in minidl and in PyTorch, side by side in one run.

    python -m benchmarks                      # W0-W6, a few steps each
    python -m benchmarks W3 --steps 30        # one workload, longer
    python -m benchmarks Z1 Z3                # the zoo's ImageNet models (slow on the CPU)
    python -m benchmarks Z4                   # the zoo's Deep Speech 2
    python -m benchmarks Z2 --device gpu --steps 20
    python -m benchmarks W3 Z2 --device gpu --torch-cudnn deterministic --flops
    python -m benchmarks W1 W2 --framework minidl --mode train --json out.jsonl

Prints one JSON line per workload, framework and mode; minidl's line carries
``ratio``, its median step time over PyTorch's from the same run, and the
target of ``workloads.TARGETS``. A summary table follows on stderr. A line whose
``foreign_cpu_pct`` exceeds ~5 was measured while other processes ran.
"""

import argparse
import json
import sys

import torch

import minidl
from benchmarks import workloads
from benchmarks.runner import FRAMEWORKS, MODES, TORCH_CUDNN, run_sgemm, run_workload


def _workload_id(text):
    upper = text.upper()
    if upper not in workloads.MODULES:
        raise argparse.ArgumentTypeError(
            f'unknown workload {text!r}; choose from {", ".join(workloads.MODULES)}')
    return upper


def parse_args(argv):
    parser = argparse.ArgumentParser(prog='python -m benchmarks',
                                     description=__doc__.splitlines()[0])
    parser.add_argument('workloads', nargs='*', type=_workload_id, metavar='WORKLOAD',
                        help='W0 ... W6, Z1 ... Z5 (default: W0 ... W6)')
    parser.add_argument('--steps', type=int, default=5, help='timed steps (default 5)')
    parser.add_argument('--warmup', type=int, default=2, help='untimed steps first (default 2)')
    parser.add_argument('--framework', choices=('minidl', 'torch', 'both'), default='both')
    parser.add_argument('--mode', choices=('train', 'inference', 'both'), default='both')
    parser.add_argument('--device', choices=('cpu', 'gpu'), default='cpu')
    parser.add_argument('--torch-cudnn', choices=TORCH_CUDNN, default='default',
                        help="PyTorch's cuDNN settings on the GPU: its defaults (TF32 in "
                             'convolutions), deterministic float32 as minidl runs, or '
                             'benchmark mode (default: default)')
    parser.add_argument('--flops', action='store_true',
                        help="add each step's floating-point work (PyTorch's count) and "
                             'the TFLOP/s each framework reached')
    parser.add_argument('--json', help='also append the JSON lines to this file')
    args = parser.parse_args(argv)
    if args.steps < 1 or args.warmup < 0:
        parser.error(f'--steps must be >= 1 and --warmup >= 0, got {args.steps}, {args.warmup}')
    return args


def _results(args):
    frameworks = FRAMEWORKS if args.framework == 'both' else (args.framework,)
    modes = MODES if args.mode == 'both' else (args.mode,)
    for workload_id in args.workloads or workloads.DEFAULT:
        workload = workloads.load(workload_id)
        if workload_id == 'W0':
            yield from run_sgemm(workload, frameworks, args.steps, args.warmup)
        else:
            yield from run_workload(workload, frameworks, modes, args.device, args.steps,
                                    args.warmup, workloads.TARGETS.get(workload_id),
                                    args.torch_cudnn, args.flops)


def _summary(results):
    lines = [f"{'workload':18s} {'mode':10s} {'framework':9s} {'median ms':>10s} "
             f"{'ratio':>6s} {'target':>6s} {'foreign cpu %':>14s} {'TFLOP/s':>8s}"]
    for r in results:
        label = f"{r['workload']} {r['name']}" + (f" {r['threads']}t" if 'threads' in r else '')
        ratio = f"{r['ratio']:.2f}" if 'ratio' in r else ''
        target = f"{r['target']:.1f}" if 'target' in r else ''
        rate = f"{r['tflops']:.2f}" if 'tflops' in r else ''
        lines.append(f"{label:18s} {r['mode']:10s} {r['framework']:9s} {r['median_ms']:10.2f} "
                     f"{ratio:>6s} {target:>6s} {r['foreign_cpu_pct']:14.1f} {rate:>8s}")
    return '\n'.join(lines)


def main(argv=None):
    args = parse_args(argv)
    torch.set_num_threads(2)
    if args.device == 'gpu':
        minidl.set_default_device('gpu')
    results = []
    for result in _results(args):
        line = json.dumps(result)
        print(line, flush=True)
        if args.json:
            with open(args.json, 'a') as out:
                out.write(line + '\n')
        results.append(result)
    print(_summary(results), file=sys.stderr)


if __name__ == '__main__':
    main()
