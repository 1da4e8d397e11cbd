"""Speech recognition: Deep Speech models, features, CTC decoding, a synthetic corpus.

    from zoo import speech
    print(speech.transcribe('speech.wav'))                 # a WAV file, the registered model
    model = speech.DeepSpeech2(weights='espeak')          # fetched, hash-checked, loaded
    waves = speech.corpus.load_sample_waves()
    x = speech.features(waves[0][0], waves[0][1])         # (frames, 40) log mel features
    print(speech.transcribe(model, [x]))                   # greedy; beam_width=, lm= for more

The pieces, each in its own module: :mod:`~zoo.speech.alphabet` (the
characters; index 0 is the CTC blank), :mod:`~zoo.speech.features` (log mel
filterbanks or log spectrograms), :mod:`~zoo.speech.deepspeech` (the models)
with :mod:`~zoo.speech.layers` (padding, lengths and masks),
:mod:`~zoo.speech.batches` (padded, length-sorted batches for ``fit``),
:mod:`~zoo.speech.decoding` (greedy and CTC prefix beam search) with
:mod:`~zoo.speech.language_model` (character n-grams),
:mod:`~zoo.speech.metrics` (CER, WER), :mod:`~zoo.speech.transcribe` with
:mod:`~zoo.speech.wav` (reading files), :mod:`~zoo.speech.resample`,
:mod:`~zoo.speech.silence` and :mod:`~zoo.speech.pretrained` (the registered
model and its decoding), and the
espeak-ng corpus :mod:`~zoo.speech.corpus` (:mod:`~zoo.speech.texts`,
:mod:`~zoo.speech.voices`).
"""

from zoo.speech import corpus
from zoo.speech.alphabet import ENGLISH, Alphabet
from zoo.speech.batches import SpeechBatches, pad_features, pad_labels
from zoo.speech.decoding import beam_search_decode, greedy_decode
from zoo.speech.deepspeech import DeepSpeech, DeepSpeech2
from zoo.speech.features import features, mel_filterbank
from zoo.speech.language_model import CharNgramModel
from zoo.speech.layers import ClippedReLU, FrameMask, output_lengths
from zoo.speech.metrics import cer, edit_distance, wer
from zoo.speech.transcribe import output_probabilities, transcribe, transcribe_file

__all__ = [
    'ENGLISH', 'Alphabet', 'CharNgramModel', 'ClippedReLU', 'DeepSpeech', 'DeepSpeech2',
    'FrameMask', 'SpeechBatches', 'beam_search_decode', 'cer', 'corpus', 'edit_distance',
    'features', 'greedy_decode', 'mel_filterbank', 'output_lengths',
    'output_probabilities', 'pad_features', 'pad_labels', 'transcribe', 'transcribe_file',
    'wer',
]
