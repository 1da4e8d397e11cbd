"""Small data sets in the files and shapes that Keras 2's examples load.

Each fixture writes its data where the matching ``minidl.datasets`` loader
reads it, so the tests load data as the examples do. The contents follow
simple rules a model can learn in a few steps:

* images: scikit-learn's 8x8 handwritten digits, scaled up to MNIST's
  28x28 uint8 layout (real digits, so the label is learnable);
* reviews: positive ones use a few "praise" words, negative ones a few
  "complaint" words, among common filler words;
* newswires: each topic has its own signature words;
* colour images: noise only (the CIFAR tests check shapes and plumbing);
* sentence pairs: the "translation" is the sentence spelled backwards;
* bAbI stories: people move between places, and the question asks where
  the person who moved last is (the answer is the last place named);
* newsgroup posts: each group has its own signature words, and the GloVe
  file gives vectors to most of the words.
"""

import io
import pickle
import tarfile

import numpy as np
import pytest

DIGITS_TRAIN = 1400  # of the 1797 digits; the rest are the test split
PRAISE_RANKS = range(40, 50)
COMPLAINT_RANKS = range(50, 60)
REUTERS_TOPICS = 46


def ragged(texts):
    """A 1-D object array holding one list per element, as np.save stores Keras's texts."""
    array = np.empty(len(texts), dtype=object)
    for index, text in enumerate(texts):
        array[index] = list(text)
    return array


@pytest.fixture(scope='session')
def data_dir(tmp_path_factory):
    return tmp_path_factory.mktemp('keras_example_data')


@pytest.fixture(scope='session')
def mnist_npz(data_dir):
    """MNIST's mnist.npz layout: uint8 (n, 28, 28) images with values 0-255, uint8 labels."""
    sklearn_datasets = pytest.importorskip('sklearn.datasets')
    digits = sklearn_datasets.load_digits()
    # 0..16 -> 0..240, each pixel a 3x3 block: 24x24, then a 2-pixel border as MNIST has.
    images = np.kron(digits.images * 15, np.ones((3, 3)))
    images = np.pad(images, ((0, 0), (2, 2), (2, 2))).astype(np.uint8)
    labels = digits.target.astype(np.uint8)
    path = data_dir / 'mnist.npz'
    np.savez(path, x_train=images[:DIGITS_TRAIN], y_train=labels[:DIGITS_TRAIN],
             x_test=images[DIGITS_TRAIN:], y_test=labels[DIGITS_TRAIN:])
    return path


def _filler(rng, count, longest, vocabulary):
    lengths = rng.integers(20, longest, size=count)
    return [list(rng.integers(60, vocabulary, size=length)) for length in lengths]


@pytest.fixture(scope='session')
def imdb_npz(data_dir):
    """Keras's imdb.npz layout: reviews as lists of word ranks, labels 1 (positive) or 0.

    A quarter of each review's words are praise words (ranks 40-49) if it is
    positive, complaint words (ranks 50-59) if negative. Some reviews are
    longer than 400 words, and many use ranks above 5000, so ``maxlen`` and
    ``num_words`` have work to do.
    """
    rng = np.random.default_rng(11)

    def reviews(count):
        labels = rng.permutation(np.arange(count) % 2)
        texts = _filler(rng, count, 500, 25000)
        for text, label in zip(texts, labels):
            marked = rng.random(len(text)) < 0.25
            ranks = PRAISE_RANKS if label else COMPLAINT_RANKS
            for position in np.flatnonzero(marked):
                text[position] = int(rng.choice(ranks))
        return ragged(texts), labels.astype(np.int64)

    x_train, y_train = reviews(256)
    x_test, y_test = reviews(64)
    path = data_dir / 'imdb.npz'
    np.savez(path, x_train=x_train, y_train=y_train, x_test=x_test, y_test=y_test)
    return path


