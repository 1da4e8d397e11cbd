"""QSGD and top-k codecs (numpy only, no mpirun): encodings, unbiasedness, error feedback.

The truths are hand-computed bytes and levels, the statistics of QSGD's
rounding (its exact per-element variance and the paper's bound), and
exact arithmetic on integer-valued gradients for the error feedback.
"""

import math

import numpy as np
import pytest

pytest.importorskip('mpi4py')  # importing minidl_dist imports it

import minidl  # noqa: E402
import minidl_dist as dist  # noqa: E402
from minidl.compute import Generator  # noqa: E402
from minidl.layers import Dense  # noqa: E402
from minidl.models import Sequential  # noqa: E402
from minidl.optimizers import SGD  # noqa: E402
from minidl_dist.qsgd import QSGD  # noqa: E402
from minidl_dist.randomness import PartStreams  # noqa: E402
from minidl_dist.topk import TopK, error_feedback_step  # noqa: E402


class FixedDraws:
    """A stand-in for numpy's Generator whose uniform draws are given."""

    def __init__(self, draws):
        self.draws = np.asarray(draws, np.float64)

    def random(self, size):
        assert size == self.draws.size
        return self.draws


def test_qsgd_bytes_by_hand():
    # v = (0.6, -0.8, 0): norm 1, s = 1, r = (0.6, 0.8, 0). Draws 0.5 < 0.6 rounds up,
    # 0.9 >= 0.8 down. Codes sign | level << 1: 2, 1, 0, two bits each, little-endian:
    # bits 0 1 | 1 0 | 0 0 -> 0b00000110. The norm is float32 1.0 (bytes 00 00 80 3f).
    codec = QSGD(levels=1, bucket_size=512)
    encoded = codec.encode(np.array([0.6, -0.8, 0], np.float32), FixedDraws([0.5, 0.9, 0.1]))
    assert encoded.tolist() == [0x00, 0x00, 0x80, 0x3f, 0b00000110]
    assert codec.decode(encoded, 3).tolist() == [1.0, -0.0, 0.0]


def test_qsgd_round_trip_of_values_on_the_grid():
    # Buckets of 4 with norm 3 and s = 3: every r_i = |v_i| is an integer, so no
    # rounding is random and decoding gives the input back exactly (the last bucket short).
    buckets = [[1, 2, 2, 0], [-2, 0, 1, -2], [0, 0, -3, 0], [2, -1, 2, 0], [0, 3]]
    vector = np.array(sum(buckets, []), np.float32)
    codec = QSGD(levels=3, bucket_size=4)
    encoded = codec.encode(vector, np.random.default_rng(0))
    assert codec.bits == 3  # a sign and 2 bits for levels 0..3
    assert encoded.size == 4 * 5 + math.ceil(18 * 3 / 8)
    assert np.array_equal(codec.decode(encoded, vector.size), vector)


@pytest.mark.parametrize('size, bucket, levels', [(1000, 512, 7), (1, 512, 1), (4096, 128, 15),
                                                  (777, 100, 255), (9, 4, 2), (0, 8, 3)])
def test_qsgd_encoded_size_against_the_formula(size, bucket, levels):
    codec = QSGD(levels=levels, bucket_size=bucket)
    bits = 1 + math.ceil(math.log2(levels + 1))
    expected = 4 * math.ceil(size / bucket) + math.ceil(size * bits / 8)
    vector = np.random.default_rng(size).normal(size=size).astype(np.float32)
    encoded = codec.encode(vector, np.random.default_rng(1))
    assert encoded.dtype == np.uint8 and encoded.size == expected == codec.encoded_bytes(size)
    decoded = codec.decode(encoded, size)
    # Each value lands on one of the two grid points around it: within one step norm / s.
    norms = np.repeat([np.linalg.norm(vector[i:i + bucket]) for i in range(0, size, bucket)],
                      bucket)[:size]
    assert np.all(np.abs(decoded - vector) <= norms / levels * (1 + 1e-6))
    assert np.all((decoded == 0) | (np.sign(decoded) == np.sign(vector)))


def exact_variance(vector, codec):
    """Per element, Var[Q(v)_i] = (norm / s)^2 p (1 - p), p the fractional part of s|v_i|/norm."""
    size, bucket = vector.size, codec.bucket_size
    norms = np.repeat([np.linalg.norm(vector[i:i + bucket].astype(np.float64))
                       for i in range(0, size, bucket)], bucket)[:size]
    ratio = codec.levels * np.abs(vector) / norms
    fraction = ratio - np.floor(ratio)
    return (norms / codec.levels) ** 2 * fraction * (1 - fraction), norms


def decodings(vector, codec, count):
    return np.stack([codec.decode(codec.encode(vector, np.random.default_rng(seed)), vector.size)
                     for seed in range(count)]).astype(np.float64)


