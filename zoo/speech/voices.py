"""Who speaks the synthetic corpus: espeak-ng accents and voice variants, split by variant.

A voice is an accent (one of espeak-ng's eight ``gmw`` English voices) with a
variant (a file of espeak-ng-data's ``voices/!v``), named ``accent+variant``
as espeak-ng's ``-v`` takes it (:func:`voice_name`), or an accent's own
:data:`PLAIN` voice, which ``espeak-ng`` speaks with when given no ``-v``.
The splits are fixed lists of variants written here, so they are the same on
every machine: the ``'test'`` variants are held out (never heard in
training, with any accent), the ``'transfer'`` variants are kept for
fine-tuning experiments, and ``'train'`` has the rest. The variant ``Mr
serious`` is left out (its name has a space).

espeak-ng 1.51 drops a variant after ``en-gb``, the name of a language, but
reads it after ``en``, the name of the same voice file: ``en-gb+f3`` speaks
as plain ``en-gb`` whatever the variant, ``en+f3`` as ``f3``. The
closed-vocabulary corpus and the open corpus's first version named the
accent ``en-gb`` (:data:`ACCENTS_V1`), so an eighth of their voices, in every
split, were the plain British voice; :data:`ACCENTS` names it ``en``.
"""

import os
import re
import shutil
import subprocess

ACCENTS = ('en', 'en-us', 'en-gb-scotland', 'en-gb-x-gbclan', 'en-gb-x-rp', 'en-gb-x-gbcwmd',
           'en-029', 'en-us-nyc')
# As the closed corpus (and the open corpus's version 1) names them; see above.
ACCENTS_V1 = ('en-gb',) + ACCENTS[1:]
# An accent without a variant: espeak-ng's own voice for it.
PLAIN = 'plain'

VARIANTS = {
    'test': ('f3', 'm3', 'klatt3', 'robert', 'Annie', 'Michael', 'belinda', 'grandpa', 'iven2',
             'steph2', 'travis', 'zac'),
    'transfer': ('f4', 'm6', 'klatt5', 'Andy', 'Gene2', 'anika', 'boris', 'edward2', 'linda',
                 'norbert', 'quincy', 'shelby'),
    'train': (
        'Alex', 'Alicia', 'Andrea', 'AnxiousAndy', 'Demonic', 'Denis', 'Diogo', 'Gene',
        'Henrique', 'Hugo', 'Jacky', 'Lee', 'Marco', 'Mario', 'Mike', 'Nguyen', 'RicishayMax',
        'RicishayMax2', 'RicishayMax3', 'Storm', 'Tweaky', 'UniRobot', 'adam', 'anikaRobot',
        'announcer', 'antonio', 'aunty', 'benjamin', 'caleb', 'croak', 'david', 'ed', 'edward',
        'f1', 'f2', 'f5', 'fast', 'grandma', 'gustave', 'iven', 'iven3', 'iven4', 'john',
        'kaukovalta', 'klatt', 'klatt2', 'klatt4', 'klatt6', 'm1', 'm2', 'm4', 'm5', 'm7', 'm8',
        'marcelo', 'max', 'michel', 'miguel', 'pablo', 'paul', 'pedro', 'rob', 'robosoft',
        'robosoft2', 'robosoft3', 'robosoft4', 'robosoft5', 'robosoft6', 'robosoft7',
        'robosoft8', 'sandro', 'steph', 'steph3', 'victor', 'whisper', 'whisperf'),
}

INSTALL_HINT = ('the speech corpus is synthesised by espeak-ng (1.51 was used): install it, '
                'e.g. `apt-get install espeak-ng`, or use the shipped sample '
                '(zoo.speech.corpus.load_sample)')


def voice_name(accent, variant):
    """The name espeak-ng's ``-v`` takes: ``accent+variant``, or ``accent`` for :data:`PLAIN`."""
    return accent if variant == PLAIN else f'{accent}+{variant}'


def variant_of(voice):
    """The variant of a voice name ``accent+variant``; :data:`PLAIN` for an accent alone."""
    return voice.split('+', 1)[1] if '+' in voice else PLAIN


def split_of(voice):
    """The split (``'train'``, ``'test'`` or ``'transfer'``) whose variants include ``voice``'s;
    the :data:`PLAIN` voices are training voices (the open corpus trains on them)."""
    variant = variant_of(voice)
    if variant == PLAIN:
        return 'train'
    for split, variants in VARIANTS.items():
        if variant in variants:
            return split
    raise ValueError(f'voice {voice!r} has variant {variant!r}, in no split')


def espeak():
    """The path of the espeak-ng program.

    Raises:
        RuntimeError: If espeak-ng is not installed (says what to install).
    """
    path = shutil.which('espeak-ng')
    if path is None:
        raise RuntimeError(f'espeak-ng not found; {INSTALL_HINT}')
    return path


def espeak_environment():
    """A fixed environment for espeak-ng, so that its output does not depend on the caller's."""
    return {'PATH': os.defpath, 'LANG': 'C.UTF-8', 'LC_ALL': 'C.UTF-8', 'HOME': '/nonexistent'}


def check_installed_variants():
    """Raise if the installed espeak-ng lacks a variant listed in :data:`VARIANTS`.

    Raises:
        RuntimeError: Naming the missing variants, or if espeak-ng is absent.
    """
    listing = subprocess.run([espeak(), '--voices=variant'], capture_output=True, text=True,
                             env=espeak_environment(), check=True).stdout
    installed = set(re.findall(r'!v/(\S+)', listing))
    wanted = {variant for variants in VARIANTS.values() for variant in variants}
    missing = sorted(wanted - installed)
    if missing:
        raise RuntimeError(f'the installed espeak-ng lacks the voice variants {missing}; the '
                           f'corpus splits need all of them ({INSTALL_HINT})')
