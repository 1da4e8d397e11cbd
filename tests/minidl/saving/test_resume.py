"""Interrupt and resume from a full-model checkpoint: the same bits as never stopping."""

import pathlib
import subprocess
import sys

import numpy as np

from minidl import callbacks, layers, models, optimizers
from minidl.compute import Generator
from minidl.models import load_model
from tests.minidl.saving.builders import assert_same_bits, fresh

ROOT = pathlib.Path(__file__).resolve().parents[3]
FIT = dict(batch_size=8, shuffle=True, verbose=0)


def data():
    generator = Generator(9)
    return generator.normal((40, 6)), generator.integers(0, 3, shape=(40,))


def train(epochs, directory):
    """A fresh run from seed 0, checkpointing the full model after every epoch."""
    fresh(0)
    model = models.Sequential([layers.Dense(16, activation='relu', input_shape=(6,)),
                               layers.Dropout(0.3),  # masks from the layer's own generator
                               layers.Dense(3, activation='softmax')])
    model.compile(optimizer=optimizers.Adam(0.01), loss='sparse_categorical_crossentropy',
                  metrics=['accuracy'])
    checkpoint = callbacks.ModelCheckpoint(str(directory / 'epoch_{epoch}.h5'))
    model.fit(*data(), epochs=epochs, callbacks=[checkpoint], **FIT)
    return model


def test_resuming_from_a_checkpoint_gives_the_uninterrupted_bits(tmp_path):
    uninterrupted = train(4, tmp_path / 'full')
    train(2, tmp_path / 'part')
    checkpoint = tmp_path / 'part' / 'epoch_2.h5'
    assert (tmp_path / 'full' / 'epoch_2.h5').exists()

    fresh(123)  # whatever the process did before, the checkpoint decides what follows
    resumed = load_model(checkpoint)
    resumed.fit(*data(), epochs=4, initial_epoch=2, **FIT)
    assert_same_bits(resumed.get_weights(), uninterrupted.get_weights())
    assert_same_bits(resumed.optimizer.get_weights(), uninterrupted.optimizer.get_weights())

    # Control: the same weights and optimizer with other generator states diverge.
    control = load_model(checkpoint)
    for _, generator in control.named_generators():
        generator.seed(0)
    control.fit(*data(), epochs=4, initial_epoch=2, **FIT)
    assert any(a.tobytes() != b.tobytes()
               for a, b in zip(control.get_weights(), uninterrupted.get_weights()))


RESUME = '''
import sys
import numpy as np
from minidl.compute import Generator
from minidl.models import load_model

model = load_model(sys.argv[1])
generator = Generator(9)
x, y = generator.normal((40, 6)), generator.integers(0, 3, shape=(40,))
model.fit(x, y, batch_size=8, epochs=4, initial_epoch=2, shuffle=True, verbose=0)
np.savez(sys.argv[2], *model.get_weights())
'''


def test_resuming_in_a_new_process_gives_the_uninterrupted_bits(tmp_path):
    uninterrupted = train(4, tmp_path / 'full')
    train(2, tmp_path / 'part')
    output = tmp_path / 'resumed.npz'
    result = subprocess.run(
        [sys.executable, '-c', RESUME, str(tmp_path / 'part' / 'epoch_2.h5'), str(output)],
        cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    with np.load(output) as arrays:
        resumed = [arrays[f'arr_{i}'] for i in range(len(arrays.files))]
    assert_same_bits(resumed, uninterrupted.get_weights())
