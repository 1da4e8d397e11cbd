"""``get_file``: Keras's download-and-cache function, made safe for shared caches.

Cache layout: a file lives at ``<cache dir>/<cache_subdir>/<fname>``. The
cache dir is the ``cache_dir`` argument, else the ``MINIDL_HOME`` environment
variable, else ``~/.minidl``; if that cannot be created or written, it is
``/tmp/.minidl``, as Keras does with ``~/.keras``.

Integrity: a fetched file is streamed into a temporary file beside its final
name, fsync'ed, checked against the expected hash and only then renamed onto
the final name, so the final name only ever holds a complete file whose hash
was checked (when a hash is given). A cached file whose hash no longer matches
is fetched again. Archives are extracted into a temporary directory and their
top-level entries renamed into place, never outside the cache directory; an
archive whose members add up to more than 8 GiB, or to more than 200 times
its own size (an archive bomb), is refused before anything is written
(``MINIDL_MAX_EXTRACTED_BYTES`` and ``MINIDL_MAX_EXTRACTION_RATIO`` change
the limits).

Locking: processes sharing one cache (the ranks of an ``mpirun`` job on one
host) serialise the check-fetch-verify-rename-extract sequence with an
exclusive ``fcntl.flock`` on ``<file>.lock``, so one of them fetches and the
others find the verified file. The lock file is empty and stays: removing it
would let a process that opened the old one and a process that created a new
one hold "the" lock at once. Without ``fcntl`` (Windows), or on file systems
that refuse ``flock``, there is no lock: the rename still keeps the file
intact, but each process may fetch it.
"""

import contextlib
import hashlib
import http.client
import os
import shutil
import tarfile
import tempfile
import urllib.request
import warnings
import zipfile

from minidl.data.durable import replacing

try:
    import fcntl
except ImportError:
    fcntl = None

# Extraction limits (archive bombs): what the members add up to, and how many
# times the archive they may expand to. The environment variables of the same
# names change them; the ratio is only checked above SMALL_EXTRACTION bytes.
MAX_EXTRACTED_BYTES = 8 << 30
MAX_EXTRACTION_RATIO = 200
SMALL_EXTRACTION = 16 << 20

CHUNK_SIZE = 1 << 20
# Seconds any one network operation may block; a stalled origin would
# otherwise hold the lock, and every process waiting on it, forever.
TIMEOUT_SECONDS = 60
FALLBACK_CACHE = os.path.join('/tmp', '.minidl')
HEX_LENGTHS = {'md5': 32, 'sha256': 64}


def get_file(fname, origin, untar=False, md5_hash=None, file_hash=None,
             cache_subdir='datasets', hash_algorithm='auto', extract=False,
             archive_format='auto', cache_dir=None):
    """Fetch a file from ``origin`` unless it is cached, and return its path.

    As ``keras.utils.get_file``, but quiet (no progress bar) and safe when
    several processes share the cache (see the module docstring).

    Args:
        fname: Plain file name (no directories) to keep the file under.
        origin: URL of the file (``http://``, ``https://`` or ``file://``).
        untar: Deprecated in Keras for ``extract``: the file is ``fname +
            '.tar.gz'``, it is extracted and the extracted ``fname`` is returned.
        md5_hash: Deprecated alias of ``file_hash`` with ``hash_algorithm='md5'``.
        file_hash: Expected hex digest of the file. Without it, a cached file
            is used as it is and a fetched one is not checked.
        cache_subdir: Subdirectory of the cache dir; an absolute path is used
            as it is.
        hash_algorithm: 'md5', 'sha256' or 'auto' (64 hex digits mean sha256).
        extract: Also extract the file (an archive) next to it.
        archive_format: 'auto' (tar, then zip), 'tar', 'zip', a list of these,
            or None to extract nothing.
        cache_dir: Cache dir; defaults to ``$MINIDL_HOME``, else ``~/.minidl``.

    Returns:
        The path of the cached file (of the extracted directory with ``untar``).

    Raises:
        ValueError: For a bad argument, a fetched file whose hash does not
            match ``file_hash``, or an archive that would write outside its
            directory or expand past the extraction limits (then nothing is
            extracted; see :func:`extraction_limits`).
        OSError: If ``origin`` cannot be fetched (the message names it).
        RuntimeError: To extract a tar archive with a Python whose tarfile
            lacks the 'data' filter (before 3.10.12 or 3.11.4).
    """
    if not isinstance(fname, str) or fname in ('', '.', '..') or '/' in fname \
            or os.sep in fname or (os.altsep and os.altsep in fname):
        raise ValueError(f'get_file: fname must be a plain file name, got {fname!r}')
    if md5_hash is not None and file_hash is None:
        file_hash, hash_algorithm = md5_hash, 'md5'
    file_hash, algorithm = _expected_hash(file_hash, hash_algorithm)
    directory = _cache_directory(cache_dir, cache_subdir)
    path = os.path.join(directory, fname + '.tar.gz' if untar else fname)
    with _locked(path + '.lock'):
        fetched = not os.path.exists(path)
        if not fetched and file_hash is not None:
            actual = _file_hash(path, algorithm)
            fetched = actual != file_hash
            if fetched:
                warnings.warn(f'get_file: cached {path} does not match file_hash (expected '
                              f'{algorithm} {file_hash}, got {actual}); fetching it again '
                              f'from {origin}', stacklevel=2)
        if fetched:
            _fetch(origin, path, file_hash, algorithm)
        if untar:
            _extract_archive(path, directory, 'tar', replace=fetched)
            return os.path.join(directory, fname)
        if extract and archive_format is not None:
            _extract_archive(path, directory, archive_format, replace=fetched)
    return path


