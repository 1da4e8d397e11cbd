"""Keras 2's GAN freeze: a model trains the weights that were trainable when it was compiled.

The recipe of every Keras 2 GAN (mnist_acgan, dcgan scripts)::

    discriminator.compile(...)
    discriminator.trainable = False
    combined = Model(z, discriminator(generator(z)))
    combined.compile(...)

Training ``combined`` must leave the discriminator's weights bitwise as they
were, while ``discriminator.train_on_batch`` still trains them, with Keras
2.2.4's warning (``Model._check_trainable_weights_consistency``) there, and
in ``summary``, because the trainable weights no longer match those collected.
"""

import warnings

import numpy as np
import pytest

import minidl
from minidl.layers import BatchNormalization, Dense, Dropout, Input
from minidl.models import Model
from minidl.models.collected_weights import DISCREPANCY
from minidl.optimizers import Adam

KERAS_MESSAGE = ('Discrepancy between trainable weights and collected trainable weights, '
                 'did you set `model.trainable` without calling `model.compile` after ?')


def build_gan():
    minidl.set_seed(7)
    image = Input((6,))
    hidden = Dropout(0.3)(Dense(8, activation='relu')(image))
    discriminator = Model(image, Dense(1, activation='sigmoid')(hidden), name='discriminator')
    discriminator.compile(Adam(0.01, beta_1=0.5), 'binary_crossentropy')
    noise = Input((3,))
    generator = Model(noise, Dense(6, activation='tanh')(BatchNormalization()(Dense(5)(noise))),
                      name='generator')
    latent = Input((3,))
    discriminator.trainable = False
    combined = Model(latent, discriminator(generator(latent)), name='combined')
    combined.compile(Adam(0.01, beta_1=0.5), 'binary_crossentropy')
    return discriminator, generator, combined


def data(seed):
    rng = np.random.default_rng(seed)
    return (rng.uniform(-1, 1, (16, 6)).astype('float32'), rng.uniform(-1, 1, (16, 3)),
            np.concatenate([np.full(8, 0.95), np.zeros(8)]))


def copies(model):
    return [np.array(w) for w in model.get_weights()]


def same_bits(a, b):
    return len(a) == len(b) and all(x.dtype == y.dtype and x.tobytes() == y.tobytes()
                                    for x, y in zip(a, b))


def discrepancy_warnings(record):
    return [w for w in record if issubclass(w.category, UserWarning)
            and str(w.message) == KERAS_MESSAGE]


def test_the_message_is_keras_2s():
    assert DISCREPANCY == KERAS_MESSAGE


def test_combined_model_leaves_the_frozen_discriminator_bitwise_unchanged():
    discriminator, generator, combined = build_gan()
    images, noise, _ = data(0)
    frozen, generator_before = copies(discriminator), copies(generator)
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter('always')
        for _ in range(3):
            combined.train_on_batch(noise, np.full(16, 0.95))
    assert same_bits(frozen, copies(discriminator))
    # The generator trained: its kernels and biases, and (a non-trainable update)
    # its batch norm's moving statistics.
    changed = [not np.array_equal(a, b) for a, b in zip(generator_before, copies(generator))]
    assert all(changed)
    # combined collected the generator's weights only, and still has them: no warning.
    assert not discrepancy_warnings(record)


def test_the_discriminator_still_trains_in_its_own_model_with_keras_warning():
    discriminator, generator, combined = build_gan()
    images, noise, labels = data(1)
    before = copies(discriminator)
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter('always')
        discriminator.train_on_batch(images, labels)
    assert all(not np.array_equal(a, b) for a, b in zip(before, copies(discriminator)))
    found = discrepancy_warnings(record)
    assert len(found) == 1 and found[0].filename == __file__  # pointed at the caller
    # The frozen flags are back as they were after the step: combined's next
    # step records no gradient for the discriminator's weights.
    assert not any(weight.requires_grad for weight in discriminator.weights)
    trained = copies(discriminator)
    for weight in discriminator.weights:
        weight.grad = None
    combined.train_on_batch(noise, np.full(16, 0.95))
    assert same_bits(trained, copies(discriminator))
    assert all(weight.grad is None for weight in discriminator.weights)


def test_fit_warns_too_and_recompiling_applies_the_flag():
    discriminator, _, _ = build_gan()
    images, _, labels = data(2)
    with pytest.warns(UserWarning, match='Discrepancy between trainable weights'):
        discriminator.fit(images, labels, epochs=1, batch_size=8, verbose=0)
    discriminator.compile(Adam(), 'binary_crossentropy')  # now nothing is trainable
    before = copies(discriminator)
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter('always')
        discriminator.train_on_batch(images, labels)
    assert same_bits(before, copies(discriminator)) and not discrepancy_warnings(record)


def test_unfreezing_without_compiling_keeps_the_combined_models_weights():
    discriminator, _, combined = build_gan()
    _, noise, _ = data(3)
    discriminator.trainable = True  # combined was compiled with it frozen
    before = copies(discriminator)
    with pytest.warns(UserWarning, match='did you set `model.trainable`'):
        combined.train_on_batch(noise, np.full(16, 0.95))
    assert same_bits(before, copies(discriminator))


def test_summary_counts_the_collected_weights_as_keras_2_does():
    discriminator, _, combined = build_gan()
    lines = []
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter('always')
        combined.summary(print_fn=lines.append)
    # generator: Dense 3*5+5 = 20, BatchNormalization 4*5 = 20 (10 trainable),
    # Dense 5*6+6 = 36; discriminator: Dense 6*8+8 = 56, Dense 8*1+1 = 9.
    # Collected by combined: 20 + 10 + 36 = 66. Non-trainable: the moving
    # statistics (10) and the whole frozen discriminator (65).
    assert lines[-4:-1] == ['Total params: 141', 'Trainable params: 66',
                            'Non-trainable params: 75']
    assert not discrepancy_warnings(record)
    lines = []
    with pytest.warns(UserWarning, match='Discrepancy'):
        discriminator.summary(print_fn=lines.append)
    # Keras 2.2.4 counts the 65 collected weights as trainable and all 65 as
    # non-trainable too (the model is frozen now), and adds the two.
    assert lines[-4:-1] == ['Total params: 130', 'Trainable params: 65',
                            'Non-trainable params: 65']


def test_same_seed_same_bits():
    results = []
    for _ in range(2):
        discriminator, generator, combined = build_gan()
        images, noise, labels = data(4)
        with warnings.catch_warnings():
            warnings.simplefilter('ignore')
            for _ in range(2):
                discriminator.train_on_batch(images, labels)
                combined.train_on_batch(noise, np.full(16, 0.95))
        results.append(copies(discriminator) + copies(generator))
    assert same_bits(*results)
