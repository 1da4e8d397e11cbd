"""Start every rank from rank 0's model: same structure, weights, optimizer state, generators.

The structure is checked first, with one small collective: a rank whose
weights differ in number, name, shape or dtype (a different model, a
different number of classes) gets a clear error on every rank, instead of
a collective that never completes.
"""

import hashlib

import numpy as np

from minidl_dist import model_parts
from minidl_dist.comm import from_host, to_host


def check_same_structure(comm, description, what):
    """Raise ValueError on every rank unless the shapes and dtypes described are equal on all.

    Args:
        comm: The mpi4py communicator.
        description: This rank's list of ``(name, shape, dtype)`` tuples. Names
            are only reported: automatic layer names may differ between ranks
            that built other models before.
        what: What is described, for the message ('model weights').
    """
    structure = _structure(description)
    digest = np.frombuffer(hashlib.sha256(repr(structure).encode()).digest(), np.uint8)
    digests = np.empty((comm.Get_size(), digest.size), np.uint8)
    comm.Allgather(digest, digests)
    if (digests == digests[0]).all():
        return
    # Only metadata travels through the pickling call, and only on this error path.
    descriptions = comm.allgather(description)
    lines = [f'  rank {rank}: {_first_difference(descriptions[0], other)}'
             for rank, other in enumerate(descriptions[1:], start=1)
             if _structure(other) != _structure(descriptions[0])]
    raise ValueError(f'the ranks have different {what}; every rank must build the same '
                     f'model (compared with rank 0):\n' + '\n'.join(lines))


def _structure(description):
    return [entry[1:] for entry in description]


def _first_difference(reference, other):
    for index, (mine, theirs) in enumerate(zip(reference, other)):
        if mine[1:] != theirs[1:]:
            return f'entry {index} is {theirs}, rank 0 has {mine}'
    return f'{len(other)} entries, rank 0 has {len(reference)}'


def broadcast_arrays(comm, arrays, root=0):
    """Overwrite ``arrays`` (numpy or device arrays) with the root rank's values, in place."""
    for array in arrays:
        host = np.ascontiguousarray(to_host(array))
        comm.Bcast(host, root=root)
        if host is not array:
            array[...] = from_host(host, array)


def broadcast_model(comm, model, root=0):
    """Give every rank the root's weights, optimizer state and random generator states."""
    optimizer = model.optimizer
    built = np.array([optimizer is not None and optimizer.built], np.uint8)
    comm.Bcast(built, root=root)
    if built[0] and not optimizer.built:
        optimizer.build(model.trainable_weights)
    state = optimizer.get_weights() if built[0] else []
    description = [(weight.name, tuple(weight.shape), str(weight.dtype))
                   for weight in model.weights]
    if built[0]:
        description += [(name, tuple(np.shape(array)), str(np.asarray(array).dtype))
                        for name, array in zip(optimizer.weight_names(), state)]
    check_same_structure(comm, description, 'model weights or optimizer state')
    broadcast_arrays(comm, [weight.data for weight in model.weights], root)
    if built[0]:
        broadcast_arrays(comm, state, root)
        optimizer.set_weights(state)
    generators = model_parts.generators(model)
    states = comm.bcast([generator.get_state() for generator in generators], root=root)
    for generator, state in zip(generators, states):
        generator.set_state(state)
