"""Where the open-vocabulary model's errors come from: voices it never heard, words it never saw.

    python -m zoo.training.speech_gaps                  # the registered model, 500 of each
    python -m zoo.training.speech_gaps --utterances 100 --weights deepspeech2_open.h5
    python -m zoo.training.speech_gaps --weights FILE.h5 --lm FILE_lm.json.gz   # with its LM

Four sets of utterances of :mod:`zoo.speech.open_corpus`, drawn from seed
:data:`SEED` (not the recipe's, so none is a training or test utterance):
the test split's texts (held-out words) and the training split's (training
words and template sentences, no everyday texts), each said by held-out voices
and by training voices. A text keeps its speed, pitch, pauses and noise
whoever says it (``open_corpus.utterance``'s ``voices``), so two sets of
one text split differ by the voices alone. Prints the CER and WER of greedy
decoding and of the beam with the language model for each set.
"""

import argparse

from zoo.speech import corpus, open_corpus, pretrained
from zoo.speech.language_model import CharNgramModel
from zoo.training import speech_open
from zoo.training.speech import CONFIG

SEED = 7
UTTERANCES = 500
# (text split, voices): words and voices both held out, then each alone, then neither.
SETS = (('test', 'test'), ('test', 'train'), ('train', 'test'), ('train', 'train'))


def utterances(texts, voices, count, vocabulary, seed=SEED):
    """The :class:`~zoo.speech.corpus.Corpus` of ``count`` utterances of split ``texts``
    said by ``voices``."""
    return corpus.from_arrays(open_corpus.build(texts, 0, count, vocabulary, seed,
                                                voices=voices))


def gaps(model, lm, count=UTTERANCES, vocabulary=None):
    """``{(texts, voices): {decoder: (CER, WER)}}`` for each of :data:`SETS`, decoders greedy
    and beam + ``lm`` (the registered decoding)."""
    vocabulary = vocabulary or open_corpus.Vocabulary()
    return {(texts, voices): speech_open.error_rates(
                model, utterances(texts, voices, count, vocabulary), lm, ('greedy', 'beam+lm'))
            for texts, voices in SETS}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--utterances', type=int, default=UTTERANCES, help='per set')
    parser.add_argument('--weights', help='a weight file of the recipe\'s DeepSpeech2 '
                                          '(default: the registered one)')
    parser.add_argument('--units', type=int, default=CONFIG['units'],
                        help='its recurrent width')
    parser.add_argument('--lm', help='a language model file of the recipe '
                                     '(default: the registered one)')
    args = parser.parse_args(argv)
    model = (pretrained.model_from_file(args.weights, args.units) if args.weights
             else pretrained.model())
    lm = CharNgramModel.load(args.lm) if args.lm else pretrained.language_model()
    rates = gaps(model, lm, args.utterances)
    words = {'test': 'held-out words', 'train': 'training words'}
    speakers = {'test': 'held-out voices', 'train': 'training voices'}
    for (texts, voices), row in rates.items():
        print(f'{words[texts]:>15}, {speakers[voices]:>15}: ' + ', '.join(
            f'{name} CER {character:.1%} WER {word:.1%}'
            for name, (character, word) in row.items()), flush=True)


if __name__ == '__main__':
    main()
