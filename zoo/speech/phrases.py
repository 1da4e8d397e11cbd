"""Everyday phrases as espeak-ng says them, and what a model writes: the README's phrase checks.

    python -m zoo.speech.phrases                    # the README's 11, espeak-ng's default speed
    python -m zoo.speech.phrases --set check --speeds default 140 210
    python -m zoo.speech.phrases --weights deepspeech2_open.h5   # a file of the recipe
    python -m zoo.speech.phrases --weights deepspeech2_open.h5 --lm deepspeech2_open_lm.json.gz

Each phrase is written to a WAV file by ``espeak-ng -w`` (its default voice,
at each speed asked for: ``-s`` words a minute, 175 by default) and
transcribed from that file as a user would (:func:`transcribe_file`), with
the registered model and decoding unless others are given. Two sets
(:mod:`zoo.speech.words`): ``'readme'``, the 11 phrases the README and the
speech recipe report (:data:`~zoo.speech.words.EVERYDAY_PHRASES`), and
``'check'``, 28 others written after the decoding was chosen and used only to
check choices made with the 11 (:data:`~zoo.speech.words.CHECK_PHRASES`).
"""

import argparse
import os
import subprocess
import tempfile

from zoo.speech import pretrained
from zoo.speech.language_model import CharNgramModel
from zoo.speech.transcribe import transcribe_file
from zoo.speech.voices import espeak, espeak_environment
from zoo.speech.words import CHECK_PHRASES, EVERYDAY_PHRASES

PHRASE_SETS = {'readme': EVERYDAY_PHRASES, 'check': CHECK_PHRASES}
# The registered decoding: the beam with the registered language model.
REGISTERED = {'beam+lm': {}}


def speak(phrase, path, speed=None):
    """Write ``phrase`` as ``espeak-ng -w path`` says it (``-s speed`` if given)."""
    speed_option = [] if speed is None else ['-s', str(int(speed))]
    subprocess.run([espeak(), '-w', os.fspath(path)] + speed_option + [phrase], check=True,
                   env=espeak_environment())


def hear(phrases, model=None, decoders=None, speeds=(None,)):
    """What each decoding writes for each phrase said at each speed.

    Args:
        phrases: Texts (lowercase words).
        model: A speech model; None for the registered one.
        decoders: ``{name: keyword arguments of transcribe_file}``; default
            :data:`REGISTERED` (the registered decoding).
        speeds: espeak-ng speeds (words a minute); None is its default.

    Returns:
        ``{(speed, phrase): {decoder name: text}}``, in the order asked.
    """
    decoders = REGISTERED if decoders is None else decoders
    heard = {}
    with tempfile.TemporaryDirectory() as directory:
        path = os.path.join(directory, 'phrase.wav')
        for speed in speeds:
            for phrase in phrases:
                speak(phrase, path, speed)
                heard[speed, phrase] = {name: transcribe_file(path, model=model, **options)
                                        for name, options in decoders.items()}
    return heard


def report(heard, decoder):
    """Lines for the console: per speed, how many phrases ``decoder`` wrote right, and the slips."""
    lines = []
    for speed in dict.fromkeys(speed for speed, _ in heard):
        rows = [(phrase, texts[decoder]) for (said_at, phrase), texts in heard.items()
                if said_at == speed]
        slips = [f'{phrase!r} -> {text!r}' for phrase, text in rows if text != phrase]
        lines.append(f'{decoder}, speed {speed or "default"}: {len(rows) - len(slips)} of '
                     f'{len(rows)} right' + (f'; {", ".join(slips)}' if slips else ''))
    return lines


def _speed(text):
    return None if text == 'default' else int(text)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--set', default='readme', choices=sorted(PHRASE_SETS),
                        help='which phrases (default: the README\'s 11)')
    parser.add_argument('--speeds', nargs='+', type=_speed, default=[None],
                        help='espeak-ng speeds in words a minute, or "default" (175)')
    parser.add_argument('--weights', help='weights of the registered architecture to try '
                                          '(default: the registered file)')
    parser.add_argument('--lm', help='a language model file of the recipe to decode with '
                                     '(default: the registered one)')
    args = parser.parse_args(argv)
    model = pretrained.model_from_file(args.weights) if args.weights else None
    decoders = {'beam+lm': {'lm': CharNgramModel.load(args.lm)}} if args.lm else REGISTERED
    heard = hear(PHRASE_SETS[args.set], model, decoders, speeds=args.speeds)
    print('\n'.join(report(heard, 'beam+lm')))
    right = sum(texts['beam+lm'] == phrase for (_, phrase), texts in heard.items())
    weights = args.weights or f'{pretrained.FAMILY} {pretrained.WEIGHTS!r}'
    print(f'{right} of {len(heard)} right with {weights}, the registered decoding '
          f'{pretrained.DECODER} and ' + (args.lm or 'its language model'))


if __name__ == '__main__':
    main()