@pytest.fixture(scope='session')
def reuters_npz(data_dir):
    """Keras's reuters.npz layout: newswires as lists of word ranks, topics 0-45.

    Topic t's newswires contain its signature ranks 100 + 2t and 101 + 2t
    several times among filler words (ranks 300-2999, so some fall outside
    ``num_words=1000``).
    """
    rng = np.random.default_rng(12)
    count = 10 * REUTERS_TOPICS
    topics = rng.permutation(np.arange(count) % REUTERS_TOPICS)
    texts = [list(rng.integers(300, 3000, size=rng.integers(10, 60))) for _ in topics]
    for text, topic in zip(texts, topics):
        text.extend([100 + 2 * int(topic), 101 + 2 * int(topic)] * 3)
        rng.shuffle(text)
    path = data_dir / 'reuters.npz'
    np.savez(path, x=ragged(texts), y=topics.astype(np.int64))
    return path


@pytest.fixture(scope='session')
def cifar10_dir(data_dir):
    """CIFAR-10's python batches: 5 training batches of 13 noise images, a test batch of 16."""
    rng = np.random.default_rng(13)
    folder = data_dir / 'cifar-10-batches-py'
    folder.mkdir()
    for name, count in [(f'data_batch_{i}', 13) for i in range(1, 6)] + [('test_batch', 16)]:
        batch = {b'data': rng.integers(0, 256, (count, 3 * 32 * 32), dtype=np.uint8),
                 b'labels': [int(label) for label in rng.integers(0, 10, count)]}
        (folder / name).write_bytes(pickle.dumps(batch, protocol=2))
    return folder


@pytest.fixture(scope='session')
def sentence_pairs_file(data_dir):
    """A fra.txt-like file: "source<TAB>target" lines, the target spelled backwards."""
    rng = np.random.default_rng(14)
    words = ['go', 'run', 'stop', 'wait', 'help', 'hello', 'smile', 'relax', 'jump', 'sing']
    lines = []
    for _ in range(48):
        sentence = ' '.join(rng.choice(words, size=rng.integers(1, 3)))
        lines.append(f'{sentence}\t{sentence[::-1]}')
    path = data_dir / 'fra.txt'
    path.write_text('\n'.join(lines) + '\n', encoding='utf-8')
    return path


BABI_PEOPLE = ['Mary', 'John', 'Sandra', 'Daniel']
BABI_PLACES = ['bathroom', 'hallway', 'kitchen', 'garden', 'office', 'bedroom']
BABI_VERBS = ['moved to', 'went to', 'journeyed to', 'travelled to']
BABI_OBJECTS = ['football', 'milk', 'apple']
NEWSGROUPS = ['alt.atheism', 'comp.graphics', 'rec.autos', 'sci.space']


def _babi_single_fact(rng, stories):
    """Task 1's text format: numbered sentences, then "N Where is P? \tplace\tsupport"."""
    lines = []
    for _ in range(stories):
        number = 1
        for _ in range(2):  # two questions per story, each after two moves
            for _ in range(2):
                person, place = rng.choice(BABI_PEOPLE), rng.choice(BABI_PLACES)
                lines.append(f'{number} {person} {rng.choice(BABI_VERBS)} the {place}.')
                number += 1
            lines.append(f'{number} Where is {person}? \t{place}\t{number - 1}')
            number += 1
    return '\n'.join(lines) + '\n'


def _babi_two_facts(rng, stories):
    """Task 2's text format: "N Where is the object? \tplace\tS1 S2" (who got it, where
    they went last)."""
    lines = []
    for _ in range(stories):
        person, thing = rng.choice(BABI_PEOPLE), rng.choice(BABI_OBJECTS)
        lines.append(f'1 {person} got the {thing} there.')
        other = rng.choice([p for p in BABI_PEOPLE if p != person])
        lines.append(f'2 {other} {rng.choice(BABI_VERBS)} the {rng.choice(BABI_PLACES)}.')
        place = rng.choice(BABI_PLACES)
        lines.append(f'3 {person} {rng.choice(BABI_VERBS)} the {place}.')
        lines.append(f'4 Where is the {thing}? \t{place}\t1 3')
    return '\n'.join(lines) + '\n'


