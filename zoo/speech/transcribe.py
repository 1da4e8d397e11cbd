"""From utterances to text: run a speech model over padded batches and decode its output.

A model's output for a padded batch carries the mask of its real frames
(``_keras_mask``, set by the Deep Speech models from the input's non-zero
frames), so each utterance's probabilities are cut to its own frames before
decoding, whatever the batch it shared.
"""

import numpy as np

from minidl.tensor import Tensor, no_grad

from zoo.speech.alphabet import ENGLISH
from zoo.speech.batches import SpeechBatches
from zoo.speech.decoding import beam_search_decode, greedy_decode


def output_probabilities(model, features, batch_size=32):
    """Each utterance's per-frame output ``(its output frames, classes)``, in input order.

    Args:
        model: A speech model (inputs ``(batch, frames, bins)``, zero-padded).
        features: List of float arrays ``(frames, bins)``.
        batch_size: Utterances run at once (of similar lengths, to pad little).
    """
    batches = SpeechBatches(features, batch_size=batch_size)
    outputs = [None] * len(features)
    with no_grad():
        for index in range(len(batches)):
            output = model(Tensor(batches[index]), training=False)
            probabilities = output.numpy()
            mask = getattr(output, '_keras_mask', None)
            lengths = (np.asarray(mask.numpy()).sum(axis=1) if mask is not None
                       else np.full(len(probabilities), probabilities.shape[1]))
            for utterance, row, length in zip(batches.indices(index), probabilities, lengths):
                outputs[utterance] = row[:int(length)]
    return outputs


def transcribe(model, features, beam_width=None, lm=None, alpha=0.5, beta=1.0, prune=0.0,
               batch_size=32, alphabet=ENGLISH):
    """The text a speech model hears in each utterance.

    Args:
        model: A speech model whose outputs are probabilities over ``alphabet``.
        features: List of float arrays ``(frames, bins)`` (:func:`zoo.speech.features`).
        beam_width: None for greedy (best path) decoding, else the width of a
            CTC prefix beam search.
        lm: A :class:`~zoo.speech.language_model.CharNgramModel` for the beam
            search, weighted by ``alpha``, with ``beta`` per word.
        batch_size: Utterances run at once.
        alphabet: The model's alphabet.

    Returns:
        A list of strings, one per utterance.
    """
    texts = []
    for probabilities in output_probabilities(model, features, batch_size):
        table = probabilities[None]
        if beam_width is None:
            texts.extend(greedy_decode(table, alphabet=alphabet))
        else:
            texts.extend(beam_search_decode(table, beam_width=beam_width, lm=lm, alpha=alpha,
                                            beta=beta, prune=prune, alphabet=alphabet))
    return texts
