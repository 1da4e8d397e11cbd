"""ImageDataGenerator: parameters, standardization, fit, flows and flow_from_directory."""

import numpy as np
import pytest

import minidl
from minidl.data import Sequence
from minidl.preprocessing import image
from minidl.preprocessing.image import ImageDataGenerator

RNG = np.random.default_rng(1)
IMAGES = RNG.random((10, 6, 6, 3)).astype('float32') * 255
AUGMENTING = dict(rotation_range=30, width_shift_range=0.2, height_shift_range=2, shear_range=10,
                  zoom_range=0.2, horizontal_flip=True, vertical_flip=True,
                  channel_shift_range=5.0)


def test_keras_defaults_and_implied_options():
    generator = ImageDataGenerator()
    assert (generator.fill_mode, generator.zoom_range, generator.data_format) == \
        ('nearest', [1.0, 1.0], 'channels_last')
    assert generator.dtype == 'float32' and (generator.row_axis, generator.col_axis) == (1, 2)
    assert ImageDataGenerator(zoom_range=0.25).zoom_range == [0.75, 1.25]
    minidl.backend.set_image_data_format('channels_first')
    try:
        assert ImageDataGenerator().channel_axis == 1
    finally:
        minidl.backend.set_image_data_format('channels_last')
    with pytest.warns(UserWarning, match='zca_whitening'):
        zca = ImageDataGenerator(zca_whitening=True, featurewise_std_normalization=True)
    assert zca.featurewise_center and not zca.featurewise_std_normalization
    with pytest.warns(UserWarning, match='samplewise_std_normalization'):
        assert ImageDataGenerator(samplewise_std_normalization=True).samplewise_center


@pytest.mark.parametrize('arguments, message', [
    ({'validation_split': 5}, 'strictly between 0 and 1'),
    ({'zoom_range': [0.5, 1, 2]}, 'zoom_range'),
    ({'fill_mode': 'mirror'}, 'fill_mode'),
    ({'data_format': 'channels_middle'}, 'data_format'),
    ({'brightness_range': (0.5,)}, 'brightness_range'),
])
def test_bad_arguments_are_refused(arguments, message):
    with pytest.raises(ValueError, match=message):
        ImageDataGenerator(**arguments)


def test_random_parameters_follow_the_ranges():
    generator = ImageDataGenerator(rotation_range=10, width_shift_range=2,
                                   height_shift_range=[3], zoom_range=(0.5, 0.6),
                                   brightness_range=(1, 2))
    draws = [generator.get_random_transform((8, 10, 3), seed=seed) for seed in range(40)]
    assert all(-10 <= d['theta'] < 10 for d in draws)
    assert {d['ty'] for d in draws} == {-1, 0, 1}  # an int n: whole pixels in (-n, n)
    assert {d['tx'] for d in draws} == {-3, 3}  # a list: an entry with a random sign
    assert all(0.5 <= d['zx'] < 0.6 and 0.5 <= d['zy'] < 0.6 for d in draws)
    assert all(1 <= d['brightness'] < 2 for d in draws)
    assert not any(d['flip_horizontal'] or d['shear'] for d in draws)
    assert draws[0] == generator.get_random_transform((8, 10, 3), seed=0)
    fractions = ImageDataGenerator(width_shift_range=0.25)
    widths = [fractions.get_random_transform((8, 10, 3), seed=s)['ty'] for s in range(40)]
    assert all(-2.5 <= w < 2.5 for w in widths) and len(set(widths)) == 40  # 0.25 of 10 columns


def test_apply_transform_flips_the_right_axes_in_both_formats():
    x = IMAGES[0]
    last = ImageDataGenerator()
    assert np.array_equal(last.apply_transform(x, {'flip_horizontal': True}), x[:, ::-1])
    assert np.array_equal(last.apply_transform(x, {'flip_vertical': True}), x[::-1])
    first = ImageDataGenerator(data_format='channels_first')
    x_first = np.transpose(x, (2, 0, 1))
    assert np.array_equal(first.apply_transform(x_first, {'flip_horizontal': True}),
                          x_first[:, :, ::-1])
    assert np.array_equal(first.apply_transform(x_first, {'theta': 90}),
                          np.rot90(x_first, -1, axes=(1, 2)))
    assert np.array_equal(last.apply_transform(x, {}), x)


