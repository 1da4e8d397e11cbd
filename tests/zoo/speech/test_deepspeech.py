"""Deep Speech models: parameter counts, padding invariance, CTC training, saving."""

import numpy as np
import pytest

import minidl
from minidl import backend as K, layers
from minidl.models import Model, load_model
from zoo.speech.deepspeech import DeepSpeech, DeepSpeech2
from zoo.speech.layers import output_lengths

torch = pytest.importorskip('torch')

INPUT_DIM = 12
LENGTHS = np.array([19, 12, 7, 16])
LABELS = np.array([[1, 2, 2, 3], [4, 5, 0, 0], [6, 0, 0, 0], [7, 7, 8, 0]])


def _padded_batch():
    """Features of four utterances padded to 19 frames with exact zero rows."""
    features = np.random.default_rng(0).normal(size=(len(LENGTHS), LENGTHS.max(), INPUT_DIM))
    features[np.arange(LENGTHS.max()) >= LENGTHS[:, None]] = 0
    return features.astype(np.float32)


def _randomize(model, seed=1):
    """Random weights everywhere (batch norm statistics too), so padding cannot hide."""
    rng = np.random.default_rng(seed)
    model.set_weights([rng.uniform(0.5, 1.5, w.shape) if 'variance' in name
                       else rng.normal(0, 0.3, w.shape)
                       for name, w in zip([w.name for w in model.weights], model.get_weights())])


def _torch_ctc(probabilities, labels, input_lengths):
    return torch.nn.functional.ctc_loss(
        torch.log(torch.tensor(probabilities, dtype=torch.float64)).transpose(0, 1),
        torch.tensor(labels), torch.tensor(input_lengths), torch.tensor((labels > 0).sum(1)),
        reduction='none').numpy()


def test_output_lengths_follow_the_strides():
    np.testing.assert_array_equal(output_lengths([1, 2, 7, 8, 161], 2), [1, 1, 4, 4, 81])
    np.testing.assert_array_equal(output_lengths([7, 8], 1), [4, 4])
    np.testing.assert_array_equal(output_lengths([7, 8], 0), [7, 8])
    with pytest.raises(ValueError, match='conv_layers'):
        output_lengths([7], 4)


def test_parameter_counts_by_hand():
    model = DeepSpeech2(input_dim=INPUT_DIM, conv_layers=2, filters=4, units=8, rnn_layers=2)
    conv = 11 * 41 * 1 * 4 + 11 * 21 * 4 * 4  # no bias: batch norm follows
    batch_norms = 4 * 4 + 4 * 4 + 4 * 8  # gamma, beta, moving mean and variance
    gru = lambda inputs, units: 3 * (inputs * units + units * units + 2 * units)  # noqa: E731
    features = 3 * 4  # 12 bins halved twice, 4 filters
    expected = conv + batch_norms + 2 * gru(features, 8) + 2 * gru(8, 8) + 8 * 29 + 29
    assert model.count_params() == expected

    lstm = DeepSpeech2(input_dim=161, conv_layers=3, filters=2, rnn='lstm', rnn_layers=2,
                       units=4, merge_mode='concat', sequence_batch_norm=False, classes=10)
    lstm_count = lambda inputs, units: 4 * (inputs * units + units * units + units)  # noqa: E731
    conv = 11 * 41 * 2 + 11 * 21 * 2 * 2 * 2
    features = 21 * 2  # 161 -> 81 -> 41 -> 21 bins
    expected = conv + 3 * 4 * 2 + 2 * lstm_count(features, 4) + 2 * lstm_count(8, 4) + 8 * 10 + 10
    assert lstm.count_params() == expected

    speech = DeepSpeech(input_dim=INPUT_DIM, context=2, units=8, rnn_units=6)
    expected = 5 * INPUT_DIM * 8 + 8 + 2 * (8 * 8 + 8) + 2 * (8 * 6 + 6 * 6 + 6) + \
        6 * 8 + 8 + 8 * 29 + 29
    assert speech.count_params() == expected


