"""Registered pretrained weights: where each file is, its SHA-256, and what it was trained on.

Every file registered here was trained by minidl itself, by the script named
in its entry (``zoo/training/``), which writes the same bits again on the
same kind of machine. The files ship inside the package (``zoo/weights/``)
and are fetched like any download, through :func:`minidl.utils.get_file`
from a ``file://`` origin: copied into the cache (``~/.minidl/models``, or
``$MINIDL_HOME/models``), checked against the SHA-256 recorded here, and
refused if they differ. A mirror can be named with ``MINIDL_ZOO_ORIGIN``
(a URL prefix to which the file name is appended).
"""

import dataclasses
import os
import pathlib

import h5py

from minidl.utils import get_file

WEIGHTS_DIR = pathlib.Path(__file__).resolve().parent / 'weights'


@dataclasses.dataclass(frozen=True)
class WeightFile:
    """One registered weight file.

    Attributes:
        family: The constructor's family name ('resnet20', 'alexnet_small').
        name: The name passed as ``weights=`` ('glyphs').
        file_name: The file's name in the cache and under ``zoo/weights``.
        sha256: Its SHA-256, hex.
        classes: Width of its top (a speech model's outputs per frame).
        input_shape: The input shape it was trained at.
        evaluated_on: What the held-out data of its scores was.
        script: The training script that writes the file.
        accuracy: An image classifier's top-1 accuracy on that data.
        cer: A speech model's character error rate there, greedy decoding.
        cer_with_lm: Its character error rate with beam search and the
            language model of :attr:`config`'s recipe.
        wer, wer_with_lm: Its word error rates, greedy and with the language model.
        language_model: File name of the character language model its
            ``cer_with_lm`` used, shipped beside it (gzipped JSON), or None
            when the recipe counts it again from generated texts.
        language_model_sha256: That file's SHA-256, hex.
        config: The constructor's arguments for the file's architecture
            (speech models, whose sizes are not fixed by the family name).
    """

    family: str
    name: str
    file_name: str
    sha256: str
    classes: int
    input_shape: tuple
    evaluated_on: str
    script: str
    accuracy: float = None
    cer: float = None
    cer_with_lm: float = None
    wer: float = None
    wer_with_lm: float = None
    language_model: str = None
    language_model_sha256: str = None
    config: dict = None

    @property
    def origin(self):
        return _origin(self.file_name)

    def fetch(self):
        """Path of the verified file in the cache (copied there the first time)."""
        return get_file(self.file_name, self.origin, file_hash=self.sha256,
                        cache_subdir='models')

    def fetch_language_model(self):
        """Path of the verified language model file in the cache, fetched as :meth:`fetch`."""
        if self.language_model is None:
            raise ValueError(f'{self.family} weights {self.name!r} ship no language model')
        return get_file(self.language_model, _origin(self.language_model),
                        file_hash=self.language_model_sha256, cache_subdir='models')


def _origin(file_name):
    """Where a registered file is fetched from: the mirror, else the package's copy."""
    mirror = os.environ.get('MINIDL_ZOO_ORIGIN')
    if mirror:
        return mirror.rstrip('/') + '/' + file_name
    return (WEIGHTS_DIR / file_name).as_uri()


_REGISTRY = {}


def register(weight_file):
    """Add ``weight_file`` to the registry (its family and name must be new)."""
    key = (weight_file.family, weight_file.name)
    if key in _REGISTRY:
        raise ValueError(f'weights {weight_file.name!r} are already registered for '
                         f'{weight_file.family}')
    _REGISTRY[key] = weight_file


def lookup(family, name):
    """The registered :class:`WeightFile` called ``name`` for ``family``, or None."""
    if not isinstance(name, str):
        return None
    return _REGISTRY.get((family, name))


def names(family):
    """The registered weight names of ``family``."""
    return sorted(name for registered, name in _REGISTRY if registered == family)


def entries():
    """Every registered :class:`WeightFile`."""
    return list(_REGISTRY.values())


def load_by_name(model, path):
    """Load the weights in ``path`` into the layers of ``model`` with the same names.

    Unlike a bare ``load_weights(by_name=True)``, a layer of the model with
    weights that the file lacks is an error, so a file of another
    architecture cannot load silently into part of the model. Layers of the
    file that the model lacks (the top, with ``include_top=False``) are
    ignored.
    """
    with h5py.File(path, 'r') as file:
        group = file['model_weights'] if 'model_weights' in file else file
        saved = {name.decode('utf8') if isinstance(name, bytes) else name
                 for name in group.attrs.get('layer_names', [])}
    missing = [layer.name for layer in model.layers if layer.weights and layer.name not in saved]
    if missing:
        raise ValueError(f'{path}: no weights for layer(s) {", ".join(missing[:5])}'
                         f'{" ..." if len(missing) > 5 else ""} of model {model.name!r}; is '
                         f'it a file for this architecture (zoo layer names)?')
    model.load_weights(path, by_name=True)


