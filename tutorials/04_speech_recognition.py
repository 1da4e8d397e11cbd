"""Lesson 4: speech recognition, end to end.

1. Features: three utterances spoken by espeak-ng voices (shipped with the
   package) become log mel filterbank features, 100 frames a second.
2. Training: a small Deep Speech 2 learns from the 250 shipped utterances of
   training voices with the CTC loss (``compile(loss='ctc')``; padded,
   length-sorted batches through ``fit_generator``). The labels of a padded
   batch end in zeros, the CTC blank, and the model finds each utterance's
   length from its non-zero frames: no side arrays.
3. The pretrained ``zoo.DeepSpeech2(weights='espeak')``, trained on 8,000
   utterances by ``python -m zoo.training.speech``: its CTC output over time
   for an utterance of a voice it never heard: spikes of characters between
   long stretches of blank.
4. Decoding: greedy (best path), CTC prefix beam search, and beam search with
   a character 5-gram language model and a word bonus, as Deep Speech 2
   decodes; character and word error rates on the held-out voices.

    python tutorials/04_speech_recognition.py [output directory] [--full]

The files go to the output directory (default ``demo_output``). Without
``--full`` the small model trains for 3 epochs and the decoders read 40
held-out utterances; ``--full`` trains 30 epochs and decodes all 250. The
quick mode took 19 s as one process on a 2-core AMD EPYC that other work
shared (load average 4.8), 2026-11-27.
"""

import argparse
import pathlib
import sys

import numpy as np

import minidl
import zoo
from minidl.optimizers import Adam
from zoo import speech
from zoo.training.speech import ALPHA, BEAM_WIDTH, BETA, PRUNE, language_model

FULL = {'epochs': 30, 'utterances': 250}
QUICK = {'epochs': 3, 'utterances': 40}


def show_features(output_dir):
    """Plot the waves of the shipped utterances and their log mel features."""
    import matplotlib
    matplotlib.use('Agg')
    import matplotlib.pyplot as plt
    waves = speech.corpus.load_sample_waves()
    figure, axes = plt.subplots(2, len(waves), figsize=(4 * len(waves), 5))
    for column, (wave, rate, transcript, voice) in enumerate(waves):
        frames = speech.features(wave, rate)
        print(f'"{transcript}" ({voice}): {len(wave) / rate:.2f} s, features {frames.shape}')
        axes[0, column].plot(np.arange(len(wave)) / rate, wave / 32768, linewidth=0.3)
        axes[0, column].set(title=f'"{transcript}"\n{voice}', xlabel='seconds')
        axes[1, column].imshow(frames.T, origin='lower', aspect='auto', cmap='magma')
        axes[1, column].set(xlabel='frame (10 ms)', ylabel='mel bin')
    figure.tight_layout()
    figure.savefig(output_dir / 'speech_features.png', dpi=80)
    plt.close(figure)


def train_small_model(epochs):
    """A small Deep Speech 2 trained from scratch on the shipped training sample."""
    minidl.set_seed(0)
    training = speech.corpus.load_sample('train')
    model = zoo.DeepSpeech2(filters=8, rnn_layers=2, units=64)
    model.compile(Adam(2e-3), loss='ctc')
    batches = speech.SpeechBatches(training.features, training.transcripts, batch_size=16)
    history = model.fit_generator(batches, epochs=epochs, shuffle=True, verbose=2)
    losses = history.history['loss']
    print(f'small model ({model.count_params():,} parameters): CTC loss per utterance '
          f'{losses[0]:.1f} after epoch 1, {losses[-1]:.1f} after epoch {epochs}')
    return losses


