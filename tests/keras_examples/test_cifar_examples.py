"""Keras 2.2.4's CIFAR-10 examples, model and training calls as written for Keras, on tiny data.

cifar10_cnn and cifar10_resnet: data loaded with ``minidl.datasets.cifar10``
from batch files in CIFAR-10's format (conftest), augmented by
``ImageDataGenerator`` and trained with ``fit_generator`` and the examples'
callbacks, for one epoch of a few steps. The parameter counts are the ones
Keras 2 prints, worked out in the comments.
"""

import math

import numpy as np
import pytest

import minidl
from minidl.datasets import cifar10
from minidl.layers import (
    Activation, AveragePooling2D, BatchNormalization, Conv2D, Dense, Dropout, Flatten, Input,
    MaxPooling2D)
from minidl.models import Model, Sequential


def augmenter():
    """The examples' ImageDataGenerator: shifts by up to a tenth and horizontal flips."""
    from minidl.preprocessing.image import ImageDataGenerator
    return ImageDataGenerator(
        featurewise_center=False, samplewise_center=False, featurewise_std_normalization=False,
        samplewise_std_normalization=False, zca_whitening=False, zca_epsilon=1e-06,
        rotation_range=0, width_shift_range=0.1, height_shift_range=0.1, shear_range=0.,
        zoom_range=0., channel_shift_range=0., fill_mode='nearest', cval=0.,
        horizontal_flip=True, vertical_flip=False, rescale=None, preprocessing_function=None,
        data_format=None, validation_split=0.0)


def test_cifar10_cnn(cifar10_dir, tmp_path):
    from minidl import backend as K
    minidl.set_seed(301)
    (x_train, y_train), (x_test, y_test) = cifar10.load_data(cifar10_dir)
    y_train = minidl.utils.to_categorical(y_train, 10)
    y_test = minidl.utils.to_categorical(y_test, 10)

    model = Sequential()
    model.add(Conv2D(32, (3, 3), padding='same', input_shape=x_train.shape[1:]))
    model.add(Activation('relu'))
    model.add(Conv2D(32, (3, 3)))
    model.add(Activation('relu'))
    model.add(MaxPooling2D(pool_size=(2, 2)))
    model.add(Dropout(0.25))
    model.add(Conv2D(64, (3, 3), padding='same'))
    model.add(Activation('relu'))
    model.add(Conv2D(64, (3, 3)))
    model.add(Activation('relu'))
    model.add(MaxPooling2D(pool_size=(2, 2)))
    model.add(Dropout(0.25))
    model.add(Flatten())
    model.add(Dense(512))
    model.add(Activation('relu'))
    model.add(Dropout(0.5))
    model.add(Dense(10))
    model.add(Activation('softmax'))
    optimizer = minidl.optimizers.rmsprop(lr=0.0001, decay=1e-6)
    model.compile(loss='categorical_crossentropy', optimizer=optimizer, metrics=['accuracy'])
    x_train, x_test = x_train.astype('float32') / 255, x_test.astype('float32') / 255
    datagen = augmenter()
    datagen.fit(x_train)
    history = model.fit_generator(datagen.flow(x_train, y_train, batch_size=32), epochs=1,
                                  validation_data=(x_test, y_test), workers=4, verbose=0)
    path = str(tmp_path / 'saved_models' / 'keras_cifar10_trained_model.h5')
    (tmp_path / 'saved_models').mkdir()
    model.save(path)
    loss, accuracy = model.evaluate(x_test, y_test, verbose=0)
    restored = minidl.models.load_model(path)

    # Convs 3*3*3*32 + 32 = 896, 3*3*32*32 + 32 = 9,248, 3*3*32*64 + 64 = 18,496 and
    # 3*3*64*64 + 64 = 36,928; 32 -> 30 -> 15 -> 13 -> 6: Dense 6*6*64*512 + 512 =
    # 1,180,160; Dense 512*10 + 10 = 5,130.
    assert model.count_params() == 1_250_858
    assert model.layers[12].output_shape == (None, 2304)
    assert x_train.shape == (65, 32, 32, 3) and y_train.shape == (65, 10)
    # One epoch of the flow: ceil(65 / 32) = 3 steps.
    assert K.get_value(model.optimizer.iterations) == math.ceil(65 / 32)
    assert loss == pytest.approx(history.history['val_loss'][0], rel=1e-6)
    np.testing.assert_array_equal(restored.predict(x_test), model.predict(x_test))


