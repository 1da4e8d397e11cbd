"""An open vocabulary: the words of a large word list, split into training and held-out words.

The word list is Debian's ``wamerican`` (``/usr/share/dict/american-english``,
104,334 lines in version 2020.12.07-2), of which the entries of 2 to 14
lowercase letters are kept (:func:`load_words`: 63,240 words; proper nouns,
possessives and accented words are left out). Its SHA-256 after that
filtering is :data:`WORDLIST_SHA256`, checked by :func:`check_words` so that
a corpus is only generated from the list it was designed on.

A word is held out (never in a training text) when the first two bytes of its
SHA-256 are a multiple of :data:`HELD_OUT_MODULUS` (about one word in ten),
a rule of the word alone, so the split is the same for any list and any
order. :data:`COMMON_WORDS`, the words of :data:`EVERYDAY_PHRASES` and those of
the template corpus (:data:`zoo.speech.texts.VOCABULARY`) are always training
words: everyday speech is what a user says first, and the phrases are the
README's examples of it.
"""

import hashlib
import re

from zoo.speech.texts import VOCABULARY

WORDLIST_PATH = '/usr/share/dict/american-english'
WORDLIST_SHA256 = '3dc7a73b7671372a9856530df360ddea3e485ba75e8a0662a41fb9bd30acaf0f'
HELD_OUT_MODULUS = 10
_WORD = re.compile(r'[a-z]{2,14}')

# The README's phrases: what a new user says first.
EVERYDAY_PHRASES = (
    'hello world', 'good morning', 'thank you very much', 'how are you today',
    'see you tomorrow', 'what time is it', 'i love you', 'where is the station',
    'please open the door', 'have a nice day', 'turn on the light')

# Frequent English words (function words, everyday verbs and nouns), drawn as
# often as the rest of the list together, since everyday speech is mostly them.
COMMON_WORDS = tuple(sorted(set('''
a about after again all also always am an and any are around as ask at away back bad be
because been before being best better big black blue book both boy bring but buy by call
came can car carry cat children city close cold come could country cut day did do does dog
done door down draw drink drive each early eat eight end enough even every eye face fall
family far fast father feel find fine fire first five fly food for found four friend from
full funny game gave get girl give go good got great green grow had hand happy hard has have
he head hear hello help her here high him his hold home hot house how hurt i if in into is
it its jump just keep kind know last late laugh leave left let life light like little live
long look love made make man many may me mean money more morning most mother much music
must my name need never new next nice night no not now number of off often old on once one
only open or other our out over own paper people place play please pretty pull put read red
right room round run said same saw say school see seven shall she show sing sit six sleep
small so some soon start stay still stop story street study sun take talk tell ten than thank
that the their them then there these they thing think this those three time to today
together tomorrow too took town tree try turn two under until up upon us use very walk want
warm was wash watch water way we well went were what when where which while white who why
will wish with word work world would write year yellow yes yesterday you young your
'''.split()) | {word for phrase in EVERYDAY_PHRASES for word in phrase.split()}))

# A second set of everyday phrases, of training words only (two more that
# held a held-out word, 'later', were dropped), written after the README's
# decoder was chosen and used only to check choices made with the 11: a
# setting that writes more of those right but fewer of these is fitted to
# the 11, not better. Not part of COMMON_WORDS, so the corpus is unchanged.
CHECK_PHRASES = (
    'good night', 'how much is this', 'excuse me', 'where are you going', 'nice to meet you',
    'what is your name', 'i am sorry', 'good evening', 'are you ready', 'let me know',
    'how old are you', 'i do not know', 'come here please', 'what do you want',
    'thank you so much', 'open the window', 'close the door', 'it is cold today',
    'where do you live', 'i am hungry', 'can you help me', 'take care', 'happy birthday',
    'good luck', 'see you soon', 'wait for me', 'i like it', 'what is this')


def filter_words(lines):
    """The sorted distinct entries of ``lines`` that are 2 to 14 lowercase letters."""
    return sorted({line.strip() for line in lines if _WORD.fullmatch(line.strip())})


def words_digest(words):
    """SHA-256 (hex) of ``words`` joined by newlines."""
    return hashlib.sha256('\n'.join(words).encode('ascii')).hexdigest()


def load_words(path=WORDLIST_PATH):
    """The filtered words of the word list at ``path`` (see :func:`filter_words`).

    Raises:
        RuntimeError: If the file is missing (says what to install).
    """
    try:
        with open(path, encoding='utf-8') as file:
            return filter_words(file)
    except FileNotFoundError:
        raise RuntimeError(f'no word list at {path}: the open-vocabulary corpus draws its '
                           f'words from Debian\'s wamerican, `apt-get install wamerican`') from None


def check_words(words, expected=None):
    """Raise unless ``words`` are the list the corpus was designed on.

    Args:
        words: The filtered word list.
        expected: Its SHA-256; default :data:`WORDLIST_SHA256`.

    Raises:
        RuntimeError: If the digests differ (another wamerican version).
    """
    expected = expected or WORDLIST_SHA256
    digest = words_digest(words)
    if digest != expected:
        raise RuntimeError(f'the word list has SHA-256 {digest} ({len(words)} words), not '
                           f'{expected}: the corpus was designed on wamerican 2020.12.07-2; '
                           'another version gives other utterances')


def _protected():
    return set(COMMON_WORDS) | set(VOCABULARY)


def is_held_out(word):
    """Whether ``word`` is a held-out word (never in training texts)."""
    if word in _protected():
        return False
    head = hashlib.sha256(word.encode('utf-8')).digest()[:2]
    return int.from_bytes(head, 'big') % HELD_OUT_MODULUS == 0


def split_words(words):
    """``(training words, held-out words)`` of a word list, each sorted.

    The training words are the list's other words together with
    :data:`COMMON_WORDS` and the template corpus's words (some of which the
    list may lack, such as ``i`` or ``o'clock``).
    """
    protected = _protected()
    held_out = sorted(word for word in words if is_held_out(word))
    held = set(held_out)
    training = sorted((set(words) - held) | protected)
    return training, held_out

