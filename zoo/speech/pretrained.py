"""The registered speech model and the decoding its reported error rates use.

:func:`zoo.speech.transcribe` on a WAV file runs :func:`model` and decodes
with :data:`DECODER` and :func:`language_model`: the beam search and
character language model behind the README's and the registry's
``cer_with_lm``. Both are built once per process (the weights are fetched
and hash-checked, the language model counted from its texts in about a
second) and reused.
"""

import functools

from zoo.speech.language_model import CharNgramModel
from zoo.speech.texts import lm_texts

WEIGHTS = 'espeak'
# CTC prefix beam search with the language model weighted by alpha and a
# bonus beta per word (Deep Speech 2's decoding); prune skips characters
# below that probability in a frame, which changes nothing measurable and
# makes decoding several times faster.
DECODER = {'beam_width': 16, 'alpha': 0.5, 'beta': 1.0, 'prune': 1e-3}
LM_ORDER = 5
LM_TEXTS = 20000
LM_SEED = 1


@functools.lru_cache(maxsize=None)
def language_model():
    """The character 5-gram of the registered error rates with a language model.

    Counted on sentences drawn from the corpus's text generators (seed
    :data:`LM_SEED`, a stream no split's transcripts use).
    """
    return CharNgramModel.train(lm_texts(LM_TEXTS, seed=LM_SEED), order=LM_ORDER)


@functools.lru_cache(maxsize=None)
def model():
    """``zoo.DeepSpeech2(weights=WEIGHTS)``, built and loaded once per process."""
    from zoo.speech.deepspeech import DeepSpeech2  # the registry imports h5py: only when used
    return DeepSpeech2(weights=WEIGHTS)
