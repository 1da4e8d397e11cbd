"""Step time and traffic per rank of data-parallel, hybrid and model-averaging training.

Each function takes a workload (the dict of
:func:`benchmarks.scaling.workloads.describe` plus the compute fit
``fixed_s`` and ``per_sample_s``), the number of ranks, the global batch
and a :class:`~benchmarks.scaling.model.Machine`, and returns ``(seconds,
bytes)``: one training step's time and the mean bytes a rank sends in it,
the quantity :func:`minidl_dist.bytes_sent` counts. With one rank there is
no communication: the plain optimizer's step.
"""

from benchmarks.scaling.model import (FLOAT32, FLOAT64, TOTALS, allgather_bytes,
                                      allgather_seconds, allreduce_bytes, allreduce_seconds,
                                      compute_seconds)

#: Copies of the summed buffer per step: packing the gradients, unpacking the sum.
PACK_COPIES = 2
#: Copies per model average: concatenating, dividing, writing back weights and slots.
AVERAGE_COPIES = 4


def _totals(ranks, machine):
    """The loss totals every scheme sums at every step."""
    return (allreduce_seconds(TOTALS * FLOAT64, ranks, machine),
            allreduce_bytes(TOTALS, FLOAT64, ranks))


def data_parallel(workload, ranks, batch, machine):
    """Gradients, state changes, one flag per weight and a part count summed at every step."""
    compute = compute_seconds(workload, batch / ranks, 1.0, machine.oversubscription)
    if ranks == 1:
        return compute, 0.0
    count = workload['params'] + workload['states'] + workload['tensors'] + 1
    nbytes = count * FLOAT32
    seconds, sent = _totals(ranks, machine)
    seconds += allreduce_seconds(nbytes, ranks, machine)
    seconds += PACK_COPIES * nbytes * machine.copy * machine.oversubscription
    return compute + seconds, sent + allreduce_bytes(count, FLOAT32, ranks)


def hybrid_bytes(layers, rows, ranks):
    """Bytes a rank sends for the model-parallel layers' activations in one step.

    The formula of :func:`benchmarks.hybrid.expected_bytes`, with ``rows``
    the global batch's rows (samples x rows per sample) and ``layers`` the
    ``(inputs, units)`` of each model-parallel Dense: the first gathers the
    global batch's inputs and sum-scatters their gradient (half an
    allreduce with a power-of-two number of ranks), each gathers its output
    columns, the later ones sum their input gradients, and the last one's
    output gradient rows are gathered.
    """
    first, last = layers[0][0], layers[-1][1]
    sent = allgather_bytes(FLOAT32 * rows * first, ranks)
    sent += allreduce_bytes(rows * first, FLOAT32, ranks) / 2
    sent += sum(allgather_bytes(FLOAT32 * rows * units, ranks) for _, units in layers)
    sent += sum(allreduce_bytes(rows * inputs, FLOAT32, ranks) for inputs, _ in layers[1:])
    return sent + allgather_bytes(FLOAT32 * rows * last, ranks)


def hybrid(workload, ranks, batch, machine):
    """Data-parallel below the model-parallel Dense layers, their columns split over the ranks.

    Each rank computes its share of the samples below those layers and its
    share of the columns above (a share of the global batch's work either
    way), updates the other layers' weights and its columns of theirs.
    """
    sharded, params = workload['hybrid_params'], workload['params']
    held = (params - sharded + sharded / ranks) / params
    compute = compute_seconds(workload, batch / ranks, held, machine.oversubscription)
    if ranks == 1:
        return compute, 0.0
    layers, rows = workload['hybrid_layers'], batch * workload['rows_per_sample']
    gradients = (params - sharded) * FLOAT32
    seconds, sent = _totals(ranks, machine)
    seconds += allreduce_seconds(gradients, ranks, machine)
    seconds += PACK_COPIES * gradients * machine.copy * machine.oversubscription
    first, last = layers[0][0], layers[-1][1]
    seconds += allgather_seconds(FLOAT32 * rows * first, ranks, machine)
    seconds += allreduce_seconds(FLOAT32 * rows * first, ranks, machine) / 2
    seconds += sum(allgather_seconds(FLOAT32 * rows * units, ranks, machine)
                   for _, units in layers)
    seconds += sum(allreduce_seconds(FLOAT32 * rows * inputs, ranks, machine)
                   for inputs, _ in layers[1:])
    seconds += allgather_seconds(FLOAT32 * rows * last, ranks, machine)
    sent += allreduce_bytes(params - sharded, FLOAT32, ranks) + hybrid_bytes(layers, rows, ranks)
    return compute + seconds, sent


def model_averaging(workload, ranks, batch, machine, period=4, slots=1):
    """Each rank steps alone; weights, moving statistics and ``slots`` optimizer slots per
    weight (1: SGD's momentum) are averaged every ``period`` steps (amortised per step)."""
    compute = compute_seconds(workload, batch / ranks, 1.0, machine.oversubscription)
    if ranks == 1:
        return compute, 0.0
    count = (1 + slots) * workload['params'] + workload['states']
    nbytes = count * FLOAT32
    seconds, sent = _totals(ranks, machine)
    # Every step scales the rank's gradients by the number of ranks (one pass over them).
    seconds += workload['params'] * FLOAT32 * machine.copy * machine.oversubscription
    average = allreduce_seconds(nbytes, ranks, machine)
    average += AVERAGE_COPIES * nbytes * machine.copy * machine.oversubscription
    return (compute + seconds + average / period,
            sent + allreduce_bytes(count, FLOAT32, ranks) / period)


SCHEMES = {'dp': data_parallel, 'hybrid': hybrid, 'average': model_averaging}
