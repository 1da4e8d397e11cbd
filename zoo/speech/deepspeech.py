"""Deep Speech (Hannun et al. 2014) and Deep Speech 2 (Amodei et al. 2016) acoustic models.

Both read a padded batch of features ``(batch, frames, input_dim)``, frames
past each utterance's end being exact zeros (real frames are normalised
features, never an all-zero row), and give per-frame probabilities over
the alphabet, class 0 being the CTC blank (:mod:`zoo.speech.alphabet`).
Their output frames are ``output_lengths(L, conv_layers)`` per utterance of
``L`` frames (:func:`zoo.speech.layers.output_lengths`); the output carries
the mask of those frames, so the recurrent layers start their backward
direction at each utterance's last frame, padding never changes a sample's
output (in inference), and ``compile(loss='ctc')`` finds the lengths::

    model = DeepSpeech2(input_dim=40)
    model.compile('adam', loss='ctc')
    model.fit(features, labels)   # labels (batch, max_length), 0-padded

Layer names are fixed ('conv1', 'conv1_bn', 'birnn1', ..., 'predictions'),
so a weight file is the same in any process.

Registered weights: ``DeepSpeech2(weights='espeak')`` (the default
architecture, 1,408,669 parameters), trained by ``python -m
zoo.training.speech`` on 8,000 espeak-ng utterances (:mod:`zoo.speech.corpus`).
On the 250 shipped utterances of voices training never heard
(``corpus.load_sample('test')``) its character error rate is 5.05 % with
greedy decoding and 3.21 % with a beam of 16 and the recipe's character
5-gram language model (:func:`zoo.training.speech.language_model`).
``DeepSpeech2(weights='open')`` (the same architecture), trained by ``python
-m zoo.training.speech_open`` on 128,000 utterances of an open vocabulary
(then fine-tuned on twice as many with more everyday English), is the model
:func:`zoo.speech.transcribe` uses: on held-out voices saying words no
training text contains its character error rate is 18.6 % greedy and 16.3 %
with the beam and its shipped language model
(:func:`zoo.speech.pretrained.language_model`).
"""

import os

from minidl import layers
from minidl.models import Model

from zoo import application, registry
from zoo.speech.layers import TIME_KERNEL, TIME_PADDING, TIME_STRIDES, ClippedReLU, FrameMask

# Deep Speech 2's convolutions along frequency (the paper's 41, 21, 21 bins,
# stride 2), padded by half a kernel on each side: each halves the bins, rounding
# up (40 -> 20 -> 10 -> 5; 161 -> 81 -> 41 -> 21), so any input_dim works.
FREQUENCY_KERNELS = (41, 21, 21)
FREQUENCY_STRIDE = 2

_RNNS = {'gru': layers.GRU, 'lstm': layers.LSTM}
_MERGE_MODES = ('sum', 'concat')


def DeepSpeech(input_dim=40, classes=29, context=5, units=512, rnn_units=512, clip=20.,
               dropout=0., weights=None, input_tensor=None, name='deepspeech'):
    """Deep Speech (Hannun et al. 2014): dense layers on frames in context, one bidirectional RNN.

    Each frame with ``context`` frames on either side (zeros beyond the
    edges) goes through three dense layers with clipped ReLU
    ``min(relu(x), clip)``; the first is written as a Conv1D of kernel
    ``2 * context + 1`` and 'same' padding ('dense1'), which is exactly a
    dense layer on the stacked window (same parameter count, kernel shaped
    ``(2 * context + 1, input_dim, units)``). Then a bidirectional SimpleRNN
    with clipped ReLU, the directions summed ('birnn'), a dense layer with
    clipped ReLU ('dense4') and the softmax 'predictions'. One output frame
    per input frame: its lengths are ``output_lengths(L, conv_layers=0)``.

    Args:
        input_dim: Features per frame.
        classes: Outputs per frame, the CTC blank (0) included.
        context: Frames on each side of a frame that the first layer sees.
        units: Width of the dense layers.
        rnn_units: Width of each direction of the recurrent layer.
        clip: Cap of the clipped ReLUs.
        dropout: Dropout rate after each dense layer (the paper used 5 to 10 %).
        weights: None, or the path of an HDF5 weight file with these layer names.
        input_tensor: A tensor from ``minidl.layers.Input`` to build on.
        name: The model's name.

    Returns:
        A :class:`minidl.models.Model`.
    """
    _check_sizes(name, input_dim=input_dim, classes=classes, units=units, rnn_units=rnn_units)
    if not isinstance(context, int) or context < 0:
        raise ValueError(f'{name}: context must be an int >= 0, got {context!r}')
    _check_rates(name, clip, dropout)
    weights = _weight_file(name, weights, {})
    inputs, features = application.model_input(name, input_tensor, (None, input_dim))
    x = layers.Conv1D(units, 2 * context + 1, padding='same', name='dense1')(features)
    x = FrameMask(conv_layers=0, name='frame_mask')([x, features])
    x = _clipped(x, clip, dropout, 'dense1')
    for index in (2, 3):
        x = layers.Dense(units, name=f'dense{index}')(x)
        x = _clipped(x, clip, dropout, f'dense{index}')
    recurrent = layers.SimpleRNN(rnn_units, activation=ClippedReLU(clip), return_sequences=True,
                                 name='rnn')
    x = layers.Bidirectional(recurrent, merge_mode='sum', name='birnn')(x)
    x = layers.Dense(units, name='dense4')(x)
    x = _clipped(x, clip, dropout, 'dense4')
    x = layers.Dense(classes, activation='softmax', name='predictions')(x)
    return _finish(name, inputs, x, weights)


