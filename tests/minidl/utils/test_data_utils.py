"""get_file: caching, hash checks, atomic fetches, one fetch across processes, safe extraction."""

import hashlib
import http.server
import io
import os
import pathlib
import subprocess
import sys
import tarfile
import threading
import time
import zipfile

import numpy as np
import pytest

from minidl.data import downloads
from minidl.utils import get_file

ROOT = pathlib.Path(__file__).resolve().parents[3]
PAYLOAD = bytes(range(256)) * 1024
SHA256 = hashlib.sha256(PAYLOAD).hexdigest()
MD5 = hashlib.md5(PAYLOAD).hexdigest()


def make_origin(tmp_path, data=PAYLOAD, name='origin.bin'):
    path = tmp_path / 'origin' / name
    path.parent.mkdir(exist_ok=True)
    path.write_bytes(data)
    return path


def leftovers(directory):
    """What get_file left in ``directory`` besides its (harmless, empty) lock files."""
    return sorted(name for name in os.listdir(directory) if not name.endswith('.lock'))


@pytest.mark.parametrize('hashes', [
    {'file_hash': SHA256}, {'file_hash': SHA256.upper(), 'hash_algorithm': 'sha256'},
    {'file_hash': MD5}, {'file_hash': MD5, 'hash_algorithm': 'md5'}, {'md5_hash': MD5}])
def test_a_file_origin_is_cached_under_cache_dir_datasets(tmp_path, hashes):
    origin = make_origin(tmp_path)
    path = get_file('data.bin', origin.as_uri(), cache_dir=tmp_path / 'cache', **hashes)
    assert path == str(tmp_path / 'cache' / 'datasets' / 'data.bin')
    assert pathlib.Path(path).read_bytes() == PAYLOAD


def test_minidl_home_then_the_home_directory_are_the_default_cache(tmp_path, monkeypatch):
    origin = make_origin(tmp_path).as_uri()
    monkeypatch.setenv('MINIDL_HOME', str(tmp_path / 'minidl_home'))
    assert get_file('a.bin', origin, cache_subdir='models') == \
        str(tmp_path / 'minidl_home' / 'models' / 'a.bin')
    monkeypatch.delenv('MINIDL_HOME')
    monkeypatch.setenv('HOME', str(tmp_path / 'home'))
    assert get_file('b.bin', origin) == str(tmp_path / 'home' / '.minidl' / 'datasets' / 'b.bin')
    absolute = tmp_path / 'elsewhere'
    assert get_file('c.bin', origin, cache_subdir=str(absolute)) == str(absolute / 'c.bin')
    assert (absolute / 'c.bin').read_bytes() == PAYLOAD


def test_an_unusable_cache_dir_falls_back_to_the_temporary_one(tmp_path, monkeypatch):
    monkeypatch.setattr(downloads, 'FALLBACK_CACHE', str(tmp_path / 'fallback'))
    (tmp_path / 'not_a_directory').write_bytes(b'')
    with pytest.warns(UserWarning, match='cannot write to .*not_a_directory'):
        path = get_file('a.bin', make_origin(tmp_path).as_uri(),
                        cache_dir=tmp_path / 'not_a_directory')
    assert path == str(tmp_path / 'fallback' / 'datasets' / 'a.bin')


def test_a_cached_file_is_returned_without_reading_the_origin(tmp_path):
    origin = make_origin(tmp_path)
    first = get_file('data.bin', origin.as_uri(), file_hash=SHA256, cache_dir=tmp_path)
    origin.unlink()
    assert get_file('data.bin', origin.as_uri(), file_hash=SHA256, cache_dir=tmp_path) == first
    assert pathlib.Path(first).read_bytes() == PAYLOAD
    # Without a hash an existing file is used as it is, as Keras does.
    make_origin(tmp_path, b'new content')
    assert pathlib.Path(get_file('data.bin', origin.as_uri(), cache_dir=tmp_path)).read_bytes() \
        == PAYLOAD


def test_a_corrupted_cached_file_is_fetched_again_with_a_warning(tmp_path):
    origin = make_origin(tmp_path).as_uri()
    path = pathlib.Path(get_file('data.bin', origin, file_hash=SHA256, cache_dir=tmp_path))
    corrupted = bytearray(PAYLOAD)
    corrupted[1000] ^= 0xFF
    path.write_bytes(corrupted)
    actual = hashlib.sha256(corrupted).hexdigest()
    with pytest.warns(UserWarning, match=f'data.bin does not match .*{SHA256}, got {actual}'):
        assert get_file('data.bin', origin, file_hash=SHA256, cache_dir=tmp_path) == str(path)
    assert path.read_bytes() == PAYLOAD
    assert leftovers(path.parent) == ['data.bin']


