"""An open-vocabulary espeak-ng corpus: words of a large word list, many voices, noise.

Where :mod:`zoo.speech.corpus` says ~150 words in template sentences, this
corpus says any of the ~57,000 training words of :mod:`zoo.speech.words`,
so that a model has to spell what it hears rather than recognise a closed
set of words. Two splits:

- ``'train'``: training voices (``voices.VARIANTS['train']`` with the 8
  accents, and :data:`PLAIN_SHARE` of the time their plain voices); texts
  of 1 to 5 training words, each a common word
  (:data:`~zoo.speech.words.COMMON_WORDS`) or any training word with even
  odds, and with probability :data:`TEMPLATE_PROBABILITY` a text of the
  template corpus (digit strings, commands, sentences). Given ``everyday``
  sentences (an option of :func:`generate`; the registered recipe gives
  the fortunes' short sentences), a training text is one of them with probability
  ``everyday_share`` (default :data:`EVERYDAY_PROBABILITY`), so that function
  words are heard inside phrases, as espeak-ng runs them together ("have a
  nice day").
- ``'test'``: held-out voices (``VARIANTS['test']``) saying 1 to 4 held-out
  words, words that no training text contains.

Version 2 names the British accent ``en`` (``voices.ACCENTS``): in version 1,
``en-gb+variant`` was the plain British voice whatever the variant
(:mod:`zoo.speech.voices`), so an eighth of the test utterances were a voice
that training had heard. It keeps an eighth of the training utterances for
the accents' plain voices (``espeak-ng`` without ``-v`` speaks with one,
the voice a user tries first), as version 1 had them for one accent.

Utterance ``i`` of a split comes from its own random stream, seeded by
``(seed, FORMAT_VERSION, split, i)``: text, voice, speed (``-s`` 100..230),
pitch (``-p`` 10..90) and pause between words (``-g`` 0..2), then
:mod:`zoo.speech.augment` (room, noise, narrowband). Utterances are
generated and cached in shards of :data:`SHARD` (``generate``), so an
interrupted generation resumes where it stopped and two processes can share
the work; the features are those of :mod:`zoo.speech.corpus` (40 log mel
bins, float16).
"""

import os

import numpy as np

from zoo.speech import corpus
from zoo.speech.augment import augment
from zoo.speech.texts import draw_text
from zoo.speech.voices import ACCENTS, PLAIN, VARIANTS, check_installed_variants, voice_name
from zoo.speech.words import COMMON_WORDS, check_words, load_words, split_words

FORMAT_VERSION = 2
SHARD = 500
TEMPLATE_PROBABILITY = 0.15
EVERYDAY_PROBABILITY = 0.15
_SPLIT_CODES = {'train': 11, 'test': 12}
# The share of training utterances said by an accent's plain voice (espeak-ng's
# own, the one a user tries first): version 1 had an eighth, by accident.
PLAIN_SHARE = 0.125


class Vocabulary:
    """The training and held-out words of a word list.

    Args:
        words: The filtered word list (:func:`zoo.speech.words.load_words`);
            default the installed wamerican, checked against its SHA-256.
    """

    def __init__(self, words=None):
        if words is None:
            words = load_words()
            check_words(words)
        self.training, self.held_out = split_words(words)
        if not self.held_out:
            raise ValueError('the word list has no held-out word; give a longer list')


def draw_open_text(rng, split, vocabulary, everyday=(), everyday_share=EVERYDAY_PROBABILITY):
    """One text of ``split`` (``'train'`` or ``'test'``), drawn with the Generator ``rng``;
    a training text is one of the ``everyday`` sentences with probability
    ``everyday_share`` (no sentences: no draw for it, the same stream as before)."""
    if split == 'test':
        count = int(rng.integers(1, 5))
        return ' '.join(vocabulary.held_out[i]
                        for i in rng.integers(0, len(vocabulary.held_out), count))
    if everyday and rng.random() < everyday_share:
        return everyday[rng.integers(len(everyday))]
    if rng.random() < TEMPLATE_PROBABILITY:
        return draw_text(rng)[1]
    chosen = []
    for _ in range(int(rng.integers(1, 6))):
        source = COMMON_WORDS if rng.random() < 0.5 else vocabulary.training
        chosen.append(source[rng.integers(len(source))])
    return ' '.join(chosen)


def _check_split(split):
    if split not in _SPLIT_CODES:
        raise ValueError(f'split must be one of {sorted(_SPLIT_CODES)}, got {split!r}')


def utterance(split, index, vocabulary, seed=0, everyday=(), voices=None,
              everyday_share=EVERYDAY_PROBABILITY):
    """Utterance ``index`` of a split: ``(transcript, voice, wave)``, wave float64 at 22050 Hz.

    ``voices``: the split whose voices speak, default ``split``'s own. Another
    split's voices say the same text at the same speed, pitch and noise (the
    draws are the same), so the two differ by the voice alone.
    """
    _check_split(split)
    voices = split if voices is None else voices
    if voices not in VARIANTS:
        raise ValueError(f'voices must be one of {sorted(VARIANTS)}, got {voices!r}')
    rng = np.random.default_rng([seed, FORMAT_VERSION, _SPLIT_CODES[split], index])
    text = draw_open_text(rng, split, vocabulary, everyday, everyday_share)
    accent = ACCENTS[rng.integers(len(ACCENTS))]
    variant = VARIANTS[voices][rng.integers(len(VARIANTS[voices]))]
    # Drawn for every split, so that other voices keep the draws that follow.
    plain = rng.random() < PLAIN_SHARE and voices == 'train'
    voice = voice_name(accent, PLAIN if plain else variant)
    speed, pitch, gap = (int(rng.integers(100, 231)), int(rng.integers(10, 91)),
                         int(rng.integers(0, 3)))
    wave = corpus.trim_silence(corpus.speak(text, voice, speed, pitch, gap))
    return text, voice, augment(wave.astype(np.float64) / 32768.0, corpus.RATE, rng)