@pytest.mark.parametrize('build', [
    lambda: DeepSpeech(input_dim=INPUT_DIM, context=2, units=8, rnn_units=6),
    lambda: DeepSpeech2(input_dim=INPUT_DIM, conv_layers=2, filters=3, units=6, rnn_layers=2),
    lambda: DeepSpeech2(input_dim=INPUT_DIM, conv_layers=3, filters=3, units=5, rnn_layers=2,
                        rnn='lstm', merge_mode='concat'),
    lambda: DeepSpeech2(input_dim=INPUT_DIM, conv_layers=1, filters=2, units=5, rnn_layers=2,
                        rnn='gru', merge_mode='concat', sequence_batch_norm=False),
], ids=['deepspeech', 'gru-sum', 'lstm-concat', 'gru-concat'])
def test_padding_never_changes_a_sample_output(build):
    model = build()
    _randomize(model)
    features = _padded_batch()
    conv_layers = 0 if model.name == 'deepspeech' else len(
        [layer for layer in model.layers if type(layer).__name__ == 'Conv2D'])
    batch = model.predict(features)
    for index, length in enumerate(LENGTHS):
        alone = model.predict(features[index:index + 1, :length])
        frames = output_lengths(length, conv_layers)
        assert alone.shape[1] == frames
        np.testing.assert_allclose(batch[index, :frames], alone[0], atol=1e-5)


def test_ctc_fit_lowers_the_loss_and_evaluate_equals_torch():
    minidl.set_seed(0)
    model = DeepSpeech2(input_dim=INPUT_DIM, conv_layers=2, filters=3, units=8, rnn_layers=2)
    model.compile('adam', loss='ctc')
    features = _padded_batch()
    history = model.fit(features, LABELS, batch_size=4, epochs=4, verbose=0)
    assert history.history['loss'][-1] < history.history['loss'][0]
    evaluated = model.evaluate(features, LABELS, batch_size=2, verbose=0)
    reference = _torch_ctc(model.predict(features), LABELS, output_lengths(LENGTHS, 2))
    np.testing.assert_allclose(evaluated, reference.mean(), rtol=1e-5)


def test_keras_ctc_batch_cost_convention_trains_and_matches_torch():
    # Keras 2's image_ocr pattern: lengths are inputs, the loss is the Lambda's output,
    # and the blank is the last class (labels 0..classes-2).
    minidl.set_seed(0)
    classes = 10
    features = layers.Input((None, INPUT_DIM))
    labels = layers.Input((4,))
    input_length = layers.Input((1,), dtype='int64')
    label_length = layers.Input((1,), dtype='int64')
    probabilities = layers.Dense(classes, activation='softmax', name='softmax')(features)
    cost = layers.Lambda(lambda args: K.ctc_batch_cost(*args), output_shape=(1,), name='ctc')(
        [labels, probabilities, input_length, label_length])
    model = Model([features, labels, input_length, label_length], cost)
    model.compile('sgd', loss=lambda y_true, y_pred: y_pred)
    keras_labels = np.maximum(LABELS - 1, 0).astype(np.float32)
    label_lengths = (LABELS > 0).sum(1)[:, None]
    inputs = [_padded_batch(), keras_labels, LENGTHS[:, None], label_lengths]
    history = model.fit(inputs, np.zeros(len(LENGTHS)), batch_size=4, epochs=3, verbose=0)
    assert history.history['loss'][-1] < history.history['loss'][0]

    predicted = Model(features, probabilities).predict(inputs[0]).astype(np.float64)
    blank_first = np.concatenate([predicted[..., -1:], predicted[..., :-1]], axis=-1)
    reference = _torch_ctc(blank_first + 1e-7, LABELS, LENGTHS)
    np.testing.assert_allclose(model.evaluate(inputs, np.zeros(4), verbose=0), reference.mean(),
                               rtol=1e-5)


def test_save_and_load_model_round_trip(tmp_path):
    for model in (DeepSpeech2(input_dim=INPUT_DIM, conv_layers=2, filters=2, units=4,
                              rnn_layers=2),
                  DeepSpeech(input_dim=INPUT_DIM, context=1, units=4, rnn_units=3, clip=6.)):
        _randomize(model)
        path = str(tmp_path / f'{model.name}.h5')
        model.save(path, include_optimizer=False)
        restored = load_model(path, compile=False)
        features = _padded_batch()
        np.testing.assert_array_equal(restored.predict(features), model.predict(features))
        if model.name == 'deepspeech2':
            again = DeepSpeech2(input_dim=INPUT_DIM, conv_layers=2, filters=2, units=4,
                                rnn_layers=2,
                                weights=path)
            np.testing.assert_array_equal(again.predict(features), model.predict(features))


@pytest.mark.parametrize('arguments, message', [
    ({'rnn': 'rnn'}, 'rnn must be one of'),
    ({'merge_mode': 'ave'}, 'merge_mode'),
    ({'conv_layers': 4}, 'conv_layers'),
    ({'units': 0}, 'units'),
    ({'weights': 'librispeech'}, 'weights'),
])
def test_bad_arguments_are_refused(arguments, message):
    with pytest.raises(ValueError, match=message):
        DeepSpeech2(**arguments)
