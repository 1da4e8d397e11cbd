"""From utterances to text: a WAV file, or features run through a model in padded batches.

``transcribe('speech.wav')`` reads the file (:mod:`zoo.speech.wav`), brings
it to the corpus's 22050 Hz (:mod:`zoo.speech.resample`), cuts it into the
stretches of speech between long pauses, without the silence around them
(:mod:`zoo.speech.silence`), and transcribes each with the registered model
and the decoding its reported error rates use (:mod:`zoo.speech.pretrained`).

A model's output for a padded batch carries the mask of its real frames
(``_keras_mask``, set by the Deep Speech models from the input's non-zero
frames), so each utterance's probabilities are cut to its own frames before
decoding, whatever the batch it shared.
"""

import os

import numpy as np

from minidl.models.loop import model_device
from minidl.tensor import Tensor, no_grad

from zoo.speech import pretrained
from zoo.speech.alphabet import ENGLISH
from zoo.speech.batches import SpeechBatches
from zoo.speech.decoding import beam_search_decode, greedy_decode
from zoo.speech.features import features as wave_features
from zoo.speech.resample import resample
from zoo.speech.silence import speech_segments
from zoo.speech.wav import read_wav

# The rate of the corpus the registered models were trained on.
MODEL_RATE = 22050


def output_probabilities(model, features, batch_size=32):
    """Each utterance's per-frame output ``(its output frames, classes)``, in input order.

    Args:
        model: A speech model (inputs ``(batch, frames, bins)``, zero-padded).
        features: List of float arrays ``(frames, bins)``.
        batch_size: Utterances run at once (of similar lengths, to pad little).
    """
    batches = SpeechBatches(features, batch_size=batch_size)
    outputs = [None] * len(features)
    # Called directly, a model takes its inputs where they are: bring each batch to
    # the model's weights (a model on the GPU, say), as fit and predict do.
    device = model_device(model)
    with no_grad():
        for index in range(len(batches)):
            output = model(Tensor(batches[index], device=device), training=False)
            probabilities = output.numpy()
            mask = getattr(output, '_keras_mask', None)
            lengths = (np.asarray(mask.numpy()).sum(axis=1) if mask is not None
                       else np.full(len(probabilities), probabilities.shape[1]))
            for utterance, row, length in zip(batches.indices(index), probabilities, lengths):
                outputs[utterance] = row[:int(length)]
    return outputs


def transcribe(source, features=None, beam_width=None, lm=None, alpha=0.5, beta=1.0, prune=0.0,
               batch_size=32, alphabet=ENGLISH):
    """The text of a WAV file, or the text a speech model hears in each utterance.

    ``transcribe('speech.wav')`` is :func:`transcribe_file` with its defaults
    (the registered model, beam search and language model); no other
    argument may be given then. ``transcribe(model, features, ...)``
    decodes features with a model of one's own, greedy unless
    ``beam_width`` is given.

    Args:
        source: The path of a WAV file (str or ``os.PathLike``), or a speech
            model whose outputs are probabilities over ``alphabet``.
        features: With a model, a list of float arrays ``(frames, bins)``
            (:func:`zoo.speech.features`).
        beam_width: None for greedy (best path) decoding, else the width of a
            CTC prefix beam search.
        lm: A :class:`~zoo.speech.language_model.CharNgramModel` for the beam
            search, weighted by ``alpha``, with ``beta`` per word.
        batch_size: Utterances run at once.
        alphabet: The model's alphabet.

    Returns:
        The file's text (a string), or a list of strings, one per utterance.
    """
    if isinstance(source, (str, os.PathLike)):
        if features is not None or beam_width is not None or lm is not None:
            raise TypeError('transcribe(path) takes no other argument; use transcribe_file(path, '
                            'model=..., beam_width=..., lm=...) to choose the decoding')
        return transcribe_file(source)
    if features is None:
        raise TypeError('transcribe(model, features): features are missing')
    model = source
    texts = []
    for probabilities in output_probabilities(model, features, batch_size):
        table = probabilities[None]
        if beam_width is None:
            texts.extend(greedy_decode(table, alphabet=alphabet))
        else:
            texts.extend(beam_search_decode(table, beam_width=beam_width, lm=lm, alpha=alpha,
                                            beta=beta, prune=prune, alphabet=alphabet))
    return texts


def transcribe_file(path, model=None, beam_width=pretrained.DECODER['beam_width'],
                    lm='registered', alpha=pretrained.DECODER['alpha'],
                    beta=pretrained.DECODER['beta'], prune=pretrained.DECODER['prune'],
                    pause=0.6):
    """The text spoken in a WAV file.

    The file's channels are averaged and its samples resampled to
    :data:`MODEL_RATE`; silence before, after and between stretches of
    speech (pauses of ``pause`` seconds or more) is dropped, each stretch
    transcribed on its own, and the texts joined by spaces.

    Args:
        path: A PCM WAV file (any rate, any channels, 8 to 32 bits per sample).
        model: A speech model trained at :data:`MODEL_RATE` on 40 log mel
            bins; None for the registered one (:func:`pretrained.model`).
        beam_width: Width of the CTC prefix beam search; None for greedy decoding.
        lm: ``'registered'`` for the registered language model
            (:func:`pretrained.language_model`), a
            :class:`~zoo.speech.language_model.CharNgramModel`, or None.
        alpha, beta, prune: The beam search's language model weight, bonus per
            word and probability below which a character is skipped.
        pause: Seconds of quiet that split the speech; None never splits.

    Returns:
        The text, lowercase, words separated by single spaces; ``''`` when
        the file holds no speech.

    Raises:
        FileNotFoundError: If there is no such file.
        ValueError: If it is not a WAV file this can read (see :func:`read_wav`).
    """
    wave, rate = read_wav(path)
    wave = resample(wave, rate, MODEL_RATE)
    segments = speech_segments(wave, MODEL_RATE, pause=pause)
    if not segments:
        return ''
    utterances = [wave_features(wave[start:end], MODEL_RATE) for start, end in segments]
    model = pretrained.model() if model is None else model
    lm = pretrained.language_model() if isinstance(lm, str) and lm == 'registered' else lm
    options = {} if beam_width is None else {'beam_width': beam_width, 'lm': lm, 'alpha': alpha,
                                             'beta': beta, 'prune': prune}
    texts = transcribe(model, utterances, **options)
    # A CTC decoder may write a space at either end or two in a row: text has none.
    return ' '.join(' '.join(texts).split())

