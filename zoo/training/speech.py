"""Train the zoo's registered Deep Speech 2 on the espeak-ng corpus, bit for bit.

    python -m zoo.training.speech            # needs espeak-ng for the corpus (cached after)
    python -m zoo.training.speech --epochs 1 --utterances 500   # a quick try

The recipe generates :data:`UTTERANCES` training utterances of the training
voices (:mod:`zoo.speech.corpus`, seed :data:`SEED`), trains
``zoo.DeepSpeech2(**CONFIG)`` with the CTC loss on length-sorted padded
batches visited in a seeded order, then measures the character error rate on
the held-out voices shipped with the package (``load_sample('test')``: voices
no training utterance uses), greedy and with the beam search and the
character language model of :func:`language_model`. It writes
``deepspeech2_espeak.h5`` (weights only) and prints its SHA-256 and the two
error rates, the figures :mod:`zoo.registry` records. Everything random
follows from the seed, so a rerun on the same kind of machine writes the same
bits; other CPUs may round differently (BLAS kernels differ).
"""

import argparse
import functools
import pathlib
import time

import minidl
from minidl.callbacks import LearningRateScheduler
from minidl.optimizers import Adam

import zoo
from zoo.speech import corpus, pretrained
from zoo.speech.batches import SpeechBatches
from zoo.speech.language_model import CharNgramModel
from zoo.speech.metrics import cer
from zoo.speech.texts import lm_texts
from zoo.speech.transcribe import transcribe
from zoo.training import schedule
from zoo.training.digest import file_digest

SEED = 0
UTTERANCES = 8000
CONFIG = {'input_dim': 40, 'conv_layers': 1, 'filters': 32, 'rnn': 'gru', 'rnn_layers': 3,
          'units': 160, 'merge_mode': 'sum', 'sequence_batch_norm': True}
EPOCHS = 10
DECAY_EPOCHS = (6, 9)
LEARNING_RATE = 2e-3
BATCH_SIZE = 32
# Decoding with the language model: a 5-gram over the corpus's texts, as Deep
# Speech 2 decodes (its weight alpha, a bonus beta per word), with the beam
# search that transcribe('x.wav') uses (zoo.speech.pretrained.DECODER).
LM_ORDER, LM_TEXTS, LM_SEED = 5, 20000, 1
BEAM_WIDTH, ALPHA, BETA, PRUNE = (pretrained.DECODER[key]
                                  for key in ('beam_width', 'alpha', 'beta', 'prune'))


@functools.lru_cache(maxsize=None)
def language_model():
    """The character 5-gram of the 'espeak' entry's error rate with a language model.

    Counted on sentences drawn from the corpus's text generators (seed
    :data:`LM_SEED`, a stream no split's transcripts use) in about a second.
    """
    return CharNgramModel.train(lm_texts(LM_TEXTS, seed=LM_SEED), order=LM_ORDER)


# The learning rate, divided by 10 at each epoch of DECAY_EPOCHS.
step_schedule = schedule.step_schedule(LEARNING_RATE, DECAY_EPOCHS)


def error_rates(model, data, lm):
    """``(greedy CER, CER with the beam search and lm)`` of ``model`` on ``data``."""
    greedy = transcribe(model, data.features)
    with_lm = transcribe(model, data.features, beam_width=BEAM_WIDTH, lm=lm, alpha=ALPHA,
                         beta=BETA, prune=PRUNE)
    return cer(data.transcripts, greedy), cer(data.transcripts, with_lm)


def train(output_dir, epochs=EPOCHS, utterances=UTTERANCES, verbose=2):
    """Train the recipe, save its weights in ``output_dir``; returns (path, cer, cer_with_lm)."""
    training = corpus.load(corpus.generate('train', utterances, seed=SEED))
    held_out = corpus.load_sample('test')
    minidl.set_seed(SEED)
    model = zoo.speech.DeepSpeech2(**CONFIG)
    model.compile(Adam(LEARNING_RATE, clipnorm=5.0), loss='ctc')
    started = time.perf_counter()
    model.fit_generator(SpeechBatches(training.features, training.transcripts, BATCH_SIZE),
                        epochs=epochs, shuffle=True, verbose=verbose,
                        callbacks=[LearningRateScheduler(step_schedule)])
    minutes = (time.perf_counter() - started) / 60
    path = pathlib.Path(output_dir) / 'deepspeech2_espeak.h5'
    model.save_weights(path)
    digest = file_digest(path)
    greedy, with_lm = error_rates(model, held_out, language_model())
    print(f'deepspeech2: {epochs} epochs on {utterances} utterances in {minutes:.1f} min; CER on '
          f'the held-out voices {greedy:.4f} greedy, {with_lm:.4f} with the language model; '
          f'{path} sha256 {digest}')
    return path, greedy, with_lm


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--output', default=str(pathlib.Path(zoo.__file__).parent / 'weights'),
                        help='directory of the weight file (default: zoo/weights)')
    parser.add_argument('--epochs', type=int, default=EPOCHS,
                        help='fewer epochs for a quick try (the registered file uses the default)')
    parser.add_argument('--utterances', type=int, default=UTTERANCES,
                        help='fewer training utterances for a quick try')
    args = parser.parse_args(argv)
    pathlib.Path(args.output).mkdir(parents=True, exist_ok=True)
    train(args.output, args.epochs, args.utterances)


if __name__ == '__main__':
    main()
