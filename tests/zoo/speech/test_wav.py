"""Reading WAV files: every sample width and channel count the wave module reads, and clear
errors for the files it cannot."""

import numpy as np
import pytest

from zoo.speech.wav import read_wav
from tests.zoo.speech.wav_files import write_float_wav, write_wav

# Values exactly representable at 8 bits, so every width reads them back exactly.
VALUES = np.array([0.0, 0.5, -0.5, 0.25, -1.0, 127 / 128])


@pytest.mark.parametrize('width', [1, 2, 3, 4])
def test_every_pcm_width_reads_back_its_values(tmp_path, width):
    wave, rate = read_wav(write_wav(tmp_path / 'a.wav', VALUES, 16000, width))
    assert rate == 16000 and wave.dtype == np.float64
    np.testing.assert_array_equal(wave, VALUES)


def test_channels_are_averaged(tmp_path):
    stereo = np.stack([VALUES, np.zeros_like(VALUES)], axis=1)
    wave, rate = read_wav(write_wav(tmp_path / 's.wav', stereo, 44100))
    assert rate == 44100
    np.testing.assert_allclose(wave, VALUES / 2, atol=2 ** -15)


def test_files_it_cannot_read_say_why(tmp_path):
    with pytest.raises(FileNotFoundError, match='no such WAV file'):
        read_wav(tmp_path / 'missing.wav')
    empty = tmp_path / 'empty.wav'
    empty.write_bytes(b'')
    with pytest.raises(ValueError, match='empty'):
        read_wav(empty)
    text = tmp_path / 'text.wav'
    text.write_text('hello world, this is not a wave file at all')
    with pytest.raises(ValueError, match='not a WAV file'):
        read_wav(text)
    with pytest.raises(ValueError, match='other than plain PCM.*convert'):
        read_wav(write_float_wav(tmp_path / 'float.wav', VALUES, 16000))
    with pytest.raises(ValueError, match='no samples'):
        read_wav(write_wav(tmp_path / 'none.wav', np.zeros(0), 16000))
    cut = tmp_path / 'cut.wav'
    cut.write_bytes(write_wav(tmp_path / 'whole.wav', VALUES, 16000).read_bytes()[:20])
    with pytest.raises(ValueError, match=str(cut)):
        read_wav(cut)
