"""Keras 2's VGG16 and VGG19 (keras.applications): layers, parameter counts, weights argument."""

import h5py
import numpy as np
import pytest

import minidl
from minidl import applications
from minidl import backend as K
from minidl.applications import vgg16, vgg19


def conv_params(channels_in, filters):
    return 3 * 3 * channels_in * filters + filters


def dense_params(inputs, units):
    return inputs * units + units


def vgg_params(convolutions_per_block, top):
    """Parameters of a VGG worked out by hand: 3x3 convolutions, then the 224x224 top."""
    total, channels = 0, 3
    for filters, count in zip((64, 128, 256, 512, 512), convolutions_per_block):
        for _ in range(count):
            total += conv_params(channels, filters)
            channels = filters
    if top:  # five 2x2 poolings take 224 to 7: 7 * 7 * 512 = 25,088 features
        total += dense_params(7 * 7 * 512, 4096) + dense_params(4096, 4096)
        total += dense_params(4096, 1000)
    return total


def test_parameter_counts_are_keras_2s():
    assert vgg_params((2, 2, 3, 3, 3), top=True) == 138_357_544
    assert vgg_params((2, 2, 4, 4, 4), top=True) == 143_667_240
    minidl.set_seed(0)
    assert vgg16.VGG16(weights=None).count_params() == 138_357_544
    assert vgg19.VGG19(weights=None).count_params() == 143_667_240
    assert vgg16.VGG16(weights=None, include_top=False).count_params() == \
        vgg_params((2, 2, 3, 3, 3), top=False) == 14_714_688
    assert applications.VGG19(weights=None, include_top=False).count_params() == \
        vgg_params((2, 2, 4, 4, 4), top=False) == 20_024_384


def test_layer_names_and_shapes_without_the_top():
    minidl.set_seed(0)
    model = vgg19.VGG19(weights=None, include_top=False, input_shape=(64, 48, 3))
    names = [layer.name for layer in model.layers[1:]]
    want = []
    for block, count in enumerate((2, 2, 4, 4, 4), 1):
        want += [f'block{block}_conv{i}' for i in range(1, count + 1)] + [f'block{block}_pool']
    assert names == want and model.name == 'vgg19'
    assert model.output_shape == (None, 2, 1, 512)
    assert model.predict(np.zeros((1, 64, 48, 3))).shape == (1, 2, 1, 512)
    assert vgg16.VGG16(weights=None, include_top=False).output_shape == (None, None, None, 512)
    for pooling in ('avg', 'max'):
        pooled = vgg16.VGG16(weights=None, include_top=False, pooling=pooling,
                             input_shape=(32, 32, 3))
        assert pooled.output_shape == (None, 512)
    top = vgg16.VGG16(weights=None, input_shape=(32, 32, 3), classes=10)
    assert [layer.name for layer in top.layers[-4:]] == ['flatten', 'fc1', 'fc2', 'predictions']
    assert top.output_shape == (None, 10)


def test_arguments_are_checked():
    with pytest.raises(ValueError, match='at least 32x32'):
        vgg16.VGG16(weights=None, include_top=False, input_shape=(16, 16, 3))
    with pytest.raises(ValueError, match='include_top=True the input size must be known'):
        vgg16.VGG16(weights=None, input_shape=(None, None, 3))
    with pytest.raises(ValueError, match='pooling'):
        vgg16.VGG16(weights=None, include_top=False, pooling='sum')
    with pytest.raises(ValueError, match='classes must be 1000'):
        vgg16.VGG16(classes=10)
    with pytest.raises(ValueError, match='neither None'):
        vgg16.VGG16(weights='no/such/file.h5')


def test_imagenet_weights_say_how_to_pass_a_local_file(tmp_path, monkeypatch):
    monkeypatch.setenv('HOME', str(tmp_path))  # no Keras cache
    with pytest.raises(ValueError) as error:
        vgg19.VGG19(include_top=False)
    message = str(error.value)
    assert 'vgg19_weights_tf_dim_ordering_tf_kernels_notop.h5' in message
    assert 'downloads nothing' in message
    assert "weights='/path/to/vgg19_weights_tf_dim_ordering_tf_kernels_notop.h5'" in message


def write_keras_weights(path, model):
    """A weights file as Keras 2's save_weights writes it (its own layer and weight names)."""
    rng = np.random.default_rng(0)
    values = {}
    with h5py.File(path, 'w') as file:
        file.attrs['layer_names'] = [b'input_1'] + [layer.name.encode()
                                                    for layer in model.layers[1:]]
        file.attrs['backend'] = b'tensorflow'
        file.attrs['keras_version'] = b'2.2.4'
        file.create_group('input_1').attrs['weight_names'] = []
        for layer in model.layers[1:]:
            group = file.create_group(layer.name)
            names = []
            for kind, weight in zip(('kernel', 'bias'), layer.get_weights()):
                name = f'{layer.name}/{kind}:0'
                values[name] = rng.standard_normal(weight.shape).astype('float32')
                group.create_dataset(name, data=values[name])
                names.append(name.encode())
            group.attrs['weight_names'] = names
    return values


def test_a_keras_written_weights_file_loads(tmp_path, monkeypatch):
    minidl.set_seed(0)
    shape = (32, 32, 3)
    path = tmp_path / 'vgg16_weights_tf_dim_ordering_tf_kernels_notop.h5'
    values = write_keras_weights(path, vgg16.VGG16(weights=None, include_top=False,
                                                   input_shape=shape))
    model = vgg16.VGG16(weights=str(path), include_top=False, input_shape=shape)
    np.testing.assert_array_equal(model.get_layer('block5_conv3').get_weights()[0],
                                  values['block5_conv3/kernel:0'])
    # Where Keras 2 caches it, weights='imagenet' finds it.
    monkeypatch.setenv('HOME', str(tmp_path))
    (tmp_path / '.keras' / 'models').mkdir(parents=True)
    path.rename(tmp_path / '.keras' / 'models' / path.name)
    cached = vgg16.VGG16(include_top=False, input_shape=shape)
    np.testing.assert_array_equal(cached.get_layer('block1_conv1').get_weights()[1],
                                  values['block1_conv1/bias:0'])


def test_preprocess_input_is_caffes():
    image = np.arange(2 * 3 * 3, dtype='float32').reshape(1, 2, 3, 3) * 10
    out = vgg16.preprocess_input(image.copy())
    np.testing.assert_allclose(out[..., 0], image[..., 2] - 103.939, rtol=1e-6)
    np.testing.assert_allclose(out[..., 2], image[..., 0] - 123.68, rtol=1e-6)
    assert vgg19.preprocess_input is vgg16.preprocess_input
    symbolic = K.function([x := K.placeholder((None, 2, 3, 3))], [vgg16.preprocess_input(x)])
    np.testing.assert_allclose(symbolic([image])[0], out, rtol=1e-6)
    integers = applications.imagenet_utils.preprocess_input(np.full((1, 1, 1, 3), 255, 'uint8'),
                                                            mode='tf')
    np.testing.assert_array_equal(integers, np.ones((1, 1, 1, 3), 'float32'))
