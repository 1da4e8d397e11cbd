"""The three models the scaling model predicts for, their data, and what it needs to know of them.

W3 is ResNet-20 on 32x32x3 images (:mod:`benchmarks.workloads.w3_resnet20`),
AlexNet the zoo's ``variant='slides'`` with 1,000 classes (the network of
:mod:`benchmarks.hybrid`), Deep Speech 2 the zoo's small configuration Z4
(:mod:`benchmarks.workloads.z4_deepspeech2`: two convolutions, three
bidirectional GRUs of 256, one-second utterances). Hybrid parallelism
splits the top Dense layers by columns (:data:`HYBRID`): AlexNet's three
fully connected layers, and the classifier of the other two, which is all
the Dense layers they have.
"""

import numpy as np

import zoo
from benchmarks.common import synthetic_batch
from benchmarks.workloads import w3_resnet20, z4_deepspeech2

LOSS = {'W3': 'sparse_categorical_crossentropy_logits', 'AlexNet': 'categorical_crossentropy',
        'DS2': 'ctc'}
HYBRID = {'W3': ['predictions'], 'AlexNet': ['fc6', 'fc7', 'predictions'],
          'DS2': ['predictions']}
#: Rows a sample gives a model-parallel layer: Deep Speech 2's classifier runs on
#: each of the 50 frames the strided convolution leaves of 100.
ROWS_PER_SAMPLE = {'W3': 1, 'AlexNet': 1, 'DS2': (z4_deepspeech2.FRAMES + 1) // 2}


def build(name):
    """A fresh, uncompiled model ``name`` (seed it first)."""
    if name == 'W3':
        return w3_resnet20.minidl_model()
    if name == 'AlexNet':
        return zoo.AlexNet(variant='slides', classes=1000)
    if name == 'DS2':
        return z4_deepspeech2.minidl_model()
    raise ValueError(f'unknown model {name!r}; known: {sorted(LOSS)}')


def loss(name):
    """The loss ``compile`` takes for model ``name``."""
    if name == 'W3':
        from minidl import losses
        return losses.SparseCategoricalCrossentropy(from_logits=True)
    return LOSS[name]


def data(name, batch):
    """Seeded synthetic inputs and targets for ``batch`` samples of model ``name``."""
    if name == 'W3':
        x, y = synthetic_batch(batch, (3, 32, 32), 10)
        return np.ascontiguousarray(x.transpose(0, 2, 3, 1)), y
    rng = np.random.default_rng(0)
    if name == 'AlexNet':
        x = rng.standard_normal((batch, 224, 224, 3), dtype=np.float32)
        return x, np.eye(1000, dtype=np.float32)[rng.integers(0, 1000, size=batch)]
    if name == 'DS2':
        frames, features = z4_deepspeech2.FRAMES, z4_deepspeech2.FEATURES
        x = rng.standard_normal((batch, frames, features), dtype=np.float32)
        return x, rng.integers(1, z4_deepspeech2.CLASSES, size=(batch, z4_deepspeech2.LABELS))
    raise ValueError(f'unknown model {name!r}; known: {sorted(LOSS)}')


def describe(name, model):
    """The counts the scaling model needs, read from the built ``model``.

    Returns:
        dict: ``params`` (trainable values), ``states`` (moving statistics),
        ``tensors`` (trainable weight arrays), ``hybrid_layers`` (``[inputs,
        units]`` of each model-parallel Dense, in order), ``hybrid_params``
        (their weights' values) and ``rows_per_sample``.
    """
    layers = [model.get_layer(layer) for layer in HYBRID[name]]
    return {
        'params': int(sum(weight.size for weight in model.trainable_weights)),
        'states': int(sum(weight.size for weight in model.non_trainable_weights)),
        'tensors': len(model.trainable_weights),
        'hybrid_layers': [[int(layer.kernel.shape[0]), int(layer.units)] for layer in layers],
        'hybrid_params': int(sum(weight.size for layer in layers for weight in layer.weights)),
        'rows_per_sample': ROWS_PER_SAMPLE[name],
    }
