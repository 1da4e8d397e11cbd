"""The zoo's architectures: parameter counts, keras.applications' arguments and checks,
and that they are ordinary models (summary, fit, save/load_model, nesting)."""

import pathlib

import numpy as np
import pytest

import minidl
import zoo
from minidl.layers import Dense, GlobalAveragePooling2D, Input
from minidl.models import Model, Sequential, load_model
from zoo import preprocessing

README = pathlib.Path(__file__).resolve().parents[2] / 'README.md'


def trainable_count(model):
    return sum(weight.size for weight in model.trainable_weights)


# torchvision's counts (BatchNormalization's moving statistics are not parameters there;
# count_params() adds them, as Keras does).
@pytest.mark.parametrize('build, expected', [
    (lambda: zoo.ResNet18(), 11_689_512),
    (lambda: zoo.ResNet34(), 21_797_672),
    (lambda: zoo.ResNet50(), 25_557_032),
    (lambda: zoo.ResNet101(), 44_549_160),
    (lambda: zoo.ResNet152(), 60_192_808),
    (lambda: zoo.AlexNet(), 61_100_840),
    (lambda: zoo.AlexNet(variant='slides', classes=10), 56_454_730),
    (lambda: zoo.ResNet20(), 272_474),
], ids=['resnet18', 'resnet34', 'resnet50', 'resnet101', 'resnet152', 'alexnet',
        'alexnet_slides', 'resnet20'])
def test_parameter_counts_are_torchvisions(build, expected):
    model = build()
    assert trainable_count(model) == expected
    moving = sum(w.size for w in model.non_trainable_weights)
    assert model.count_params() == expected + moving


def test_resnet20_counts_are_the_readmes():
    # The README gives both: 272,474 trainable, and count_params()'s Keras count with the
    # moving mean and variance of the 784 batch-norm channels.
    model = zoo.ResNet20()
    assert (trainable_count(model), model.count_params()) == (272_474, 272_474 + 2 * 784)
    assert 'ResNet-20: 272,474 trainable parameters' in README.read_text()
    assert '274,042 for ResNet-20' in README.read_text()


def test_cifar_depths_are_six_n_plus_two():
    for depth, constructor in ((32, zoo.ResNet32), (44, zoo.ResNet44), (56, zoo.ResNet56),
                               (110, zoo.ResNet110)):
        model = constructor()
        convolutions = [layer for layer in model.layers if layer.name.endswith('_conv')
                        and '_0_' not in layer.name]  # projection shortcuts are not counted
        assert len(convolutions) + 1 == depth  # + the classifier
    assert model.name == 'resnet110'


def test_tops_and_pooling():
    assert zoo.ResNet20(include_top=False).output_shape == (None, 8, 8, 64)
    assert zoo.ResNet20(include_top=False, pooling='avg').output_shape == (None, 64)
    assert zoo.ResNet20(include_top=False, pooling='max', input_shape=(40, 24, 2)) \
        .output_shape == (None, 64)
    assert zoo.ResNet50(include_top=False, input_shape=(64, 64, 3)).output_shape == \
        (None, 2, 2, 2048)
    assert zoo.AlexNet(include_top=False).output_shape == (None, 6, 6, 256)
    small = zoo.AlexNet(variant='small', classes=52, input_shape=(32, 32, 1))
    assert small.output_shape == (None, 52)
    assert [layer.name for layer in small.layers][-6:] == \
        ['flatten', 'drop6', 'fc6', 'drop7', 'fc7', 'predictions']


def test_classifier_activation_softmax_by_default():
    x = np.random.default_rng(0).standard_normal((3, 32, 32, 3)).astype('float32')
    minidl.set_seed(0)
    probabilities = zoo.ResNet20().predict(x)
    minidl.set_seed(0)
    logits = zoo.ResNet20(classifier_activation=None).predict(x)
    expected = np.exp(logits - logits.max(1, keepdims=True))
    np.testing.assert_allclose(probabilities, expected / expected.sum(1, keepdims=True),
                               rtol=1e-5, atol=1e-7)


def test_input_tensor_builds_on_a_given_graph():
    image = Input((32, 32, 3), name='photo')
    model = zoo.ResNet20(input_tensor=image, include_top=False, pooling='avg')
    assert model.inputs[0] is image and model.input_names == ['photo']
    combined = Model(image, Dense(2)(model.outputs[0]))
    assert combined.output_shape == (None, 2)


