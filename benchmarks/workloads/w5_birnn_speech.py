"""W5 birnn_speech: 2 bidirectional LSTM layers of 256, a per-frame Dense 512→29, CTC.

Batch 16 of 100 frames x 161 features; 20 labels per sample (symbols 1..28,
0 is the blank). The loss is each sample's CTC negative log-likelihood
divided by its label length, averaged over the batch (PyTorch's
``ctc_loss(reduction='mean')``).
"""

import numpy as np
import torch
import torch.nn.functional as TF
from torch import nn

from minidl import functions as F, layers, models

ID, NAME, BATCH = 'W5', 'birnn_speech', 16
FRAMES, FEATURES, UNITS, CLASSES, LABELS = 100, 161, 256, 29, 20
PARAMS = 2_449_949
# minidl's LSTM has one bias per gate set, PyTorch's two: 4 directions x 4 gates x 256 fewer.
MINIDL_PARAMS = PARAMS - 4 * 4 * UNITS

_INPUT_LENGTHS, _LABEL_LENGTHS = np.full(BATCH, FRAMES), np.full(BATCH, LABELS)


def data():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((BATCH, FRAMES, FEATURES), dtype=np.float32)
    y = rng.integers(1, CLASSES, size=(BATCH, LABELS), dtype=np.int64)
    return x, y


def minidl_model():
    return models.Sequential([
        layers.Input((FRAMES, FEATURES)),
        layers.Bidirectional(layers.LSTM(UNITS, return_sequences=True)),
        layers.Bidirectional(layers.LSTM(UNITS, return_sequences=True)),
        layers.Dense(CLASSES),  # acts on the last axis: per frame
    ])


def minidl_loss(y_true, y_pred):
    """Per-sample CTC loss of the logits, divided by the label length."""
    return F.ctc_loss(y_true, y_pred, _INPUT_LENGTHS, _LABEL_LENGTHS) / LABELS


class _SpeechModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(FEATURES, UNITS, num_layers=2, bidirectional=True, batch_first=True)
        self.dense = nn.Linear(2 * UNITS, CLASSES)

    def forward(self, x):
        return self.dense(self.lstm(x)[0])


def torch_model():
    return _SpeechModel()


_TORCH_INPUT_LENGTHS = torch.from_numpy(_INPUT_LENGTHS)
_TORCH_LABEL_LENGTHS = torch.from_numpy(_LABEL_LENGTHS)


def torch_loss(logits, y):
    log_probs = logits.log_softmax(-1).transpose(0, 1)  # (frames, batch, classes)
    return TF.ctc_loss(log_probs, y, _TORCH_INPUT_LENGTHS.to(y.device),
                       _TORCH_LABEL_LENGTHS.to(y.device),
                       reduction='mean')