def test_standardize_rescales_and_centres_each_sample():
    x = np.array([[[[1.0], [3.0]], [[5.0], [7.0]]]])  # one 2x2 grayscale image
    generator = ImageDataGenerator(rescale=0.5, samplewise_center=True,
                                   preprocessing_function=lambda image: image + 1)
    # (x + 1) * 0.5 = [1, 2, 3, 4], minus its mean 2.5.
    assert generator.standardize(x).ravel().tolist() == [-1.5, -0.5, 0.5, 1.5]
    assert generator.standardize(x[0]).ravel().tolist() == [-1.5, -0.5, 0.5, 1.5]
    assert x.ravel().tolist() == [1, 3, 5, 7]  # the input is left alone
    with pytest.warns(UserWarning, match='samplewise_std_normalization'):
        normalizing = ImageDataGenerator(samplewise_std_normalization=True)
    np.testing.assert_allclose(normalizing.standardize(x).ravel(),
                               (x.ravel() - 4) / (np.std([1, 3, 5, 7]) + 1e-6), rtol=1e-6)


def test_fit_featurewise_statistics_per_channel():
    x = IMAGES.astype('float64')
    with pytest.warns(UserWarning):
        generator = ImageDataGenerator(featurewise_std_normalization=True, dtype='float64')
    generator.fit(x)
    np.testing.assert_allclose(generator.mean.ravel(), x.mean(axis=(0, 1, 2)))
    np.testing.assert_allclose(generator.std.ravel(), x.std(axis=(0, 1, 2)))
    standardized = generator.standardize(x)
    np.testing.assert_allclose(standardized.mean(axis=(0, 1, 2)), 0, atol=1e-9)
    np.testing.assert_allclose(standardized.std(axis=(0, 1, 2)), 1, atol=1e-5)
    unfitted = ImageDataGenerator(featurewise_center=True)
    with pytest.warns(UserWarning, match='not been fitted'):
        unfitted.standardize(x[0])
    with pytest.raises(ValueError, match='4-D'):
        generator.fit(x[0])


def test_zca_whitening_makes_the_fitted_data_uncorrelated():
    x = RNG.random((300, 2, 2, 3)) @ RNG.random((3, 3))  # correlated channels
    with pytest.warns(UserWarning):
        generator = ImageDataGenerator(zca_whitening=True, zca_epsilon=1e-9, dtype='float64')
    generator.fit(x)
    flat = generator.standardize(x).reshape(300, -1)
    np.testing.assert_allclose(flat.T @ flat / 300, np.eye(12), atol=1e-5)


def test_fit_with_augmentation_is_seeded():
    first, second = (ImageDataGenerator(featurewise_center=True, rotation_range=40)
                     for _ in range(2))
    first.fit(IMAGES, augment=True, rounds=2, seed=5)
    second.fit(IMAGES, augment=True, rounds=2, seed=5)
    assert np.array_equal(first.mean, second.mean)
    assert not np.allclose(first.mean.ravel(), IMAGES.mean(axis=(0, 1, 2)))


def test_flow_yields_aligned_batches_and_keras_shapes():
    flow = ImageDataGenerator().flow(IMAGES, np.arange(10), batch_size=4, shuffle=False)
    assert isinstance(flow, Sequence) and len(flow) == 3
    x, y = flow[0]
    assert np.array_equal(x, IMAGES[:4]) and y.tolist() == [0, 1, 2, 3]
    assert flow[2][1].tolist() == [8, 9] and flow[-1][1].tolist() == [8, 9]
    with pytest.raises(ValueError, match='batch 3'):
        flow[3]
    x, y, weight = ImageDataGenerator().flow(IMAGES, np.arange(10), sample_weight=np.arange(10),
                                             batch_size=3, shuffle=False)[1]
    assert y.tolist() == [3, 4, 5] and weight.tolist() == [3, 4, 5]
    only_x = ImageDataGenerator().flow(IMAGES, batch_size=3)[0]
    assert isinstance(only_x, np.ndarray) and only_x.shape == (3, 6, 6, 3)
    extra = np.arange(10) * 10
    inputs, y = ImageDataGenerator().flow((IMAGES, [extra, extra + 1]), np.arange(10),
                                          batch_size=2, shuffle=False)[1]
    assert len(inputs) == 3 and inputs[1].tolist() == [20, 30] and inputs[2].tolist() == [21, 31]


