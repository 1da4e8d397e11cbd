"""Keras 2.2.4's examples that follow gradients with respect to inputs, as written for Keras.

neural_style_transfer (VGG19 on ``K.concatenate`` of two fixed images and a
placeholder, L-BFGS over the image's pixels), conv_filter_visualization and
deep_dream (gradient ascent on VGG16's input), and mnist_swwae (an
autoencoder that unpools through the gradients of its max poolings).
Imports changed, images small, VGG built with ``weights=None`` (ImageNet's
files cannot be downloaded here), iterations cut. Each check is what the
example is for: the loss it minimizes falls, the one it ascends rises, the
autoencoder learns.
"""

import numpy as np
import pytest

import minidl
from minidl import backend as K


@pytest.fixture(autouse=True)
def fresh_session():
    yield
    K.set_image_data_format('channels_last')
    K.clear_session()


def write_image(path, seed, size=(40, 32)):
    from minidl.preprocessing.image import array_to_img
    rng = np.random.default_rng(seed)
    array_to_img(rng.integers(0, 256, size[::-1] + (3,)).astype('float32')).save(path)
    return str(path)


def test_neural_style_transfer(tmp_path):
    scipy_optimize = pytest.importorskip('scipy.optimize')
    from minidl.applications import vgg19
    from minidl.preprocessing.image import img_to_array, load_img, save_img
    minidl.set_seed(801)
    base_image_path = write_image(tmp_path / 'base.png', 1)
    style_reference_image_path = write_image(tmp_path / 'style.png', 2)
    total_variation_weight, style_weight, content_weight = 1.0, 1.0, 0.025
    width, height = load_img(base_image_path).size
    img_nrows = 32  # 400 in the example
    img_ncols = int(width * img_nrows / height)

    def preprocess_image(image_path):
        img = load_img(image_path, target_size=(img_nrows, img_ncols))
        img = img_to_array(img)
        img = np.expand_dims(img, axis=0)
        return vgg19.preprocess_input(img)

    def deprocess_image(x):
        x = x.reshape((img_nrows, img_ncols, 3))
        x[:, :, 0] += 103.939
        x[:, :, 1] += 116.779
        x[:, :, 2] += 123.68
        x = x[:, :, ::-1]
        return np.clip(x, 0, 255).astype('uint8')

    base_image = K.variable(preprocess_image(base_image_path))
    style_reference_image = K.variable(preprocess_image(style_reference_image_path))
    combination_image = K.placeholder((1, img_nrows, img_ncols, 3))
    input_tensor = K.concatenate([base_image, style_reference_image, combination_image], axis=0)
    model = vgg19.VGG19(input_tensor=input_tensor, weights=None, include_top=False)
    outputs_dict = dict([(layer.name, layer.output) for layer in model.layers])

    def gram_matrix(x):
        assert K.ndim(x) == 3
        features = K.batch_flatten(K.permute_dimensions(x, (2, 0, 1)))
        return K.dot(features, K.transpose(features))

    def style_loss(style, combination):
        S, C = gram_matrix(style), gram_matrix(combination)
        channels, size = 3, img_nrows * img_ncols
        return K.sum(K.square(S - C)) / (4. * (channels ** 2) * (size ** 2))

    def content_loss(base, combination):
        return K.sum(K.square(combination - base))

    def total_variation_loss(x):
        assert K.ndim(x) == 4
        a = K.square(x[:, :img_nrows - 1, :img_ncols - 1, :] - x[:, 1:, :img_ncols - 1, :])
        b = K.square(x[:, :img_nrows - 1, :img_ncols - 1, :] - x[:, :img_nrows - 1, 1:, :])
        return K.sum(K.pow(a + b, 1.25))

    loss = K.variable(0.)
    layer_features = outputs_dict['block5_conv2']
    loss += content_weight * content_loss(layer_features[0, :, :, :],
                                          layer_features[2, :, :, :])
    feature_layers = ['block1_conv1', 'block2_conv1', 'block3_conv1', 'block4_conv1',
                      'block5_conv1']
    for layer_name in feature_layers:
        layer_features = outputs_dict[layer_name]
        sl = style_loss(layer_features[1, :, :, :], layer_features[2, :, :, :])
        loss += (style_weight / len(feature_layers)) * sl
    loss += total_variation_weight * total_variation_loss(combination_image)
    grads = K.gradients(loss, combination_image)
    outputs = [loss]
    outputs += grads if isinstance(grads, (list, tuple)) else [grads]
    f_outputs = K.function([combination_image], outputs)

    def eval_loss_and_grads(x):
        outs = f_outputs([x.reshape((1, img_nrows, img_ncols, 3))])
        return outs[0], np.array(outs[1:]).flatten().astype('float64')

    x = preprocess_image(base_image_path)
    losses = [float(eval_loss_and_grads(x)[0])]
    for i in range(2):  # 10 iterations of up to 20 evaluations in the example
        x, min_val, info = scipy_optimize.fmin_l_bfgs_b(
            lambda v: eval_loss_and_grads(v)[0].astype('float64'), x.flatten(),
            fprime=lambda v: eval_loss_and_grads(v)[1], maxfun=5)
        save_img(str(tmp_path / f'result_at_iteration_{i}.png'), deprocess_image(x.copy()))
        losses.append(float(min_val))
    # VGG19 without its top: 16 convolutions, 20,024,384 parameters (see tests/minidl).
    assert model.count_params() == 20_024_384
    assert losses[1] < losses[0] and losses[2] < losses[1]
    assert (tmp_path / 'result_at_iteration_1.png').stat().st_size > 0