def DeepSpeech2(input_dim=40, classes=29, conv_layers=1, filters=32, rnn='gru', rnn_layers=3,
                units=160, merge_mode='sum', sequence_batch_norm=True, clip=20., weights=None,
                input_tensor=None, name='deepspeech2'):
    """Deep Speech 2 (Amodei et al. 2016): 2-D convolutions, a bidirectional GRU or LSTM stack.

    The features become a one-channel image (frames, input_dim, 1).
    ``conv_layers`` convolutions 'conv1'... of ``filters`` filters follow,
    each on explicit zero padding ('conv1_pad', so that an utterance's
    alignment does not depend on how long its padded batch is), without
    bias, then batch normalization ('conv1_bn') and clipped ReLU
    ``min(relu(x), clip)``: kernels 11 frames by 41, 21, 21 frequency bins,
    strides 2 then 1 in time and 2 in frequency. The frames past each
    utterance's output length are zeroed between convolutions, as the
    padding of the next one is. ``rnn_layers`` bidirectional layers
    'birnn1'... (GRU with ``reset_after=True``, the cuDNN and PyTorch form,
    or LSTM; return_sequences) follow, each after the first preceded, with
    ``sequence_batch_norm``, by a batch normalization over batch and time
    ('birnn2_bn', ...: the paper's sequence-wise normalization, §3.2).
    Then the per-frame softmax 'predictions'.

    In training, the batch normalizations' statistics include the padded
    frames of the batch (zeros where they are zeroed, the convolution of the
    utterance's edge elsewhere); their moving averages, used in inference,
    do too. Inference itself is independent of padding.

    Args:
        input_dim: Features per frame (40 filterbanks or 161 spectrogram bins, say).
        classes: Outputs per frame, the CTC blank (0) included.
        conv_layers: Number of convolutions, 1 to 3.
        filters: Filters of each convolution.
        rnn: 'gru' or 'lstm'.
        rnn_layers: Number of bidirectional recurrent layers (>= 1).
        units: Width of each direction of each recurrent layer.
        merge_mode: How the directions combine: 'sum' or 'concat'.
        sequence_batch_norm: Batch normalization before the recurrent layers
            after the first.
        clip: Cap of the clipped ReLUs.
        weights: None, 'espeak' (the registered weights, for the default
            architecture; see :mod:`zoo.registry`), or the path of an HDF5
            weight file with these layer names.
        input_tensor: A tensor from ``minidl.layers.Input`` to build on.
        name: The model's name.

    Returns:
        A :class:`minidl.models.Model`; its output frames per utterance are
        ``output_lengths(L, conv_layers)``.
    """
    _check_sizes(name, input_dim=input_dim, classes=classes, filters=filters,
                 rnn_layers=rnn_layers, units=units)
    if conv_layers not in range(1, len(TIME_STRIDES) + 1):
        raise ValueError(f'{name}: conv_layers must be 1 to {len(TIME_STRIDES)}, got '
                         f'{conv_layers!r}')
    if rnn not in _RNNS:
        raise ValueError(f'{name}: rnn must be one of {sorted(_RNNS)}, got {rnn!r}')
    if merge_mode not in _MERGE_MODES:
        raise ValueError(f'{name}: merge_mode must be one of {_MERGE_MODES}, got '
                         f'{merge_mode!r}')
    _check_rates(name, clip, 0.0)
    weights = _weight_file(name, weights, {
        'input_dim': input_dim, 'classes': classes, 'conv_layers': conv_layers,
        'filters': filters, 'rnn': rnn, 'rnn_layers': rnn_layers, 'units': units,
        'merge_mode': merge_mode, 'sequence_batch_norm': sequence_batch_norm, 'clip': clip})
    inputs, features = application.model_input(name, input_tensor, (None, input_dim))
    x = layers.Reshape((-1, input_dim, 1), name='spectrogram')(features)
    for index in range(1, conv_layers + 1):
        if index > 1:
            x = FrameMask(conv_layers=index - 1, attach_mask=False,
                          name=f'conv{index - 1}_frames')([x, features])
        frequency_kernel = FREQUENCY_KERNELS[index - 1]
        x = layers.ZeroPadding2D(((TIME_PADDING, TIME_PADDING),
                                  (frequency_kernel // 2, frequency_kernel // 2)),
                                 name=f'conv{index}_pad')(x)
        x = layers.Conv2D(filters, (TIME_KERNEL, frequency_kernel),
                          strides=(TIME_STRIDES[index - 1], FREQUENCY_STRIDE), use_bias=False,
                          name=f'conv{index}')(x)
        x = layers.BatchNormalization(name=f'conv{index}_bn')(x)
        x = layers.ReLU(max_value=clip, name=f'conv{index}_relu')(x)
    bins, channels = x.shape[2], x.shape[3]
    x = layers.Reshape((-1, bins * channels), name='conv_features')(x)
    x = FrameMask(conv_layers=conv_layers, name='frame_mask')([x, features])
    for index in range(1, rnn_layers + 1):
        if index > 1 and sequence_batch_norm:
            x = layers.BatchNormalization(name=f'birnn{index}_bn')(x)
        options = {'reset_after': True} if rnn == 'gru' else {}
        recurrent = _RNNS[rnn](units, recurrent_activation='sigmoid', return_sequences=True,
                               name=f'{rnn}{index}', **options)
        x = layers.Bidirectional(recurrent, merge_mode=merge_mode, name=f'birnn{index}')(x)
    x = layers.Dense(classes, activation='softmax', name='predictions')(x)
    return _finish(name, inputs, x, weights)


def _clipped(x, clip, dropout, prefix):
    x = layers.ReLU(max_value=clip, name=f'{prefix}_relu')(x)
    return layers.Dropout(dropout, name=f'{prefix}_dropout')(x) if dropout else x


def _check_sizes(name, **sizes):
    for argument, value in sizes.items():
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            raise ValueError(f'{name}: {argument} must be a positive int, got {value!r}')


def _check_rates(name, clip, dropout):
    if not (isinstance(clip, (int, float)) and clip > 0):
        raise ValueError(f'{name}: clip must be a positive number, got {clip!r}')
    if not (isinstance(dropout, (int, float)) and 0 <= dropout < 1):
        raise ValueError(f'{name}: dropout must lie in [0, 1), got {dropout!r}')


def _weight_file(name, weights, architecture):
    """The weight file that ``weights`` names: None, a registered name's verified file, or a path.

    Registered weights fit one architecture (the constructor's defaults):
    an argument of ``architecture`` that differs from theirs is an error.
    """
    if weights is None:
        return None
    entry = registry.lookup(name, weights)
    if entry is not None:
        differing = [f'{key}={architecture.get(key)!r} (theirs: {value!r})'
                     for key, value in entry.config.items() if architecture.get(key) != value]
        if differing:
            raise ValueError(f'{name}: weights={weights!r} are for the default architecture; '
                             f'got {", ".join(differing)}')
        return entry.fetch()
    if isinstance(weights, (str, os.PathLike)) and os.path.isfile(weights):
        return weights
    registered = ', '.join(registry.names(name)) or 'none registered'
    raise ValueError(f'{name}: weights must be None, a registered name ({registered}) or the '
                     f'path of an existing HDF5 weight file, got {weights!r}')


def _finish(name, inputs, outputs, weights):
    model = Model(inputs, outputs, name=name)
    if weights is not None:
        registry.load_by_name(model, weights)
    return model
