"""Durable writes: a file replaced whole or not at all, and nothing left behind.

A new file is written to a temporary beside its target, fsync'ed, and renamed
over the target only once complete; the directory is then fsync'ed, which
makes the rename itself durable. A crash, an error or Ctrl-C at any point
leaves either the previous file or the whole new one under the target's name.

Temporaries: the temporary of ``dir/model.h5`` is ``dir/.model.h5.<8 hex
digits>.tmp``. Its writer holds an exclusive ``flock`` on it from creating it
until after the rename, so a process killed mid-write (kill -9, power loss of
a node, OOM killer) leaves a temporary that nobody holds. Each write first
removes the temporaries of its own target whose ``flock`` it can take;
those of a writer still at work (another process writing the same path) are
left alone, whatever their age. Where the filesystem refuses ``flock`` (some
NFS and Lustre mounts) no temporary can be told abandoned and none is removed.

:func:`replacing` is the whole sequence for a file written through a Python
file object (downloads, safetensors files); the HDF5 writer
(:mod:`minidl.saving.hdf5`), whose library opens files by name, uses the
pieces.
"""

import contextlib
import fcntl
import os
import re
import secrets
import stat


@contextlib.contextmanager
def replacing(path):
    """A binary file whose content replaces ``path`` when the ``with`` block ends.

    An exception in the block (a failed download, a hash that does not match)
    removes the temporary and leaves ``path`` as it was. A Ctrl-C after the
    block leaves either the old or the new file under ``path``, and at worst
    an abandoned temporary, which the next write of ``path`` removes.
    """
    directory, name = os.path.split(os.path.abspath(path))
    remove_abandoned_temporaries(directory, name)
    descriptor, temporary = new_temporary(directory, name, lock=True)
    try:
        try:
            with os.fdopen(os.dup(descriptor), 'wb') as file:
                yield file
                file.flush()
                os.fsync(file.fileno())
        except BaseException:
            os.unlink(temporary)
            raise
        # Outside the cleanup above: once renamed, the temporary is the file.
        os.replace(temporary, path)
    finally:
        os.close(descriptor)  # releases the lock, after the rename
    sync_directory(directory)


def remove_abandoned_temporaries(directory, name):
    """Delete the temporaries of ``directory/name`` whose writer is gone (no one holds them)."""
    pattern = re.compile(re.escape(f'.{name}.') + r'[0-9a-f]{8}\.tmp\Z')
    try:
        entries = os.listdir(directory)
    except OSError:
        return
    for entry in entries:
        if pattern.match(entry):
            _remove_if_abandoned(os.path.join(directory, entry))


def _remove_if_abandoned(temporary):
    # O_NOFOLLOW and O_NONBLOCK: a link or a FIFO under such a name is no
    # temporary of ours, and must neither be followed nor block the save.
    try:
        descriptor = os.open(temporary, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return
    try:
        if stat.S_ISREG(os.fstat(descriptor).st_mode) and take_lock(descriptor, blocking=False) \
                and _names(temporary, descriptor):
            os.unlink(temporary)
    except OSError:
        pass  # gone meanwhile, or not ours to remove: saving goes on regardless
    finally:
        os.close(descriptor)


def new_temporary(directory, name, lock):
    """``(descriptor, path)`` of a new temporary beside the target, locked if ``lock``."""
    while True:
        temporary = os.path.join(directory, f'.{name}.{secrets.token_hex(4)}.tmp')
        # O_EXCL: never reuse another writer's file; mode 0o666 lets the umask
        # give the file the permissions an ordinary new file gets.
        descriptor = os.open(temporary, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o666)
        # Another save's cleanup may have locked and removed the file between
        # its creation and our lock: then start over under a new name.
        locked = lock and take_lock(descriptor, blocking=True)
        if not locked or _names(temporary, descriptor):
            return descriptor, temporary
        os.close(descriptor)


def take_lock(descriptor, blocking):
    """Take an exclusive flock; False if another holds it (or flock is unsupported here)."""
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX if blocking else fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return False
    return True


def _names(path, descriptor):
    """Whether ``path`` still names the file open as ``descriptor``."""
    try:
        named = os.stat(path, follow_symlinks=False)
    except OSError:
        return False
    opened = os.fstat(descriptor)
    return (named.st_dev, named.st_ino) == (opened.st_dev, opened.st_ino)


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