def build(split, start, count, vocabulary, seed=0, everyday=(), voices=None,
          everyday_share=EVERYDAY_PROBABILITY):
    """Arrays of utterances ``start .. start + count - 1`` as :func:`corpus.build` gives them
    (``voices``, ``everyday_share``: as for :func:`utterance`)."""
    frames, transcripts, speakers, durations = [], [], [], []
    for index in range(start, start + count):
        text, voice, wave = utterance(split, index, vocabulary, seed, everyday, voices,
                                      everyday_share)
        frames.append(corpus.features(wave, corpus.RATE, bins=corpus.BINS).astype(np.float16))
        transcripts.append(text)
        speakers.append(voice)
        durations.append(wave.size / corpus.RATE)
    return {'features': np.concatenate(frames),
            'offsets': np.cumsum([0] + [len(f) for f in frames]).astype(np.int64),
            'transcripts': np.array(transcripts, dtype=str),
            'voices': np.array(speakers, dtype=str),
            'durations': np.array(durations, np.float32)}


def shard_path(directory, split, seed, start, count, everyday=(),
               everyday_share=EVERYDAY_PROBABILITY):
    """Where the shard of utterances ``start .. start + count - 1`` is cached (its name
    counts the ``everyday`` sentences drawn from, if any, and gives a share other
    than :data:`EVERYDAY_PROBABILITY` in percent)."""
    tag = f'-everyday{len(everyday)}' if everyday else ''
    if everyday and everyday_share != EVERYDAY_PROBABILITY:
        tag += f'-share{round(everyday_share * 100)}'
    return os.path.join(directory, f'open-{split}-seed{seed}-v{FORMAT_VERSION}{tag}-'
                                   f'{start:07d}-{count}.npz')


def generate(split, count, seed=0, directory=None, vocabulary=None, shard=SHARD, everyday=(),
             everyday_share=EVERYDAY_PROBABILITY):
    """Generate (or find cached) the first ``count`` utterances of a split; their shard paths.

    Args:
        split: ``'train'`` or ``'test'``.
        count: Number of utterances.
        seed: Non-negative integer.
        directory: Cache directory; default ``corpus.default_directory()``.
        vocabulary: A :class:`Vocabulary`; default the installed wamerican's.
        shard: Utterances per shard file (the last may hold fewer).
        everyday: Sentences that training texts are drawn from too (see the
            module's docstring); a sequence, the same for every call.
        everyday_share: The probability that a training text is one of them.

    Returns:
        The list of shard paths, in order; each holds what :func:`corpus.load` reads.
    """
    _check_split(split)
    if everyday and split != 'train':
        raise ValueError(f'everyday sentences are training texts; the {split!r} split has none')
    if not 0 <= everyday_share <= 1:
        raise ValueError(f'everyday_share is a probability, got {everyday_share!r}')
    directory = directory or corpus.default_directory()
    os.makedirs(directory, exist_ok=True)
    paths = []
    for start in range(0, count, shard):
        size = min(shard, count - start)
        path = shard_path(directory, split, seed, start, size, everyday, everyday_share)
        if not os.path.exists(path):
            if vocabulary is None:
                check_installed_variants()
                vocabulary = Vocabulary()
            corpus._save(path, build(split, start, size, vocabulary, seed, everyday,
                                     everyday_share=everyday_share))
        paths.append(path)
    return paths


def load(paths):
    """The :class:`corpus.Corpus` of the shards at ``paths``, in order."""
    parts = [corpus.load(path) for path in paths]
    return corpus.Corpus(
        features=[f for part in parts for f in part.features],
        transcripts=[t for part in parts for t in part.transcripts],
        voices=[v for part in parts for v in part.voices],
        durations=np.concatenate([part.durations for part in parts]))


SAMPLE_COUNT = 150
SAMPLE_PATH = os.path.join(corpus.SAMPLE_DIRECTORY, 'open-sample-test.npz')


def load_sample():
    """The shipped sample of the test split: its first :data:`SAMPLE_COUNT` utterances
    (seed 0, held-out voices saying held-out words), as a :class:`corpus.Corpus`."""
    return corpus.load(SAMPLE_PATH)


def write_sample(path=SAMPLE_PATH, seed=0):
    """Write :func:`load_sample`'s file from the test split (generated, or found cached),
    with float16 mantissas cut to 8 bits as :func:`corpus.write_sample` cuts them."""
    test = generate('test', SHARD, seed)[0]
    with np.load(test, allow_pickle=False) as arrays:
        arrays = {name: arrays[name] for name in arrays.files}
    end = int(arrays['offsets'][SAMPLE_COUNT])
    sample = {'features': corpus._shorten_mantissas(arrays['features'][:end]),
              'offsets': arrays['offsets'][:SAMPLE_COUNT + 1],
              'transcripts': arrays['transcripts'][:SAMPLE_COUNT],
              'voices': arrays['voices'][:SAMPLE_COUNT],
              'durations': arrays['durations'][:SAMPLE_COUNT]}
    corpus._save(path, sample)
    return path
