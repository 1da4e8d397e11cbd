"""W6 lstm_small: one LSTM of 128 over 50 steps of 32 features, last output → Dense 10.

Batch 32. A small-op case: its time goes to per-step overhead.
"""

from torch import nn

from benchmarks.common import synthetic_batch
from minidl import layers, models

ID, NAME, BATCH = 'W6', 'lstm_small', 32
FRAMES, FEATURES, UNITS = 50, 32, 128
PARAMS = 84_234
# minidl's LSTM has one bias per gate set, PyTorch's two (b_ih and b_hh).
MINIDL_PARAMS = PARAMS - 4 * UNITS


def data():
    return synthetic_batch(BATCH, (FRAMES, FEATURES), 10)


def minidl_model():
    return models.Sequential([
        layers.Input((FRAMES, FEATURES)),
        layers.LSTM(UNITS),  # the output at the last step
        layers.Dense(10),
    ])


class _LastStepLSTM(nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(FEATURES, UNITS, batch_first=True)
        self.dense = nn.Linear(UNITS, 10)

    def forward(self, x):
        return self.dense(self.lstm(x)[0][:, -1])


def torch_model():
    return _LastStepLSTM()
