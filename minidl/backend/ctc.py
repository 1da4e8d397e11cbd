"""Keras 2's ``K.ctc_decode``: the labels a CTC model's softmax outputs spell, greedy or beam.

Keras 2.2.4 passes ``log(y_pred + epsilon)`` to TensorFlow's CTC decoders,
with the last class as the blank, and returns each decoded path as a dense
(samples, longest) array padded with -1. The searches are minidl's
(:mod:`minidl.functions.ctc_decoding`). ``ctc_batch_cost`` is in
:mod:`minidl.backend.crossentropy`; ``ctc_label_dense_to_sparse`` is not
provided, as minidl has no sparse tensors.
"""

import numpy as np

from minidl.backend.config import epsilon
from minidl.backend.convert import as_tensor, wrap
from minidl.functions.ctc_decoding import best_path, labels_of, prefix_beam_search


def ctc_decode(y_pred, input_length, greedy=True, beam_width=100, top_paths=1):
    """Decode the softmax outputs of a CTC model.

    Args:
        y_pred: ``(samples, steps, classes)`` softmax outputs; the last class
            is the blank.
        input_length: ``(samples,)`` (or ``(samples, 1)``) number of valid
            steps of each sample.
        greedy: Best-path decoding (True) or prefix beam search (False).
        beam_width: Prefixes the beam search keeps at each step.
        top_paths: How many of the most probable labellings the beam search
            returns (greedy decoding returns one).

    Returns:
        ``(decoded, log_prob)``: ``decoded`` a list (one entry per path) of
        int64 Tensors ``(samples, longest labelling)``, padded with -1;
        ``log_prob`` a float Tensor ``(samples, paths)``. As TensorFlow's
        decoders give them: for greedy decoding the *negative* sum over steps
        of the largest ``log(y_pred + epsilon)`` (the best path's cost); for
        the beam search the log-probability of each labelling (summed over
        its alignments within the beam). Unlike TensorFlow 1's beam decoder,
        which Keras 2 calls with ``merge_repeated=True``, a label repeated
        with a blank between (``a - a``) is returned twice, as CTC spells it.

    Raises:
        ValueError: For a bad shape, length, ``beam_width`` or ``top_paths``.
    """
    tensor = as_tensor(y_pred)
    if tensor.ndim != 3:
        raise ValueError(f'y_pred must have shape (samples, steps, classes), got {tensor.shape}')
    samples, steps, classes = tensor.shape
    lengths = np.asarray(as_tensor(input_length).numpy()).reshape(-1)
    if lengths.shape != (samples,) or np.any(lengths < 0) or np.any(lengths > steps):
        raise ValueError(f'input_length must hold one length in [0, {steps}] per sample, got '
                         f'{lengths.tolist()}')
    if not greedy and (int(beam_width) < 1 or not 1 <= int(top_paths) <= int(beam_width)):
        raise ValueError(f'need 1 <= top_paths <= beam_width, got top_paths={top_paths}, '
                         f'beam_width={beam_width}')
    # float64 on the host: the searches add many log-probabilities one by one.
    log_probs = np.log(np.asarray(tensor.numpy(), np.float64) + epsilon())
    blank, paths = classes - 1, 1 if greedy else int(top_paths)
    labels = [[()] * samples for _ in range(paths)]
    scores = np.full((samples, paths), -np.inf)
    for sample in range(samples):
        frames = log_probs[sample, :int(lengths[sample])]
        if greedy:
            found, score = best_path(frames, blank)
            labels[0][sample], scores[sample, 0] = tuple(found.tolist()), -score
            continue
        for path, (prefix, ctc_log_prob, _) in enumerate(
                prefix_beam_search(frames, blank, int(beam_width))[:paths]):
            labels[path][sample] = tuple(labels_of(prefix).tolist())
            scores[sample, path] = ctc_log_prob
    return [wrap(_dense(path_labels)) for path_labels in labels], \
        wrap(scores.astype(tensor.dtype))


def _dense(sequences):
    """Label sequences as an int64 array padded with -1 to the longest."""
    dense = np.full((len(sequences), max(map(len, sequences), default=0)), -1, np.int64)
    for row, sequence in enumerate(sequences):
        dense[row, :len(sequence)] = sequence
    return dense
