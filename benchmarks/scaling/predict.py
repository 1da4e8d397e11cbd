"""Predictions of the scaling model, checked against the sweep's measurements, and a plot.

``python -m benchmarks.scaling.predict benchmarks/scaling/data/measured-2026-11-27.jsonl
--plot docs/scaling.png`` (the sweep's JSON lines; several files may be given)
prints Markdown tables: the fitted links and compute, each measured case
of :mod:`benchmarks.scaling.sweep` beside its prediction with the relative
error, and the predicted weak scaling from 1 to 1,024 workers
(:func:`weak_scaling`), and draws the predicted scaling efficiency. Where a
case was measured in several sweeps, the fastest run counts (the one least
disturbed by other work on the machine) and the spread is shown.
"""

import argparse
import json
from collections import defaultdict

import numpy as np

import minidl
from benchmarks.scaling import workloads
from benchmarks.scaling.pingpong import fit_line
from benchmarks.scaling.model import Link, Machine
from benchmarks.scaling.schemes import SCHEMES

CORES = 2  # the measuring machine's: ranks beyond it share the cores (fake hosts too)
WORKERS = [2 ** power for power in range(11)]
PER_HOST = 2  # ranks per host in the predictions, as on the fake hosts
LOCAL_BATCH = {'W3': 64, 'AlexNet': 32, 'DS2': 16}  # per worker, in the predictions


def load(paths):
    """The JSON lines of ``paths``: (links by label, runs grouped by case)."""
    links, runs = defaultdict(list), defaultdict(list)
    for path in paths:
        with open(path) as file:
            for line in file:
                row = json.loads(line)
                if 'label' in row:
                    links[row['label']].append(row)
                else:
                    key = (row['model'], row['scheme'], row['ranks'], row['hosts'], row['batch'])
                    runs[key].append(row)
    return links, runs


def fitted_links(links):
    """Shared memory's and TCP's :class:`Link`, and the add and copy rates.

    Each message size's time is its least over the runs (the least
    disturbed by other work), and :func:`~benchmarks.scaling.pingpong.fit_line`
    draws the line through them.
    """
    fitted = []
    for label in ('shm', 'tcp'):
        rows = links[label]
        least = np.min([row['seconds'] for row in rows], axis=0)
        fitted.append(Link(*fit_line(rows[0]['sizes'], least)))
    rows = links['shm'] + links['tcp']
    return (*fitted, min(row['gamma_s_per_byte'] for row in rows),
            min(row['copy_s_per_byte'] for row in rows))


def compute_fit(runs, name):
    """``fixed_s`` and ``per_sample_s`` from the plain one-core runs at two batch sizes.

    The CPU time per step (the least of the runs) is the work itself, which
    other processes on the machine slow down less than the wall time.
    """
    plain = sorted((batch, min(row['cpu_s'] for row in rows))
                   for (model, scheme, _, _, batch), rows in runs.items()
                   if model == name and scheme == 'plain')
    (small, t_small), (large, t_large) = plain[0], plain[-1]
    per_sample = (t_large - t_small) / (large - small)
    return {'fixed_s': t_small - per_sample * small, 'per_sample_s': per_sample}


def describe_all(names):
    """Each model's counts (builds the models once)."""
    minidl.set_seed(0)
    return {name: workloads.describe(name, workloads.build(name)) for name in names}


def machine_for(ranks, hosts, links, foreign_pct=0.0):
    """The measuring machine: ``hosts`` fake hosts over one machine's 2 cores.

    The ranks share the cores that other processes left them in the run
    (``foreign_pct`` of the machine's CPU time went to those): with
    ``foreign_pct=0``, the idle machine.
    """
    local, network, gamma, copy = links
    cores = CORES * max(0.05, 1 - foreign_pct / 100)
    return Machine(local, network, gamma, copy, per_host=ranks // hosts,
                   oversubscription=max(1.0, ranks / cores))


def comparison(runs, models, links):
    """Markdown rows: measured against predicted, per case, and the errors."""
    lines = ['| model | scheme | ranks x hosts | global batch | measured s (runs: min-max) '
             '| foreign cpu % | predicted s, idle | predicted s, load | error | '
             'measured MiB / step | predicted MiB | error |',
             '|---|---|---|---:|---|---:|---:|---:|---:|---:|---:|---:|']
    for key in sorted(runs, key=lambda k: (k[0], k[2], k[3], k[1])):
        name, scheme, ranks, hosts, batch = key
        if scheme == 'plain' and batch != max(k[4] for k in runs if k[0] == name):
            continue
        rows = runs[key]
        best = min(rows, key=lambda row: row['step_s'])
        function = SCHEMES['dp' if scheme == 'plain' else scheme]
        idle, sent = function(models[name], ranks, batch, machine_for(ranks, hosts, links))
        loaded, _ = function(models[name], ranks, batch,
                             machine_for(ranks, hosts, links, best['foreign_cpu_pct']))
        times = [row['step_s'] for row in rows]
        measured_bytes = best['bytes_per_step']
        byte_error = f'{sent / measured_bytes - 1:+.2%}' if measured_bytes else '-'
        lines.append(f"| {name} | {scheme} | {ranks} x {hosts} | {batch} | "
                     f"{best['step_s']:.3f} ({len(rows)}: {min(times):.2f}-{max(times):.2f}) | "
                     f"{best['foreign_cpu_pct']:.0f} | {idle:.3f} | {loaded:.3f} | "
                     f"{loaded / best['step_s'] - 1:+.0%} | {measured_bytes / 2 ** 20:.2f} | "
                     f"{sent / 2 ** 20:.2f} | {byte_error} |")
    return lines