def test_conv_filter_visualization(tmp_path):
    from minidl.applications import vgg16
    from minidl.preprocessing.image import save_img
    minidl.set_seed(802)
    img_width = img_height = 32  # 128 in the example
    layer_name = 'block3_conv1'

    def deprocess_image(x):
        x -= x.mean()
        x /= (x.std() + K.epsilon())
        x *= 0.1
        x += 0.5
        x = np.clip(x, 0, 1)
        x *= 255
        return np.clip(x, 0, 255).astype('uint8')

    model = vgg16.VGG16(weights=None, include_top=False)
    input_img = model.input
    assert K.int_shape(input_img) == (None, None, None, 3)
    layer_dict = dict([(layer.name, layer) for layer in model.layers[1:]])

    def normalize(x):
        return x / (K.sqrt(K.mean(K.square(x))) + K.epsilon())

    rng = np.random.default_rng(802)
    kept_filters, histories = [], []
    for filter_index in range(3):  # 200 in the example
        layer_output = layer_dict[layer_name].output
        loss = K.mean(layer_output[:, :, :, filter_index])
        grads = K.gradients(loss, input_img)[0]
        grads = normalize(grads)
        iterate = K.function([input_img], [loss, grads])
        step = 1.
        input_img_data = rng.random((1, img_width, img_height, 3))
        input_img_data = (input_img_data - 0.5) * 20 + 128
        history = []
        for i in range(5):  # 20 in the example
            loss_value, grads_value = iterate([input_img_data])
            input_img_data += grads_value * step
            history.append(float(loss_value))
            if loss_value <= 0.:
                break
        histories.append(history)
        if loss_value > 0:
            kept_filters.append((deprocess_image(input_img_data[0]), loss_value))
    assert kept_filters
    save_img(str(tmp_path / 'stitched_filters.png'), kept_filters[0][0])
    # Gradient ascent: the activation of each kept filter rises step by step.
    for history in histories:
        if history[-1] > 0:
            assert all(b > a for a, b in zip(history, history[1:])), history


def test_deep_dream(tmp_path):
    # The example dreams with InceptionV3, which minidl.applications does not have yet:
    # the same loss and calls on VGG16's blocks stand in for its 'mixed' layers.
    ndimage = pytest.importorskip('scipy.ndimage')
    from minidl.applications import vgg16
    from minidl.preprocessing.image import img_to_array, load_img, save_img
    minidl.set_seed(803)
    base_image_path = write_image(tmp_path / 'base.png', 3, size=(48, 48))
    settings = {'features': {'block2_conv2': 0.2, 'block3_conv3': 0.5, 'block4_conv1': 2.}}

    def preprocess_image(image_path):
        img = img_to_array(load_img(image_path))
        return vgg16.preprocess_input(np.expand_dims(img, axis=0))

    K.set_learning_phase(0)
    model = vgg16.VGG16(weights=None, include_top=False)
    dream = model.input
    layer_dict = dict([(layer.name, layer) for layer in model.layers])
    loss = K.variable(0.)
    for layer_name in settings['features']:
        coeff = settings['features'][layer_name]
        x = layer_dict[layer_name].output
        scaling = K.prod(K.cast(K.shape(x), 'float32'))
        loss += coeff * K.sum(K.square(x[:, 2: -2, 2: -2, :])) / scaling
    grads = K.gradients(loss, dream)[0]
    grads /= K.maximum(K.mean(K.abs(grads)), K.epsilon())
    fetch_loss_and_grads = K.function([dream], [loss, grads])

    def resize_img(img, size):
        factors = (1, float(size[0]) / img.shape[1], float(size[1]) / img.shape[2], 1)
        return ndimage.zoom(np.copy(img), factors, order=1)

    def gradient_ascent(x, iterations, step, history):
        for i in range(iterations):
            loss_value, grad_values = fetch_loss_and_grads([x])
            history.append(float(loss_value))
            x += step * grad_values
        return x

    step, num_octave, octave_scale, iterations = 2., 2, 1.4, 4
    img = preprocess_image(base_image_path)
    original_shape = img.shape[1:3]
    successive_shapes = [original_shape] + [
        tuple(int(dim / (octave_scale ** i)) for dim in original_shape)
        for i in range(1, num_octave)]
    successive_shapes = successive_shapes[::-1]
    original_img = np.copy(img)
    shrunk_original_img = resize_img(img, successive_shapes[0])
    histories = []
    for shape in successive_shapes:
        img = resize_img(img, shape)
        histories.append([])
        img = gradient_ascent(img, iterations=iterations, step=step, history=histories[-1])
        upscaled_shrunk_original_img = resize_img(shrunk_original_img, shape)
        img += resize_img(original_img, shape) - upscaled_shrunk_original_img
        shrunk_original_img = resize_img(original_img, shape)
    save_img(str(tmp_path / 'dream.png'), np.clip(img[0] + 128, 0, 255))
    assert img.shape == original_img.shape
    for history in histories:  # each octave's ascent raises the activations
        assert history[-1] > history[0], history