# Written and measured by `python -m zoo.training.glyphs <family>` (its last
# line), which evaluates on the 5,200 letters of glyphs.TEST_FONTS that training
# never sees: ResNet-20 in 29.6 min, the small AlexNet in 16.2 min on this
# project's 2-core machine, while other work shared it (about 17 and 11 min
# alone, from the epochs that ran undisturbed).
register(WeightFile(
    family='resnet20', name='glyphs', file_name='resnet20_glyphs.h5',
    sha256='135b0db474c82c4873f67f26aafcd57130c98b7cada5de6a100c7de294c57f83',
    classes=52, input_shape=(32, 32, 1),
    accuracy=0.9850, evaluated_on='glyph letters, the 5 test fonts (5,200 images)',
    script='zoo/training/glyphs.py'))
register(WeightFile(
    family='alexnet_small', name='glyphs', file_name='alexnet_small_glyphs.h5',
    sha256='d48001ef0cde2a7c80bf91e986516427eaddfc330ddf808c5f4f011a45293863',
    classes=52, input_shape=(32, 32, 1),
    accuracy=0.9810, evaluated_on='glyph letters, the 5 test fonts (5,200 images)',
    script='zoo/training/glyphs.py'))
# DeepSpeech2()'s default architecture, which both speech recipes train.
DEEPSPEECH2_DEFAULT = {'input_dim': 40, 'conv_layers': 1, 'filters': 32, 'rnn': 'gru',
                       'rnn_layers': 3, 'units': 160, 'merge_mode': 'sum',
                       'sequence_batch_norm': True}
# Written and measured by `python -m zoo.training.speech` (its last line): 10
# epochs on 8,000 generated utterances in 13.1 min on this project's 2-core
# machine; error rates on the 250 shipped utterances of the 12 test variants.
register(WeightFile(
    family='deepspeech2', name='espeak', file_name='deepspeech2_espeak.h5',
    sha256='9ceee9877ffc97a9e3b82c2ac087369a3e897cee9d7ce7a71e78867ba8c1cb3e',
    classes=29, input_shape=(None, 40),
    evaluated_on='espeak-ng utterances of held-out voices (zoo.speech.corpus.load_sample; '
                 'an eighth of them, accent en-gb, speak with the plain voice training heard)',
    script='zoo/training/speech.py', cer=0.0505, cer_with_lm=0.0321,
    config=DEEPSPEECH2_DEFAULT))
# The recipe's three runs (zoo.training.speech_open): at commit a75383d, 12
# epochs from a seeded start on 128,000 generated utterances of an open
# vocabulary (corpus version 2, 15 % everyday texts, 49.7 hours of speech;
# resumed across two sessions, 8 epochs then 4); at commit 76b1a93, that file
# fine-tuned for 3 epochs (--more-everyday --fine-tune) on 128,000 utterances
# with 30 % everyday texts, none holding an everyday or check phrase (50.4
# hours); at commit e781de9, that file fine-tuned for 3 more on 128,000 new
# utterances of the same kind (--seed 1, 50.6 hours); on this project's 2-core
# machines (step 1 on AMD EPYC cores, steps 2 and 3 on Intel Xeon ones). Error
# rates on the recipe's 500 test utterances: held-out voices saying words no
# training text contains. The language model
# (zoo.training.speech_open.language_model of more_everyday_english(): a
# character 10-gram of the corpus's training texts and everyday English
# without a held-out word or a judged phrase) ships beside the weights.
register(WeightFile(
    family='deepspeech2', name='open', file_name='deepspeech2_open.h5',
    sha256='c4be72e6a56b9cc846aeb86b324c7bfe5b00b40d095cfbb9c4632872d08c0bb4',
    classes=29, input_shape=(None, 40),
    evaluated_on='espeak-ng utterances of held-out voices saying held-out words '
                 '(zoo.training.speech_open, 500 test utterances)',
    script='zoo/training/speech_open.py', cer=0.1863, cer_with_lm=0.1626,
    wer=0.7886, wer_with_lm=0.6781, language_model='deepspeech2_open_lm.json.gz',
    language_model_sha256='e88cfd2ec8ab1ae38b472ddd0a0d670bd9fc684661cc1b22769f7dd7ab64d647',
    config=DEEPSPEECH2_DEFAULT))