@pytest.mark.parametrize('call, message', [
    (lambda: zoo.ResNet20(pooling='mean'), 'pooling'),
    (lambda: zoo.ResNet20(classes=0), 'classes'),
    (lambda: zoo.ResNet20(weights='imagenet'), 'neither a registered name'),
    (lambda: zoo.ResNet20(weights='glyphs', classes=10), 'classes must be 52'),
    (lambda: zoo.ResNet20(weights='glyphs', input_shape=(32, 32, 3)), '1 channel'),
    (lambda: zoo.ResNet20(input_shape=(4, 4, 3)), 'at least 8'),
    (lambda: zoo.ResNet20(input_shape=(32, 32)), 'height, width, channels'),
    (lambda: zoo.AlexNet(input_shape=(200, 200, 3)), 'must be 224x224'),
    (lambda: zoo.AlexNet(variant='tiny'), 'variant'),
    (lambda: zoo.ResNet20(input_tensor=np.zeros((1, 32, 32, 3))), 'input_tensor'),
])
def test_bad_arguments_are_refused_with_the_reason(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_ordinary_model_summary_fit_save_and_nesting(tmp_path):
    minidl.set_seed(0)
    rng = np.random.default_rng(0)
    x = rng.random((8, 32, 32, 3), dtype=np.float32)
    y = rng.integers(0, 10, 8)
    base = zoo.ResNet20(include_top=False)
    base.trainable = False
    model = Sequential([base, GlobalAveragePooling2D(), Dense(10, activation='softmax')])
    lines = []
    model.summary(print_fn=lines.append)
    text = '\n'.join(lines)
    assert 'Trainable params: 650' in text  # only the new head: 64 * 10 + 10
    frozen = [w.copy() for w in base.get_weights()]
    model.compile('adam', 'sparse_categorical_crossentropy', ['accuracy'])
    model.fit(x, y, batch_size=4, epochs=1, verbose=0)
    # Frozen means frozen: the kernels and the batch-norm statistics did not move.
    for before, after in zip(frozen, base.get_weights()):
        np.testing.assert_array_equal(before, after)
    model.save(tmp_path / 'transfer.h5')
    np.testing.assert_array_equal(load_model(tmp_path / 'transfer.h5').predict(x),
                                  model.predict(x))


def test_preprocess_input_modes_by_hand():
    pixel = np.array([[[255, 0, 51]]], dtype=np.uint8)
    torch_mode = zoo.resnet.preprocess_input(pixel)
    np.testing.assert_allclose(torch_mode[0, 0], [(1 - 0.485) / 0.229, -0.456 / 0.224,
                                                  (0.2 - 0.406) / 0.225], rtol=1e-6)
    np.testing.assert_allclose(zoo.resnet_cifar.preprocess_input(pixel)[0, 0], [1, 0, 0.2])
    np.testing.assert_allclose(preprocessing.preprocess_input(pixel, mode='tf')[0, 0],
                               [1, -1, 51 / 127.5 - 1], rtol=1e-6)
    np.testing.assert_allclose(preprocessing.preprocess_input(pixel, mode='caffe')[0, 0],
                               [51 - 103.939, 0 - 116.779, 255 - 123.68], rtol=1e-6)
    assert pixel[0, 0, 0] == 255  # the input is left as it was
    with pytest.raises(ValueError, match='mode'):
        preprocessing.preprocess_input(pixel, mode='bgr')


def test_decode_predictions_names_the_best_classes(tmp_path, monkeypatch):
    scores = np.zeros((2, 52), dtype=np.float32)
    scores[0, [2, 30]] = [0.7, 0.2]
    scores[1, 51] = 1
    decoded = zoo.resnet_cifar.decode_predictions(scores, top=2)
    assert decoded[0] == [('2', 'C', pytest.approx(0.7)), ('30', 'e', pytest.approx(0.2))]
    assert decoded[1][0][:2] == ('51', 'z')
    with pytest.raises(ValueError, match='shape'):
        zoo.resnet_cifar.decode_predictions(scores[:, :10])
    monkeypatch.setenv('MINIDL_HOME', str(tmp_path))
    monkeypatch.setenv('HOME', str(tmp_path))
    with pytest.raises(FileNotFoundError, match='imagenet_class_index.json'):
        zoo.resnet.decode_predictions(np.zeros((1, 1000)))
    (tmp_path / 'models').mkdir()
    index = {str(i): [f'n{i:08d}', f'class{i}'] for i in range(1000)}
    (tmp_path / 'models' / 'imagenet_class_index.json').write_text(__import__('json').dumps(index))
    imagenet = np.zeros((1, 1000))
    imagenet[0, 7] = 1
    assert zoo.resnet.decode_predictions(imagenet, top=1) == [[('n00000007', 'class7', 1.0)]]


def test_alexnet_decodes_the_labels_of_the_weights_it_has(tmp_path, monkeypatch):
    """The registered AlexNet weights are the glyph ones: its decode_predictions names
    52 scores as glyphs without being told, and 1,000 as ImageNet's classes."""
    glyph_scores = np.zeros((1, 52))
    glyph_scores[0, 27] = 1
    assert zoo.alexnet.decode_predictions(glyph_scores, top=1) == [[('27', 'b', 1.0)]]
    monkeypatch.setenv('MINIDL_HOME', str(tmp_path))
    (tmp_path / 'models').mkdir()
    index = {str(i): [f'n{i:08d}', f'class{i}'] for i in range(1000)}
    (tmp_path / 'models' / 'imagenet_class_index.json').write_text(__import__('json').dumps(index))
    imagenet = np.zeros((1, 1000))
    imagenet[0, 3] = 1
    assert zoo.alexnet.decode_predictions(imagenet, top=1) == [[('n00000003', 'class3', 1.0)]]
    with pytest.raises(ValueError, match='labels='):
        zoo.alexnet.decode_predictions(np.zeros((1, 10)))
