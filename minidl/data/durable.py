"""Making a rename durable: after ``os.replace`` into a directory, fsync the directory.

Used wherever a file is written beside its final name and renamed into place
(model files, downloads), so that after a crash the name holds either the old
file or the whole new one.
"""

import os


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
