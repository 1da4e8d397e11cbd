"""zoo.speech.phrases: phrases said by espeak-ng, written by the registered model and decoding,
counted the way the README counts them."""

from zoo.speech import phrases, words
from zoo.speech.wav import read_wav
from tests.zoo.speech.test_open_corpus import needs_espeak


def test_phrase_sets_are_the_words_modules():
    assert phrases.PHRASE_SETS['readme'] == words.EVERYDAY_PHRASES
    assert phrases.PHRASE_SETS['check'] == words.CHECK_PHRASES


def test_report_counts_each_speed_and_names_the_slips():
    heard = {(None, 'good night'): {'beam+lm': 'good night'},
             (None, 'take care'): {'beam+lm': 'take car'},
             (140, 'good night'): {'beam+lm': 'good night'},
             (140, 'take care'): {'beam+lm': 'take care'}}
    assert phrases.report(heard, 'beam+lm') == [
        "beam+lm, speed default: 1 of 2 right; 'take care' -> 'take car'",
        'beam+lm, speed 140: 2 of 2 right']


@needs_espeak
def test_speak_writes_slower_speech_at_a_lower_speed(tmp_path):
    lengths = []
    for speed in (None, 120):
        path = tmp_path / f'{speed}.wav'
        phrases.speak('see you tomorrow', path, speed)
        wave, rate = read_wav(path)
        assert rate == 22050
        lengths.append(wave.size)
    # 175 words a minute by default: 120 takes about 175 / 120 as long.
    assert 1.2 < lengths[1] / lengths[0] < 1.7, lengths


@needs_espeak
def test_hello_world_is_written_right_at_the_readmes_speeds():
    heard = phrases.hear(('hello world',), speeds=(None, 140),
                         decoders={'beam+lm': {}, 'greedy': {'beam_width': None}})
    assert [texts['beam+lm'] for texts in heard.values()] == ['hello world', 'hello world']
    assert list(heard) == [(None, 'hello world'), (140, 'hello world')]
    assert all(set(texts['greedy']) <= set('abcdefghijklmnopqrstuvwxyz \'')
               for texts in heard.values())


@needs_espeak
def test_the_command_line_prints_each_speed_and_the_total(capsys):
    phrases.main(['--speeds', 'default', '140'])
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith('beam+lm, speed default: ') and out[1].startswith('beam+lm, speed 140')
    assert out[-1].endswith(f'the registered decoding {phrases.pretrained.DECODER} and its '
                            'language model')
    right, total = out[-1].split(' right')[0].split(' of ')
    # The README: 10 of 11 at the default speed, all 11 at 140 (one may flip on another CPU).
    assert total == '22' and int(right) >= 20, out


@needs_espeak
def test_the_command_line_tries_a_weight_file(tmp_path, capsys):
    from zoo.speech.deepspeech import DeepSpeech2
    DeepSpeech2(weights='open').save_weights(tmp_path / 'same.h5')
    phrases.main(['--weights', str(tmp_path / 'same.h5')])
    out = capsys.readouterr().out.splitlines()
    # The registered weights under another name: the README's 10 of 11 (an untrained
    # model writes none right; one phrase may flip on another CPU).
    right, rest = out[-1].split(' of ', 1)
    assert int(right) >= 9 and rest.startswith(f'11 right with {tmp_path / "same.h5"}'), out


@needs_espeak
def test_the_command_line_decodes_with_a_language_model_file(tmp_path, capsys):
    path = tmp_path / 'copy_lm.json.gz'
    phrases.pretrained.language_model().save(path)
    phrases.main([])
    registered = capsys.readouterr().out.splitlines()
    phrases.main(['--lm', str(path)])
    copied = capsys.readouterr().out.splitlines()
    # The registered counts under another name: the same texts, the file named.
    assert copied[:-1] == registered[:-1] and copied[-1].endswith(f'and {path}'), copied
    assert copied[-1].split(' with ')[0] == registered[-1].split(' with ')[0]
