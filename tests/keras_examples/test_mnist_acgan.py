"""Keras 2.2.4's mnist_acgan, models and calls as written for Keras, on small data.

The auxiliary-classifier GAN: a generator (Dense, three Conv2DTranspose,
BatchNormalization, a class Embedding multiplied into the noise) and a
discriminator with two outputs (real/fake, class) trained with per-output
sample weights; the discriminator is frozen inside the combined model after
its own compile (Keras 2's collected trainable weights), progress is drawn
with ``generic_utils.Progbar``, and the weights are saved each epoch.
Only the imports, the sizes (batch, batches per epoch, test samples,
displayed rows) and the number of epochs are changed; numpy's draws come
from a local RandomState seeded as the example seeds the global one. The
parameter counts are the ones Keras 2 prints, worked out in the comments.
"""

import warnings
from collections import defaultdict

import numpy as np
from PIL import Image

import minidl
from minidl import layers
from minidl.datasets import mnist
from minidl.layers import BatchNormalization, Dense, Dropout, Embedding, Flatten, Input, Reshape
from minidl.layers.advanced_activations import LeakyReLU
from minidl.layers.convolutional import Conv2D, Conv2DTranspose
from minidl.models import Model, Sequential
from minidl.optimizers import Adam
from minidl.utils.generic_utils import Progbar

num_classes = 10


def build_generator(latent_size):
    cnn = Sequential()
    cnn.add(Dense(3 * 3 * 384, input_dim=latent_size, activation='relu'))
    cnn.add(Reshape((3, 3, 384)))
    cnn.add(Conv2DTranspose(192, 5, strides=1, padding='valid', activation='relu',
                            kernel_initializer='glorot_normal'))
    cnn.add(BatchNormalization())
    cnn.add(Conv2DTranspose(96, 5, strides=2, padding='same', activation='relu',
                            kernel_initializer='glorot_normal'))
    cnn.add(BatchNormalization())
    cnn.add(Conv2DTranspose(1, 5, strides=2, padding='same', activation='tanh',
                            kernel_initializer='glorot_normal'))
    latent = Input(shape=(latent_size, ))
    image_class = Input(shape=(1,), dtype='int32')
    cls = Flatten()(Embedding(num_classes, latent_size,
                              embeddings_initializer='glorot_normal')(image_class))
    h = layers.multiply([latent, cls])
    fake_image = cnn(h)
    return Model([latent, image_class], fake_image)


def build_discriminator():
    cnn = Sequential()
    cnn.add(Conv2D(32, 3, padding='same', strides=2, input_shape=(28, 28, 1)))
    cnn.add(LeakyReLU(0.2))
    cnn.add(Dropout(0.3))
    cnn.add(Conv2D(64, 3, padding='same', strides=1))
    cnn.add(LeakyReLU(0.2))
    cnn.add(Dropout(0.3))
    cnn.add(Conv2D(128, 3, padding='same', strides=2))
    cnn.add(LeakyReLU(0.2))
    cnn.add(Dropout(0.3))
    cnn.add(Conv2D(256, 3, padding='same', strides=1))
    cnn.add(LeakyReLU(0.2))
    cnn.add(Dropout(0.3))
    cnn.add(Flatten())
    image = Input(shape=(28, 28, 1))
    features = cnn(image)
    fake = Dense(1, activation='sigmoid', name='generation')(features)
    aux = Dense(num_classes, activation='softmax', name='auxiliary')(features)
    return Model(image, [fake, aux])


def params(lines):
    """The three counts at the end of a summary."""
    return [int(line.split(': ')[1].replace(',', '')) for line in lines[-4:-1]]


def real_vs_fake_accuracy(discriminator, generator, x, rng, latent_size):
    noise = rng.uniform(-1, 1, (len(x), latent_size))
    labels = rng.randint(0, num_classes, len(x))
    fakes = generator.predict([noise, labels.reshape((-1, 1))], verbose=0)
    real_score = discriminator.predict(x)[0][:, 0]
    fake_score = discriminator.predict(fakes)[0][:, 0]
    return (np.mean(real_score > 0.5) + np.mean(fake_score <= 0.5)) / 2