def show_ctc_output(model, utterance, transcript, output_dir):
    """Plot the per-frame probabilities of the blank and of each character.

    Each character's curve has a colour of its own and its letter stands over
    each of its spikes (where it is the most probable output), so no legend
    covers them; the blank is the grey area."""
    import matplotlib
    matplotlib.use('Agg')
    import matplotlib.pyplot as plt
    probabilities = speech.output_probabilities(model, [utterance])[0]
    greedy = speech.transcribe(model, [utterance])[0]
    figure, axes = plt.subplots(2, 1, figsize=(10, 5.5), sharex=True)
    axes[0].imshow(utterance.T, origin='lower', aspect='auto', cmap='magma',
                   extent=(0, len(probabilities), 0, utterance.shape[1]))
    axes[0].set(ylabel='mel bin', title=f'said: "{transcript}"; greedy decoding: "{greedy}"')
    frames = np.arange(len(probabilities))
    best = probabilities.argmax(axis=1)
    axes[1].fill_between(frames, probabilities[:, 0], color='0.88', label='blank')
    # Colours in the order the characters first win a frame: tab20's ten strong colours,
    # then its ten pale ones darkened to stay readable as text: 20 distinct ones.
    winners = [index for index in dict.fromkeys(best) if index]
    tab20 = plt.get_cmap('tab20').colors
    colours = tab20[0::2] + tuple(tuple(0.7 * channel for channel in colour)
                                  for colour in tab20[1::2])
    for number, index in enumerate(winners):
        character = speech.ENGLISH.characters[index - 1]
        colour = colours[number % len(colours)]
        axes[1].plot(frames, probabilities[:, index], color=colour, linewidth=1.5)
        # A label over each run of frames that the character wins.
        won = np.flatnonzero(best == index)
        for run in np.split(won, np.flatnonzero(np.diff(won) > 1) + 1):
            peak = run[probabilities[run, index].argmax()]
            axes[1].text(peak, probabilities[peak, index] + 0.03,
                         '\u2423' if character == ' ' else character, color=colour,
                         ha='center', va='bottom', fontsize=11, fontweight='bold')
    axes[1].set(xlabel='output frame (20 ms)', ylabel='probability', ylim=(0, 1.2),
                yticks=np.linspace(0, 1, 6))
    axes[1].legend(loc='upper left', bbox_to_anchor=(1.0, 1.0), fontsize='small',
                   handles=[axes[1].collections[0]],
                   title='\u2423 = space', title_fontsize='small')
    figure.tight_layout()
    figure.savefig(output_dir / 'speech_ctc_output.png', dpi=80)
    plt.close(figure)


def compare_decoders(model, held_out):
    """CER and WER of greedy, beam and beam + LM decoding; returns {decoder: (cer, wer)}."""
    lm = language_model()
    decoders = {'greedy': {},
                f'beam {BEAM_WIDTH}': {'beam_width': BEAM_WIDTH, 'prune': PRUNE},
                f'beam {BEAM_WIDTH} + 5-gram LM': {'beam_width': BEAM_WIDTH, 'prune': PRUNE,
                                                   'lm': lm, 'alpha': ALPHA, 'beta': BETA}}
    results, examples = {}, {}
    print('| decoding | CER | WER |\n|---|---|---|')
    for name, options in decoders.items():
        texts = speech.transcribe(model, held_out.features, **options)
        results[name] = (speech.cer(held_out.transcripts, texts),
                         speech.wer(held_out.transcripts, texts))
        examples[name] = texts
        print(f'| {name} | {results[name][0]:.2%} | {results[name][1]:.2%} |')
    # Where the decoders disagree shows what each adds.
    outputs = list(examples.values())
    differing = [index for index in range(len(held_out)) if len({texts[index] for texts in
                                                                  outputs}) > 1]
    width = max(map(len, examples)) + 2
    for index in (differing or list(range(len(held_out))))[:3]:
        print(f'\n{"said:":<{width}}{held_out.transcripts[index]}')
        for name, texts in examples.items():
            print(f'{name + ":":<{width}}{texts[index]}')
    return results


def main(output_dir, full=False):
    settings = FULL if full else QUICK
    output_dir = pathlib.Path(output_dir)
    output_dir.mkdir(parents=True, exist_ok=True)
    show_features(output_dir)
    losses = train_small_model(settings['epochs'])
    model = zoo.DeepSpeech2(weights='espeak')
    test = speech.corpus.load_sample('test')
    held_out = speech.corpus.Corpus(
        test.features[:settings['utterances']], test.transcripts[:settings['utterances']],
        test.voices[:settings['utterances']], test.durations[:settings['utterances']])
    show_ctc_output(model, held_out.features[1], held_out.transcripts[1], output_dir)
    return {'losses': losses, 'decoders': compare_decoders(model, held_out)}


if __name__ == '__main__':
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('output_dir', nargs='?', default='demo_output', type=pathlib.Path,
                        help='where the files go (default: demo_output)')
    parser.add_argument('--full', action='store_true', help='30 epochs, 250 utterances')
    args = parser.parse_args()
    sys.stdout.reconfigure(line_buffering=True)  # each line at once, also into a pipe or log
    main(args.output_dir, args.full)