def test_qsgd_is_unbiased():
    vector = np.random.default_rng(5).standard_t(3, size=300).astype(np.float32)
    codec = QSGD(levels=2, bucket_size=128)
    draws = 4000
    mean = decodings(vector, codec, draws).mean(axis=0)
    variance, norms = exact_variance(vector, codec)
    # The mean of 4000 independent roundings is within 6 standard errors of v_i (each
    # element; rounding of the float32 norm adds a few ulps), and the squared error
    # summed over elements, a sum of 300 terms of expectation var_i / 4000, is below
    # 1.5 times its expectation (its relative spread is about sqrt(2 / 300) = 0.08).
    error = mean - vector
    assert np.all(np.abs(error) <= 6 * np.sqrt(variance / draws) + 1e-6 * norms)
    assert np.sum(error ** 2) <= 1.5 * variance.sum() / draws


@pytest.mark.parametrize('levels', [1, 4, 64])
def test_qsgd_variance_matches_its_formula_and_the_papers_bound(levels):
    rng = np.random.default_rng(levels)
    vector = (rng.normal(size=512) * rng.exponential(size=512)).astype(np.float32)
    codec = QSGD(levels=levels, bucket_size=256)
    draws = 2000
    squared = ((decodings(vector, codec, draws) - vector) ** 2).sum(axis=1)
    variance, _ = exact_variance(vector, codec)
    spread = squared.std() / math.sqrt(draws)
    assert abs(squared.mean() - variance.sum()) <= 6 * spread
    # Lemma 3.1, per bucket of d elements: E||Q(v) - v||^2 <= min(d / s^2, sqrt(d) / s) ||v||^2.
    for start in range(0, 512, 256):
        bucket = vector[start:start + 256].astype(np.float64)
        bound = min(256 / levels ** 2, 16 / levels) * np.sum(bucket ** 2)
        assert variance[start:start + 256].sum() <= bound


def test_qsgd_replays_with_the_same_generator_and_not_with_another():
    vector = np.random.default_rng(0).normal(size=2000).astype(np.float32)
    codec = QSGD()
    first = codec.encode(vector, np.random.default_rng(7))
    assert np.array_equal(first, codec.encode(vector, np.random.default_rng(7)))
    assert not np.array_equal(first, codec.encode(vector, np.random.default_rng(8)))


def test_rank_streams_are_seeded_by_generator_step_and_rank():
    def draws(seed, step, rank):
        streams = PartStreams([Generator(seed)])
        streams.begin_step(step)
        return streams.rank_stream(rank).random(4).tolist()
    assert draws(1, 3, 0) == draws(1, 3, 0)
    assert len({tuple(draws(*key)) for key in [(1, 3, 0), (2, 3, 0), (1, 4, 0), (1, 3, 1)]}) == 4


def test_topk_sends_the_largest_magnitudes_as_indices_and_values():
    vector = np.array([0.5, -3.0, 2.0, 0.0, -2.0, 1.0, 2.0], np.float32)
    codec = TopK(ratio=0.4)  # ceil(0.4 * 7) = 3
    encoded = codec.encode(vector)
    assert codec.count(7) == 3 and encoded.size == 8 * 3 == codec.encoded_bytes(7)
    # |-3| first, then the tie at 2 among indices 2, 4 and 6 goes to the lower indices.
    assert encoded[:12].view(np.int32).tolist() == [1, 2, 4]
    assert encoded[12:].view(np.float32).tolist() == [-3.0, 2.0, -2.0]
    assert codec.decode(encoded, 7).tolist() == [0, -3, 2, 0, -2, 0, 0]


@pytest.mark.parametrize('size, ratio', [(1000, 0.01), (1000, 0.001), (3, 0.5), (10, 1.0),
                                         (5, 1e-9)])
def test_topk_encoded_size_against_the_formula(size, ratio):
    vector = np.random.default_rng(size).normal(size=size).astype(np.float32)
    k = min(size, max(1, math.ceil(ratio * size)))
    encoded = TopK(ratio).encode(vector)
    assert encoded.size == 8 * k == TopK(ratio).encoded_bytes(size)
    decoded = TopK(ratio).decode(encoded, size)
    kept = np.flatnonzero(decoded)
    assert np.array_equal(np.sort(np.argsort(-np.abs(vector), kind='stable')[:k]), kept)
    assert np.array_equal(decoded[kept], vector[kept])


def test_topk_always_sends_a_nan():
    vector = np.array([5.0, np.nan, 1.0], np.float32)
    assert np.isnan(TopK(0.1).decode(TopK(0.1).encode(vector), 3)[1])


