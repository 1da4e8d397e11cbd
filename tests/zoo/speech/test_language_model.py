import base64
import gzip
import json
import math

import numpy as np
import pytest

from zoo.speech.alphabet import ENGLISH, Alphabet
from zoo.speech import language_model
from zoo.speech.language_model import CharNgramModel

# A small realistic corpus: held-out sentences share words and spelling with it.
TRAIN = [
    'the cat sat on the mat', 'the dog sat on the log', 'a cat and a dog ran home',
    'the man ran to the cat', 'she sat on the mat with the dog', 'we ran home to the man',
    'the dog and the cat sat', 'he has a hat and a mat', 'they ran to the log and sat',
    'the hat is on the cat', 'a man and his dog sat on a log', 'she has the hat of the man',
]
HELD_OUT = ['the cat ran to the log', 'a dog sat on his mat', 'the man has a cat']

AB = Alphabet('ab')


def contexts(model, count=40, seed=0):
    """Seen and unseen contexts of all lengths, some from the corpus, some random."""
    rng = np.random.Generator(np.random.PCG64(seed))
    chosen = ['', 't', 'th', 'the ', 'the cat sat', 'zzq', "q'x ", 'xxxxxxxxx']
    characters = model.alphabet.characters
    for _ in range(count):
        chosen.append(''.join(rng.choice(list(characters), size=rng.integers(0, 8))))
        text = TRAIN[rng.integers(len(TRAIN))]
        chosen.append(text[:rng.integers(len(text) + 1)])
    return chosen


def total_probability(model, context):
    return sum(math.exp(model.log_prob(c, context)) for c in model.alphabet.characters) + \
        math.exp(model.log_prob(None, context))


@pytest.mark.parametrize('smoothing', ['kneser-ney', 'add-k'])
@pytest.mark.parametrize('order', [1, 3, 5])
def test_each_context_sums_to_one(smoothing, order):
    model = CharNgramModel.train(TRAIN, order=order, smoothing=smoothing)
    for context in contexts(model):
        assert total_probability(model, context) == pytest.approx(1.0, abs=1e-12), context
        assert np.exp(model.log_probs(context)).sum() == pytest.approx(1.0, abs=1e-12)


def test_add_k_counts_by_hand():
    # 'abab' with order 2, padded: <s> a b a b </s>. Bigram counts:
    # (<s>,a)=1, (a,b)=2, (b,a)=1, (b,</s>)=1. V = 3 outcomes (a, b, end).
    model = CharNgramModel.train('abab', order=2, smoothing='add-k', k=0.5, alphabet=AB)
    assert math.exp(model.log_prob('b', 'a')) == pytest.approx((2 + 0.5) / (2 + 1.5))
    assert math.exp(model.log_prob('a', 'a')) == pytest.approx(0.5 / (2 + 1.5))
    assert math.exp(model.log_prob('a', 'ab')) == pytest.approx((1 + 0.5) / (2 + 1.5))
    assert math.exp(model.log_prob(None, 'ab')) == pytest.approx((1 + 0.5) / (2 + 1.5))
    assert math.exp(model.log_prob('a', '')) == pytest.approx((1 + 0.5) / (1 + 1.5))
    expected = math.log(1.5 / 2.5) + math.log(2.5 / 3.5) + math.log(1.5 / 3.5) + \
        math.log(2.5 / 3.5) + math.log(1.5 / 3.5)
    assert model.score('abab') == pytest.approx(expected)


def test_kneser_ney_by_hand():
    # 'ab' and 'bb', order 2: bigrams (<s>,a) (a,b) (b,</s>) (<s>,b) (b,b) (b,</s>)x.
    # Continuation counts of unigrams: a:{<s>} 1, b:{a,<s>,b} 3, </s>:{b} 1; total 5,
    # 3 distinct, so P1(w) = (N(w) - D) / 5 + D * 3 / 5 / 3.
    model = CharNgramModel.train(['ab', 'bb'], order=2, discount=0.5, alphabet=AB)
    unigram = {'a': (1 - .5) / 5 + .5 * 3 / 5 / 3, 'b': (3 - .5) / 5 + .5 * 3 / 5 / 3,
               None: (1 - .5) / 5 + .5 * 3 / 5 / 3}
    # After 'b': counts b->b 1, b->end 2; total 3, 2 distinct.
    for w, c in [('a', 0), ('b', 1), (None, 2)]:
        expected = max(c - .5, 0) / 3 + .5 * 2 / 3 * unigram[w]
        assert math.exp(model.log_prob(w, 'ab')) == pytest.approx(expected)


