import numpy as np
import pytest

from minidl import losses

CLASSES_AND_FUNCTIONS = [
    (losses.CategoricalCrossentropy, losses.categorical_crossentropy, 'categorical_crossentropy'),
    (losses.SparseCategoricalCrossentropy, losses.sparse_categorical_crossentropy,
     'sparse_categorical_crossentropy'),
    (losses.BinaryCrossentropy, losses.binary_crossentropy, 'binary_crossentropy'),
    (losses.MeanSquaredError, losses.mse, 'mean_squared_error'),
    (losses.MeanAbsoluteError, losses.mae, 'mean_absolute_error'),
    (losses.MeanAbsolutePercentageError, losses.mape, 'mean_absolute_percentage_error'),
    (losses.MeanSquaredLogarithmicError, losses.msle, 'mean_squared_logarithmic_error'),
    (losses.Hinge, losses.hinge, 'hinge'),
    (losses.SquaredHinge, losses.squared_hinge, 'squared_hinge'),
    (losses.CategoricalHinge, losses.categorical_hinge, 'categorical_hinge'),
    (losses.KLDivergence, losses.kld, 'kl_divergence'),
    (losses.Poisson, losses.poisson, 'poisson'),
    (losses.CosineSimilarity, losses.cosine_similarity, 'cosine_similarity'),
    (losses.Huber, losses.huber, 'huber_loss'),
    (losses.LogCosh, losses.logcosh, 'log_cosh'),
]


def inputs(seed=0):
    rng = np.random.default_rng(seed)
    y_pred = rng.uniform(0.05, 1.0, size=(4, 3))
    y_true = np.eye(3)[[0, 2, 1, 1]]
    return y_true, y_pred


@pytest.mark.parametrize('cls, function, name', CLASSES_AND_FUNCTIONS,
                         ids=[c[0].__name__ for c in CLASSES_AND_FUNCTIONS])
def test_class_averages_its_function_and_round_trips_its_config(cls, function, name):
    y_true, y_pred = inputs()
    if cls is losses.SparseCategoricalCrossentropy:
        y_true = y_true.argmax(-1)
    loss = cls()
    assert loss.name == name and loss.reduction == 'auto'
    expected = function(y_true, y_pred).numpy().mean()
    assert loss(y_true, y_pred).item() == pytest.approx(expected, rel=1e-6)
    copy = cls.from_config(loss.get_config())
    assert copy.get_config() == loss.get_config()
    assert copy(y_true, y_pred).item() == loss(y_true, y_pred).item()


def test_options_are_passed_in_keras_order():
    loss = losses.CategoricalCrossentropy(True, 0.1, 'sum', 'cce')
    assert loss.get_config() == {'reduction': 'sum', 'name': 'cce', 'from_logits': True,
                                 'label_smoothing': 0.1}
    z, y_true = np.array([[2.0, -1.0, 0.5]]), np.array([[0.0, 1.0, 0.0]])
    expected = losses.categorical_crossentropy(y_true, z, from_logits=True, label_smoothing=0.1)
    assert loss(y_true, z).item() == pytest.approx(expected.item())
    assert losses.Huber(0.5).get_config()['delta'] == 0.5
    assert losses.CosineSimilarity(axis=0).get_config()['axis'] == 0


def test_bad_options_are_rejected_at_construction():
    with pytest.raises(ValueError, match='delta must be positive'):
        losses.Huber(delta=-1.0)
    with pytest.raises(ValueError, match='label_smoothing'):
        losses.BinaryCrossentropy(label_smoothing=-0.1)