def cache_path(fname, cache_subdir='datasets', cache_dir=None):
    """Where :func:`get_file` keeps ``fname`` (the same cache directory rules; made if needed)."""
    return os.path.join(_cache_directory(cache_dir, cache_subdir), fname)


def _expected_hash(file_hash, hash_algorithm):
    """``file_hash`` in lower case and the name of its algorithm; (None, None) without one."""
    if hash_algorithm not in ('auto', 'md5', 'sha256'):
        raise ValueError(f"get_file: hash_algorithm must be 'auto', 'md5' or 'sha256', "
                         f"got {hash_algorithm!r}")
    if file_hash is None:
        return None, None
    algorithm = hash_algorithm
    if algorithm == 'auto':
        algorithm = 'sha256' if len(str(file_hash)) == 64 else 'md5'
    if not isinstance(file_hash, str) or len(file_hash) != HEX_LENGTHS[algorithm] \
            or any(c not in '0123456789abcdefABCDEF' for c in file_hash):
        raise ValueError(f'get_file: file_hash must be {HEX_LENGTHS[algorithm]} hex digits '
                         f'for {algorithm}, got {file_hash!r}')
    return file_hash.lower(), algorithm


def _hasher(algorithm):
    # Hashes check integrity here, not authenticity; saying so for md5 lets
    # FIPS-mode Pythons allow it.
    return hashlib.new(algorithm, usedforsecurity=algorithm != 'md5')


def _file_hash(path, algorithm):
    hasher = _hasher(algorithm)
    with open(path, 'rb') as file:
        while chunk := file.read(CHUNK_SIZE):
            hasher.update(chunk)
    return hasher.hexdigest()


def _cache_directory(cache_dir, cache_subdir):
    base = cache_dir or os.environ.get('MINIDL_HOME') or os.path.join('~', '.minidl')
    directory = os.path.join(os.path.expanduser(os.fspath(base)), cache_subdir)
    try:
        os.makedirs(directory, exist_ok=True)
        writable = os.access(directory, os.W_OK | os.X_OK)
    except OSError:
        writable = False
    if writable:
        return directory
    fallback = os.path.join(FALLBACK_CACHE, cache_subdir)
    warnings.warn(f'get_file: cannot write to {directory}; caching in {fallback} instead',
                  stacklevel=3)
    os.makedirs(fallback, exist_ok=True)
    return fallback


@contextlib.contextmanager
def _locked(lock_path):
    if fcntl is None:
        yield
        return
    # Mode 'a' creates the lock file if needed and never truncates another's.
    with open(lock_path, 'a') as lock:
        try:
            fcntl.flock(lock.fileno(), fcntl.LOCK_EX)
        except OSError as error:
            warnings.warn(f'get_file: cannot lock {lock_path} ({error}); processes sharing '
                          f'this cache may each fetch the file', stacklevel=4)
        yield  # closing the file releases the lock


def _fetch(origin, path, file_hash, algorithm):
    """Stream ``origin`` to ``path`` through a checked, fsync'ed temporary file
    (:func:`minidl.data.durable.replacing`)."""
    hasher = _hasher(algorithm) if file_hash is not None else None
    with replacing(path) as file, contextlib.closing(_chunks(origin)) as chunks:
        for chunk in chunks:
            file.write(chunk)
            if hasher is not None:
                hasher.update(chunk)
        if hasher is not None and hasher.hexdigest() != file_hash:
            raise ValueError(f'get_file: {origin} does not match file_hash: expected '
                             f'{algorithm} {file_hash}, got {hasher.hexdigest()}; '
                             f'{path} was not saved')


def _chunks(origin):
    """The bytes at ``origin``, in chunks; a failure names the origin."""
    try:
        with urllib.request.urlopen(origin, timeout=TIMEOUT_SECONDS) as response:
            expected = response.headers.get('Content-Length', '')
            received = 0
            while chunk := response.read(CHUNK_SIZE):
                received += len(chunk)
                yield chunk
            # http.client ends a read early, without error, when the
            # connection drops; the length the origin announced tells.
            if expected.isdigit() and received != int(expected):
                raise ConnectionError(f'received {received} of {expected} bytes')
    except (OSError, ValueError, http.client.HTTPException) as error:
        raise OSError(f'get_file: URL fetch failure on {origin}: {error}') from error