def test_kneser_ney_beats_add_k_on_held_out_text():
    kneser_ney = CharNgramModel.train(TRAIN, order=5)
    add_k = CharNgramModel.train(TRAIN, order=5, smoothing='add-k')
    assert kneser_ney.perplexity(HELD_OUT) < add_k.perplexity(HELD_OUT)
    # Both learn something: better than the uniform model's perplexity V = 29.
    assert kneser_ney.perplexity(HELD_OUT) < 29 * 0.5
    assert CharNgramModel.uniform().perplexity(HELD_OUT) == pytest.approx(len(ENGLISH))


def test_uniform_model():
    model = CharNgramModel.uniform(AB)
    for context in ['', 'a', 'abba']:
        for w in ['a', 'b', None]:
            assert model.log_prob(w, context) == pytest.approx(math.log(1 / 3))


def test_json_round_trip(tmp_path):
    for smoothing in ['kneser-ney', 'add-k']:
        model = CharNgramModel.train(TRAIN, order=4, smoothing=smoothing, discount=0.6, k=0.2)
        again = CharNgramModel.from_json(model.to_json())
        for text in HELD_OUT + ["zq'x"]:
            assert again.score(text) == model.score(text)
        path = tmp_path / f'{smoothing}.json'
        model.save(path)
        assert CharNgramModel.load(path).score(HELD_OUT[0]) == model.score(HELD_OUT[0])


def test_a_gz_name_is_saved_gzipped_and_the_same_counts_give_the_same_bytes(tmp_path):
    model = CharNgramModel.train(TRAIN, order=4)
    model.save(tmp_path / 'a.json.gz')
    model.save(tmp_path / 'b.json.gz')
    data = (tmp_path / 'a.json.gz').read_bytes()
    # No time stamp in the gzip header (bytes 4..7), so two saves are the same bytes.
    assert data[4:8] == bytes(4) and data == (tmp_path / 'b.json.gz').read_bytes()
    assert gzip.decompress(data).decode('utf-8') == model.to_json()
    again = CharNgramModel.load(tmp_path / 'a.json.gz')
    assert [again.score(text) for text in HELD_OUT] == [model.score(text) for text in HELD_OUT]


def test_errors():
    with pytest.raises(ValueError, match='outside the alphabet'):
        CharNgramModel.train(['caf\u00e9'])
    with pytest.raises(ValueError, match='smoothing'):
        CharNgramModel.train(TRAIN, smoothing='witten-bell')
    with pytest.raises(ValueError, match='discount'):
        CharNgramModel.train(TRAIN, discount=1.5)
    model = CharNgramModel.train(TRAIN, order=3)
    with pytest.raises(ValueError, match='not a character'):
        model.log_prob('!', 'the')
    with pytest.raises(ValueError, match='outside the alphabet'):
        model.log_prob('a', 'th!')
    with pytest.raises(ValueError, match='format'):
        CharNgramModel.from_json('{"format": "other"}')


def test_json_of_version_1_is_still_read():
    # v1 (the first shipped speech LM's form) listed each n-gram's ids and count.
    model = CharNgramModel.train(TRAIN, order=3, discount=0.6)
    v1 = json.dumps({'format': 'minidl.char_ngram.v1', 'characters': ENGLISH.characters,
                     'order': 3, 'smoothing': 'kneser-ney', 'discount': 0.6, 'k': 0.1,
                     'counts': [list(gram) + [count] for gram, count in model.counts.items()]})
    again = CharNgramModel.from_json(v1)
    assert again.counts == model.counts
    assert again.score(HELD_OUT[1]) == model.score(HELD_OUT[1])
    assert json.loads(again.to_json())['format'] == 'minidl.char_ngram.v2'


def test_crafted_json_is_refused():
    good = json.loads(CharNgramModel.train(TRAIN, order=3).to_json())
    short = base64.b64encode(base64.b64decode(good['grams'])[:-6]).decode()  # 3 symbols fewer
    for change, message in [({'ngrams': good['ngrams'] + 1}, 'not .* n-grams of order 3'),
                            ({'order': 4}, 'not .* n-grams of order 4'),
                            ({'ngrams': float(good['ngrams'])}, 'not .* n-grams'),
                            ({'grams': short}, 'not .* n-grams'),
                            ({'counts': 'not base64!'}, 'base64'),
                            ({'counts': good['counts'][:-1]}, 'base64')]:
        with pytest.raises(ValueError, match=message):
            CharNgramModel.from_json(json.dumps(dict(good, **change)))


