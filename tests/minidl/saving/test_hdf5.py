"""Keras's attribute encodings: string lists (chunked when large), JSON, bytes or text."""

import h5py
import numpy as np
import pytest

from minidl.saving import hdf5


@pytest.fixture
def attrs(tmp_path):
    with h5py.File(tmp_path / 'a.h5', 'w') as file:
        yield file.attrs


def test_string_lists_round_trip_and_are_bytes_as_keras_writes_them(attrs):
    hdf5.write_strings(attrs, 'names', ['dense', 'dense_1/kernel:0', 'é'])
    assert attrs['names'].dtype.kind == 'S'
    assert hdf5.read_strings(attrs, 'names') == ['dense', 'dense_1/kernel:0', 'é']
    hdf5.write_strings(attrs, 'empty', [])
    assert hdf5.read_strings(attrs, 'empty') == []


def test_large_string_lists_are_split_as_keras_splits_them(attrs):
    names = [f'layer_{i:05d}_' + 'x' * 90 for i in range(2000)]  # about 200 kB
    hdf5.write_strings(attrs, 'layer_names', names)
    assert 'layer_names' not in attrs
    chunks = sorted(name for name in attrs if name.startswith('layer_names'))
    assert chunks == [f'layer_names{i}' for i in range(len(chunks))] and len(chunks) > 1
    assert all(attrs[name].nbytes <= 64512 for name in chunks)
    assert hdf5.read_strings(attrs, 'layer_names') == names


def test_reads_keras_empty_lists_and_text_or_bytes_strings(attrs):
    attrs['weight_names'] = np.asarray([])  # what Keras writes for a layer without weights
    assert hdf5.read_strings(attrs, 'weight_names') == []
    attrs['as_text'] = '{"a": 1}'
    attrs['as_bytes'] = np.bytes_(b'{"a": 2}')
    assert hdf5.read_json(attrs, 'as_text') == {'a': 1}
    assert hdf5.read_json(attrs, 'as_bytes') == {'a': 2}


def test_json_takes_numpy_values_and_refuses_objects(attrs):
    hdf5.write_json(attrs, 'config', {'units': np.int64(3), 'shape': np.array([1, 2]),
                                      'rate': np.float32(0.5)})
    assert hdf5.read_json(attrs, 'config') == {'units': 3, 'shape': [1, 2], 'rate': 0.5}
    with pytest.raises(TypeError, match='cannot store a function'):
        hdf5.write_json(attrs, 'config', {'fn': lambda: 0})


def test_wrong_types_raise_clearly(attrs):
    attrs['number'] = 3
    attrs['numbers'] = np.array([1, 2])
    with pytest.raises(TypeError, match="'number' should be a string"):
        hdf5.read_string(attrs, 'number')
    with pytest.raises(TypeError, match="'numbers' should be a list of strings"):
        hdf5.read_strings(attrs, 'numbers')
    with pytest.raises(KeyError, match="'absent' is missing"):
        hdf5.read_strings(attrs, 'absent')
