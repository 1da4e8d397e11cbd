"""Embedding: lookups and gradients against PyTorch, shapes, config and errors."""

import json

import numpy as np
import pytest

from minidl.layers.embedding import Embedding
from minidl.layers.input_layer import Input
from minidl.tensor import Tensor


@pytest.fixture
def torch():
    return pytest.importorskip('torch')


def test_embedding_matches_pytorch(torch):
    indices = np.array([[0, 3, 3, 9], [9, 1, 0, 3]])
    layer = Embedding(10, 4)
    y = layer(indices)
    upstream = np.random.default_rng(0).standard_normal((2, 4, 4)).astype(np.float32)
    (y * Tensor(upstream)).sum().backward()

    (weights,) = layer.get_weights()
    embedding = torch.nn.Embedding(10, 4)
    with torch.no_grad():
        embedding.weight.copy_(torch.tensor(weights))
    expected = embedding(torch.tensor(indices))
    (expected * torch.tensor(upstream)).sum().backward()

    assert y.shape == (2, 4, 4)
    np.testing.assert_array_equal(y.numpy(), weights[indices])
    np.testing.assert_allclose(layer.embeddings.grad.numpy(), embedding.weight.grad.numpy(),
                               rtol=1e-6, atol=1e-6)


def test_embedding_weights_and_shapes():
    layer = Embedding(1000, 64, input_length=10, name='emb')
    assert layer.batch_input_shape == (None, 10)
    assert layer(Input((10,))).shape == (None, 10, 64)
    assert [w.name for w in layer.weights] == ['emb/embeddings:0']
    assert layer.count_params() == 64000
    (weights,) = layer.get_weights()
    # Keras's 'uniform' initializer draws from [-0.05, 0.05].
    assert weights.shape == (1000, 64) and np.abs(weights).max() <= 0.05 and weights.std() > 0.02
    free = Embedding(5, 3)
    assert free.batch_input_shape is None
    assert free(Input((None,), dtype='int32')).shape == (None, None, 3)
    assert free(np.array([[[1, 2], [3, 4]]])).shape == (1, 2, 2, 3)
    assert Embedding(5, 3, input_length=7)(Input((None,))).shape == (None, 7, 3)


def test_embedding_accepts_whole_floats_and_rejects_the_rest():
    layer = Embedding(6, 2, name='emb_f')
    floats = layer(np.array([[1.0, 5.0, 0.0]], np.float32)).numpy()
    np.testing.assert_array_equal(floats, layer(np.array([[1, 5, 0]])).numpy())
    with pytest.raises(ValueError, match='emb_f.*whole'):
        layer(np.array([[1.5, 2.0]]))
    with pytest.raises(ValueError, match=r'emb_f.*\[0, 6\)'):
        layer(np.array([[0, 6]]))
    with pytest.raises(ValueError, match=r'emb_f.*\[0, 6\)'):
        layer(np.array([[-1, 2]]))
    with pytest.raises(TypeError, match='emb_f'):
        layer(np.array([[True, False]]))


def test_embedding_config_round_trip_and_errors():
    layer = Embedding(20, 8, embeddings_initializer='random_normal', input_length=5,
                      name='words')
    config = json.loads(json.dumps(layer.get_config()))
    assert config['input_dim'] == 20 and config['output_dim'] == 8
    assert config['input_length'] == 5 and config['mask_zero'] is False
    assert config['batch_input_shape'] == [None, 5]
    clone = Embedding.from_config(config)
    assert clone.get_config() == layer.get_config()
    assert Embedding.from_config(Embedding(10, 4, mask_zero=True).get_config()).mask_zero
    with pytest.raises(ValueError, match='input_dim'):
        Embedding(0, 4)
    with pytest.raises(ValueError, match='output_dim'):
        Embedding(10, 2.5)
    with pytest.raises(ValueError, match='input_length'):
        Embedding(10, 4, input_length=0)
    with pytest.raises(ValueError, match='input_length'):
        Embedding(10, 4, input_length=3)(Input((4,)))