def lr_schedule(epoch):
    """The example's schedule: 1e-3, divided by 10, 100, 1000 and 2000 after epochs 80-180."""
    rate = 1e-3
    for after, factor in ((180, 0.5e-3), (160, 1e-3), (120, 1e-2), (80, 1e-1)):
        if epoch > after:
            return rate * factor
    return rate


def resnet_layer(inputs, num_filters=16, kernel_size=3, strides=1, activation='relu',
                 batch_normalization=True, conv_first=True):
    """Conv2D, BatchNormalization and activation, in this order or (conv_first=False) reversed."""
    from minidl.regularizers import l2
    conv = Conv2D(num_filters, kernel_size=kernel_size, strides=strides, padding='same',
                  kernel_initializer='he_normal', kernel_regularizer=l2(1e-4))
    steps = []
    if batch_normalization:
        steps.append(BatchNormalization())
    if activation is not None:
        steps.append(Activation(activation))
    steps = [conv] + steps if conv_first else steps + [conv]
    x = inputs
    for step in steps:
        x = step(x)
    return x


def resnet_v1(input_shape, depth, num_classes=10):
    """Three stages of 16, 32, 64 filters; two-convolution blocks; ReLU after each sum."""
    blocks = (depth - 2) // 6
    inputs = Input(shape=input_shape)
    x = resnet_layer(inputs=inputs)
    filters = 16
    for stage in range(3):
        for block in range(blocks):
            downsample = stage > 0 and block == 0
            strides = 2 if downsample else 1
            y = resnet_layer(inputs=x, num_filters=filters, strides=strides)
            y = resnet_layer(inputs=y, num_filters=filters, activation=None)
            if downsample:
                x = resnet_layer(inputs=x, num_filters=filters, kernel_size=1, strides=strides,
                                 activation=None, batch_normalization=False)
            x = Activation('relu')(minidl.layers.add([x, y]))
        filters *= 2
    x = AveragePooling2D(pool_size=8)(x)
    outputs = Dense(num_classes, activation='softmax', kernel_initializer='he_normal')(
        Flatten()(x))
    return Model(inputs=inputs, outputs=outputs)


def resnet_v2(input_shape, depth, num_classes=10):
    """Bottleneck blocks of pre-activation layers (1x1, 3x3, 1x1); a 1x1 shortcut per stage."""
    blocks = (depth - 2) // 9
    inputs = Input(shape=input_shape)
    filters_in = 16
    x = resnet_layer(inputs=inputs, num_filters=filters_in, conv_first=True)
    for stage in range(3):
        for block in range(blocks):
            activation, normalize, strides = 'relu', True, 1
            if stage == 0:
                filters_out = filters_in * 4
                if block == 0:
                    activation, normalize = None, False
            else:
                filters_out = filters_in * 2
                if block == 0:
                    strides = 2
            y = resnet_layer(inputs=x, num_filters=filters_in, kernel_size=1, strides=strides,
                             activation=activation, batch_normalization=normalize,
                             conv_first=False)
            y = resnet_layer(inputs=y, num_filters=filters_in, conv_first=False)
            y = resnet_layer(inputs=y, num_filters=filters_out, kernel_size=1, conv_first=False)
            if block == 0:
                x = resnet_layer(inputs=x, num_filters=filters_out, kernel_size=1,
                                 strides=strides, activation=None, batch_normalization=False)
            x = minidl.layers.add([x, y])
        filters_in = filters_out
    x = Activation('relu')(BatchNormalization()(x))
    x = AveragePooling2D(pool_size=8)(x)
    outputs = Dense(num_classes, activation='softmax', kernel_initializer='he_normal')(
        Flatten()(x))
    return Model(inputs=inputs, outputs=outputs)