def test_mnist_swwae(mnist_npz):
    from minidl import layers
    from minidl.datasets import mnist
    from minidl.layers import (
        ELU, Activation, BatchNormalization, Conv2D, Input, MaxPooling2D, UpSampling2D)
    from minidl.models import Model
    minidl.set_seed(804)

    def convresblock(x, nfeats=8, ksize=3, nskipped=2, elu=True):
        y0 = Conv2D(nfeats, ksize, padding='same')(x)
        y = y0
        for i in range(nskipped):
            if elu:
                y = ELU()(y)
            else:
                y = BatchNormalization(axis=1)(y)
                y = Activation('relu')(y)
            y = Conv2D(nfeats, 1, padding='same')(y)
        return layers.add([y0, y])

    def getwhere(x):
        y_prepool, y_postpool = x
        return K.gradients(K.sum(y_postpool), y_prepool)

    assert K.backend() != 'tensorflow'  # the example refuses TensorFlow's backend
    K.set_image_data_format('channels_first')
    img_rows, img_cols = 28, 28
    (x_train, _), (x_test, _) = mnist.load_data(mnist_npz)
    x_train = x_train[:256].reshape(-1, 1, img_rows, img_cols).astype('float32') / 255
    x_test = x_test[:64].reshape(-1, 1, img_rows, img_cols).astype('float32') / 255
    pool_size = 2
    nfeats = [4, 8, 8]  # [8, 16, 32, 64, 128] in the example
    pool_sizes = np.array([1, 1, 1]) * pool_size
    ksize, epochs, batch_size = 3, 3, 32
    x_train = np.pad(x_train, [[0, 0], [0, 0], [2, 2], [2, 2]], mode='constant')
    x_test = np.pad(x_test, [[0, 0], [0, 0], [2, 2], [2, 2]], mode='constant')
    nlayers = 3  # 5 in the example
    input_shape = x_train.shape[1:]
    nfeats_all = [input_shape[0]] + nfeats

    img_input = Input(shape=input_shape)
    wheres = [None] * nlayers
    y = img_input
    for i in range(nlayers):
        y_prepool = convresblock(y, nfeats=nfeats_all[i + 1], ksize=ksize)
        y = MaxPooling2D(pool_size=(pool_sizes[i], pool_sizes[i]))(y_prepool)
        wheres[i] = layers.Lambda(getwhere, output_shape=lambda x: x[0])([y_prepool, y])
    for i in range(nlayers):
        ind = nlayers - 1 - i
        y = UpSampling2D(size=(pool_sizes[ind], pool_sizes[ind]))(y)
        y = layers.multiply([y, wheres[ind]])
        y = convresblock(y, nfeats=nfeats_all[ind], ksize=ksize)
    y = Activation('hard_sigmoid')(y)
    model = Model(img_input, y)
    model.compile('adam', 'mse')
    history = model.fit(x_train, x_train, batch_size=batch_size, epochs=epochs,
                        validation_data=(x_test, x_test), verbose=0)
    x_recon = model.predict(x_test[:25])

    # Each convresblock: a ksize x ksize conv (c_in -> f) and two 1x1 convs (f -> f).
    def block(c_in, f):
        return (ksize * ksize * c_in * f + f) + 2 * (f * f + f)
    encoder = block(1, 4) + block(4, 8) + block(8, 8)
    decoder = block(8, 8) + block(8, 4) + block(4, 1)
    assert model.count_params() == encoder + decoder
    assert x_recon.shape == (25, 1, 32, 32)
    losses = history.history['loss']
    assert losses[-1] < losses[0] and history.history['val_loss'][-1] < \
        history.history['val_loss'][0]
    # The unpooling masks are max pooling's switches: one 1 per 2x2 window and channel.
    where = K.function([img_input], [wheres[0]])([x_test[:2]])[0]
    windows = where.reshape(2, 4, 16, 2, 16, 2).sum(axis=(3, 5))
    assert set(np.unique(where)) <= {0.0, 1.0} and (windows >= 1).all()
