"""A seeded synthetic speech corpus spoken by espeak-ng, cached as features.

Utterance ``i`` of a split is drawn from its own random stream, seeded by
``(seed, split, vocabulary, i)``, so it is the same whatever ``count`` is
asked for: a text (:mod:`zoo.speech.texts`), a voice of the split
(:mod:`zoo.speech.voices`), a speed (``-s`` 120..200 words per minute) and a
pitch (``-p`` 25..75). espeak-ng speaks it (22050 Hz, int16, mono); leading
and trailing silence is trimmed; half of the utterances go through a
reverberation-like filter (a random exponentially decaying impulse response
of 50 to 250 ms); white or brown noise is added at an SNR of 10 to 30 dB.
:func:`generate` stores the log mel features (:func:`zoo.speech.features.features`,
40 bins, 20 ms windows, 10 ms hop, normalised per utterance) as float16.

The repository ships a small sample (``zoo/speech/data``), written by
``python -m zoo.speech.corpus --sample``; read it with :func:`load_sample`
and :func:`load_sample_waves`, no espeak-ng needed.
"""

import argparse
import dataclasses
import io
import json
import os
import subprocess
import wave as wavefile

import numpy as np

from zoo.speech.features import features
from zoo.speech.texts import draw_text
from zoo.speech.voices import (ACCENTS_V1, VARIANTS, check_installed_variants, espeak,
                               espeak_environment)

RATE = 22050
BINS = 40
# Part of every stream's seed and of cache names: change it when generation changes.
FORMAT_VERSION = 1
SAMPLE_DIRECTORY = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'data')
SAMPLE_SEED = 2024
SAMPLE_COUNT = 250
_SPLIT_CODES = {'train': 1, 'test': 2, 'transfer': 3}
_VOCABULARY_CODES = {'train': 1, 'transfer': 2}


@dataclasses.dataclass
class Corpus:
    """Utterances as features: ``features[i]`` is float32 ``(frames, 40)``, said as
    ``transcripts[i]`` by ``voices[i]`` (``accent+variant``) in ``durations[i]`` seconds."""

    features: list
    transcripts: list
    voices: list
    durations: np.ndarray

    def __len__(self):
        return len(self.transcripts)


def _check_split(split, vocabulary):
    if split not in _SPLIT_CODES:
        raise ValueError(f'split must be one of {sorted(_SPLIT_CODES)}, got {split!r}')
    if vocabulary not in _VOCABULARY_CODES:
        raise ValueError(f'vocabulary must be one of {sorted(_VOCABULARY_CODES)}, '
                         f'got {vocabulary!r}')


def speak(text, voice, speed, pitch, gap=0):
    """The int16 wave (22050 Hz, mono) espeak-ng makes of ``text``, with ``gap`` x 10 ms
    of extra pause between words."""
    options = ['-g', str(gap)] if gap else []
    result = subprocess.run([espeak(), '--stdout', '-v', voice, '-s', str(speed), '-p', str(pitch),
                             *options, text], capture_output=True, env=espeak_environment(),
                            check=True)
    with wavefile.open(io.BytesIO(result.stdout)) as reader:
        if (reader.getnchannels(), reader.getsampwidth(), reader.getframerate()) != (1, 2, RATE):
            raise RuntimeError(f'espeak-ng wrote an unexpected WAV for {voice}: '
                               f'{reader.getparams()}')
        # Streaming to stdout, espeak-ng writes a placeholder frame count
        # (about 2**30) in the header: read whatever follows it.
        data = reader.readframes(len(result.stdout))
    return np.frombuffer(data, '<i2').astype(np.int16)


def trim_silence(wave, threshold=0.02, margin=0.03):
    """``wave`` without the samples before/after it first/last exceeds ``threshold``
    times its peak, keeping ``margin`` seconds each side."""
    loud = np.flatnonzero(np.abs(wave.astype(np.float64)) > threshold * np.abs(wave).max())
    if loud.size == 0:
        return wave
    keep = int(margin * RATE)
    return wave[max(0, loud[0] - keep):loud[-1] + 1 + keep]


def _fft_convolve(signal, response):
    size = 1 << (signal.size + response.size - 2).bit_length()
    out = np.fft.irfft(np.fft.rfft(signal, size) * np.fft.rfft(response, size), size)
    return out[:signal.size]