def test_an_origin_that_does_not_match_the_hash_leaves_nothing(tmp_path):
    origin = make_origin(tmp_path, b'tampered').as_uri()
    actual = hashlib.sha256(b'tampered').hexdigest()
    with pytest.raises(ValueError, match=f'{origin} does not match file_hash: expected sha256 '
                                         f'{SHA256}, got {actual}; .*data.bin was not saved'):
        get_file('data.bin', origin, file_hash=SHA256, cache_dir=tmp_path / 'cache')
    assert leftovers(tmp_path / 'cache' / 'datasets') == []


def test_a_missing_origin_raises_an_error_naming_it_and_leaves_nothing(tmp_path):
    origin = (tmp_path / 'absent.bin').as_uri()
    with pytest.raises(OSError, match=f'URL fetch failure on {origin}'):
        get_file('data.bin', origin, cache_dir=tmp_path / 'cache')
    assert leftovers(tmp_path / 'cache' / 'datasets') == []


def test_without_fcntl_files_are_still_fetched(tmp_path, monkeypatch):
    monkeypatch.setattr(downloads, 'fcntl', None)
    path = get_file('data.bin', make_origin(tmp_path).as_uri(), md5_hash=MD5, cache_dir=tmp_path)
    assert pathlib.Path(path).read_bytes() == PAYLOAD


@pytest.mark.parametrize('arguments, message', [
    ({'fname': '../x'}, 'plain file name'), ({'fname': 'a/b'}, 'plain file name'),
    ({'fname': '..'}, 'plain file name'), ({'fname': ''}, 'plain file name'),
    ({'file_hash': 'abc'}, '32 hex digits for md5'),
    ({'file_hash': MD5, 'hash_algorithm': 'sha256'}, '64 hex digits for sha256'),
    ({'file_hash': 'z' * 64}, '64 hex digits'),
    ({'hash_algorithm': 'sha1'}, "hash_algorithm must be 'auto', 'md5' or 'sha256'"),
    ({'extract': True, 'archive_format': 'rar'}, "archive_format must be 'auto'"),
    ({'extract': True}, r'is not a tar or zip archive'),
])
def test_bad_arguments_are_refused(tmp_path, arguments, message):
    arguments = {'fname': 'data.bin', 'origin': make_origin(tmp_path).as_uri(),
                 'cache_dir': tmp_path / 'cache', **arguments}
    with pytest.raises(ValueError, match=message):
        get_file(**arguments)
    assert not (tmp_path / 'x').exists() and not (tmp_path / 'cache' / 'x').exists()


class CountingOrigin(http.server.BaseHTTPRequestHandler):
    """Serves PAYLOAD slowly, so that concurrent fetches would overlap, and counts GETs."""

    def do_GET(self):
        with self.server.count_lock:
            self.server.gets += 1
        self.send_response(200)
        self.send_header('Content-Length', str(len(PAYLOAD)))
        self.end_headers()
        half = len(PAYLOAD) // 2
        self.wfile.write(PAYLOAD[:half])
        self.wfile.flush()
        time.sleep(0.3)
        self.wfile.write(PAYLOAD[half:])

    def log_message(self, *args):
        pass  # keeps the test's output clean


