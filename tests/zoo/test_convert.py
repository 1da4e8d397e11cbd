"""zoo.convert against PyTorch: torchvision's weights give torchvision's logits in the zoo's models.

The references are benchmarks.torchvision_models (torchvision's architectures
and state-dict keys) with seeded random weights; every batch normalization
also gets random running statistics and affine parameters, so that
inference is not the identity and a mix-up of gamma/beta or mean/variance
shows.

Tolerance (float32): |zoo - torch| <= 1e-5 * max|torch logits| + 1e-5 * |torch|.
Measured largest errors relative to the logits' scale: ResNet-18 at 224x224
5.6e-7 (inference) and 1.6e-6 (training), ResNet-50 at 64x64 1.1e-6,
AlexNet 9.2e-7; moving statistics after a training step 7.7e-7.
"""

import json
import sys

import numpy as np
import pytest

torch = pytest.importorskip('torch')

import minidl  # noqa: E402
import zoo  # noqa: E402
from benchmarks import torchvision_models  # noqa: E402
from zoo.convert import load_torch_weights, read_safetensors, save_safetensors  # noqa: E402

TOLERANCE = 1e-5


def reference(name, seed=0, **kwargs):
    """A torchvision model with seeded random weights and batch-norm statistics."""
    torch.manual_seed(seed)
    model = getattr(torchvision_models, name)(**kwargs)
    generator = torch.Generator().manual_seed(seed + 1)
    with torch.no_grad():
        for module in model.modules():
            if isinstance(module, torch.nn.BatchNorm2d):
                module.weight.uniform_(0.5, 1.5, generator=generator)
                module.bias.normal_(0, 0.1, generator=generator)
                module.running_mean.normal_(0, 0.1, generator=generator)
                module.running_var.uniform_(0.5, 1.5, generator=generator)
    return model


def images(batch, size, seed=0):
    """NCHW float32 images for torch; ``.transpose(0, 2, 3, 1)`` gives minidl's NHWC."""
    return np.random.default_rng(seed).standard_normal((batch, 3, size, size), dtype=np.float32)


def assert_logits_close(got, want):
    scale = float(np.abs(want).max())
    np.testing.assert_allclose(got, want, rtol=TOLERANCE, atol=TOLERANCE * scale)


def torch_logits(model, x):
    with torch.no_grad():
        return model(torch.from_numpy(x)).numpy()


@pytest.fixture(scope='module')
def resnet18_state():
    """ResNet-18's state dict as numpy arrays (tests change copies of it)."""
    return {key: value.numpy() for key, value in reference('resnet18').state_dict().items()}


# ----- logits against torch ---------------------------------------------------------------

@pytest.mark.parametrize('name, size, build', [
    ('resnet18', 224, lambda: zoo.ResNet18(classifier_activation=None)),
    ('resnet50', 64, lambda: zoo.ResNet50(input_shape=(64, 64, 3), classifier_activation=None)),
    ('alexnet', 224, lambda: zoo.AlexNet(classifier_activation=None)),
])
def test_inference_gives_torchvisions_logits(name, size, build):
    torch_model = reference(name).eval()
    model = load_torch_weights(build(), torch_model.state_dict())
    x = images(2, size)
    assert_logits_close(model.predict(x.transpose(0, 2, 3, 1)), torch_logits(torch_model, x))


def test_slides_alexnet_takes_the_four_convolution_state_dict():
    torch_model = reference('alexnet_slides', num_classes=10).eval()
    model = zoo.AlexNet(variant='slides', classes=10, classifier_activation=None)
    load_torch_weights(model, torch_model.state_dict())
    x = images(1, 224)
    assert_logits_close(model.predict(x.transpose(0, 2, 3, 1)), torch_logits(torch_model, x))


def test_training_mode_uses_batch_statistics_and_updates_the_moving_ones_as_torch():
    torch_model = reference('resnet18').train()
    model = load_torch_weights(zoo.ResNet18(classifier_activation=None), torch_model.state_dict())
    x = images(2, 224)
    want = torch_model(torch.from_numpy(x)).detach().numpy()  # also updates running stats
    got = model(minidl.Tensor(x.transpose(0, 2, 3, 1)), training=True).numpy()
    assert_logits_close(got, want)
    # minidl's momentum 0.9 (weight of the old value) is torch's 0.1 (weight of the new one).
    updated = load_torch_weights(zoo.ResNet18(classifier_activation=None),
                                 torch_model.state_dict())
    for layer in model.layers:
        if isinstance(layer, minidl.layers.BatchNormalization):
            for ours, torchs in zip(layer.get_weights()[2:],
                                    updated.get_layer(layer.name).get_weights()[2:]):
                np.testing.assert_allclose(ours, torchs, rtol=TOLERANCE,
                                           atol=TOLERANCE * np.abs(torchs).max())