def test_cifar10_resnet(cifar10_dir, tmp_path):
    from minidl import backend as K
    from minidl.callbacks import LearningRateScheduler, ModelCheckpoint, ReduceLROnPlateau
    minidl.set_seed(302)
    (x_train, y_train), (x_test, y_test) = cifar10.load_data(cifar10_dir)
    x_train, y_train, x_test, y_test = x_train[:8], y_train[:8], x_test[:4], y_test[:4]
    x_train, x_test = x_train.astype('float32') / 255, x_test.astype('float32') / 255
    pixel_mean = np.mean(x_train, axis=0)
    x_train, x_test = x_train - pixel_mean, x_test - pixel_mean
    y_train = minidl.utils.to_categorical(y_train, 10)
    y_test = minidl.utils.to_categorical(y_test, 10)

    model = resnet_v1(input_shape=x_train.shape[1:], depth=20)
    model.compile(loss='categorical_crossentropy',
                  optimizer=minidl.optimizers.Adam(lr=lr_schedule(0)), metrics=['accuracy'])
    checkpoint = ModelCheckpoint(filepath=str(tmp_path / 'cifar10_ResNet20v1_model.{epoch:03d}.h5'),
                                 monitor='val_acc', verbose=0, save_best_only=True)
    callbacks = [checkpoint,
                 ReduceLROnPlateau(factor=np.sqrt(0.1), cooldown=0, patience=5, min_lr=0.5e-6),
                 LearningRateScheduler(lr_schedule)]
    datagen = augmenter()
    datagen.fit(x_train)
    # minidl logs metrics=['accuracy'] as 'val_accuracy' (Keras 2.3's name); the
    # checkpoint watching 'val_acc' (Keras 2.2's) finds it and saves the first epoch.
    history = model.fit_generator(datagen.flow(x_train, y_train, batch_size=4),
                                  validation_data=(x_test, y_test), epochs=1, verbose=0,
                                  workers=4, callbacks=callbacks)
    assert (tmp_path / 'cifar10_ResNet20v1_model.001.h5').exists()
    conv_kernels = [layer.get_weights()[0] for layer in model.layers
                    if isinstance(layer, Conv2D)]

    # ResNet-20 v1: first conv 448 + BN 64; stage 1: six 3x3 16->16 convs (2,320) and six
    # BNs (64): 14,304; stage 2: 16->32 (4,640), five 32->32 (9,248), six BNs (128) and a
    # 1x1 16->32 shortcut (544): 52,192; stage 3 likewise with 64 filters: 206,784;
    # Dense 64*10 + 10 = 650. Total 274,442, of which the BNs' moving statistics
    # (2 per channel of 19 BNs: 2*(16 + 6*16 + 6*32 + 6*64) = 1,376) are not trainable.
    assert model.count_params() == 274_442
    assert sum(K.count_params(w) for w in model.trainable_weights) == 273_066
    assert model.output_shape == (None, 10)
    assert len(conv_kernels) == 21 and len(model.losses) == 21
    # Each convolution adds 1e-4 * sum(kernel ** 2) to the loss.
    penalty = sum(float(K.eval(loss)) for loss in model.losses)
    assert penalty == pytest.approx(1e-4 * sum(float((w ** 2).sum()) for w in conv_kernels),
                                    rel=1e-5)
    assert K.get_value(model.optimizer.lr) == pytest.approx(1e-3)
    assert K.get_value(model.optimizer.iterations) == 2
    assert np.isfinite(history.history['loss'][0])
    assert (lr_schedule(81), lr_schedule(181)) == (pytest.approx(1e-4), pytest.approx(5e-7))

    # The example's other variant, built only: ResNet-11 v2 (one bottleneck block per stage).
    # First conv 448 + BN 64. Stage 1 (16 -> 64): 1x1 16->16 272, BN 64 + 3x3 16->16 2,320,
    # BN 64 + 1x1 16->64 1,088, shortcut 1x1 16->64 1,088: 4,896. Stage 2 (64 -> 128,
    # stride 2): BN 256 + 1x1 64->64 4,160, BN 256 + 3x3 64->64 36,928, BN 256 + 1x1
    # 64->128 8,320, shortcut 8,320: 58,496. Stage 3 (128 -> 256): BN 512 + 16,512,
    # BN 512 + 147,584, BN 512 + 33,024, shortcut 33,024: 231,680. Final BN 1,024 and
    # Dense 256*10 + 10 = 2,570. Total 299,178.
    assert resnet_v2(input_shape=(32, 32, 3), depth=11).count_params() == 299_178
