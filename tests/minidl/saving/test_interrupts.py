"""Ctrl-C and kill -9 during saves: fit always stops, files stay whole, no debris stays behind."""

import fcntl
import hashlib
import json
import os
import pathlib
import queue
import signal
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

from minidl import callbacks, layers, models
from minidl.compute import set_seed
from minidl import interrupts
from minidl.saving import load_model, weights as weights_module
from tests.minidl.saving.builders import assert_same_bits

ROOT = pathlib.Path(__file__).resolve().parents[3]

# Trains with a checkpoint after every batch; after each Ctrl-C it prints the
# weight digests of the last two updates (recorded before each save starts),
# then waits for a line on stdin and trains on. The last Ctrl-C is not caught.
TRAIN = '''
import hashlib, json, sys
import numpy as np
from minidl import callbacks, layers, models
from minidl.compute import Generator, set_seed

path, trials = sys.argv[1], int(sys.argv[2])
set_seed(0)
model = models.Sequential([layers.Dense(64, input_shape=(32,)), layers.Dense(64),
                           layers.Dense(4)])
model.compile('adam', 'mse')
generator = Generator(0)
x, y = generator.normal((40000, 32)), generator.normal((40000, 4))
digests = {}

def digest(weights):
    return hashlib.sha256(b''.join(np.ascontiguousarray(w).tobytes() for w in weights)).hexdigest()

class Record(callbacks.Callback):
    def on_train_batch_end(self, batch, logs=None):
        digests[model.optimizer.iterations] = digest(model.get_weights())

class Ready(callbacks.Callback):
    def on_train_batch_end(self, batch, logs=None):
        if batch == 0:
            print('ready', flush=True)

for trial in range(trials):
    try:
        model.fit(x, y, batch_size=8, epochs=1000, verbose=0, callbacks=[
            Record(), callbacks.ModelCheckpoint(path, save_freq=1), Ready()])
    except KeyboardInterrupt:
        last = max(digests)
        print(json.dumps({k: digests[k] for k in (last - 1, last) if k in digests}), flush=True)
        digests.clear()
        if trial == trials - 1:
            raise
        sys.stdin.readline()
'''

# Saves one model over and over until killed.
SAVE_FOREVER = '''
import sys
from minidl import layers, models
from minidl.compute import set_seed
set_seed(5)
model = models.Sequential([layers.Dense(384, input_shape=(384,)), layers.Dense(384)])
model.compile('adam', 'mse')
print('saving', flush=True)
while True:
    model.save(sys.argv[1])
'''

# Holds an flock on a file, as a live writer holds its temporary, until told to go.
HOLD = '''
import fcntl, os, sys
descriptor = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o666)
os.write(descriptor, b'half a file')
fcntl.flock(descriptor, fcntl.LOCK_EX)
print('locked', flush=True)
sys.stdin.readline()
'''


def digest(weights):
    return hashlib.sha256(b''.join(np.ascontiguousarray(w).tobytes() for w in weights)).hexdigest()