@pytest.fixture(scope='session')
def babi_home(tmp_path_factory):
    """A cache directory (for MINIDL_HOME) whose datasets/ holds babi-tasks-v1-2.tar.gz,
    with the task files the bAbI examples read, in the archive's layout."""
    home = tmp_path_factory.mktemp('babi_home')
    (home / 'datasets').mkdir()
    rng = np.random.default_rng(15)
    files = {'tasks_1-20_v1-2/en-10k/qa1_single-supporting-fact_{}.txt': _babi_single_fact,
             'tasks_1-20_v1-2/en/qa2_two-supporting-facts_{}.txt': _babi_two_facts}
    with tarfile.open(home / 'datasets' / 'babi-tasks-v1-2.tar.gz', 'w:gz') as archive:
        for pattern, stories in files.items():
            for split, count in (('train', 480), ('test', 60)):
                data = stories(rng, count).encode('utf-8')
                member = tarfile.TarInfo(pattern.format(split))
                member.size = len(data)
                archive.addfile(member, io.BytesIO(data))
    return home


@pytest.fixture(scope='session')
def newsgroups_and_glove(data_dir):
    """``(glove_dir, text_data_dir)``: glove.6B.100d.txt (one word and 100 numbers a line)
    for words w0..w1499, and a 20_newsgroup-like tree: one folder per group, posts in
    files with numeric names, a header before the first blank line.

    Group g's posts repeat its signature words w(10 g)..w(10 g + 9) among filler
    words w100..w1999 (those above w1499 have no vector).
    """
    rng = np.random.default_rng(16)
    glove_dir = data_dir / 'glove.6B'
    glove_dir.mkdir()
    with open(glove_dir / 'glove.6B.100d.txt', 'w') as file:
        for index in range(1500):
            vector = ' '.join(f'{value:.4f}' for value in rng.normal(0, 0.5, 100))
            file.write(f'w{index} {vector}\n')
    text_dir = data_dir / '20_newsgroup'
    for group_index, group in enumerate(NEWSGROUPS):
        (text_dir / group).mkdir(parents=True)
        for post in range(40):
            words = [f'w{index}' for index in rng.integers(100, 2000, rng.integers(100, 400))]
            words += [f'w{10 * group_index + k}' for k in range(10)] * 8
            rng.shuffle(words)
            text = f'From: someone@example.com\nSubject: {group}\n\n' + ' '.join(words)
            (text_dir / group / str(51000 + post)).write_text(text, encoding='latin-1')
        (text_dir / group / 'README').write_text('not a post', encoding='latin-1')
    return glove_dir, text_dir


@pytest.fixture(scope='session')
def ocr_wordlists_home(tmp_path_factory):
    """A cache directory (for MINIDL_HOME) whose datasets/wordlists.tgz.tar.gz holds
    image_ocr's wordlist_mono_clean.txt (a word a line, most common first) and
    wordlist_bi_clean.txt (two words and a count a line), of made-up lower-case words."""
    home = tmp_path_factory.mktemp('ocr_home')
    (home / 'datasets').mkdir()
    rng = np.random.default_rng(17)
    letters = list('abcdefghijklmnopqrstuvwxyz')

    def word(longest):
        return ''.join(rng.choice(letters, size=rng.integers(1, longest + 1)))

    files = {'wordlist_mono_clean.txt': [word(4) for _ in range(600)],
             'wordlist_bi_clean.txt': [f'{word(3)} {word(3)} {count}'
                                       for count in range(600, 0, -1)]}
    with tarfile.open(home / 'datasets' / 'wordlists.tgz.tar.gz', 'w:gz') as archive:
        for name, lines in files.items():
            data = ('\n'.join(lines) + '\n').encode('utf-8')
            member = tarfile.TarInfo(name)
            member.size = len(data)
            archive.addfile(member, io.BytesIO(data))
    return home
