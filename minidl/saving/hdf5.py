"""HDF5 files opened safely: atomic writes, clear read errors, Keras's attribute encodings.

Writing goes to a temporary file next to the target, which is flushed,
fsync'ed and renamed over the target only once complete, so a crash or an
error mid-save never leaves a damaged file where a good one was. Reading
turns every failure (not HDF5, truncated, missing entries, wrong types) into
a ValueError that names the file and the problem, chained to the cause.
"""

import contextlib
import json
import os
import secrets

import h5py
import numpy as np


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

    Raises:
        FileExistsError: If ``filepath`` exists and ``overwrite`` is False.
    """
    path = check_path(filepath)
    if not overwrite and os.path.exists(path):
        raise FileExistsError(f'{path} exists and overwrite=False; pass overwrite=True to '
                              f'replace it')
    directory, name = os.path.split(os.path.abspath(path))
    os.makedirs(directory, exist_ok=True)
    temporary = os.path.join(directory, f'.{name}.{secrets.token_hex(4)}.tmp')
    # O_EXCL: never reuse another writer's file; mode 0o666 lets the umask
    # give the file the permissions an ordinary new file gets.
    os.close(os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666))
    try:
        with h5py.File(temporary, 'w') as file:
            yield file
        with open(temporary, 'rb+') as handle:
            os.fsync(handle.fileno())
        os.replace(temporary, path)
    except BaseException:
        os.unlink(temporary)
        raise
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


def sync_directory(directory):
    """fsync ``directory``, which makes a rename in it durable (where directories open)."""
    try:
        descriptor = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(descriptor)
    except OSError:
        pass
    finally:
        os.close(descriptor)
