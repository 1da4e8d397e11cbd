"""The SHA-256 the zoo's recipes print for the files they write, and name their runs by."""

import hashlib
import pathlib


def file_digest(path):
    """The SHA-256 of the file at ``path``, in hex: what the registry pins for a weight file."""
    return hashlib.sha256(pathlib.Path(path).read_bytes()).hexdigest()