def test_error_feedback_keeps_every_step_and_the_running_sum_exact():
    rng = np.random.default_rng(3)
    codec = TopK(ratio=0.05)
    residual = None
    sent_sum = np.zeros(400)
    for step in range(30):
        # Integer-valued float32 gradients: every float32 addition here is exact, so the
        # sum over steps must hold exactly, not just to rounding.
        gradient = rng.integers(-1000, 1000, size=400).astype(np.float32)
        before = np.zeros(400, np.float32) if residual is None else residual
        encoded, residual = error_feedback_step(codec, gradient, residual)
        sent = codec.decode(encoded, 400)
        assert np.array_equal(sent + residual, gradient + before)  # bit for bit, each step
        assert np.count_nonzero(sent) <= 20 and np.all(residual[sent != 0] == 0)
        sent_sum += sent
        if step == 0:
            gradients = gradient.astype(np.float64)
        else:
            gradients += gradient
    assert np.array_equal(sent_sum + residual, gradients)


def test_error_feedback_on_random_gradients_loses_only_rounding():
    rng = np.random.default_rng(4)
    codec, residual = TopK(ratio=0.1), None
    sent_sum, gradients = np.zeros(1000), np.zeros(1000)
    for _ in range(50):
        gradient = rng.normal(size=1000).astype(np.float32)
        encoded, residual = error_feedback_step(codec, gradient, residual)
        sent_sum += codec.decode(encoded, 1000)
        gradients += gradient
    # 50 float32 additions into the residual, each off by at most half an ulp of ~10.
    np.testing.assert_allclose(sent_sum + residual, gradients, rtol=0, atol=50 * 2 ** -20)


def test_qsgd_keeps_no_residual():
    vector = np.ones(10, np.float32)
    encoded, residual = error_feedback_step(QSGD(), vector, None, np.random.default_rng(0))
    assert residual is None and encoded.size == QSGD().encoded_bytes(10)


@pytest.mark.parametrize('arguments', [{'levels': 0}, {'levels': 32768}, {'levels': 2.0},
                                       {'bucket_size': 0}, {'levels': True}])
def test_bad_qsgd_arguments_are_refused(arguments):
    with pytest.raises(ValueError, match='QSGD'):
        QSGD(**arguments)


@pytest.mark.parametrize('ratio', [0, -0.1, 1.5, '0.1', True])
def test_bad_topk_ratios_are_refused(ratio):
    with pytest.raises(ValueError, match='ratio must be a number in'):
        TopK(ratio)


def digits_like(seed=0):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(96, 8)).astype(np.float32)
    return x, np.eye(3, dtype=np.float32)[(x[:, :3].sum(axis=1) > 0) + (x[:, 3] > 0.5) * 1]


def fitted(compression, seed=0):
    minidl.set_seed(seed)
    model = Sequential([Dense(6, activation='tanh', input_shape=(8,)),
                        Dense(3, activation='softmax')])
    model.compile(dist.DistributedOptimizer(SGD(0.2), compression=compression),
                  'categorical_crossentropy')
    history = model.fit(*digits_like(), batch_size=32, epochs=3, verbose=0)
    return model, history.history['loss']


def test_on_one_process_topk_of_everything_is_plain_training():
    dist.init()  # a job of size 1: the codec still applies
    plain, _ = fitted(None)
    everything, _ = fitted(TopK(ratio=1.0))  # every value sent as float32: the same sums
    for expected, got in zip(plain.get_weights(), everything.get_weights()):
        assert np.array_equal(expected, got)
    sparse, _ = fitted(TopK(ratio=0.1))
    assert not np.array_equal(sparse.get_weights()[0], plain.get_weights()[0])
    assert np.count_nonzero(sparse.optimizer.strategy.residual) > 0


def test_on_one_process_qsgd_replays_and_differs_from_plain_training():
    dist.init()
    first, loss = fitted('qsgd')
    second, again = fitted('qsgd')
    assert loss == again and loss[-1] < loss[0]
    for a, b in zip(first.get_weights(), second.get_weights()):
        assert np.array_equal(a, b)
    assert not np.array_equal(fitted(None)[0].get_weights()[0], first.get_weights()[0])


@pytest.mark.parametrize('compression', ['qsgd', 'topk', QSGD(3), 'fp16'])
def test_compression_is_refused_with_micro_shards(compression):
    dist.init()
    with pytest.raises(ValueError, match='micro_shards needs exact sums'):
        dist.DistributedOptimizer(SGD(0.1), micro_shards=1, compression=compression)


def test_quantized_compression_is_refused_with_model_parallel_and_unknown_names():
    dist.init()
    with pytest.raises(ValueError, match='cannot be combined with model_parallel'):
        dist.DistributedOptimizer(SGD(0.1), compression='topk', model_parallel='dense')
    for compression in ('int8', 3, ['qsgd']):
        with pytest.raises(ValueError, match="compression must be None, 'fp16', 'qsgd'"):
            dist.DistributedOptimizer(SGD(0.1), compression=compression)