def formula_probability(texts, order, discount, symbol, context):
    """Interpolated Kneser-Ney straight from the formula in the module docstring.

    Counts n-grams of tuples in dicts, with none of the model's integer
    tables: an independent check of them. ``context`` is a tuple of ids.
    """
    end, start = len(ENGLISH.characters), len(ENGLISH.characters) + 1
    grams = set()
    counts = {}
    for text in texts:
        symbols = [start] * (order - 1) + [int(x) - 1 for x in ENGLISH.encode(text)] + [end]
        for i in range(order - 1, len(symbols)):
            gram = tuple(symbols[i - order + 1:i + 1])
            counts[gram] = counts.get(gram, 0) + 1
            grams.add(gram)

    def occurrences(gram):
        # Highest order: counts; lower: how many distinct symbols precede gram.
        if len(gram) == order:
            return counts.get(gram, 0)
        return len({g[0] for g in grams_of_length(len(gram) + 1) if g[1:] == gram})

    def grams_of_length(length):
        return {g[order - length:] for g in grams}

    def probability(w, h):
        lower = probability(w, h[1:]) if h else 1 / (end + 1)
        seen = [g for g in grams_of_length(len(h) + 1) if g[:-1] == h]
        if not seen:
            return lower
        total = sum(occurrences(g) for g in seen)
        return max(occurrences(h + (w,)) - discount, 0) / total + \
            discount * len(seen) / total * lower

    return probability(symbol, context)


@pytest.mark.parametrize('order', [1, 2, 4, 6])
def test_kneser_ney_tables_match_the_formula(order):
    model = CharNgramModel.train(TRAIN, order=order, discount=0.7)
    for context in contexts(model, count=6, seed=order):
        ids = model._context(context)
        probs = np.exp(model.log_probs(context))
        for symbol in range(model.size):
            assert probs[symbol] == pytest.approx(
                formula_probability(TRAIN, order, 0.7, symbol, ids), rel=1e-12), (context, symbol)


def test_counts_as_a_dict_or_as_rows_give_one_model():
    model = CharNgramModel.train(TRAIN, order=4)
    rows = [list(gram) + [count] for gram, count in model.counts.items()]
    again = CharNgramModel(np.array(rows[::-1]), 4)          # order of rows does not matter
    assert again.counts == model.counts
    for text in HELD_OUT:
        assert again.score(text) == model.score(text)
    # Six of the sentences start with 't'; ' the' counted by str.count.
    start = model.start
    assert model.counts[(start, start, start, ENGLISH.characters.index('t'))] == 6
    assert sum(count for gram, count in model.counts.items()
               if gram == tuple(ENGLISH.characters.index(c) for c in ' the')) == \
        sum(text.count(' the') for text in TRAIN)


def test_table_errors():
    with pytest.raises(ValueError, match='64 bits'):
        CharNgramModel({}, 13)                           # 30 symbols ** 13 > 2 ** 63
    assert CharNgramModel.train(TRAIN, order=12).perplexity(HELD_OUT) > 1
    with pytest.raises(ValueError, match='symbols must lie'):
        CharNgramModel({(0, 30): 1}, 2)
    with pytest.raises(ValueError, match='counted twice'):
        CharNgramModel([[0, 1, 2], [0, 1, 5]], 2)
    with pytest.raises(ValueError, match='positive'):
        CharNgramModel([[0, 1, 0]], 2)
    for rows in ([[0, 1, 2, 3], [1, 2, 3, 4], [2, 3, 4, 5]], [[0, 1, 2.5]], [[0, 1], [2]]):
        with pytest.raises(ValueError, match='rows of 2 symbol ids'):
            CharNgramModel(rows, 2)          # 12 numbers would reshape into rows of 3


def test_cache_stays_bounded_and_changes_no_value(monkeypatch):
    model = CharNgramModel.train(TRAIN, order=5)
    asked = contexts(model, count=60, seed=7)
    expected = [model.log_probs(context) for context in asked]
    monkeypatch.setattr(language_model, 'CACHE_CONTEXTS', 8)
    small = CharNgramModel.train(TRAIN, order=5)
    for context, probs in zip(asked, expected):
        assert np.array_equal(small.log_probs(context), probs), context
        assert len(small._cache) <= 8
