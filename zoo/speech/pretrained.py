"""The registered speech model and the decoding its reported error rates use.

:func:`zoo.speech.transcribe` on a WAV file runs :func:`model` and decodes
with :data:`DECODER` and :func:`language_model`: the beam search and
character language model behind the README's and the registry's
``cer_with_lm``. The model is DeepSpeech2's ``'open'`` weights, trained on
an open vocabulary (:mod:`zoo.training.speech_open`); its language model
ships beside the weights. Both are fetched, hash-checked and built once per
process, and reused.
"""

import functools

from zoo import registry
from zoo.speech.language_model import CharNgramModel

FAMILY, WEIGHTS = 'deepspeech2', 'open'
# CTC prefix beam search with the language model weighted by alpha and a
# bonus beta per word (Deep Speech 2's decoding); prune skips characters
# below that probability in a frame, which changes nothing measurable and
# makes decoding several times faster.
DECODER = {'beam_width': 16, 'alpha': 0.5, 'beta': 1.0, 'prune': 1e-3}


@functools.lru_cache(maxsize=None)
def language_model():
    """The character 10-gram of the registered model's error rates with a language model:
    the gzipped JSON registered beside its weights (counted by the recipe on its
    training texts and on everyday English without a held-out word or a phrase the
    model is judged on: ``zoo.training.speech_open --more-everyday``)."""
    entry = registry.lookup(FAMILY, WEIGHTS)
    return CharNgramModel.load(entry.fetch_language_model())


@functools.lru_cache(maxsize=None)
def model():
    """``zoo.DeepSpeech2(weights=WEIGHTS)``, built and loaded once per process."""
    from zoo.speech.deepspeech import DeepSpeech2  # the registry imports h5py: only when used
    return DeepSpeech2(weights=WEIGHTS)


def model_from_file(path, units=None):
    """The registered architecture holding the weights in ``path``: a file of the recipe
    (``zoo.training.speech_open``) tried before it is registered.

    Args:
        path: A weight file (``model.save_weights``).
        units: The recurrent width it was trained with (the recipe's ``--units``);
            None for the registered one.

    Raises:
        ValueError: If the file's weights do not fit that architecture.
    """
    from zoo.speech.deepspeech import DeepSpeech2  # the registry imports h5py: only when used
    config = dict(registry.lookup(FAMILY, WEIGHTS).config)
    if units is not None:
        config['units'] = units
    # Built to load weights into, not to train: no seed, no optimizer.
    candidate = DeepSpeech2(**config)
    candidate.load_weights(path)
    return candidate