def degrade(wave, rng):
    """Float ``wave`` (peak 1) maybe reverberated, then with noise at an SNR of 10..30 dB."""
    signal = wave.astype(np.float64) / 32768.0
    if rng.random() < 0.5:
        length = int(rng.uniform(0.05, 0.25) * RATE)
        decay = np.exp(-6.9 * np.arange(length) / length)  # -60 dB at the end
        response = rng.standard_normal(length) * decay * rng.uniform(0.1, 0.4)
        response[0] = 1.0
        signal = _fft_convolve(signal, response)
    noise = rng.standard_normal(signal.size)
    if rng.random() < 0.5:  # brown-ish: power falling as 1/f^2, no DC
        spectrum = np.fft.rfft(noise)
        spectrum[1:] /= np.arange(1, spectrum.size)
        spectrum[0] = 0.0
        noise = np.fft.irfft(spectrum, noise.size)
    snr = rng.uniform(10.0, 30.0)
    power = np.mean(signal ** 2)
    noise *= np.sqrt(power / 10 ** (snr / 10) / max(np.mean(noise ** 2), 1e-20))
    noisy = signal + noise
    return noisy / max(np.abs(noisy).max(), 1e-12)


def utterance(split, index, seed=0, vocabulary='train'):
    """Utterance ``index`` of a split: ``(transcript, voice, wave)``, wave float64."""
    _check_split(split, vocabulary)
    rng = np.random.default_rng(
        [seed, FORMAT_VERSION, _SPLIT_CODES[split], _VOCABULARY_CODES[vocabulary], index])
    _, text = draw_text(rng, vocabulary)
    variants = VARIANTS[split]
    # ACCENTS_V1: its 'en-gb' voices are all the plain voice (zoo.speech.voices), kept so
    # that the corpus, its shipped samples and the 'espeak' weights stay as registered.
    voice = (f'{ACCENTS_V1[rng.integers(len(ACCENTS_V1))]}+'
             f'{variants[rng.integers(len(variants))]}')
    speed, pitch = int(rng.integers(120, 201)), int(rng.integers(25, 76))
    return text, voice, degrade(trim_silence(speak(text, voice, speed, pitch)), rng)


def default_directory():
    """``$MINIDL_HOME/datasets/speech``, else ``~/.minidl/datasets/speech``."""
    home = os.environ.get('MINIDL_HOME') or os.path.join(os.path.expanduser('~'), '.minidl')
    return os.path.join(home, 'datasets', 'speech')


def _save(path, arrays):
    temporary = f'{path}.{os.getpid()}.partial'
    with open(temporary, 'wb') as file:
        np.savez_compressed(file, **arrays)
    os.replace(temporary, path)


def build(split, count, seed=0, vocabulary='train', start=0):
    """Arrays (as :func:`generate` stores them) of utterances ``start .. start + count - 1``."""
    check_installed_variants()
    frames, transcripts, voices, durations = [], [], [], []
    for index in range(start, start + count):
        text, voice, wave = utterance(split, index, seed, vocabulary)
        frames.append(features(wave, RATE, bins=BINS).astype(np.float16))
        transcripts.append(text)
        voices.append(voice)
        durations.append(wave.size / RATE)
    return {'features': np.concatenate(frames),
            'offsets': np.cumsum([0] + [len(f) for f in frames]).astype(np.int64),
            'transcripts': np.array(transcripts, dtype=str),
            'voices': np.array(voices, dtype=str),
            'durations': np.array(durations, np.float32)}


def generate(split, count, seed=0, vocabulary='train', directory=None):
    """Generate (or find cached) ``count`` utterances of a split; return the npz path.

    Args:
        split: ``'train'``, ``'test'`` (held-out voices) or ``'transfer'``.
        count: Number of utterances (the first ``count`` of the split's stream).
        seed: Non-negative integer.
        vocabulary: ``'train'`` or ``'transfer'`` (see :mod:`zoo.speech.texts`).
        directory: Cache directory; default :func:`default_directory`.

    Returns:
        Path of ``speech-<split>-<vocabulary>-<count>-seed<seed>-v<version>.npz``
        holding ``features`` (float16, all utterances' frames concatenated),
        ``offsets`` (utterance ``i`` is ``features[offsets[i]:offsets[i+1]]``),
        ``transcripts``, ``voices``, ``durations``; a JSON sidecar names its
        parameters. An existing file is reused.

    Raises:
        RuntimeError: If espeak-ng or one of its voice variants is missing.
    """
    _check_split(split, vocabulary)
    directory = directory or default_directory()
    os.makedirs(directory, exist_ok=True)
    name = f'speech-{split}-{vocabulary}-{count}-seed{seed}-v{FORMAT_VERSION}'
    path = os.path.join(directory, name + '.npz')
    if not os.path.exists(path):
        _save(path, build(split, count, seed, vocabulary))
        with open(os.path.join(directory, name + '.json'), 'w') as file:
            json.dump({'split': split, 'count': count, 'seed': seed, 'vocabulary': vocabulary,
                       'format_version': FORMAT_VERSION, 'rate': RATE, 'bins': BINS}, file)
    return path


