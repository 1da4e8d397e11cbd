"""Z4 deepspeech2: the zoo's DeepSpeech2 against the same network in PyTorch; CTC; batch 8.

Batch 8 of 100 frames (one second at a 10 ms hop) x 40 log mel filterbank
features, every frame real (PyTorch's GRU is not told about padding, so no
sample is padded and both do the same work); 20 labels per sample (1..28,
0 is the blank). The network is ``zoo.DeepSpeech2(conv_layers=2,
units=256)``, nearer the paper's layout than the registered one: two
convolutions of 32 filters (11x41 stride 2x2, 11x21 stride 1x2, explicit
padding, no bias), batch normalization and clipped ReLU; three bidirectional
GRUs of 256 (reset gate after the recurrent product, PyTorch's form),
directions summed, batch normalization over batch and time before the second
and third; a per-frame Dense to 29. The loss is the batch mean of each
sample's CTC negative log-likelihood (minidl's ``'ctc'`` loss). The size
keeps a training step near a second on a 2-core CPU.
"""

import numpy as np
import torch
import torch.nn.functional as TF
from torch import nn

import zoo.speech.deepspeech as deepspeech

ID, NAME, BATCH = 'Z4', 'deepspeech2', 8
FRAMES, FEATURES, FILTERS, UNITS, CLASSES, LABELS = 100, 40, 32, 256, 29, 20
_CONV = 11 * 41 * FILTERS + 11 * 21 * FILTERS * FILTERS
_GRU_IN = (FEATURES // 4) * FILTERS  # 40 bins halved twice, times the filters
_GRU = 2 * 3 * (_GRU_IN * UNITS + UNITS * UNITS + 2 * UNITS) + \
    2 * 2 * 3 * (2 * UNITS * UNITS + 2 * UNITS)
PARAMS = _CONV + 2 * 2 * FILTERS + _GRU + 2 * 2 * UNITS + UNITS * CLASSES + CLASSES
# count_params() also counts BatchNormalization's moving mean and variance.
MINIDL_PARAMS = PARAMS + 2 * 2 * FILTERS + 2 * 2 * UNITS

_OUTPUT_FRAMES = (FRAMES + 1) // 2  # zoo.speech.layers.output_lengths with two convolutions


def data():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((BATCH, FRAMES, FEATURES), dtype=np.float32)
    y = rng.integers(1, CLASSES, size=(BATCH, LABELS), dtype=np.int64)
    return x, y


def minidl_model():
    return deepspeech.DeepSpeech2(input_dim=FEATURES, classes=CLASSES, conv_layers=2,
                                  filters=FILTERS, units=UNITS)


minidl_loss = 'ctc'


class _DeepSpeech2(nn.Module):
    def __init__(self):
        super().__init__()
        clipped = lambda: nn.Hardtanh(0.0, 20.0)  # noqa: E731
        self.convolutions = nn.Sequential(
            nn.Conv2d(1, FILTERS, (11, 41), stride=(2, 2), padding=(5, 20), bias=False),
            nn.BatchNorm2d(FILTERS), clipped(),
            nn.Conv2d(FILTERS, FILTERS, (11, 21), stride=(1, 2), padding=(5, 10), bias=False),
            nn.BatchNorm2d(FILTERS), clipped())
        self.grus = nn.ModuleList(
            [nn.GRU(_GRU_IN if index == 0 else UNITS, UNITS, bidirectional=True,
                    batch_first=True) for index in range(3)])
        self.norms = nn.ModuleList([nn.BatchNorm1d(UNITS) for _ in range(2)])
        self.dense = nn.Linear(UNITS, CLASSES)

    def forward(self, x):
        x = self.convolutions(x.unsqueeze(1))  # (batch, filters, frames', bins')
        x = x.permute(0, 2, 3, 1).flatten(2)  # minidl's (frames', bins' x filters) order
        for index, gru in enumerate(self.grus):
            if index:
                x = self.norms[index - 1](x.transpose(1, 2)).transpose(1, 2)
            both = gru(x)[0]
            x = both[..., :UNITS] + both[..., UNITS:]
        return self.dense(x)


def torch_model():
    return _DeepSpeech2()


_TORCH_INPUT_LENGTHS = torch.full((BATCH,), _OUTPUT_FRAMES)
_TORCH_LABEL_LENGTHS = torch.full((BATCH,), LABELS)


def torch_loss(logits, y):
    log_probs = logits.log_softmax(-1).transpose(0, 1)  # (frames, batch, classes)
    return TF.ctc_loss(log_probs, y, _TORCH_INPUT_LENGTHS.to(y.device),
                       _TORCH_LABEL_LENGTHS.to(y.device),
                       reduction='sum') / BATCH
