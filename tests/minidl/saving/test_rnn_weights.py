"""Weights of LSTM / GRU(reset_after=True) load into CuDNNLSTM / CuDNNGRU and back, as in
Keras 2 (preprocess_weights_for_loading): the two layers then predict the same."""

import numpy as np
import pytest

import minidl
from minidl.layers import GRU, LSTM, Bidirectional, CuDNNGRU, CuDNNLSTM, Input
from minidl.models import Model, Sequential

x = np.random.default_rng(0).normal(size=(3, 5, 4)).astype('float32')
PAIRS = {'lstm': (lambda: LSTM(6, return_sequences=True),
                  lambda: CuDNNLSTM(6, return_sequences=True)),
         'gru': (lambda: GRU(6, reset_after=True, return_sequences=True),
                 lambda: CuDNNGRU(6, return_sequences=True))}


def _model(make_layer, wrap):
    layer = make_layer()
    if wrap == 'bidirectional':
        layer = Bidirectional(layer)
    model = Sequential([layer], name='rnn') if wrap != 'nested' else None
    if wrap == 'nested':  # a Sequential inside a functional model, as Keras's test nests them
        inputs = Input((5, 4))
        model = Model(inputs, Sequential([layer])(inputs))
    else:
        model.build((None, 5, 4))
    return model


def _randomize(model, seed):
    rng = np.random.default_rng(seed)
    model.set_weights([rng.normal(size=w.shape).astype('float32') * 0.4
                       for w in model.get_weights()])  # biases too: they must convert


@pytest.mark.parametrize('wrap', ['plain', 'bidirectional', 'nested'])
@pytest.mark.parametrize('kind', ['lstm', 'gru'])
@pytest.mark.parametrize('to_cudnn', [True, False], ids=['to_cudnn', 'from_cudnn'])
def test_loaded_weights_give_the_same_predictions(tmp_path, kind, wrap, to_cudnn):
    minidl.set_seed(0)
    plain, cudnn = (_model(make, wrap) for make in PAIRS[kind])
    source, target = (plain, cudnn) if to_cudnn else (cudnn, plain)
    _randomize(source, 1)
    source.save_weights(tmp_path / 'w.h5')
    target.load_weights(tmp_path / 'w.h5')
    np.testing.assert_allclose(target.predict(x), source.predict(x), rtol=1e-5, atol=1e-6)
    # And back. From the plain layer the arrays themselves return (halving a bias and adding
    # the halves is exact); cuDNN's two biases return as two equal halves of their sum.
    target.save_weights(tmp_path / 'back.h5')
    before, predicted = source.get_weights(), source.predict(x)
    source.load_weights(tmp_path / 'back.h5')
    if to_cudnn or kind == 'gru':
        for original, returned in zip(before, source.get_weights()):
            np.testing.assert_array_equal(returned, original)
    np.testing.assert_allclose(source.predict(x), predicted, rtol=1e-5, atol=1e-6)


def test_loading_by_name_converts_too(tmp_path):
    minidl.set_seed(0)
    plain, cudnn = (_model(make, 'plain') for make in PAIRS['lstm'])
    _randomize(cudnn, 2)
    cudnn.save_weights(tmp_path / 'w.h5')
    plain.layers[0].name = cudnn.layers[0].name
    plain.load_weights(tmp_path / 'w.h5', by_name=True)
    np.testing.assert_allclose(plain.predict(x), cudnn.predict(x), rtol=1e-5, atol=1e-6)


def test_a_reset_before_gru_is_refused_naming_reset_after(tmp_path):
    minidl.set_seed(0)
    cudnn = _model(PAIRS['gru'][1], 'plain')
    cudnn.save_weights(tmp_path / 'w.h5')
    reset_before = _model(lambda: GRU(6, return_sequences=True), 'plain')
    before = reset_before.get_weights()
    with pytest.raises(ValueError, match='reset_after'):
        reset_before.load_weights(tmp_path / 'w.h5')
    for kept, original in zip(reset_before.get_weights(), before):  # nothing was changed
        np.testing.assert_array_equal(kept, original)
