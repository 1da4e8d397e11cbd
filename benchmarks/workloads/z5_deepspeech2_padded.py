"""Z5 deepspeech2-padded: Z4's Deep Speech 2 on a batch of utterances of different lengths.

Z4 with every frame real leaves out what training on speech meets in every
batch: padding. Here the batch of 8 holds utterances of 100, 96, ..., 72
frames, each followed by zero frames up to 100, as
``zoo.speech.batches.pad_features`` pads a batch (the utterances of a batch
sorted by length differ by a few frames; these by up to 28 %). minidl's
model finds each utterance's frames from its non-zero ones and masks the
rest (its GRUs carry their states over the padding, ``rnn_ragged``);
PyTorch's twin is told the same lengths: each GRU reads a packed sequence
(``pack_padded_sequence``) and the CTC loss each utterance's output frames.
Both do the same work up to padding: PyTorch's GRUs skip the padded steps,
minidl's vendor kernel runs them and discards them.
"""

import numpy as np
import torch
import torch.nn.functional as TF
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

from benchmarks.workloads import z4_deepspeech2 as z4

ID, NAME, BATCH = 'Z5', 'deepspeech2-padded', z4.BATCH
PARAMS, MINIDL_PARAMS = z4.PARAMS, z4.MINIDL_PARAMS
LENGTHS = np.arange(z4.FRAMES, z4.FRAMES - 4 * BATCH, -4)  # 100, 96, ..., 72
minidl_model, minidl_loss = z4.minidl_model, z4.minidl_loss


def data():
    x, y = z4.data()
    x[np.arange(z4.FRAMES)[None] >= LENGTHS[:, None]] = 0  # padding at the end
    return x, y


class _PackedDeepSpeech2(z4._DeepSpeech2):
    def forward(self, x):
        lengths = ((x != 0).any(-1).sum(1) + 1) // 2  # output frames: stride 2 in time
        x = self.convolutions(x.unsqueeze(1))
        x = x.permute(0, 2, 3, 1).flatten(2)
        for index, gru in enumerate(self.grus):
            if index:
                x = self.norms[index - 1](x.transpose(1, 2)).transpose(1, 2)
            packed = pack_padded_sequence(x, lengths.cpu(), batch_first=True)  # longest first
            both = pad_packed_sequence(gru(packed)[0], batch_first=True,
                                       total_length=x.shape[1])[0]
            x = both[..., :z4.UNITS] + both[..., z4.UNITS:]
        return self.dense(x)


def torch_model():
    return _PackedDeepSpeech2()


_TORCH_INPUT_LENGTHS = torch.from_numpy((LENGTHS + 1) // 2)
_TORCH_LABEL_LENGTHS = torch.full((BATCH,), z4.LABELS)


def torch_loss(logits, y):
    log_probs = logits.log_softmax(-1).transpose(0, 1)  # (frames, batch, classes)
    return TF.ctc_loss(log_probs, y, _TORCH_INPUT_LENGTHS.to(y.device),
                       _TORCH_LABEL_LENGTHS.to(y.device), reduction='sum') / BATCH