def _open_archive(path, archive_format):
    formats = ['tar', 'zip'] if archive_format == 'auto' else \
        [archive_format] if isinstance(archive_format, str) else list(archive_format)
    if not formats or any(format not in ('tar', 'zip') for format in formats):
        raise ValueError(f"get_file: archive_format must be 'auto', 'tar', 'zip', a list of "
                         f"these or None, got {archive_format!r}")
    for format in formats:
        if format == 'tar' and tarfile.is_tarfile(path):
            if not hasattr(tarfile, 'data_filter'):
                raise RuntimeError(f"get_file: extracting {path} safely needs tarfile's 'data' "
                                   f"filter (Python 3.10.12, 3.11.4 or newer)")
            return tarfile.open(path)
        if format == 'zip' and zipfile.is_zipfile(path):
            return zipfile.ZipFile(path)
    raise ValueError(f'get_file: {path} is not a {" or ".join(formats)} archive')


def _top_level_entries(names, path, directory):
    """The first parts of the member ``names``; ValueError for a member that may escape."""
    root = os.path.realpath(directory)
    tops = set()
    for name in names:
        parts = [part for part in name.replace('\\', '/').split('/') if part not in ('', '.')]
        target = os.path.realpath(os.path.join(root, *parts))
        inside = target == root or target.startswith(root + os.sep)
        if name.startswith(('/', '\\')) or os.path.isabs(name) or '..' in parts or not inside:
            raise ValueError(f"get_file: refusing to extract {path}: member {name!r} is "
                             f"absolute, has a '..' part or leads outside {directory}")
        tops.update(parts[:1])
    return tops


def extraction_limits():
    """``(bytes, ratio)``: MAX_EXTRACTED_BYTES and MAX_EXTRACTION_RATIO, or the environment
    variables of those names (prefixed ``MINIDL_``) where set.

    Raises:
        ValueError: A variable that is not a positive number.
    """
    limits = []
    for name, default, kind in (('MAX_EXTRACTED_BYTES', MAX_EXTRACTED_BYTES, int),
                                ('MAX_EXTRACTION_RATIO', MAX_EXTRACTION_RATIO, float)):
        text = os.environ.get(f'MINIDL_{name}')
        try:
            value = default if text is None else kind(text)
        except ValueError:
            value = 0
        if value <= 0:
            raise ValueError(f'MINIDL_{name} must be a positive number, got {text!r}')
        limits.append(value)
    return tuple(limits)


def _check_extracted_size(archive, path):
    """ValueError, before anything is written, if the members would add up to more than
    the limits (:func:`extraction_limits`) allow.

    The sizes are the ones the archive declares, which are what extraction
    writes: a tar member's size is the length of its data, and zipfile stops
    each member at its declared size.
    """
    if isinstance(archive, tarfile.TarFile):
        total = sum(member.size for member in archive.getmembers() if member.isfile())
    else:
        total = sum(info.file_size for info in archive.infolist())
    max_bytes, max_ratio = extraction_limits()
    packed = max(os.path.getsize(path), 1)
    if total > max_bytes:
        raise ValueError(f'get_file: refusing to extract {path}: its members hold {total:,} '
                         f'bytes, more than the limit of {max_bytes:,} (set '
                         f'MINIDL_MAX_EXTRACTED_BYTES to allow more)')
    if total > SMALL_EXTRACTION and total > max_ratio * packed:
        raise ValueError(f'get_file: refusing to extract {path}: {packed:,} bytes would expand '
                         f'to {total:,}, {total / packed:,.0f} times, more than the limit of '
                         f'{max_ratio:g} (set MINIDL_MAX_EXTRACTION_RATIO to allow more)')


def _extract_archive(path, directory, archive_format, replace):
    """Extract ``path`` into ``directory`` if fetched anew or any top-level entry is missing.

    Each top-level entry is renamed into place whole, so an entry that exists
    was extracted completely; with ``replace`` existing entries are swapped
    for the new ones, else they are kept.
    """
    with _open_archive(path, archive_format) as archive:
        is_tar = isinstance(archive, tarfile.TarFile)
        tops = _top_level_entries(archive.getnames() if is_tar else archive.namelist(), path,
                                  directory)
        _check_extracted_size(archive, path)
        if not replace and all(os.path.lexists(os.path.join(directory, top)) for top in tops):
            return
        staging = tempfile.mkdtemp(prefix=f'.{os.path.basename(path)}.', suffix='.extracting',
                                   dir=directory)
        try:
            new, old = os.path.join(staging, 'new'), os.path.join(staging, 'old')
            os.mkdir(old)
            if is_tar:
                # The 'data' filter refuses links that lead outside and device
                # files; zipfile never creates links.
                try:
                    archive.extractall(new, filter='data')
                except tarfile.FilterError as error:
                    raise ValueError(f'get_file: refusing to extract {path}: {error}') from error
            else:
                archive.extractall(new)
            for top in os.listdir(new):
                target = os.path.join(directory, top)
                if os.path.lexists(target):
                    if not replace:
                        continue
                    os.rename(target, os.path.join(old, top))
                os.rename(os.path.join(new, top), target)
        finally:
            shutil.rmtree(staging)