@pytest.mark.parametrize('x, y, message', [
    ((IMAGES, np.arange(11)), np.arange(10), 'All of the arrays in x'),
    (IMAGES, np.arange(11), r'`x` \(images tensor\) and `y` \(labels\)'),
    (np.arange(10), None, '4-D'),
])
def test_flow_refuses_mismatched_data(x, y, message):
    with pytest.raises(ValueError, match=message):
        ImageDataGenerator().flow(x, y)


def test_next_runs_through_epochs_and_reshuffles():
    flow = ImageDataGenerator().flow(IMAGES[:5], np.arange(5), batch_size=2, seed=0)
    epoch = [next(flow)[1].tolist() for _ in range(3)]
    assert [len(labels) for labels in epoch] == [2, 2, 1]
    assert sorted(sum(epoch, [])) == [0, 1, 2, 3, 4]
    following = [next(flow)[1].tolist() for _ in range(3)]
    assert sorted(sum(following, [])) == [0, 1, 2, 3, 4] and following != epoch
    assert iter(flow) is flow


def test_same_seed_same_batches_different_seed_different_batches():
    generator = ImageDataGenerator(**AUGMENTING)

    def batches(seed):
        flow = generator.flow(IMAGES, np.arange(10), batch_size=4, seed=seed)
        return [flow[i] for i in range(len(flow))] + [next(flow) for _ in range(4)]
    first, again, other = batches(3), batches(3), batches(4)
    for (x1, y1), (x2, y2) in zip(first, again):
        assert np.array_equal(x1, x2) and np.array_equal(y1, y2)
    assert not np.array_equal(first[0][0], other[0][0])
    assert not np.array_equal(first[0][0], IMAGES[first[0][1]])  # it did augment


def test_a_batch_does_not_depend_on_the_order_batches_are_asked_for():
    generator = ImageDataGenerator(**AUGMENTING)
    forwards = generator.flow(IMAGES, np.arange(10), batch_size=4, seed=9)
    backwards = generator.flow(IMAGES, np.arange(10), batch_size=4, seed=9)
    later = backwards[2], backwards[1], backwards[0]
    for index in range(3):
        assert np.array_equal(forwards[index][0], later[2 - index][0])
    before = forwards[0]
    forwards.on_epoch_end()
    assert not np.array_equal(forwards[0][0], before[0])


def test_without_a_seed_set_seed_makes_flows_repeatable():
    generator = ImageDataGenerator(**AUGMENTING)
    minidl.set_seed(21)
    first = generator.flow(IMAGES, batch_size=5)[0]
    minidl.set_seed(21)
    assert np.array_equal(generator.flow(IMAGES, batch_size=5)[0], first)


def test_validation_split_subsets_of_arrays():
    generator = ImageDataGenerator(validation_split=0.2)
    labels = np.arange(10) % 2
    validation = generator.flow(IMAGES, labels, subset='validation', shuffle=False)
    training = generator.flow(IMAGES, labels, subset='training', shuffle=False)
    assert np.array_equal(validation[0][0], IMAGES[:2])
    assert np.array_equal(training[0][0], IMAGES[2:])
    with pytest.raises(ValueError, match='different classes'):
        generator.flow(IMAGES, np.arange(10), subset='training')
    with pytest.raises(ValueError, match='subset'):
        generator.flow(IMAGES, labels, subset='test')


def test_save_to_dir_writes_each_image(tmp_path):
    pytest.importorskip('PIL')
    flow = ImageDataGenerator().flow(IMAGES, batch_size=4, shuffle=False, save_to_dir=tmp_path,
                                     save_prefix='aug', save_format='png')
    flow[1]
    names = sorted(path.name for path in tmp_path.iterdir())
    assert len(names) == 4 and all(name.startswith('aug_') for name in names)
    assert sorted(int(name.split('_')[1]) for name in names) == [4, 5, 6, 7]


def test_model_fit_and_fit_generator_take_a_flow():
    model = minidl.models.Sequential([minidl.layers.Flatten(input_shape=(6, 6, 3)),
                                      minidl.layers.Dense(2, activation='softmax')])
    model.compile('sgd', 'sparse_categorical_crossentropy')
    flow = ImageDataGenerator(rescale=1 / 255, horizontal_flip=True).flow(
        IMAGES, np.arange(10) % 2, batch_size=4, seed=0)
    assert len(model.fit(flow, epochs=2, verbose=0).history['loss']) == 2
    history = model.fit_generator(flow, steps_per_epoch=2, epochs=1, verbose=0)
    assert len(history.history['loss']) == 1


