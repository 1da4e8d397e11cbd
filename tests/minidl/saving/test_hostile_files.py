"""Files that declare more than they hold, or weights that are not numbers: refused before
anything is allocated or any weight changes, and the file is left as it was.

A crafted file of a few KB can declare a 200000x200000 dataset (chunked storage with no
chunk written) or a config asking for ``Dense(units=2**31)``. Those loads run in a child
process whose address space is capped at 2 GiB, so that an attempt to allocate them fails
there with a MemoryError instead of taking the machine down.
"""

import json
import resource
import subprocess
import sys
import threading
import warnings
from pathlib import Path

import h5py
import numpy as np
import pytest

from minidl import initializers, layers, models
from minidl.layers.weight_budget import weight_budget
from minidl.saving import load_model, load_weights, model_from_json
from tests.minidl.saving.builders import assert_same_bits, fresh

ROOT = Path(__file__).resolve().parents[3]
ADDRESS_SPACE = 2 * 2 ** 30
HUGE = (200000, 200000)  # 149 GiB of float32


def small_model(seed=0):
    """Dense(4) and Dense(2) on 3 inputs, compiled with Adam; one step taken (optimizer state)."""
    fresh(seed)
    model = models.Sequential([layers.Dense(4, activation='relu', input_shape=(3,)),
                               layers.Dense(2)])
    model.compile('adam', 'mse')
    model.train_on_batch(np.arange(6.0).reshape(2, 3), np.ones((2, 2)))
    return model


@pytest.fixture
def saved(tmp_path):
    model = small_model()
    path = tmp_path / 'model.h5'
    model.save(path)
    return path, model


def replace(path, name, **dataset):
    """Put a dataset made with ``create_dataset(name, **dataset)`` in place of ``name``."""
    with h5py.File(path, 'r+') as file:
        del file[name]
        file.create_dataset(name, **dataset)


def declare_huge(path, name):
    """Make ``name`` declare 149 GiB while the file stays small (no chunk is written)."""
    replace(path, name, shape=HUGE, dtype='f4', chunks=(1000, 1000))
    assert path.stat().st_size < 100_000


def outcome(kind, path):
    """What loading ``path`` with ``kind`` does: the error, warnings, and whether weights changed.

    Run in the child process by :func:`in_capped_process`.
    """
    try:
        np.empty(HUGE, 'f4')
        return {'error': 'the address space cap does not stop a 149 GiB allocation'}
    except MemoryError:
        pass
    result = {}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter('always')
        try:
            if kind == 'load_weights':
                model = small_model(seed=1)
                before = model.get_weights()
                try:
                    load_weights(model, path)
                finally:
                    result['unchanged'] = same_bits(before, model.get_weights())
            elif kind == 'model_from_json':
                with h5py.File(path, 'r') as file:
                    model_from_json(file.attrs['model_config'])
            else:
                model = load_model(path)
                result['iterations'] = model.optimizer.iterations
                result['same_weights'] = same_bits(small_model().get_weights(),
                                                   model.get_weights())
        except ValueError as error:
            result['error'] = str(error)
    result['warnings'] = [str(warning.message) for warning in caught]
    return result


def same_bits(first, second):
    return len(first) == len(second) and all(
        a.dtype == b.dtype and a.tobytes() == b.tobytes() for a, b in zip(first, second))


