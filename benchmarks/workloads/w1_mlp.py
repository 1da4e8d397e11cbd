"""W1 mlp: Dense 784→512, ReLU, Dense 512→512, ReLU, Dense 512→10; batch 128."""

from torch import nn

from benchmarks.common import synthetic_batch
from minidl import layers, models

ID, NAME, BATCH = 'W1', 'mlp', 128
PARAMS = MINIDL_PARAMS = 669_706


def data():
    return synthetic_batch(BATCH, (784,), 10)


def minidl_model():
    return models.Sequential([
        layers.Input((784,)),
        layers.Dense(512, activation='relu'),
        layers.Dense(512, activation='relu'),
        layers.Dense(10),
    ])


def torch_model():
    return nn.Sequential(
        nn.Linear(784, 512), nn.ReLU(),
        nn.Linear(512, 512), nn.ReLU(),
        nn.Linear(512, 10))