def test_without_the_top_the_features_are_torchvisions(resnet18_state):
    torch_model = reference('resnet18').eval()
    body = torch.nn.Sequential(*list(torch_model.children())[:-1], torch.nn.Flatten())
    model = zoo.ResNet18(include_top=False, pooling='avg', input_shape=(64, 64, 3))
    load_torch_weights(model, resnet18_state)  # its 'fc' keys are skipped
    x = images(2, 64)
    assert_logits_close(model.predict(x.transpose(0, 2, 3, 1)), torch_logits(body, x))


# ----- file formats -----------------------------------------------------------------------

def test_pth_and_safetensors_files_give_bitwise_the_dicts_weights(tmp_path, resnet18_state):
    torch.save({key: torch.from_numpy(value) for key, value in resnet18_state.items()},
               tmp_path / 'resnet18.pth')
    save_safetensors(resnet18_state, tmp_path / 'resnet18.safetensors')
    loaded = [load_torch_weights(zoo.ResNet18(), source).get_weights()
              for source in (resnet18_state, str(tmp_path / 'resnet18.pth'),
                             tmp_path / 'resnet18.safetensors')]
    assert [w.shape for w in loaded[0]] == [w.shape for w in zoo.ResNet18().get_weights()]
    for weights in loaded[1:]:
        assert all(np.array_equal(a, b) for a, b in zip(loaded[0], weights, strict=True))


def write_by_hand(path, header, data):
    """A safetensors file from a header dict and raw data, without zoo.convert."""
    encoded = json.dumps(header).encode()
    path.write_bytes(len(encoded).to_bytes(8, 'little') + encoded + data)
    return path


def test_reads_a_handmade_file_with_bfloat16_and_float16(tmp_path):
    values = torch.tensor([[1.5, -2.25], [3.0e-3, 65504.0]])
    bf16 = values.to(torch.bfloat16).view(torch.int16).numpy().tobytes()
    f16 = values.numpy().astype('<f2').tobytes()
    path = write_by_hand(tmp_path / 'mixed.safetensors', {
        '__metadata__': {'format': 'pt'},
        'b': {'dtype': 'BF16', 'shape': [2, 2], 'data_offsets': [0, 8]},
        'h': {'dtype': 'F16', 'shape': [2, 2], 'data_offsets': [8, 16]},
    }, bf16 + f16)
    arrays, metadata = read_safetensors(path)
    assert metadata == {'format': 'pt'}
    assert arrays['b'].dtype == np.float32
    np.testing.assert_array_equal(arrays['b'], values.to(torch.bfloat16).float().numpy())
    np.testing.assert_array_equal(arrays['h'], values.numpy().astype(np.float16))


def test_writer_round_trips_every_dtype_and_metadata(tmp_path):
    arrays = {f'{dtype}': np.arange(-3, 3).astype(dtype).reshape(2, 3)
              for dtype in ('<f8', '<f4', '<f2', '<i8', '<i4', '<i2', 'i1', 'u1', '?')}
    arrays['scalar'] = np.array(2.5, np.float32)
    arrays['empty'] = np.zeros((0, 4), np.float32)
    save_safetensors(arrays, tmp_path / 'all.safetensors', metadata={'source': 'test'})
    read, metadata = read_safetensors(tmp_path / 'all.safetensors')
    assert metadata == {'source': 'test'} and list(read) == list(arrays)
    for name, array in arrays.items():
        assert read[name].dtype == array.dtype and read[name].shape == array.shape
        np.testing.assert_array_equal(read[name], array)
    assert [p.name for p in tmp_path.iterdir()] == ['all.safetensors']  # no temporary left


def _raw_header(header):
    """A file holding ``header`` as it is (json.dumps could not write every crafted one)."""
    return len(header).to_bytes(8, 'little') + header


def _valid_data():
    return np.arange(4, dtype='<f4').tobytes()


@pytest.mark.parametrize('damage, problem', [
    (lambda path: path.write_bytes(path.read_bytes()[:-4]), 'beyond the 12 bytes of data'),
    (lambda path: path.write_bytes(path.read_bytes()[:5]), 'too short'),
    (lambda path: path.write_bytes((10 ** 6).to_bytes(8, 'little') + path.read_bytes()[8:]),
     'runs beyond the end of the file'),
    (lambda path: write_by_hand(path, {'w': {'dtype': 'F32', 'shape': [4],
                                             'data_offsets': [4, 20]}}, _valid_data()),
     'beyond the 16 bytes of data'),
    (lambda path: write_by_hand(path, {
        'a': {'dtype': 'F32', 'shape': [3], 'data_offsets': [0, 12]},
        'b': {'dtype': 'F32', 'shape': [1], 'data_offsets': [8, 12]}}, _valid_data()),
     'overlaps'),
    (lambda path: write_by_hand(path, {'w': {'dtype': 'F32', 'shape': [3],
                                             'data_offsets': [0, 16]}}, _valid_data()),
     'needs 12'),
    (lambda path: write_by_hand(path, {'w': {'dtype': 'F32', 'shape': [2],
                                             'data_offsets': [8, 16]}}, _valid_data()),
     'belong to no tensor'),
    (lambda path: write_by_hand(path, {'w': {'dtype': 'C64', 'shape': [2],
                                             'data_offsets': [0, 16]}}, _valid_data()),
     'not supported'),
    (lambda path: path.write_bytes(b'\x04' + bytes(7) + b'[1] '), 'JSON object'),
    (lambda path: write_by_hand(path, {'w': {'dtype': ['F32'], 'shape': [4],
                                             'data_offsets': [0, 16]}}, _valid_data()),
     'not supported'),
    (lambda path: path.write_bytes(_raw_header(b'{"w": ' + b'[' * 100_000 + b']' * 100_000
                                               + b'}')), 'nests too deeply'),
])
def test_a_damaged_safetensors_file_raises_naming_the_file(tmp_path, damage, problem):
    path = tmp_path / 'damaged.safetensors'
    save_safetensors({'w': np.arange(4, dtype=np.float32)}, path)
    damage(path)
    with pytest.raises(ValueError, match=problem) as raised:
        read_safetensors(path)
    assert str(path) in str(raised.value)


