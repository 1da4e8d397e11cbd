"""Fine-tune the registered Deep Speech 2 on unseen voices saying unseen words, against scratch.

    python -m zoo.training.speech_transfer    # needs espeak-ng for the corpus (cached after)

The transfer split of :mod:`zoo.speech.corpus` has voices whose variants no
training utterance uses, and its texts are words that no training text
contains (:data:`zoo.speech.texts.TRANSFER_WORDS`). For each seed, the
model learns from :data:`UTTERANCES` utterances of that split drawn with
the seed and is measured (greedy CER) on :data:`TEST_UTTERANCES` others,
the same for every seed. Two starts, the same budget (:data:`EPOCHS` epochs
of the same batches, in the same seeded order):

* pretrained: ``zoo.DeepSpeech2(weights='espeak')``, every layer fine-tuned
  at a learning rate of :data:`FINE_TUNE_RATE`;
* from scratch: the same architecture, randomly initialised (seeded), at
  the recipe's rate :data:`zoo.training.speech.LEARNING_RATE`.

It prints the README's table: mean and spread (standard deviation) over the
seeds, and the pretrained model's error before fine-tuning.
"""

import argparse
import time

import numpy as np

import minidl
import zoo
from minidl.optimizers import Adam
from zoo.speech import corpus
from zoo.speech.batches import SpeechBatches
from zoo.speech.metrics import cer
from zoo.speech.transcribe import transcribe
from zoo.training.speech import LEARNING_RATE

SEEDS = (0, 1, 2)
UTTERANCES = 100
TEST_UTTERANCES = 200
TEST_SEED = 100
EPOCHS = 15
BATCH_SIZE = 16
FINE_TUNE_RATE = 5e-4


def transfer_data(seed, count):
    """``count`` utterances of the transfer voices saying transfer words, drawn with ``seed``."""
    return corpus.load(corpus.generate('transfer', count, seed=seed, vocabulary='transfer'))


def fine_tune(pretrained, training, test, seed, epochs=EPOCHS):
    """Greedy CER on ``test`` after ``epochs`` epochs on ``training``, from either start."""
    minidl.set_seed(seed)
    model = zoo.DeepSpeech2(weights='espeak' if pretrained else None)
    model.compile(Adam(FINE_TUNE_RATE if pretrained else LEARNING_RATE, clipnorm=5.0),
                  loss='ctc')
    model.fit_generator(SpeechBatches(training.features, training.transcripts, BATCH_SIZE),
                        epochs=epochs, shuffle=True, verbose=0)
    return cer(test.transcripts, transcribe(model, test.features))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--epochs', type=int, default=EPOCHS)
    args = parser.parse_args(argv)
    started = time.perf_counter()
    test = transfer_data(TEST_SEED, TEST_UTTERANCES)
    before = cer(test.transcripts, transcribe(zoo.DeepSpeech2(weights='espeak'), test.features))
    results = {True: [], False: []}
    for seed in SEEDS:
        training = transfer_data(seed, UTTERANCES)
        for pretrained in (True, False):
            results[pretrained].append(fine_tune(pretrained, training, test, seed, args.epochs))
            print(f'seed {seed}, {"pretrained" if pretrained else "from scratch"}: CER '
                  f'{results[pretrained][-1]:.4f}', flush=True)
    print(f'\n{len(SEEDS)} seeds in {(time.perf_counter() - started) / 60:.1f} min; pretrained '
          f'model before fine-tuning: CER {before:.2%}\n')
    print(f'| {UTTERANCES} utterances, {args.epochs} epochs | pretrained on espeak | '
          f'from scratch |\n|---|---|---|')
    print('| CER, unseen voices and words | ' + ' | '.join(
        f'{np.mean(results[pretrained]):.1%} ± {np.std(results[pretrained]):.1%}'
        for pretrained in (True, False)) + ' |')


if __name__ == '__main__':
    main()