def in_capped_process(kind, path):
    """:func:`outcome` in a child process limited to 2 GiB of address space."""
    def cap():
        hard = resource.getrlimit(resource.RLIMIT_AS)[1]
        soft = ADDRESS_SPACE if hard == resource.RLIM_INFINITY else min(ADDRESS_SPACE, hard)
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))

    script = ('import json, sys; from tests.minidl.saving.test_hostile_files import outcome; '
              'print(json.dumps(outcome(sys.argv[1], sys.argv[2])))')
    run = subprocess.run([sys.executable, '-c', script, kind, str(path)], cwd=ROOT,
                         preexec_fn=cap, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr[-3000:]
    return json.loads(run.stdout.splitlines()[-1])


# ----- declared sizes ---------------------------------------------------------------


@pytest.mark.parametrize('kind', ['load_model', 'load_weights'])
def test_a_huge_declared_kernel_is_refused_before_it_is_read(saved, kind):
    path, _ = saved
    declare_huge(path, 'model_weights/dense_1/dense_1/kernel:0')
    before = path.read_bytes()
    result = in_capped_process(kind, path)
    assert "'dense_1'" in result['error']
    assert 'weight dense_1/kernel:0 has shape (4, 2)' in result['error']
    assert "'/model_weights/dense_1/dense_1/kernel:0' has shape (200000, 200000)" \
        in result['error']
    assert result.get('unchanged', True)
    assert path.read_bytes() == before


def test_a_huge_declared_optimizer_slot_is_not_read_and_the_state_starts_fresh(saved):
    path, _ = saved
    declare_huge(path, 'optimizer_weights/Adam/dense/kernel/v:0')
    before = path.read_bytes()
    result = in_capped_process('load_model', path)
    assert 'error' not in result
    assert len(result['warnings']) == 1
    assert 'Adam/dense/kernel/v:0 has shape (3, 4)' in result['warnings'][0]
    assert 'has shape (200000, 200000)' in result['warnings'][0]
    assert 'fresh optimizer state' in result['warnings'][0]
    # None of the saved state is applied (the file's iteration count is 1), the weights are.
    assert result['iterations'] == 0 and result['same_weights']
    assert path.read_bytes() == before


@pytest.mark.parametrize('kind', ['load_model', 'model_from_json'])
def test_a_config_asking_for_a_24_gib_kernel_is_refused_before_allocating(saved, kind):
    path, _ = saved
    with h5py.File(path, 'r+') as file:
        config = json.loads(file.attrs['model_config'])
        dense, = [layer for layer in config['config']['layers']
                  if layer['config']['name'] == 'dense']
        dense['config']['units'] = 2 ** 31
        file.attrs['model_config'] = json.dumps(config)
    before = path.read_bytes()
    result = in_capped_process(kind, path)
    # 3 * 2**31 float32 numbers: 24 GiB, over the default limit of 16 GiB.
    assert "layer 'dense' (Dense) asks for weights kernel (3, 2147483648) float32" \
        in result['error']
    assert '24.0 GiB' in result['error'] and '16.0 GiB' in result['error']
    assert 'MINIDL_MAX_LOAD_BYTES' in result['error']
    assert path.read_bytes() == before


def weight_bytes(model):
    return sum(array.nbytes for array in model.get_weights())


def test_the_limit_is_the_total_of_the_weights_from_the_argument_or_the_environment(
        saved, monkeypatch):
    path, model = saved
    total = weight_bytes(model)
    assert total == 4 * (3 * 4 + 4 + 4 * 2 + 2)
    assert_same_bits(load_model(path, max_bytes=total).get_weights(), model.get_weights())
    # The last weight made (dense_1's bias, 8 bytes) is the one over the limit.
    with pytest.raises(ValueError, match=r"model\.h5.*layer 'dense_1' \(Dense\) asks for "
                                         r"weights kernel \(4, 2\), bias \(2,\) float32.*"
                                         r"limit of 103 bytes.*trust the file.*"
                                         r"load_model\(\.\.\., max_bytes="):
        load_model(path, max_bytes=total - 1)
    monkeypatch.setenv('MINIDL_MAX_LOAD_BYTES', str(total - 1))
    with pytest.raises(ValueError, match="'dense_1'"):
        load_model(path)
    assert_same_bits(load_model(path, max_bytes=total).get_weights(), model.get_weights())
    monkeypatch.setenv('MINIDL_MAX_LOAD_BYTES', str(total))
    assert_same_bits(load_model(path).get_weights(), model.get_weights())
    assert model_from_json(model.to_json()).count_params() == total // 4
    with pytest.raises(ValueError, match=r"layer 'dense_1'.*description.*model_from_json"):
        model_from_json(model.to_json(), max_bytes=total - 1)


@pytest.mark.parametrize('max_bytes, environment, error, message', [
    (0, None, ValueError, 'max_bytes=0: the limit on the bytes of weights must be positive'),
    (1.5, None, TypeError, 'max_bytes must be a whole number of bytes, got float'),
    (True, None, TypeError, 'max_bytes must be a whole number of bytes, got bool'),
    (None, '16GiB', ValueError, "MINIDL_MAX_LOAD_BYTES='16GiB' is not a whole number"),
    (None, '-5', ValueError, "MINIDL_MAX_LOAD_BYTES='-5': the limit .* must be positive"),
], ids=['zero', 'float', 'bool', 'units-in-the-variable', 'negative-variable'])
def test_a_bad_limit_is_refused_naming_it(saved, monkeypatch, max_bytes, environment, error,
                                          message):
    path, _ = saved
    if environment is not None:
        monkeypatch.setenv('MINIDL_MAX_LOAD_BYTES', environment)
    with pytest.raises(error, match=message):
        load_model(path, max_bytes=max_bytes)


def test_loading_draws_no_initial_values(saved, monkeypatch):
    path, model = saved

    def refuse(*args):
        raise AssertionError('an initial value was drawn')

    monkeypatch.setattr(initializers.VarianceScaling, 'sample', refuse)  # the kernels' glorot
    with pytest.raises(AssertionError, match='drawn'):
        model_from_json(model.to_json())  # a new model does draw them
    assert_same_bits(load_model(path).get_weights(), model.get_weights())


# ----- values that are not weights: all or nothing --------------------------------------

KERNEL = 'model_weights/dense_1/dense_1/kernel:0'  # the second layer's: the first must not change
NOT_NUMBERS = {
    'complex': ({'data': np.ones((4, 2), np.complex64)}, 'complex64 values'),
    'bytes': ({'data': np.full((4, 2), b'1.5')}, 'strings'),
    'text': ({'data': np.full((4, 2), '1.5', object), 'dtype': h5py.string_dtype()}, 'strings'),
    'compound': ({'data': np.zeros((4, 2), [('re', 'f4'), ('im', 'f4')])}, 'compound records'),
    'bool': ({'data': np.ones((4, 2), bool)}, 'bool values'),
    'empty': ({'data': h5py.Empty('f4')}, 'is empty'),
}


def fitted(model):
    """Weights of the same shapes as ``model``'s, none equal to them."""
    return [weight + 1.0 for weight in model.get_weights()]


@pytest.mark.parametrize('case', sorted(NOT_NUMBERS))
def test_a_weight_that_is_not_real_numbers_is_refused_changing_nothing(saved, case):
    path, _ = saved
    dataset, described = NOT_NUMBERS[case]
    replace(path, KERNEL, **dataset)
    before = path.read_bytes()
    model = small_model(seed=1)
    weights = model.get_weights()
    message = (rf"model\.h5: layer #1 'dense_1' of the model was matched with layer 'dense_1' "
               rf"of the file: dataset '/{KERNEL}' {'' if case == 'empty' else 'holds '}"
               rf"{described}")
    with pytest.raises(ValueError, match=message):
        load_weights(model, path)
    assert_same_bits(model.get_weights(), weights)
    with pytest.raises(ValueError, match=message):
        load_model(path)
    assert path.read_bytes() == before


def test_by_name_a_bad_weight_is_refused_or_skipped_with_skip_mismatch(saved):
    path, saved_model = saved
    replace(path, KERNEL, data=np.ones((4, 2), np.complex64))
    model = small_model(seed=1)
    weights = model.get_weights()
    with pytest.raises(ValueError, match=rf"layer 'dense_1': dataset '/{KERNEL}' holds complex"):
        load_weights(model, path, by_name=True)
    assert_same_bits(model.get_weights(), weights)
    with pytest.warns(UserWarning, match="skipping the weights of layer 'dense_1'.*complex"):
        load_weights(model, path, by_name=True, skip_mismatch=True)
    assert_same_bits(model.get_weights(), saved_model.get_weights()[:2] + weights[2:])


def test_integer_weights_are_taken_as_numbers(saved):
    path, _ = saved
    kernel = np.arange(8, dtype=np.int32).reshape(4, 2)
    replace(path, KERNEL, data=kernel)
    model = small_model(seed=1)
    load_weights(model, path)
    assert_same_bits([model.get_weights()[2]], [kernel.astype(np.float32)])


def test_values_kept_in_another_file_are_never_read(saved, tmp_path):
    path, _ = saved
    secret = tmp_path / 'secret.bin'
    secret.write_bytes(np.arange(8, dtype=np.float32).tobytes())
    replace(path, KERNEL, shape=(4, 2), dtype='f4', external=[(str(secret), 0, 32)])
    model = small_model(seed=1)
    weights = model.get_weights()
    with pytest.raises(ValueError, match=rf"'/{KERNEL}' keeps its values in other files"):
        load_weights(model, path)
    assert_same_bits(model.get_weights(), weights)


def test_a_weight_that_cannot_be_read_changes_no_earlier_layer(saved):
    path, saved_model = saved
    replace(path, KERNEL, data=fitted(saved_model)[2], chunks=(4, 2), compression='gzip')
    with h5py.File(path, 'r') as file:
        chunk = file[KERNEL].id.get_chunk_info(0)
    with open(path, 'r+b') as handle:  # damage the compressed chunk
        handle.seek(chunk.byte_offset)
        handle.write(b'\xff' * chunk.size)
    model = small_model(seed=1)
    weights = model.get_weights()
    with pytest.raises(ValueError, match=r'model\.h5') as error:
        load_weights(model, path)
    assert isinstance(error.value.__cause__, OSError)
    assert_same_bits(model.get_weights(), weights)


@pytest.mark.parametrize('name, dataset, problem', [
    ('Adam/dense_1/bias/v:0', {'data': np.full((2,), b'x')}, 'holds strings'),
    ('Adam/iter:0', {'data': np.float64('nan')}, 'cannot convert float NaN to integer'),
], ids=['strings-in-the-last-slot', 'nan-iterations'])
def test_a_bad_optimizer_state_is_not_applied_at_all(saved, name, dataset, problem):
    path, model = saved
    replace(path, f'optimizer_weights/{name}', **dataset)
    before = path.read_bytes()
    with pytest.warns(UserWarning, match=f'{problem}.*fresh optimizer state'):
        loaded = load_model(path)
    state = loaded.optimizer.get_weights()
    assert state[0] == 0 and not any(np.any(slot) for slot in state[1:])
    assert_same_bits(loaded.get_weights(), model.get_weights())
    assert path.read_bytes() == before


def test_the_budget_holds_only_in_the_thread_that_opened_it():
    fresh()
    built = {}

    def build(key):
        layer = layers.Dense(3)
        layer.build((None, 4))
        built[key] = layer.get_weights()[0]

    with weight_budget(10 ** 6, draw=False):
        build('here')
        thread = threading.Thread(target=build, args=('elsewhere',))
        thread.start()
        thread.join()
    assert not np.any(built['here'])
    assert np.all(built['elsewhere'] != 0)  # glorot_uniform values: never exactly 0 here


# ----- arrays made while building, outside add_weight --------------------------------

def test_arrays_a_layer_makes_while_built_count_against_the_limit():
    """A stateful layer's states and the stand-in inputs that infer output shapes are
    sized by the config too: a crafted batch or input size is refused before allocating."""
    from minidl.layers import LSTM, Input, Layer
    from minidl.models import Model, Sequential
    from minidl.saving import model_from_json
    stateful = Sequential([LSTM(8, stateful=True, batch_input_shape=(4, 3, 2))])
    config = json.loads(stateful.to_json())
    config['config']['layers'][0]['config']['batch_input_shape'] = [100_000, 3, 2]
    # The LSTM's weights take 320 bytes; its two states 100,000 x 8 float32 each.
    with pytest.raises(ValueError, match=r"layer 'lstm.*' \(LSTM\) needs a state of shape "
                                         r"\(100000, 8\) float32"):
        model_from_json(json.dumps(config), max_bytes=100_000)
    assert model_from_json(stateful.to_json(), max_bytes=100_000).count_params() == 352
    # A layer of the user's own that infers its output shape by running on a stand-in
    # input (Layer's default): the file, not the user, sizes that stand-in.
    class Doubled(Layer):
        def call(self, inputs):
            return inputs * 2

    inputs = Input((3, 2))
    shaped = Model(inputs, Doubled(name='doubled')(inputs))
    config = json.loads(shaped.to_json())
    for layer in config['config']['layers']:
        if layer['class_name'] == 'InputLayer':
            layer['config']['batch_input_shape'] = [None, 30_000, 30_000]
    with pytest.raises(ValueError, match=r"layer 'doubled' \(Doubled\) needs a stand-in input "
                                         r"of shape \(1, 30000, 30000\)"):
        model_from_json(json.dumps(config), {'Doubled': Doubled}, max_bytes=100_000)
    assert model_from_json(shaped.to_json(), {'Doubled': Doubled}).output_shape == (None, 3, 2)
