"""transcribe('file.wav'): espeak-ng's own WAV at 22050 Hz, the same speech in stereo, at
48000 and 8000 Hz, with silence around it, and files it refuses."""

import shutil
import subprocess

import numpy as np
import pytest

from zoo import speech
from zoo.speech import pretrained
from zoo.speech.wav import read_wav
from tests.zoo.speech.wav_files import write_float_wav, write_wav

PHRASE = 'call sarah at seven'
needs_espeak = pytest.mark.skipif(shutil.which('espeak-ng') is None,
                                  reason='espeak-ng is not installed')


def _fft_resample(wave, rate_in, rate_out):
    """Resampling by truncating the spectrum: not the code under test, to make test files."""
    size = int(round(wave.size * rate_out / rate_in))
    spectrum = np.fft.rfft(wave)
    kept = np.zeros(size // 2 + 1, complex)
    common = min(kept.size, spectrum.size)
    kept[:common] = spectrum[:common]
    return np.fft.irfft(kept, size) * size / wave.size


@pytest.fixture(scope='module')
def spoken(tmp_path_factory):
    """espeak-ng's WAV of PHRASE (22050 Hz, 16-bit, mono) and its samples."""
    path = tmp_path_factory.mktemp('espeak') / 'phrase.wav'
    subprocess.run(['espeak-ng', '-w', str(path), PHRASE], check=True)
    wave, rate = read_wav(path)
    assert rate == 22050
    return path, wave


@needs_espeak
def test_espeak_wav_mono_stereo_and_48k_are_transcribed(spoken, tmp_path):
    path, wave = spoken
    assert speech.transcribe(path) == PHRASE
    assert speech.transcribe(str(path)) == PHRASE
    stereo = write_wav(tmp_path / 'stereo.wav', np.stack([wave, 0.3 * wave], axis=1), 22050)
    assert speech.transcribe(stereo) == PHRASE
    high = write_wav(tmp_path / '48k.wav', _fft_resample(wave, 22050, 48000), 48000, width=3)
    assert speech.transcribe(high) == PHRASE


@needs_espeak
def test_silence_around_the_speech_changes_nothing(spoken, tmp_path):
    _, wave = spoken
    quiet = np.concatenate([np.zeros(22050), wave, np.zeros(33075)])
    assert speech.transcribe(write_wav(tmp_path / 'quiet.wav', quiet, 22050)) == PHRASE
    twice = np.concatenate([wave, np.zeros(22050), wave])
    assert (speech.transcribe(write_wav(tmp_path / 'twice.wav', twice, 22050))
            == f'{PHRASE} {PHRASE}')


@needs_espeak
def test_8khz_is_resampled_and_transcribed(spoken, tmp_path):
    _, wave = spoken
    low = write_wav(tmp_path / '8k.wav', _fft_resample(wave, 22050, 8000), 8000)
    text = speech.transcribe(low)
    # Telephone bandwidth (nothing above 4 kHz) is read and decoded; how well it
    # is understood is the registered model's matter (see the README).
    assert isinstance(text, str) and text
    greedy = speech.transcribe_file(low, beam_width=None)
    assert isinstance(greedy, str) and greedy


def test_a_silent_file_has_no_text(tmp_path):
    assert speech.transcribe(write_wav(tmp_path / 'silence.wav', np.zeros(8000), 8000)) == ''


def test_files_that_cannot_be_read_and_bad_calls_raise(tmp_path):
    empty = tmp_path / 'empty.wav'
    empty.write_bytes(b'')
    with pytest.raises(ValueError, match='empty'):
        speech.transcribe(empty)
    with pytest.raises(ValueError, match='other than plain PCM'):
        speech.transcribe(write_float_wav(tmp_path / 'f.wav', np.zeros(100), 8000))
    with pytest.raises(TypeError, match='transcribe_file'):
        speech.transcribe(empty, beam_width=4)
    with pytest.raises(TypeError, match='features are missing'):
        speech.transcribe(pretrained.model())
