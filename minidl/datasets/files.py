"""Where the loaders look for data files: the path given, then Keras's cache directory."""

import os

KERAS_CACHE = os.path.join('~', '.keras', 'datasets')


def locate(path):
    """``path`` if it exists, else the same relative path under ``~/.keras/datasets``.

    Keras keeps the files it downloads in that directory, so data fetched
    once by Keras is found without a path. Returns None if neither exists.
    """
    path = os.path.expanduser(os.fspath(path))
    if os.path.exists(path):
        return path
    cached = os.path.join(os.path.expanduser(KERAS_CACHE), path)
    if not os.path.isabs(path) and os.path.exists(cached):
        return cached
    return None
