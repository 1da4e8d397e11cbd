"""Every measurement the scaling model is checked against, in one run; JSON lines to a file.

``python -m benchmarks.scaling.sweep --out benchmarks/scaling/measured.jsonl``
(as root, for the fake hosts) runs, one after another:

- the ping-pong on one host (shared memory) and across two fake hosts (TCP);
- per model, one plain process on one core's share (``--share-of 2``) at
  the global batch and at a quarter of it (the compute calibration, and
  the one-rank case);
- per model, its two schemes under ``mpirun -np 2``, ``-np 4`` and on
  2 fake hosts x 2 ranks.

A run that fails is reported on stderr and left out; the rest go on.
"""

import argparse
import os
import subprocess
import sys

PYTHON = sys.executable
MPIRUN = os.path.join(os.path.dirname(PYTHON), 'mpirun')
FAKEHOSTS = [PYTHON, '-m', 'minidl_dist.fakehosts', '--hosts', '2']
#: Model, global batch, the two schemes compared on it.
CASES = [('W3', 64, ['dp', 'average']), ('DS2', 16, ['dp', 'average']),
         ('AlexNet', 32, ['dp', 'hybrid'])]


def run(command, out, environment=None):
    """Run ``command``; append the JSON lines it prints to ``out``."""
    sys.stderr.write(' '.join(command) + '\n')
    result = subprocess.run(command, capture_output=True, text=True, timeout=1800,
                            env={**os.environ, **(environment or {})})
    if result.returncode:
        sys.stderr.write(f'failed ({result.returncode}): {result.stderr[-2000:]}\n')
        return
    with open(out, 'a') as file:
        for line in result.stdout.splitlines():
            if line.startswith('{'):
                file.write(line + '\n')
                sys.stderr.write(line + '\n')


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--out', required=True)
    parser.add_argument('--models', nargs='+', default=[case[0] for case in CASES])
    parser.add_argument('--no-pingpong', action='store_true')
    args = parser.parse_args(argv)
    pingpong = [PYTHON, '-m', 'benchmarks.scaling.pingpong', '--repeats', '100']
    if not args.no_pingpong:
        run([MPIRUN, '-np', '2', *pingpong, '--label', 'shm'], args.out)
        run([*FAKEHOSTS, '-np', '2', *pingpong, '--label', 'tcp'], args.out)
    for name, batch, schemes in CASES:
        if name not in args.models:
            continue
        measure = [PYTHON, '-m', 'benchmarks.scaling.measure', name, '--batch']
        for size in (batch, batch // 4):
            run([*measure, str(size), '--schemes', 'plain', '--share-of', '2'], args.out)
        for launcher in ([MPIRUN, '-np', '2'], [MPIRUN, '-np', '4'], [*FAKEHOSTS, '-np', '4']):
            run([*launcher, *measure, str(batch), '--schemes', *schemes], args.out)


if __name__ == '__main__':
    main()
