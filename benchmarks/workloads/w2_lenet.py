"""W2 lenet: two 5x5 convolutions with max pooling, three Dense layers; batch 64."""

from torch import nn

from benchmarks.common import synthetic_batch
from minidl import layers, models

ID, NAME, BATCH = 'W2', 'lenet', 64
PARAMS = MINIDL_PARAMS = 61_706


def data():
    return synthetic_batch(BATCH, (1, 28, 28), 10)


def minidl_model():
    return models.Sequential([
        layers.Input((28, 28, 1)),
        layers.Conv2D(6, 5, padding='same', activation='relu'),  # 'same' = padding 2 here
        layers.MaxPooling2D(2),
        layers.Conv2D(16, 5, activation='relu'),
        layers.MaxPooling2D(2),
        layers.Flatten(),
        layers.Dense(120, activation='relu'),
        layers.Dense(84, activation='relu'),
        layers.Dense(10),
    ])


def torch_model():
    return nn.Sequential(
        nn.Conv2d(1, 6, 5, padding=2), nn.ReLU(), nn.MaxPool2d(2, 2),
        nn.Conv2d(6, 16, 5), nn.ReLU(), nn.MaxPool2d(2, 2),
        nn.Flatten(),
        nn.Linear(400, 120), nn.ReLU(),
        nn.Linear(120, 84), nn.ReLU(),
        nn.Linear(84, 10))
