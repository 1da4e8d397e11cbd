"""W4 alexnet: the 4-convolution "slides" AlexNet on 224x224 images; batch 8.

The first convolution (11x11, stride 4, padding 2) has no Keras padding
mode (Keras' 'same' would give 56x56, not 55x55), so minidl gets an explicit
ZeroPadding2D(2) and a 'valid' convolution.
"""

from torch import nn

from benchmarks.common import synthetic_batch
from minidl import layers, models

ID, NAME, BATCH = 'W4', 'alexnet', 8
PARAMS = MINIDL_PARAMS = 56_454_730


def data():
    return synthetic_batch(BATCH, (3, 224, 224), 10)


def minidl_model():
    return models.Sequential([
        layers.Input((224, 224, 3)),
        layers.ZeroPadding2D(2),
        layers.Conv2D(64, 11, strides=4, activation='relu'),
        layers.MaxPooling2D(3, strides=2),
        layers.Conv2D(192, 5, padding='same', activation='relu'),
        layers.MaxPooling2D(3, strides=2),
        layers.Conv2D(384, 3, padding='same', activation='relu'),
        layers.Conv2D(256, 3, padding='same', activation='relu'),
        layers.MaxPooling2D(3, strides=2),
        layers.Flatten(),
        layers.Dropout(0.5),
        layers.Dense(4096, activation='relu'),
        layers.Dropout(0.5),
        layers.Dense(4096, activation='relu'),
        layers.Dense(10),
    ])


def torch_model():
    return nn.Sequential(
        nn.Conv2d(3, 64, 11, stride=4, padding=2), nn.ReLU(), nn.MaxPool2d(3, 2),
        nn.Conv2d(64, 192, 5, padding=2), nn.ReLU(), nn.MaxPool2d(3, 2),
        nn.Conv2d(192, 384, 3, padding=1), nn.ReLU(),
        nn.Conv2d(384, 256, 3, padding=1), nn.ReLU(), nn.MaxPool2d(3, 2),
        nn.Flatten(),
        nn.Dropout(0.5), nn.Linear(9216, 4096), nn.ReLU(),
        nn.Dropout(0.5), nn.Linear(4096, 4096), nn.ReLU(),
        nn.Linear(4096, 10))
