"""``pad_sequences``: variable-length sequences to one 2-D array (Keras's utils.pad_sequences)."""

import numpy as np


def pad_sequences(sequences, maxlen=None, dtype='int32', padding='pre', truncating='pre',
                  value=0.0):
    """Pad (or cut) each sequence to ``maxlen`` steps and stack them.

    Args:
        sequences: A list of sequences (lists or arrays); a step may itself
            be an array, whose shape every step must share.
        maxlen: Steps per sequence; by default the longest sequence's length.
        dtype: dtype of the result (``object`` for variable-length strings).
        padding: 'pre' or 'post': pad before or after each sequence.
        truncating: 'pre' or 'post': drop the steps before or after the
            ``maxlen`` kept ones, for longer sequences.
        value: The padding value.

    Returns:
        A numpy array of shape ``(len(sequences), maxlen) + step shape``.

    Raises:
        ValueError: For an argument outside the choices above, a sequence
            that has no length, or steps of different shapes.
    """
    if padding not in ('pre', 'post'):
        raise ValueError(f"pad_sequences: padding must be 'pre' or 'post', got {padding!r}")
    if truncating not in ('pre', 'post'):
        raise ValueError(f"pad_sequences: truncating must be 'pre' or 'post', "
                         f'got {truncating!r}')
    if not hasattr(sequences, '__len__') or not all(hasattr(s, '__len__') for s in sequences):
        raise ValueError('pad_sequences: sequences must be a list of sequences (lists or arrays)')
    lengths = [len(sequence) for sequence in sequences]
    maxlen = max(lengths, default=0) if maxlen is None else int(maxlen)
    step_shape = next((np.asarray(s).shape[1:] for s in sequences if len(s)), ())
    if isinstance(value, str) and np.dtype(dtype).kind not in 'OSU':
        raise ValueError(f'pad_sequences: the padding value {value!r} is a string but dtype is '
                         f'{dtype}; use dtype=object for variable-length strings')
    padded = np.full((len(sequences), maxlen) + step_shape, value, dtype=dtype)
    for index, sequence in enumerate(sequences):
        if not len(sequence) or not maxlen:
            continue
        kept = sequence[-maxlen:] if truncating == 'pre' else sequence[:maxlen]
        kept = np.asarray(kept, dtype=dtype)
        if kept.shape[1:] != step_shape:
            raise ValueError(f'pad_sequences: the steps of sequence {index} have shape '
                             f'{kept.shape[1:]}, those of the first have {step_shape}')
        if padding == 'post':
            padded[index, :len(kept)] = kept
        else:
            padded[index, maxlen - len(kept):] = kept
    return padded