@pytest.fixture
def http_origin():
    server = http.server.ThreadingHTTPServer(('127.0.0.1', 0), CountingOrigin)
    server.gets, server.count_lock = 0, threading.Lock()
    thread = threading.Thread(target=server.serve_forever, kwargs={'poll_interval': 0.05},
                              daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()
    thread.join(timeout=5)


# Each worker says it is ready, waits for the go file so that all call
# get_file at once, and prints the path it got.
WORKER = f'''
import os, sys, time
sys.path.insert(0, sys.argv[1])
from minidl.utils import get_file
url, cache, ready, go = sys.argv[2:]
open(ready, 'w').close()
deadline = time.monotonic() + 30
while not os.path.exists(go):
    if time.monotonic() > deadline:
        sys.exit('no go file')
    time.sleep(0.002)
print(get_file('shared.bin', url, file_hash='{SHA256}', cache_dir=cache))
'''


def test_processes_sharing_a_cache_fetch_the_file_once(tmp_path, http_origin):
    url = f'http://127.0.0.1:{http_origin.server_port}/shared.bin'
    cache, go = tmp_path / 'cache', tmp_path / 'go'
    ready = [tmp_path / f'ready{rank}' for rank in range(4)]
    environment = {**os.environ, 'no_proxy': '*', 'NO_PROXY': '*'}
    workers = [subprocess.Popen([sys.executable, '-c', WORKER, str(ROOT), url, str(cache),
                                 str(flag), str(go)], env=environment, text=True,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE)
               for flag in ready]
    try:
        deadline = time.monotonic() + 30
        while not all(flag.exists() for flag in ready):
            assert time.monotonic() < deadline, 'workers did not start'
            assert all(worker.poll() is None for worker in workers), 'a worker died early'
            time.sleep(0.01)
        go.touch()
        outputs = [worker.communicate(timeout=30) for worker in workers]
    finally:
        for worker in workers:
            if worker.poll() is None:
                worker.kill()
                worker.wait()
    expected = cache / 'datasets' / 'shared.bin'
    for worker, (stdout, stderr) in zip(workers, outputs):
        assert worker.returncode == 0, stderr
        assert stdout.strip() == str(expected)
    assert hashlib.sha256(expected.read_bytes()).hexdigest() == SHA256
    assert http_origin.gets == 1
    assert leftovers(expected.parent) == ['shared.bin']


MEMBERS = {'pkg/a.txt': b'alpha', 'pkg/sub/b.txt': b'beta', 'top.txt': b'top'}


def make_tar(path, members, mode='w:gz'):
    with tarfile.open(path, mode) as archive:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    return path


def make_zip(path, members):
    with zipfile.ZipFile(path, 'w', zipfile.ZIP_DEFLATED) as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return path


def sha256_of(path):
    return hashlib.sha256(path.read_bytes()).hexdigest()


def assert_extracted(directory, members=MEMBERS):
    for name, data in members.items():
        assert (directory / name).read_bytes() == data


@pytest.mark.parametrize('mode', ['w:gz', 'w:bz2', 'w:xz'])
def test_untar_extracts_the_archive_and_returns_its_directory(tmp_path, mode):
    archive = make_tar(tmp_path / 'pkg.tar', MEMBERS, mode)
    datasets = tmp_path / 'cache' / 'datasets'
    path = get_file('pkg', archive.as_uri(), untar=True, file_hash=sha256_of(archive),
                    cache_dir=tmp_path / 'cache')
    assert path == str(datasets / 'pkg')
    assert (datasets / 'pkg.tar.gz').read_bytes() == archive.read_bytes()
    assert_extracted(datasets)
    assert leftovers(datasets) == ['pkg', 'pkg.tar.gz', 'top.txt']


@pytest.mark.parametrize('archive_format', ['auto', 'zip', ['tar', 'zip']])
def test_extract_unpacks_a_zip_next_to_it_and_returns_the_zip(tmp_path, archive_format):
    archive = make_zip(tmp_path / 'data.zip', MEMBERS)
    datasets = tmp_path / 'cache' / 'datasets'
    path = get_file('data.zip', archive.as_uri(), extract=True, archive_format=archive_format,
                    cache_dir=tmp_path / 'cache')
    assert path == str(datasets / 'data.zip')
    assert_extracted(datasets)
    assert leftovers(datasets) == ['data.zip', 'pkg', 'top.txt']


def test_extracted_files_are_kept_until_missing_or_the_archive_is_fetched_again(tmp_path):
    archive = make_zip(tmp_path / 'data.zip', MEMBERS)
    datasets = tmp_path / 'cache' / 'datasets'
    arguments = {'fname': 'data.zip', 'origin': archive.as_uri(), 'extract': True,
                 'file_hash': sha256_of(archive), 'cache_dir': tmp_path / 'cache'}
    get_file(**arguments)
    (datasets / 'pkg' / 'a.txt').write_bytes(b'edited')
    get_file(**arguments)
    assert (datasets / 'pkg' / 'a.txt').read_bytes() == b'edited'
    (datasets / 'top.txt').unlink()
    get_file(**arguments)
    assert (datasets / 'top.txt').read_bytes() == b'top'
    assert (datasets / 'pkg' / 'a.txt').read_bytes() == b'edited'
    (datasets / 'data.zip').write_bytes(b'corrupted')
    with pytest.warns(UserWarning, match='data.zip does not match'):
        get_file(**arguments)
    assert_extracted(datasets)
    assert leftovers(datasets) == ['data.zip', 'pkg', 'top.txt']


@pytest.mark.parametrize('make, name', [
    (make_tar, '../evil'), (make_zip, '../evil'), (make_tar, 'pkg/../../evil'),
    (make_zip, 'pkg/../../evil'), (make_zip, 'pkg/../evil'), (make_tar, '/tmp/evil'),
    (make_zip, '/tmp/evil')])
def test_absolute_members_and_members_with_dotdot_are_refused(tmp_path, make, name):
    archive = make(tmp_path / 'archive', {**MEMBERS, name: b'evil'})
    datasets = tmp_path / 'deep' / 'cache' / 'datasets'
    with pytest.raises(ValueError, match=f"refusing to extract .*'{name}' is absolute, has a "
                                         f"'..' part or leads outside"):
        get_file('archive', archive.as_uri(), extract=True, cache_dir=tmp_path / 'deep' / 'cache')
    assert list(tmp_path.rglob('evil')) == []
    assert leftovers(datasets) == ['archive']


@pytest.mark.parametrize('target, refused', [('a.txt', False), ('../../outside', True)])
def test_tar_links_may_point_inside_the_directory_only(tmp_path, target, refused):
    archive = tmp_path / 'links.tar'
    make_tar(archive, MEMBERS, 'w')
    with tarfile.open(archive, 'a') as tar:
        link = tarfile.TarInfo('pkg/link')
        link.type, link.linkname = tarfile.SYMTYPE, target
        tar.addfile(link)
    datasets = tmp_path / 'cache' / 'datasets'
    if refused:
        with pytest.raises(ValueError, match='refusing to extract .*links.tar'):
            get_file('links.tar', archive.as_uri(), extract=True, cache_dir=tmp_path / 'cache')
        assert leftovers(datasets) == ['links.tar']
    else:
        get_file('links.tar', archive.as_uri(), extract=True, cache_dir=tmp_path / 'cache')
        assert (datasets / 'pkg' / 'link').read_bytes() == b'alpha'


def zeros_archive(path, make, size):
    """An archive of one member of ``size`` zero bytes: it packs a thousand times smaller."""
    return make(path, {'zeros.bin': bytes(size)})


@pytest.mark.parametrize('make', [make_zip, lambda path, members: make_tar(path, members,
                                                                           'w:gz')],
                         ids=['zip', 'tar.gz'])
def test_an_archive_bomb_is_refused_before_anything_is_written(tmp_path, make):
    archive = zeros_archive(tmp_path / 'bomb', make, 64 << 20)
    assert archive.stat().st_size < (64 << 20) // 200  # what makes it a bomb
    datasets = tmp_path / 'cache' / 'datasets'
    with pytest.raises(ValueError, match=r'refusing to extract .*bomb: [\d,]+ bytes would '
                                         r'expand to 67,108,864.*MINIDL_MAX_EXTRACTION_RATIO'):
        get_file('bomb', archive.as_uri(), extract=True, cache_dir=tmp_path / 'cache')
    assert leftovers(datasets) == ['bomb']  # the download is kept; nothing is extracted


def test_the_limits_are_set_from_the_environment(tmp_path, monkeypatch):
    archive = zeros_archive(tmp_path / 'bomb.zip', make_zip, 64 << 20)
    arguments = {'fname': 'bomb.zip', 'origin': archive.as_uri(), 'extract': True,
                 'cache_dir': tmp_path / 'cache'}
    monkeypatch.setenv('MINIDL_MAX_EXTRACTION_RATIO', '1e6')
    get_file(**arguments)  # allowed now
    assert (tmp_path / 'cache' / 'datasets' / 'zeros.bin').stat().st_size == 64 << 20
    (tmp_path / 'cache' / 'datasets' / 'zeros.bin').unlink()
    monkeypatch.setenv('MINIDL_MAX_EXTRACTED_BYTES', str(1 << 20))
    with pytest.raises(ValueError, match=r'hold 67,108,864 bytes, more than the limit of '
                                         r'1,048,576 \(set MINIDL_MAX_EXTRACTED_BYTES'):
        get_file(**arguments)
    assert not (tmp_path / 'cache' / 'datasets' / 'zeros.bin').exists()
    monkeypatch.setenv('MINIDL_MAX_EXTRACTED_BYTES', 'lots')
    with pytest.raises(ValueError, match="MINIDL_MAX_EXTRACTED_BYTES must be a positive number"):
        get_file(**arguments)


def test_ordinary_archives_are_far_below_the_limits(tmp_path):
    # Random bytes do not compress: 20 MiB of them pass both limits.
    data = np.random.default_rng(0).bytes(20 << 20)
    archive = make_zip(tmp_path / 'data.zip', {'random.bin': data})
    get_file('data.zip', archive.as_uri(), extract=True, cache_dir=tmp_path / 'cache')
    assert (tmp_path / 'cache' / 'datasets' / 'random.bin').read_bytes() == data