def weak_scaling(models, links, speedup=1.0):
    """{(model, scheme): [(workers, efficiency, seconds, bytes)]}: each worker a core,
    ``PER_HOST`` to a host, ``LOCAL_BATCH`` samples each; efficiency is one worker's
    step time over ``p`` workers' (1 is perfect). ``speedup`` divides the compute
    time (a what-if: faster workers on the same links)."""
    local, network, gamma, copy = links
    machine = Machine(local, network, gamma, copy, per_host=PER_HOST)
    result = {}
    for name, measured in models.items():
        workload = {**measured, 'fixed_s': measured['fixed_s'] / speedup,
                    'per_sample_s': measured['per_sample_s'] / speedup}
        single = SCHEMES['dp'](workload, 1, LOCAL_BATCH[name], machine)[0]
        for scheme, function in SCHEMES.items():
            result[name, scheme] = [
                (p, single / seconds, seconds, sent) for p in WORKERS
                for seconds, sent in [function(workload, p, LOCAL_BATCH[name] * p, machine)]]
    return result


def plot(rows, path):
    """Predicted efficiency against workers: a row per what-if ``(title, curves)``, a panel
    per model, a line per scheme."""
    import matplotlib
    matplotlib.use('Agg')
    from matplotlib import pyplot
    names = list(dict.fromkeys(name for name, _ in rows[0][1]))
    figure, axes = pyplot.subplots(len(rows), len(names), figsize=(3.2 * len(names),
                                   2.6 * len(rows)), sharex=True, sharey=True, squeeze=False)
    labels = {'dp': 'data-parallel', 'hybrid': 'hybrid', 'average': 'model averaging (k=4)'}
    for row, (title, curves) in zip(axes, rows):
        for axis, name in zip(row, names):
            for scheme, label in labels.items():
                points = curves[name, scheme]
                axis.plot([p for p, *_ in points], [e for _, e, *_ in points], marker='.',
                          label=label)
            axis.set_xscale('log', base=2)
            axis.set_ylim(0, 1.05)
            axis.set_title(f'{name}, {LOCAL_BATCH[name]} samples / worker\n{title}',
                           fontsize=8)
            axis.tick_params(labelsize=7)
            axis.grid(alpha=0.3)
        row[0].set_ylabel('predicted efficiency', fontsize=8)
    for axis in axes[-1]:
        axis.set_xlabel('workers (2 a host)', fontsize=8)
    axes[0][0].legend(fontsize=7)
    figure.tight_layout()
    figure.savefig(path, dpi=80)


def scaling_table(curves, shown=(2, 8, 64, 1024)):
    """Markdown rows: predicted efficiency and MiB sent per step at a few worker counts."""
    head = ' | '.join(f'p={p}' for p in shown)
    lines = [f'| model | scheme | efficiency {head} | MiB / step / worker {head} |',
             '|---|---|' + '---:|' * (2 * len(shown))]
    for (name, scheme), points in curves.items():
        chosen = [point for point in points if point[0] in shown]
        lines.append(f'| {name} | {scheme} | ' + ' | '.join(f'{e:.2f}' for _, e, _, _ in chosen)
                     + ' | ' + ' | '.join(f'{b / 2 ** 20:.1f}' for *_, b in chosen) + ' |')
    return lines


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('measured', nargs='+', help="the sweep's JSON-lines files")
    parser.add_argument('--plot', help='where to write the efficiency plot (PNG)')
    parser.add_argument('--speedup', type=float, default=100.0,
                        help='the what-if: compute this many times faster, same links')
    args = parser.parse_args(argv)
    links, runs = load(args.measured)
    fitted = fitted_links(links)
    names = sorted({key[0] for key in runs})
    models = describe_all(names)
    for name in names:
        models[name].update(compute_fit(runs, name))
    local, network, gamma, copy = fitted
    print(f'shared memory: alpha {local.alpha * 1e6:.1f} us, {1 / local.beta / 1e9:.2f} GB/s; '
          f'TCP between fake hosts: alpha {network.alpha * 1e6:.1f} us, '
          f'{1 / network.beta / 1e9:.2f} GB/s; add {1 / gamma / 1e9:.1f} GB/s, '
          f'copy {1 / copy / 1e9:.1f} GB/s')
    for name in names:
        workload = models[name]
        print(f"{name}: {workload['params']:,} parameters ({workload['hybrid_params']:,} in "
              f"the hybrid layers), {workload['states']:,} state values; compute "
              f"{workload['fixed_s'] * 1e3:.0f} ms + {workload['per_sample_s'] * 1e3:.1f} ms "
              f"per sample")
    print('\n'.join(['', *comparison(runs, models, fitted), '']))
    curves = weak_scaling(models, fitted)
    faster = weak_scaling(models, fitted, args.speedup)
    print('\n'.join(['Measured compute:', '', *scaling_table(curves), '',
                     f'Compute {args.speedup:g}x faster:', '', *scaling_table(faster)]))
    if args.plot:
        plot([('compute as measured', curves),
              (f'compute {args.speedup:g}x faster (what-if)', faster)], args.plot)


if __name__ == '__main__':
    main()