def test_mnist_acgan(mnist_npz, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)  # the example writes its files where it runs
    minidl.set_seed(1337)
    rng = np.random.RandomState(1337)
    epochs = 3             # 100 in the example
    batch_size = 16        # 100
    latent_size = 100
    batches_per_epoch = 8  # the whole training set in the example
    num_test = 48          # 10,000
    num_rows = 2           # 40
    adam_lr = 0.0002
    adam_beta_1 = 0.5

    discriminator = build_discriminator()
    discriminator.compile(
        optimizer=Adam(lr=adam_lr, beta_1=adam_beta_1),
        loss=['binary_crossentropy', 'sparse_categorical_crossentropy']
    )
    lines = []
    discriminator.summary(print_fn=lines.append)
    # Conv2D 3*3*1*32 + 32 = 320, 3*3*32*64 + 64 = 18,496, 3*3*64*128 + 128 = 73,856,
    # 3*3*128*256 + 256 = 295,168; 28 -> 14 -> 14 -> 7 -> 7: Flatten 7*7*256 = 12,544;
    # generation 12,544 + 1 = 12,545; auxiliary 12,544*10 + 10 = 125,450.
    assert params(lines) == [525_835, 525_835, 0]

    generator = build_generator(latent_size)
    # Dense 100*3,456 + 3,456 = 349,056; Conv2DTranspose 5*5*192*384 + 192 = 1,843,392;
    # BatchNormalization 4*192 = 768; Conv2DTranspose 5*5*96*192 + 96 = 460,896;
    # BatchNormalization 4*96 = 384; Conv2DTranspose 5*5*1*96 + 1 = 2,401;
    # Embedding 10*100 = 1,000. Moving statistics: 2*192 + 2*96 = 576.
    assert generator.count_params() == 2_657_897
    assert generator.output_shape == (None, 28, 28, 1)

    latent = Input(shape=(latent_size, ))
    image_class = Input(shape=(1,), dtype='int32')
    fake = generator([latent, image_class])
    discriminator.trainable = False
    fake, aux = discriminator(fake)
    combined = Model([latent, image_class], [fake, aux])
    combined.compile(
        optimizer=Adam(lr=adam_lr, beta_1=adam_beta_1),
        loss=['binary_crossentropy', 'sparse_categorical_crossentropy']
    )
    lines = []
    combined.summary(print_fn=lines.append)
    # Trainable: the generator's 2,657,897 - 576; the rest: its moving statistics
    # and the frozen discriminator's 525,835.
    assert params(lines) == [3_183_732, 2_657_321, 526_411]

    (x_train, y_train), (x_test, y_test) = mnist.load_data(mnist_npz)
    x_train = (x_train.astype(np.float32) - 127.5) / 127.5
    x_train = np.expand_dims(x_train, axis=-1)
    x_test = (x_test.astype(np.float32) - 127.5) / 127.5
    x_test = np.expand_dims(x_test, axis=-1)
    x_train, y_train = x_train[:batch_size * batches_per_epoch], \
        y_train[:batch_size * batches_per_epoch]
    x_test, y_test = x_test[:num_test], y_test[:num_test]
    num_test = x_test.shape[0]

    probe = np.random.RandomState(7)
    accuracy_before = real_vs_fake_accuracy(discriminator, generator, x_test, probe, latent_size)
    train_history = defaultdict(list)
    test_history = defaultdict(list)
    frozen_checks = []

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter('always')
        for epoch in range(1, epochs + 1):
            print('Epoch {}/{}'.format(epoch, epochs))
            num_batches = int(np.ceil(x_train.shape[0] / float(batch_size)))
            progress_bar = Progbar(target=num_batches)
            epoch_gen_loss = []
            epoch_disc_loss = []
            for index in range(num_batches):
                image_batch = x_train[index * batch_size:(index + 1) * batch_size]
                label_batch = y_train[index * batch_size:(index + 1) * batch_size]
                noise = rng.uniform(-1, 1, (len(image_batch), latent_size))
                sampled_labels = rng.randint(0, num_classes, len(image_batch))
                generated_images = generator.predict(
                    [noise, sampled_labels.reshape((-1, 1))], verbose=0)
                x = np.concatenate((image_batch, generated_images))
                soft_zero, soft_one = 0, 0.95
                y = np.array(
                    [soft_one] * len(image_batch) + [soft_zero] * len(image_batch))
                aux_y = np.concatenate((label_batch, sampled_labels), axis=0)
                disc_sample_weight = [np.ones(2 * len(image_batch)),
                                      np.concatenate((np.ones(len(image_batch)) * 2,
                                                      np.zeros(len(image_batch))))]
                epoch_disc_loss.append(discriminator.train_on_batch(
                    x, [y, aux_y], sample_weight=disc_sample_weight))
                noise = rng.uniform(-1, 1, (2 * len(image_batch), latent_size))
                sampled_labels = rng.randint(0, num_classes, 2 * len(image_batch))
                trick = np.ones(2 * len(image_batch)) * soft_one
                before = [w.copy() for w in discriminator.get_weights()]
                epoch_gen_loss.append(combined.train_on_batch(
                    [noise, sampled_labels.reshape((-1, 1))],
                    [trick, sampled_labels]))
                frozen_checks.append(all(a.tobytes() == b.tobytes() for a, b in
                                         zip(before, discriminator.get_weights())))
                progress_bar.update(index + 1)

            print('Testing for epoch {}:'.format(epoch))
            noise = rng.uniform(-1, 1, (num_test, latent_size))
            sampled_labels = rng.randint(0, num_classes, num_test)
            generated_images = generator.predict(
                [noise, sampled_labels.reshape((-1, 1))], verbose=False)
            x = np.concatenate((x_test, generated_images))
            y = np.array([1] * num_test + [0] * num_test)
            aux_y = np.concatenate((y_test, sampled_labels), axis=0)
            discriminator_test_loss = discriminator.evaluate(
                x, [y, aux_y], verbose=False)
            discriminator_train_loss = np.mean(np.array(epoch_disc_loss), axis=0)
            noise = rng.uniform(-1, 1, (2 * num_test, latent_size))
            sampled_labels = rng.randint(0, num_classes, 2 * num_test)
            trick = np.ones(2 * num_test)
            generator_test_loss = combined.evaluate(
                [noise, sampled_labels.reshape((-1, 1))],
                [trick, sampled_labels], verbose=False)
            generator_train_loss = np.mean(np.array(epoch_gen_loss), axis=0)
            train_history['generator'].append(generator_train_loss)
            train_history['discriminator'].append(discriminator_train_loss)
            test_history['generator'].append(generator_test_loss)
            test_history['discriminator'].append(discriminator_test_loss)

            print('{0:<22s} | {1:4s} | {2:15s} | {3:5s}'.format(
                'component', *discriminator.metrics_names))
            print('-' * 65)
            ROW_FMT = '{0:<22s} | {1:<4.2f} | {2:<15.4f} | {3:<5.4f}'
            print(ROW_FMT.format('generator (train)', *train_history['generator'][-1]))
            print(ROW_FMT.format('generator (test)', *test_history['generator'][-1]))
            print(ROW_FMT.format('discriminator (train)',
                                 *train_history['discriminator'][-1]))
            print(ROW_FMT.format('discriminator (test)', *test_history['discriminator'][-1]))

            generator.save_weights(
                'params_generator_epoch_{0:03d}.hdf5'.format(epoch), True)
            discriminator.save_weights(
                'params_discriminator_epoch_{0:03d}.hdf5'.format(epoch), True)

            noise = np.tile(rng.uniform(-1, 1, (num_rows, latent_size)), (num_classes, 1))
            sampled_labels = np.array([
                [i] * num_rows for i in range(num_classes)
            ]).reshape(-1, 1)
            generated_images = generator.predict([noise, sampled_labels], verbose=0)
            real_labels = y_train[(epoch - 1) * num_rows * num_classes:
                                  epoch * num_rows * num_classes]
            indices = np.argsort(real_labels, axis=0)
            real_images = x_train[(epoch - 1) * num_rows * num_classes:
                                  epoch * num_rows * num_classes][indices]
            img = np.concatenate(
                (generated_images,
                 np.repeat(np.ones_like(x_train[:1]), num_rows, axis=0),
                 real_images))
            img = (np.concatenate([r.reshape(-1, 28)
                                   for r in np.split(img, 2 * num_classes + 1)
                                   ], axis=-1) * 127.5 + 127.5).astype(np.uint8)
            Image.fromarray(img).save('plot_epoch_{0:03d}_generated.png'.format(epoch))

    out = capsys.readouterr().out
    # The discriminator, frozen after its compile, warns as Keras 2 does when it
    # trains; training the combined model never changed its weights.
    discrepancies = [w for w in caught if 'Discrepancy between trainable weights' in
                     str(w.message)]
    assert len(discrepancies) == epochs * batches_per_epoch
    assert all(frozen_checks) and len(frozen_checks) == epochs * batches_per_epoch
    assert discriminator.metrics_names == ['loss', 'generation_loss', 'auxiliary_loss']
    assert out.count('8/8 [==============================]') == epochs
    assert 'component              | loss | generation_loss | auxiliary_loss' in out
    for epoch in range(1, epochs + 1):
        assert (tmp_path / f'params_generator_epoch_{epoch:03d}.hdf5').exists()
        assert (tmp_path / f'params_discriminator_epoch_{epoch:03d}.hdf5').exists()
        with Image.open(tmp_path / f'plot_epoch_{epoch:03d}_generated.png') as image:
            # num_rows images per class side by side: 21 columns of 28, num_rows * 28 high.
            assert image.size == (21 * 28, num_rows * 28)

    # It learns: the discriminator tells real digits from generated ones better
    # than before training, and its losses fall.
    accuracy_after = real_vs_fake_accuracy(discriminator, generator, x_test, probe, latent_size)
    assert accuracy_after > accuracy_before
    first, last = train_history['discriminator'][0], train_history['discriminator'][-1]
    assert last[0] < first[0] and last[1] < first[1]
    # The auxiliary classifier learns the digits' classes: its test loss falls.
    assert test_history['discriminator'][-1][2] < test_history['discriminator'][0][2]
