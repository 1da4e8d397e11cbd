"""The table and the figure of ``benchmarks.modes``: held-out accuracy against time and bytes.

    python -m benchmarks.modes_report benchmarks/modes.jsonl [--png benchmarks/modes.png]

Reads the JSON lines that ``mpirun -np N python -m benchmarks.modes --json
...`` appended (any mix of models and numbers of ranks) and prints a
Markdown table per model and number of ranks: the held-out accuracy after
the last epoch (each run), the epochs and seconds of training until the
held-out accuracy first reached each of ``--targets`` (medians over the runs
that did, and a count of those that never did), the seconds per epoch (median) and the KiB
a rank sent per epoch (mean over the ranks, and the busiest rank's).

The figure, in the style of CMU's "accuracy vs time" plots: one column per
model and number of ranks, the held-out accuracy after each epoch against
the training's wall time (top row) and against the KiB a rank sent so far
(bottom row, log scale); one line per mode, at the median time and mean
accuracy of its runs.
"""

import argparse
import collections
import json
import statistics

import numpy as np

# One colour per mode; the line says the family: solid synchronous, dash-dot
# averaging, dashed asynchronous, dotted stale-synchronous; seeded runs get dots.
STYLES = {
    'sync': ('tab:blue', '-', ''),
    'sync + QSGD': ('tab:orange', '-', ''),
    'sync + top-k': ('tab:green', '-', ''),
    'averaging, period 4': ('tab:purple', '-.', ''),
    'async, free': ('tab:red', '--', ''),
    'async, seeded': ('tab:brown', '--', '.'),
    'stale s=1, free': ('tab:gray', ':', ''),
    'stale s=1, seeded': ('tab:olive', ':', '.'),
}


def load(path):
    """{(model, ranks): {mode: {run: [record per epoch, in order]}}} from a JSON-lines file."""
    grouped = collections.defaultdict(lambda: collections.defaultdict(dict))
    with open(path) as lines:
        for line in lines:
            if line.strip():
                record = json.loads(line)
                runs = grouped[record['model'], record['ranks']][record['mode']]
                runs.setdefault(record.get('run', 0), []).append(record)
    for modes in grouped.values():
        for runs in modes.values():
            for records in runs.values():
                records.sort(key=lambda record: record['epoch'])
    return grouped


def reached(records, target):
    """(epochs, seconds) of training when the held-out accuracy first reached ``target``."""
    for record in records:
        if record['accuracy'] >= target:
            return record['epoch'], record['seconds']
    return None


def to_target(runs, target):
    """(epochs, seconds) to ``target``: medians over the runs that reached it, and a note."""
    hits = [reached(records, target) for records in runs.values()]
    found = [hit for hit in hits if hit is not None]
    if not found:
        return 'never', '–'
    note = f' ({len(hits) - len(found)} of {len(hits)} runs never)' if len(found) < len(hits) \
        else ''
    return (f'{statistics.median(hit[0] for hit in found):g}{note}',
            f'{statistics.median(hit[1] for hit in found):.2f}{note}')


def table(model, ranks, modes, targets):
    """The Markdown table of one model and number of ranks."""
    epochs = max(len(records) for runs in modes.values() for records in runs.values())
    reach = ''.join(f' epochs to {target:.0%} | s to {target:.0%} |' for target in targets)
    rows = [f'| mode | held-out accuracy after {epochs} epochs |{reach} s per epoch | '
            'KiB per rank per epoch (mean / busiest) |',
            '|---|---|' + '---:|---:|' * len(targets) + '---:|---:|']
    for mode, runs in modes.items():
        last = [records[-1] for records in runs.values()]
        accuracies = sorted({f"{record['accuracy']:.3f}" for record in last})
        reach = ''.join(f' {epochs} | {seconds} |' for epochs, seconds in
                        (to_target(runs, target) for target in targets))
        per_epoch = statistics.median(record['seconds'] / record['epoch'] for record in last)
        kib_mean = statistics.median(record['bytes_mean'] / record['epoch'] for record in last)
        kib_max = statistics.median(record['bytes_max'] / record['epoch'] for record in last)
        rows.append(f"| {mode} | {', '.join(accuracies)} |{reach} "
                    f'{per_epoch:.3f} | {kib_mean / 1024:.1f} / {kib_max / 1024:.1f} |')
    return f'{model.upper()}, {ranks} ranks ({len(last)} run(s) each):\n\n' + '\n'.join(rows)


def curve(runs):
    """Per epoch: the median seconds, mean KiB per rank and mean accuracy of the runs."""
    epochs = min(len(records) for records in runs.values())
    pick = lambda key: np.array([[records[e][key] for e in range(epochs)]  # noqa: E731
                                 for records in runs.values()])
    return (np.median(pick('seconds'), axis=0), pick('bytes_mean').mean(axis=0) / 1024,
            pick('accuracy').mean(axis=0))


def draw(path, grouped, dpi=72):
    """The two-row figure; one column per (model, ranks)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    keys = sorted(grouped, key=lambda key: (key[0] != 'mlp', key[1]))
    figure = Figure(figsize=(3.4 * len(keys) + 1, 7), layout='constrained')
    FigureCanvasAgg(figure)
    axes = figure.subplots(2, len(keys), sharey=True, squeeze=False)
    for column, key in enumerate(keys):
        for mode, runs in grouped[key].items():
            colour, line, marker = STYLES.get(mode, (None, '-', ''))
            seconds, kib, accuracy = curve(runs)
            for axis, x in ((axes[0, column], seconds), (axes[1, column], kib)):
                axis.plot(x, accuracy, color=colour, linestyle=line, marker=marker,
                          label=mode)
        model, ranks = key
        axes[0, column].set(title=f'{model.upper()}, {ranks} ranks',
                            xlabel='training wall time (s)')
        axes[1, column].set(xscale='log', xlabel='KiB sent per rank so far (log)')
    for axis in axes.flat:
        axis.set_ylim(0.5, 1.0)
        axis.grid(alpha=0.3)
    for row in axes:
        row[0].set_ylabel('held-out accuracy')
    handles, labels = axes[0, 0].get_legend_handles_labels()
    figure.legend(handles, labels, loc='outside lower center', ncols=4, fontsize='small')
    figure.savefig(path, format='png', dpi=dpi)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('jsonl', help="benchmarks.modes' JSON lines")
    parser.add_argument('--png', help='draw the figure to this file')
    parser.add_argument('--targets', type=float, nargs='+', default=[0.9, 0.95],
                        help='held-out accuracies to reach (default 0.9 0.95)')
    args = parser.parse_args(argv)
    grouped = load(args.jsonl)
    for model, ranks in sorted(grouped, key=lambda key: (key[0] != 'mlp', key[1])):
        print(table(model, ranks, grouped[model, ranks], args.targets) + '\n')
    if args.png:
        draw(args.png, grouped)


if __name__ == '__main__':
    main()
