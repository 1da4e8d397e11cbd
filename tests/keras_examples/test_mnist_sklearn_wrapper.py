"""Keras 2.2.4's mnist_sklearn_wrapper: GridSearchCV over a KerasClassifier's build and fit
parameters, with the example's model, calls and scoring, on a few digits (conftest)."""

import numpy as np
import pytest

import minidl
from minidl import backend as K
from minidl.datasets import mnist
from minidl.layers import Activation, Conv2D, Dense, Dropout, Flatten, MaxPooling2D
from minidl.models import Sequential
from minidl.wrappers.scikit_learn import KerasClassifier

model_selection = pytest.importorskip('sklearn.model_selection')


def test_mnist_sklearn_wrapper(mnist_npz):
    minidl.set_seed(26)
    num_classes, img_rows, img_cols = 10, 28, 28
    (x_train, y_train), (x_test, y_test) = mnist.load_data(mnist_npz)
    x_train, y_train, x_test, y_test = x_train[:300], y_train[:300], x_test[:100], y_test[:100]
    assert K.image_data_format() == 'channels_last'
    x_train = x_train.reshape(x_train.shape[0], img_rows, img_cols, 1).astype('float32') / 255
    x_test = x_test.reshape(x_test.shape[0], img_rows, img_cols, 1).astype('float32') / 255
    input_shape = (img_rows, img_cols, 1)
    y_train = minidl.utils.to_categorical(y_train, num_classes)
    y_test = minidl.utils.to_categorical(y_test, num_classes)

    def make_model(dense_layer_sizes, filters, kernel_size, pool_size):
        model = Sequential()
        model.add(Conv2D(filters, kernel_size, padding='valid', input_shape=input_shape))
        model.add(Activation('relu'))
        model.add(Conv2D(filters, kernel_size))
        model.add(Activation('relu'))
        model.add(MaxPooling2D(pool_size=pool_size))
        model.add(Dropout(0.25))
        model.add(Flatten())
        for layer_size in dense_layer_sizes:
            model.add(Dense(layer_size))
            model.add(Activation('relu'))
        model.add(Dropout(0.5))
        model.add(Dense(num_classes))
        model.add(Activation('softmax'))
        model.compile(loss='categorical_crossentropy', optimizer='adadelta',
                      metrics=['accuracy'])
        return model

    my_classifier = KerasClassifier(make_model, batch_size=32, verbose=0)
    validator = model_selection.GridSearchCV(
        my_classifier,
        param_grid={'dense_layer_sizes': [[32], [32, 32]], 'epochs': [1, 3], 'filters': [8],
                    'kernel_size': [3], 'pool_size': [2]},
        scoring='neg_log_loss', n_jobs=1, cv=2)
    validator.fit(x_train, y_train)

    assert validator.best_params_['dense_layer_sizes'] in ([32], [32, 32])
    best_model = validator.best_estimator_.model
    # Conv 3*3*1*8 + 8 = 80; conv 3*3*8*8 + 8 = 584; 26 -> 24 -> pooled 12: 12*12*8 = 1,152
    # features; Dense(32) 36,896; [Dense(32) 1,056]; Dense(10) 330.
    expected = {(32,): 37_890, (32, 32): 38_946}
    assert best_model.count_params() == expected[tuple(validator.best_params_['dense_layer_sizes'])]
    metric_values = best_model.evaluate(x_test, y_test, verbose=0)
    assert best_model.metrics_names == ['loss', 'accuracy']
    assert np.all(np.isfinite(metric_values))
    assert validator.best_score_ > -np.log(num_classes)  # better than a uniform guess
