"""HDF5 files opened safely: atomic writes, clear read errors, Keras's attribute encodings.

Writing goes to a temporary file next to the target, which is flushed,
fsync'ed and renamed over the target only once complete, so a crash or an
error mid-save never leaves a damaged file where a good one was. Ctrl-C is
held back from the creation of the temporary until after the rename (or the
removal of the temporary) and raised right then
(:mod:`minidl.interrupts`). Reading turns every failure (not HDF5,
truncated, missing entries, wrong types) into a ValueError that names the
file and the problem, chained to the cause.

Temporaries are named, locked and cleaned up as :mod:`minidl.data.durable`
describes: a save first removes the abandoned temporaries of its target.
h5py opens the temporary without HDF5's own file lock, which would clash
with ours; when ``HDF5_USE_FILE_LOCKING`` forces that lock on, HDF5 holds it
while writing and ours is taken only once HDF5 has closed the file (in the
instants between, another process's save of the same path may remove the
temporary: this save then fails, and the previous file stays whole).
"""

import contextlib
import json
import os

import h5py
import numpy as np

from minidl.data.durable import take_lock as _lock
from minidl.data.durable import new_temporary as _new_temporary
from minidl.data.durable import remove_abandoned_temporaries, sync_directory
from minidl import interrupts


# HDF5 reads HDF5_USE_FILE_LOCKING once, when h5py loads it; these values
# make it lock every file it opens even where h5py asks it not to.
_HDF5_LOCKS_FILES = os.environ.get('HDF5_USE_FILE_LOCKING', '') in ('TRUE', '1', 'BEST_EFFORT')

# Keras 2 splits list attributes larger than this over 'name0', 'name1', ...
# (the room in an HDF5 object header); files are read either way.
_HEADER_LIMIT = 64512


def check_path(filepath):
    """``filepath`` as a string path; TypeError for anything else."""
    if not isinstance(filepath, (str, os.PathLike)):
        raise TypeError(f'filepath must be a str or os.PathLike path, got '
                        f'{type(filepath).__name__} {filepath!r}')
    return os.fspath(filepath)


@contextlib.contextmanager
def atomic_writer(filepath, overwrite=True):
    """An ``h5py.File`` open for writing that replaces ``filepath`` only when complete.

    Abandoned temporaries of ``filepath`` are removed first (see the module
    docstring). A Ctrl-C while the block runs raises KeyboardInterrupt once
    the file is renamed into place or the temporary is gone.

    Raises:
        FileExistsError: If ``filepath`` exists and ``overwrite`` is False.
    """
    path = check_path(filepath)
    if not overwrite and os.path.exists(path):
        raise FileExistsError(f'{path} exists and overwrite=False; pass overwrite=True to '
                              f'replace it')
    directory, name = os.path.split(os.path.abspath(path))
    os.makedirs(directory, exist_ok=True)
    with interrupts.deferred():
        remove_abandoned_temporaries(directory, name)
        descriptor, temporary = _new_temporary(directory, name, lock=not _HDF5_LOCKS_FILES)
        try:
            try:
                with h5py.File(temporary, 'w', locking=False) as file:
                    yield file
                if _HDF5_LOCKS_FILES:
                    _lock(descriptor, blocking=True)
                os.fsync(descriptor)
                os.replace(temporary, path)
            except BaseException:
                os.unlink(temporary)
                raise
        finally:
            os.close(descriptor)  # releases the lock, after the rename
        sync_directory(directory)


@contextlib.contextmanager
def reader(filepath, what):
    """An ``h5py.File`` open for reading; failures become ValueErrors naming the file.

    Args:
        filepath: The file.
        what: What is being loaded ('model', 'weights'), for the messages.

    Raises:
        FileNotFoundError: If there is no such file.
        ValueError: If it cannot be read or its content is not what ``what`` needs.
    """
    path = check_path(filepath)
    if not os.path.isfile(path):
        raise FileNotFoundError(f'cannot load {what}: no file at {path}')
    try:
        file = h5py.File(path, 'r')
    except OSError as error:
        raise ValueError(f'cannot load {what} from {path}: it is not a readable HDF5 file '
                         f'(truncated or damaged?): {error}') from error
    with file:
        try:
            yield file
        except (ValueError, TypeError, KeyError, OSError, RuntimeError) as error:
            # A KeyError's str() is the repr of its message; show the message itself.
            problem = error.args[0] if isinstance(error, KeyError) and error.args else error
            raise ValueError(f'cannot load {what} from {path}: {problem}') from error


# ----- attributes as Keras writes them -------------------------------------------


def write_json(attrs, name, value):
    """Store ``value`` as a UTF-8 JSON string attribute (Keras's 'model_config' style)."""
    attrs[name] = json.dumps(value, default=json_default).encode('utf8')


def json_default(value):
    """``json.dumps``'s ``default``: numpy scalars and arrays as Python numbers and lists."""
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    raise TypeError(f'cannot store a {type(value).__name__} ({value!r}) in a JSON config')


def read_json(attrs, name):
    """The JSON attribute ``name`` parsed (with ``json.loads``, which never runs code)."""
    text = read_string(attrs, name)
    try:
        return json.loads(text)
    except ValueError as error:
        raise ValueError(f'attribute {name!r} is not valid JSON: {error}') from error
    except RecursionError:  # json nests one call per level: a crafted file can exhaust it
        raise ValueError(f'attribute {name!r} nests too deeply to be a model '
                         f'description') from None


def read_string(attrs, name):
    """A string attribute, whether stored as text or as bytes."""
    value = attrs[name]
    if isinstance(value, np.ndarray) and value.shape == ():
        value = value[()]
    if isinstance(value, (bytes, np.bytes_)):
        value = bytes(value).decode('utf8')
    if not isinstance(value, str):
        raise TypeError(f'attribute {name!r} should be a string, found {type(value).__name__}')
    return value


def write_strings(attrs, name, strings):
    """A list of strings as an array of UTF-8 bytes, in chunks if large (as Keras does)."""
    data = np.array([s.encode('utf8') for s in strings], dtype=bytes if strings else 'S1')
    parts = [data]
    while any(part.nbytes > _HEADER_LIMIT for part in parts) and len(parts) < len(data):
        parts = np.array_split(data, len(parts) + 1)
    if len(parts) == 1:
        attrs[name] = data
        return
    for index, part in enumerate(parts):
        attrs[f'{name}{index}'] = part


def read_strings(attrs, name):
    """A list-of-strings attribute written by :func:`write_strings` (or Keras)."""
    if name in attrs:
        parts = [attrs[name]]
    else:
        parts, index = [], 0
        while f'{name}{index}' in attrs:
            parts.append(attrs[f'{name}{index}'])
            index += 1
        if not parts:
            raise KeyError(f'attribute {name!r} is missing')
    strings = []
    for part in parts:
        part = np.asarray(part)
        if part.size == 0:
            continue  # Keras writes an empty list as an empty float array
        if part.ndim != 1 or part.dtype.kind not in 'SUO':
            raise TypeError(f'attribute {name!r} should be a list of strings, found '
                            f'{part.dtype} data of shape {part.shape}')
        for item in part:
            if isinstance(item, (bytes, np.bytes_)):
                item = bytes(item).decode('utf8')
            if not isinstance(item, str):
                raise TypeError(f'attribute {name!r} holds a {type(item).__name__}, not a string')
            strings.append(item)
    return strings
