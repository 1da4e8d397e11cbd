"""KerasClassifier and KerasRegressor inside current scikit-learn: clone, cross_val_score,
GridSearchCV; scores checked against scikit-learn's own metrics of the same predictions."""

import numpy as np
import pytest

import minidl
from minidl.layers import Dense
from minidl.models import Sequential
from minidl.wrappers.scikit_learn import KerasClassifier, KerasRegressor

sklearn = pytest.importorskip('sklearn')
from sklearn.base import clone, is_classifier, is_regressor  # noqa: E402
from sklearn.metrics import accuracy_score, mean_squared_error  # noqa: E402
from sklearn.model_selection import (  # noqa: E402
    GridSearchCV, StratifiedKFold, cross_val_score)

rng = np.random.default_rng(0)
X = rng.standard_normal((120, 4)).astype('float32')
LABELS = np.where(X[:, 0] + X[:, 1] > 0, 'yes', 'no')  # string labels: classes_ maps them


def make_classifier(hidden=8, loss='sparse_categorical_crossentropy'):
    model = Sequential([Dense(hidden, activation='relu', input_shape=(4,)),
                        Dense(2, activation='softmax')])
    model.compile(optimizer='adam', loss=loss, metrics=['accuracy'])
    return model


def make_regressor(hidden=8):
    model = Sequential([Dense(hidden, activation='relu', input_shape=(4,)), Dense(1)])
    model.compile(optimizer='adam', loss='mse')
    return model


def test_the_estimator_contract_that_clone_and_tags_check():
    estimator = KerasClassifier(make_classifier, hidden=4, epochs=2, verbose=0)
    assert estimator.get_params() == {'build_fn': make_classifier, 'hidden': 4, 'epochs': 2,
                                      'verbose': 0}
    copy = clone(estimator)  # raises unless get_params returns the constructor's own objects
    assert copy.get_params() == estimator.get_params() and copy is not estimator
    assert is_classifier(estimator) and is_regressor(KerasRegressor(make_regressor))
    assert estimator.set_params(hidden=6) is estimator and estimator.sk_params['hidden'] == 6
    with pytest.raises(ValueError, match='units is not a legal parameter'):
        KerasClassifier(make_classifier, units=3)
    assert estimator.filter_sk_params(make_classifier, {'loss': 'x'}) == {'hidden': 6,
                                                                         'loss': 'x'}


def test_cross_val_score_equals_the_accuracy_of_each_folds_predictions():
    estimator = KerasClassifier(make_classifier, epochs=30, batch_size=16, verbose=0)
    folds = StratifiedKFold(3)
    minidl.set_seed(5)
    scores = cross_val_score(estimator, X, LABELS, cv=folds)
    # The same folds by hand, the same seed: scikit-learn's accuracy of the predicted labels.
    minidl.set_seed(5)
    expected = []
    for train, test in folds.split(X, LABELS):
        fitted = clone(estimator)
        fitted.fit(X[train], LABELS[train])
        predicted = fitted.predict(X[test])
        assert set(predicted) <= {'yes', 'no'}
        expected.append(accuracy_score(LABELS[test], predicted))
    np.testing.assert_allclose(scores, expected, rtol=1e-6)
    assert scores.mean() > 0.85  # a linear rule: it learns


def test_one_hot_targets_predict_proba_and_categorical_loss():
    minidl.set_seed(1)
    estimator = KerasClassifier(make_classifier, loss='categorical_crossentropy', epochs=5,
                                verbose=0)
    labels = (X[:, 0] > 0).astype(int)
    estimator.fit(X, labels)  # integer labels become one-hot for the categorical loss
    probabilities = estimator.predict_proba(X)
    assert probabilities.shape == (120, 2)
    np.testing.assert_allclose(probabilities.sum(axis=1), 1, rtol=1e-5)
    np.testing.assert_array_equal(estimator.predict(X), probabilities.argmax(axis=1))
    np.testing.assert_allclose(estimator.score(X, labels),
                               accuracy_score(labels, estimator.predict(X)), rtol=1e-6)


def test_grid_search_over_build_and_fit_parameters():
    minidl.set_seed(2)
    search = GridSearchCV(KerasClassifier(make_classifier, verbose=0),
                          {'hidden': [2, 8], 'epochs': [1, 20]}, cv=2)
    search.fit(X, LABELS)
    assert set(search.best_params_) == {'hidden', 'epochs'}
    assert search.best_estimator_.model.layers[0].units == search.best_params_['hidden']
    assert search.best_score_ == search.cv_results_['mean_test_score'].max()


def test_regressor_score_is_the_negative_loss():
    minidl.set_seed(3)
    target = X @ np.array([1.0, -2.0, 0.5, 0.0], 'float32')
    regressor = KerasRegressor(make_regressor, epochs=3, verbose=0)
    regressor.fit(X, target)
    predicted = regressor.predict(X)
    assert predicted.shape == (120,)
    np.testing.assert_allclose(regressor.score(X, target),
                               -mean_squared_error(target, predicted), rtol=1e-5)
    scores = cross_val_score(KerasRegressor(make_regressor, epochs=2, verbose=0), X, target,
                             cv=2)
    assert scores.shape == (2,) and np.all(scores < 0)


def test_a_subclass_builds_with_its_own_call():
    class Built(KerasClassifier):
        def __call__(self, hidden=3):
            return make_classifier(hidden)

    minidl.set_seed(4)
    estimator = Built(hidden=5, epochs=1, verbose=0)
    estimator.fit(X, LABELS)
    assert estimator.model.layers[0].units == 5