@pytest.fixture
def class_folders(tmp_path):
    """dogs/ (two images, one in a subfolder) and cats/ (one image), plus a file to ignore."""
    pil_image = pytest.importorskip('PIL.Image')
    pictures = {'dogs/b.png': 10, 'dogs/inner/a.png': 20, 'cats/c.png': 30}
    for name, value in pictures.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        pixels = np.full((4, 5, 3), value, dtype=np.uint8)
        pixels[0, 0] = [value + 1, value + 2, value + 3]
        pil_image.fromarray(pixels).save(path)
    (tmp_path / 'dogs' / 'notes.txt').write_text('not an image')
    return tmp_path


def test_flow_from_directory_finds_sorted_classes_and_files(class_folders, capsys):
    flow = ImageDataGenerator().flow_from_directory(class_folders, target_size=(4, 5),
                                                    batch_size=2, shuffle=False)
    assert 'Found 3 images belonging to 2 classes.' in capsys.readouterr().out
    assert flow.class_indices == {'cats': 0, 'dogs': 1}
    assert flow.filenames == ['cats/c.png', 'dogs/b.png', 'dogs/inner/a.png']
    assert flow.classes.tolist() == [0, 1, 1] and flow.samples == 3 and len(flow) == 2
    x, y = flow[0]
    assert x.shape == (2, 4, 5, 3) and x.dtype == np.float32
    assert x[0, 0, 0].tolist() == [31, 32, 33] and x[1, 1, 1].tolist() == [10, 10, 10]
    assert y.tolist() == [[1, 0], [0, 1]]


@pytest.mark.parametrize('class_mode, expected', [
    ('sparse', [0, 1, 1]), ('binary', [0.0, 1.0, 1.0]), (None, None),
])
def test_flow_from_directory_class_modes(class_folders, class_mode, expected):
    flow = ImageDataGenerator().flow_from_directory(
        class_folders, target_size=(2, 3), color_mode='grayscale', class_mode=class_mode,
        batch_size=3, shuffle=False)
    batch = flow[0]
    if expected is None:
        assert isinstance(batch, np.ndarray) and batch.shape == (3, 2, 3, 1)
    else:
        assert batch[1].tolist() == expected


def test_flow_from_directory_options(class_folders):
    generator = ImageDataGenerator(data_format='channels_first', validation_split=0.5)
    x, y = generator.flow_from_directory(class_folders, target_size=(4, 5), color_mode='rgba',
                                         class_mode='input', shuffle=False)[0]
    assert x.shape == (3, 4, 4, 5) and np.array_equal(x, y) and x is not y
    only_dogs = generator.flow_from_directory(class_folders, classes=['dogs'])
    assert only_dogs.filenames == ['dogs/b.png', 'dogs/inner/a.png']
    # Half of each class's files: the first half is the validation subset.
    validation = generator.flow_from_directory(class_folders, subset='validation')
    training = generator.flow_from_directory(class_folders, subset='training')
    assert validation.filenames == ['dogs/b.png']
    assert training.filenames == ['cats/c.png', 'dogs/inner/a.png']
    with pytest.raises(ValueError, match='color_mode'):
        generator.flow_from_directory(class_folders, color_mode='cmyk')
    with pytest.raises(ValueError, match='class_mode'):
        generator.flow_from_directory(class_folders, class_mode='output')


def test_directory_flows_with_the_same_seed_agree(class_folders):
    generator = ImageDataGenerator(**AUGMENTING)
    flows = [generator.flow_from_directory(class_folders, target_size=(4, 5), batch_size=2,
                                           class_mode=None, seed=2) for _ in range(2)]
    for _ in range(3):
        assert np.array_equal(next(flows[0]), next(flows[1]))


@pytest.mark.parametrize('content', [b'', b'just some text'], ids=['empty', 'text'])
def test_a_file_named_png_that_is_no_image_is_named_in_the_error(class_folders, content):
    bad = class_folders / 'cats' / 'bad.png'
    bad.write_bytes(content)
    with pytest.raises(ValueError, match=rf'{bad} is not an image Pillow can read'):
        image.load_img(bad)
    flow = ImageDataGenerator().flow_from_directory(class_folders, target_size=(4, 5),
                                                    batch_size=4, shuffle=False)
    with pytest.raises(ValueError, match=r'bad\.png is not an image'):
        flow[0]
    assert bad.read_bytes() == content  # nothing changed