def start(tmp_path, script, *arguments):
    """A Python child running ``script``, and a queue of its stdout lines."""
    file = tmp_path / 'child.py'
    file.write_text(script)
    child = subprocess.Popen([sys.executable, str(file), *map(str, arguments)], cwd=ROOT,
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
    lines = queue.Queue()
    threading.Thread(target=lambda: [lines.put(line) for line in child.stdout],
                     daemon=True).start()
    return child, lines


def next_line(lines, child, seconds):
    try:
        return lines.get(timeout=seconds)
    except queue.Empty:
        child.kill()
        pytest.fail(f'no answer in {seconds} s; stderr: {child.communicate()[1][-2000:]}')


def small_model(seed):
    set_seed(seed)
    model = models.Sequential([layers.Dense(4, input_shape=(3,)), layers.Dense(2)])
    model.compile('sgd', 'mse')
    return model


# ----- Ctrl-C ------------------------------------------------------------------


def test_ctrl_c_always_ends_fit_promptly_with_the_last_checkpoint_whole(tmp_path):
    trials = 20
    path = tmp_path / 'checkpoint.h5'
    child, lines = start(tmp_path, TRAIN, path, trials)
    try:
        for trial in range(trials):
            assert next_line(lines, child, 60) == 'ready\n'
            # One batch and its save take some 10-30 ms: spread the signals over it.
            time.sleep(trial * 0.0015)
            child.send_signal(signal.SIGINT)
            recent = json.loads(next_line(lines, child, 5))
            assert sorted(os.listdir(tmp_path)) == ['checkpoint.h5', 'child.py']
            saved = load_model(path)
            # The checkpoint is the last save begun before the Ctrl-C (or the
            # one before, if the Ctrl-C came between the update and its save).
            assert str(saved.optimizer.iterations) in recent
            assert digest(saved.get_weights()) == recent[str(saved.optimizer.iterations)]
            if trial < trials - 1:
                child.stdin.write('\n')
                child.stdin.flush()
        child.wait(timeout=5)
        assert child.returncode != 0
        assert child.stderr.read().rstrip().endswith('KeyboardInterrupt')
    finally:
        child.kill()
        child.wait()


def test_a_ctrl_c_swallowed_by_a_finalizer_still_ends_fit_after_its_batch(monkeypatch):
    # h5py's object registry runs Python code whenever an h5py object is
    # freed; a KeyboardInterrupt raised there is printed and dropped.
    swallowed = []
    monkeypatch.setattr(sys, 'unraisablehook', lambda report: swallowed.append(report.exc_type))

    class InterruptedWhenFreed:
        def __del__(self):
            signal.raise_signal(signal.SIGINT)

    class FreeOneAtBatchTwo(callbacks.Callback):
        def on_train_batch_end(self, batch, logs=None):
            ends.append(batch)
            if batch == 2:
                InterruptedWhenFreed()

    ends = []
    model = small_model(0)
    with pytest.raises(KeyboardInterrupt):
        model.fit(np.ones((40, 3)), np.ones((40, 2)), batch_size=4, epochs=3, verbose=0,
                  callbacks=[FreeOneAtBatchTwo()])
    assert swallowed == [KeyboardInterrupt]
    assert ends == [0, 1, 2] and model.optimizer.iterations == 3
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_a_ctrl_c_inside_a_deferred_block_comes_right_after_it():
    done = []
    with pytest.raises(KeyboardInterrupt):
        with interrupts.deferred():
            signal.raise_signal(signal.SIGINT)
            done.append('rest of the block')
    assert done == ['rest of the block']
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


@pytest.mark.parametrize('handler', ['own', signal.SIG_IGN])
def test_a_deferred_ctrl_c_goes_to_the_handler_that_was_in_place(handler):
    calls = []
    installed = (lambda signum, frame: calls.append(signum)) if handler == 'own' else handler
    previous = signal.signal(signal.SIGINT, installed)
    try:
        with interrupts.deferred():
            signal.raise_signal(signal.SIGINT)
            assert calls == []
        assert calls == ([signal.SIGINT] if handler == 'own' else [])
        assert signal.getsignal(signal.SIGINT) is installed
    finally:
        signal.signal(signal.SIGINT, previous)


def test_a_ctrl_c_mid_save_finishes_the_save_then_interrupts(tmp_path, monkeypatch):
    path = tmp_path / 'model.h5'
    model = small_model(0)
    model.save(path)
    model.layers[0].set_weights([w + 1 for w in model.layers[0].get_weights()])
    original = weights_module.write_arrays

    def write_with_a_ctrl_c(group, arrays):
        signal.raise_signal(signal.SIGINT)
        original(group, arrays)
    monkeypatch.setattr(weights_module, 'write_arrays', write_with_a_ctrl_c)
    with pytest.raises(KeyboardInterrupt):
        model.save(path)
    monkeypatch.undo()
    assert os.listdir(tmp_path) == ['model.h5']
    assert_same_bits(load_model(path).get_weights(), model.get_weights())


# ----- abandoned temporaries ------------------------------------------------------


def test_the_temporary_of_a_writer_killed_mid_save_goes_at_the_next_save(tmp_path):
    path = tmp_path / 'model.h5'
    child, lines = start(tmp_path, SAVE_FOREVER, path)
    try:
        assert next_line(lines, child, 60) == 'saving\n'
        deadline = time.monotonic() + 20
        # Kill it while a temporary exists and after one save completed.
        while not (path.exists() and any(n.endswith('.tmp') for n in os.listdir(tmp_path))):
            assert time.monotonic() < deadline and child.poll() is None, child.stderr.read()
        child.send_signal(signal.SIGKILL)
    finally:
        child.kill()
        child.wait()
    stale = [name for name in os.listdir(tmp_path) if name.endswith('.tmp')]
    if not stale:
        pytest.skip('the save completed between the check and the kill')
    assert all(name.startswith('.model.h5.') for name in stale)
    set_seed(5)
    killed_model = models.Sequential([layers.Dense(384, input_shape=(384,)), layers.Dense(384)])
    assert_same_bits(load_model(path).get_weights(), killed_model.get_weights())
    model = small_model(1)
    model.save(path)
    assert sorted(os.listdir(tmp_path)) == ['child.py', 'model.h5']
    assert_same_bits(load_model(path).get_weights(), model.get_weights())


def test_a_temporary_held_by_a_live_writer_is_left_alone(tmp_path):
    path = tmp_path / 'model.h5'
    held = tmp_path / '.model.h5.0123abcd.tmp'
    other_target = tmp_path / '.other.h5.0123abcd.tmp'
    other_target.write_bytes(b'not ours')
    child, lines = start(tmp_path, HOLD, held)
    try:
        assert next_line(lines, child, 30) == 'locked\n'
        model = small_model(0)
        model.save(path)
        assert held.read_bytes() == b'half a file'
        assert_same_bits(load_model(path).get_weights(), model.get_weights())
        child.stdin.write('\n')
        child.stdin.flush()
        child.wait(timeout=10)
    finally:
        child.kill()
        child.wait()
    model.save_weights(path)  # the writer is gone: its temporary is debris now
    assert sorted(os.listdir(tmp_path)) == ['.other.h5.0123abcd.tmp', 'child.py', 'model.h5']
    assert other_target.read_bytes() == b'not ours'


def test_a_save_holds_an_flock_on_its_temporary_until_it_is_renamed(tmp_path, monkeypatch):
    seen = []
    replace = os.replace

    def try_lock_then_replace(source, target):
        descriptor = os.open(source, os.O_RDONLY)
        try:
            with pytest.raises(BlockingIOError):
                fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
            seen.append(os.path.basename(source))
        finally:
            os.close(descriptor)
        replace(source, target)
    monkeypatch.setattr(os, 'replace', try_lock_then_replace)
    small_model(0).save(tmp_path / 'model.h5')
    assert len(seen) == 1 and seen[0].startswith('.model.h5.')


def test_a_save_outside_the_main_thread_leaves_the_handler_alone(tmp_path):
    # Python runs signal handlers in the main thread only, and lets no other
    # thread replace them.
    outcome = []
    model = small_model(0)
    thread = threading.Thread(target=lambda: outcome.append(model.save(tmp_path / 'model.h5')))
    thread.start()
    thread.join()
    assert outcome == [None]
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    assert_same_bits(load_model(tmp_path / 'model.h5').get_weights(), model.get_weights())


def test_saving_works_and_cleans_up_when_hdf5_file_locking_is_forced_on(tmp_path):
    # HDF5_USE_FILE_LOCKING=TRUE makes HDF5 flock the temporary itself,
    # whatever h5py asks; the save's own flock must then wait for HDF5's.
    stale = tmp_path / '.model.h5.89abcdef.tmp'
    stale.write_bytes(b'left by a killed save')
    script = ('import sys\n'
              'from minidl import layers, models\n'
              'model = models.Sequential([layers.Dense(2, input_shape=(3,))])\n'
              'model.save_weights(sys.argv[1])\n'
              'model.save(sys.argv[1])\n')
    result = subprocess.run([sys.executable, '-c', script, str(tmp_path / 'model.h5')], cwd=ROOT,
                            env=dict(os.environ, HDF5_USE_FILE_LOCKING='TRUE'),
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert os.listdir(tmp_path) == ['model.h5']
    assert len(load_model(tmp_path / 'model.h5', compile=False).get_weights()) == 2