# ----- checks before anything changes -------------------------------------------------------

def _unchanged(model, before):
    return all(np.array_equal(a, b) for a, b in zip(model.get_weights(), before, strict=True))


@pytest.mark.parametrize('edit, message', [
    (lambda state: state.pop('layer3.1.bn2.running_var'), r"1 missing key\(s\): "
                                                          r"'layer3.1.bn2.running_var'"),
    (lambda state: state.update({'layer5.0.conv1.weight': np.zeros((1, 1, 1, 1))}),
     r"1 unexpected key\(s\): 'layer5.0.conv1.weight'"),
    (lambda state: state.update({'layer4.1.conv2.weight': np.zeros((512, 512, 1, 1))}),
     r"'layer4.1.conv2.weight' has shape \(512, 512, 1, 1\), layer 'conv5_block2_2_conv' "
     r"needs \(512, 512, 3, 3\)"),
])
def test_a_state_dict_that_does_not_fit_raises_and_loads_nothing(resnet18_state, edit, message):
    state = dict(resnet18_state)
    edit(state)
    model = zoo.ResNet18()
    before = model.get_weights()
    with pytest.raises(ValueError, match=message):
        load_torch_weights(model, state)
    assert _unchanged(model, before)


def test_a_1000_class_state_dict_needs_1000_classes_or_no_top(resnet18_state):
    model = zoo.ResNet18(classes=10)
    before = model.get_weights()
    with pytest.raises(ValueError, match=r"(?s)'fc.weight' has shape \(1000, 512\), layer "
                                         r"'predictions' needs \(10, 512\).*include_top=False"):
        load_torch_weights(model, resnet18_state)
    assert _unchanged(model, before)
    headless = load_torch_weights(zoo.ResNet18(include_top=False), resnet18_state)
    np.testing.assert_array_equal(headless.get_layer('conv1_conv').get_weights()[0],
                                  resnet18_state['conv1.weight'].transpose(2, 3, 1, 0))


def test_other_sources_are_refused_clearly(tmp_path, monkeypatch, resnet18_state):
    with pytest.raises(ValueError, match=r"suffix '\.npz'"):
        load_torch_weights(zoo.ResNet20(), tmp_path / 'weights.npz')
    with pytest.raises(ValueError, match='neither a zoo ResNet'):
        load_torch_weights(minidl.models.Sequential([minidl.layers.Dense(2, input_shape=(3,))]),
                           resnet18_state)
    torch.save({}, tmp_path / 'empty.pth')
    monkeypatch.setitem(sys.modules, 'torch', None)  # as if torch were absent
    with pytest.raises(ImportError, match='needs PyTorch'):
        load_torch_weights(zoo.ResNet18(), tmp_path / 'empty.pth')


# ----- Keras's HDF5 layout needs no converter -----------------------------------------------

def test_keras_weight_files_round_trip_through_the_constructors(tmp_path):
    model = zoo.ResNet20(classes=10)
    rng = np.random.default_rng(0)
    # Random values everywhere (moving variances positive), unlike a fresh model's.
    model.set_weights([rng.uniform(0.5, 1.5, w.shape).astype(w.dtype) if 'variance' in name
                       else rng.standard_normal(w.shape).astype(w.dtype)
                       for name, w in zip([w.name for w in model.weights], model.get_weights())])
    path = tmp_path / 'resnet20.h5'
    model.save_weights(path)
    x = np.random.default_rng(1).standard_normal((4, 32, 32, 3), dtype=np.float32)
    assert not np.array_equal(zoo.ResNet20(classes=10).predict(x), model.predict(x))
    np.testing.assert_array_equal(zoo.ResNet20(classes=10, weights=path).predict(x),
                                  model.predict(x))
    headless = zoo.ResNet20(include_top=False, weights=path)
    assert 'predictions' not in [layer.name for layer in headless.layers]
    for layer in headless.layers:
        for ours, saved in zip(layer.get_weights(), model.get_layer(layer.name).get_weights(),
                               strict=True):
            np.testing.assert_array_equal(ours, saved)