def from_arrays(arrays):
    """The :class:`Corpus` of arrays as :func:`build` returns them and :func:`generate`
    stores them: utterances' features stacked, split at ``offsets``, as float32."""
    stacked, offsets = arrays['features'], arrays['offsets']
    return Corpus(
        features=[stacked[a:b].astype(np.float32) for a, b in zip(offsets[:-1], offsets[1:])],
        transcripts=[str(text) for text in arrays['transcripts']],
        voices=[str(voice) for voice in arrays['voices']],
        durations=arrays['durations'].astype(np.float32))


def load(path):
    """The :class:`Corpus` stored at ``path`` by :func:`generate` (no pickle)."""
    with np.load(path, allow_pickle=False) as arrays:
        return from_arrays(arrays)


def load_sample(name):
    """The shipped sample ``'test'`` (test voices) or ``'train'`` (train voices), 250 utterances
    each, seed :data:`SAMPLE_SEED`, as a :class:`Corpus`."""
    if name not in ('test', 'train'):
        raise ValueError(f"the shipped samples are 'test' and 'train', got {name!r}")
    return load(os.path.join(SAMPLE_DIRECTORY, f'sample-{name}.npz'))


def load_sample_waves():
    """Three short shipped utterances as ``(int16 wave, rate, transcript, voice)`` tuples."""
    with np.load(os.path.join(SAMPLE_DIRECTORY, 'sample-waves.npz'), allow_pickle=False) as arrays:
        return [(arrays[f'wave{i}'], int(arrays['rate']), str(arrays['transcripts'][i]),
                 str(arrays['voices'][i])) for i in range(len(arrays['transcripts']))]


def _shorten_mantissas(half):
    """float16 values with the 2 lowest of their 10 mantissa bits cleared (a relative change
    below 2**-8), which makes them compress about 12% better."""
    return (half.view(np.uint16) & np.uint16(0xFFFC)).view(np.float16)


def write_sample(directory=SAMPLE_DIRECTORY):
    """Write the shipped sample (see :func:`load_sample`, :func:`load_sample_waves`).

    Its features are :func:`build`'s with float16 mantissas cut to 8 bits, so that the
    two 250-utterance splits fit in under 4 MB."""
    os.makedirs(directory, exist_ok=True)
    for split in ('test', 'train'):
        arrays = build(split, SAMPLE_COUNT, SAMPLE_SEED)
        arrays['features'] = _shorten_mantissas(arrays['features'])
        _save(os.path.join(directory, f'sample-{split}.npz'), arrays)
    waves, transcripts, voices = {}, [], []
    # A word, a digit string and a sentence.
    for position, index in enumerate((0, 1, 3)):
        text, voice, wave = utterance('test', index, SAMPLE_SEED)
        waves[f'wave{position}'] = np.round(wave * 32767).astype(np.int16)
        transcripts.append(text)
        voices.append(voice)
    _save(os.path.join(directory, 'sample-waves.npz'),
          dict(waves, rate=np.array(RATE), transcripts=np.array(transcripts, dtype=str),
               voices=np.array(voices, dtype=str)))


if __name__ == '__main__':
    parser = argparse.ArgumentParser(description='Generate the espeak-ng speech corpus.')
    parser.add_argument('--sample', action='store_true', help='rewrite the shipped sample')
    parser.add_argument('--split', default='train', choices=sorted(_SPLIT_CODES))
    parser.add_argument('--count', type=int, default=1000)
    parser.add_argument('--seed', type=int, default=0)
    parser.add_argument('--vocabulary', default='train', choices=sorted(_VOCABULARY_CODES))
    parser.add_argument('--directory', default=None)
    arguments = parser.parse_args()
    if arguments.sample:
        write_sample()
    else:
        print(generate(arguments.split, arguments.count, arguments.seed, arguments.vocabulary,
                       arguments.directory))
