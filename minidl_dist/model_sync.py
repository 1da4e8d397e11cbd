"""Start every rank from rank 0's model: same structure, weights, optimizer state, generators.

The structure is checked first, with one small collective: a rank whose
weights differ in number, name, shape or dtype (a different model, a
different number of classes) gets a clear error on every rank, instead of
a collective that never completes.
"""

import hashlib
import json

import numpy as np

from minidl_dist import model_parts
from minidl_dist.comm import from_host, to_host
from minidl_dist.watchdog import waiting


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
    with waiting(f'comparing the {what} of all ranks'):
        comm.Allgather(digest, digests)
    if (digests == digests[0]).all():
        return
    # Only metadata travels through the pickling call, and only on this error path.
    with waiting(f'gathering the {what} of all ranks'):
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


def architecture_digest(model):
    """A short hash of the model's architecture, equal on ranks that built the same model.

    It covers the model's JSON config (``get_config``: layer classes, their
    arguments, their connections) with every name left out: automatic names
    ('dense_3') depend on what a rank built before, so a layer is named by
    its position in the model instead. It does not cover weight values
    (rank 0's are broadcast) or compile settings. None for a subclassed
    model, which has no config.
    """
    try:
        config = model.get_config()
    except NotImplementedError:
        return None
    names = []
    _collect_names(config, names)
    positions = {name: f'layer #{index}' for index, name in enumerate(dict.fromkeys(names))}
    text = json.dumps(_without_names(config, positions), sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _collect_names(value, names):
    """Append the values of 'name' entries in ``value``, in the config's (fixed) order."""
    if isinstance(value, dict):
        if isinstance(value.get('name'), str):
            names.append(value['name'])
        for item in value.values():
            _collect_names(item, names)
    elif isinstance(value, (list, tuple)):
        for item in value:
            _collect_names(item, names)


def _without_names(value, positions, in_list=False):
    """``value`` without 'name' entries; names in lists (connections) as positions."""
    if isinstance(value, dict):
        return {key: _without_names(item, positions) for key, item in value.items()
                if key != 'name'}
    if isinstance(value, (list, tuple)):
        return [_without_names(item, positions, True) for item in value]
    if in_list and isinstance(value, str):
        return positions.get(value, value)
    return value


def broadcast_arrays(comm, arrays, root=0):
    """Overwrite ``arrays`` (numpy or device arrays) with the root rank's values, in place."""
    for array in arrays:
        host = np.ascontiguousarray(to_host(array))
        with waiting(f'a broadcast from rank {root}'):
            comm.Bcast(host, root=root)
        if host is not array:
            array[...] = from_host(host, array)


def broadcast_model(comm, model, root=0, keep=()):
    """Give every rank the root's weights, optimizer state and random generator states.

    Args:
        comm: The mpi4py communicator.
        model: The model, built alike on every rank.
        root: The rank whose values everyone gets.
        keep: ids of weights that keep each rank's own values, and their
            optimizer slots with them (a model-parallel layer's shards).
    """
    optimizer = model.optimizer
    built = np.array([optimizer is not None and optimizer.built], np.uint8)
    with waiting(f'a broadcast from rank {root}'):
        comm.Bcast(built, root=root)
    if built[0] and not optimizer.built:
        optimizer.build(model.trainable_weights)
    weights = [weight for weight in model.weights if id(weight) not in keep]
    description = [(weight.name, tuple(weight.shape), str(weight.dtype)) for weight in weights]
    state, shared = [], []
    if built[0]:
        state = optimizer.get_weights()
        shared = _shared_state(optimizer, model.trainable_weights, keep)
        description += [(name, tuple(np.shape(array)), str(np.asarray(array).dtype))
                        for name, array, share in zip(optimizer.weight_names(), state, shared)
                        if share]
    check_same_structure(comm, description, 'model weights or optimizer state')
    broadcast_arrays(comm, [weight.data for weight in weights], root)
    if built[0]:
        broadcast_arrays(comm, [array for array, share in zip(state, shared) if share], root)
        optimizer.set_weights(state)
    generators = model_parts.generators(model)
    with waiting(f'a broadcast from rank {root}'):
        states = comm.bcast([generator.get_state() for generator in generators], root=root)
    for generator, state in zip(generators, states):
        generator.set_state(state)


def _shared_state(optimizer, params, keep):
    """For each array of ``optimizer.get_weights()``, whether it is broadcast.

    Its order is documented: the iterations, the shared state, then each
    slot for every parameter in turn; slots of ``keep`` parameters are not.
    """
    shared = [True] * (1 + len(optimizer.state_names))
    for _ in optimizer.slot_names:
        shared += [id(param) not in keep for param in params]
    return shared
