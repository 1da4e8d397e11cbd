import numpy as np
import pytest

from minidl.compute import Generator, default_generator, set_seed
from minidl.functions import noise as N
from minidl.tensor import Tensor
from tests.gradcases import GradCase, random, run_gradcheck

GRADCHECK_CASES = [
    # A fresh generator per call draws the same mask for every finite difference.
    GradCase(N.Dropout, lambda x: N.dropout(x, 0.4, generator=Generator(3)), [random(5, 6)]),
    GradCase(N.Dropout, lambda x: N.dropout(x, 0.5, generator=Generator(4), noise_shape=(5, 1)),
             [random(5, 6)], name='noise-shape'),
]


@pytest.mark.parametrize('case', GRADCHECK_CASES, ids=str)
def test_gradcheck(case):
    run_gradcheck(case)


def ones(*shape):
    return np.ones(shape, dtype=np.float32)


def test_same_seed_same_mask_and_other_seeds_differ():
    x = ones(50, 40)
    first = N.dropout(x, 0.3, generator=Generator(11)).numpy()
    again = N.dropout(x, 0.3, generator=Generator(11)).numpy()
    other = N.dropout(x, 0.3, generator=Generator(12)).numpy()
    assert np.array_equal(first, again)
    assert not np.array_equal(first, other)


def test_successive_calls_draw_new_masks():
    generator = Generator(5)
    x = ones(50, 40)
    assert not np.array_equal(N.dropout(x, 0.5, generator=generator).numpy(),
                              N.dropout(x, 0.5, generator=generator).numpy())


@pytest.mark.parametrize('rate', [0.1, 0.5, 0.9])
def test_kept_fraction_and_scaling(rate):
    x = random(200, 500).astype(np.float32) + 10  # no zeros before dropout
    y = N.dropout(x, rate, generator=Generator(1)).numpy()
    kept = y != 0
    assert abs(kept.mean() - (1 - rate)) < 0.01
    assert y.dtype == np.float32
    np.testing.assert_array_equal(y[kept], x[kept] * np.float32(1 / (1 - rate)))


def test_gradient_is_mask_times_scale():
    x = Tensor(random(30, 20).astype(np.float32) + 10, requires_grad=True)
    upstream = random(30, 20, seed=2).astype(np.float32)
    y = N.dropout(x, 0.25, generator=Generator(9))
    y.backward(upstream)
    mask = y.numpy() != 0
    np.testing.assert_array_equal(x.grad.numpy(), upstream * np.float32(1 / 0.75) * mask)


def test_uses_the_default_generator():
    x = ones(20, 30)
    set_seed(21)
    from_default = N.dropout(x, 0.5).numpy()
    assert np.array_equal(from_default, N.dropout(x, 0.5, generator=Generator(21)).numpy())
    set_seed(21)
    assert np.array_equal(from_default, N.dropout(x, 0.5).numpy())


@pytest.mark.parametrize('rate, training', [(0.0, True), (0.5, False), (0, False)])
def test_returns_the_input_and_draws_nothing_when_inactive(rate, training):
    generator = Generator(3)
    state = generator.get_state()
    x = Tensor(ones(4, 5), requires_grad=True)
    assert N.dropout(x, rate, generator=generator, training=training) is x
    assert generator.get_state() == state
    default_state = default_generator().get_state()
    N.dropout(x, rate, training=training)
    assert default_generator().get_state() == default_state


@pytest.mark.parametrize('rate', [-0.1, 1.0, 1.5, float('nan'), True, '0.5', None])
def test_rejects_bad_rates(rate):
    with pytest.raises(ValueError, match='rate must be a number in'):
        N.dropout(ones(3), rate, generator=Generator(0))


def test_noise_shape_shares_the_mask_along_broadcast_axes():
    y = N.dropout(ones(6, 4, 10), 0.5, generator=Generator(2), noise_shape=(None, 1, 10)).numpy()
    assert (y == y[:, :1, :]).all()
    assert 0 < (y != 0).mean() < 1


@pytest.mark.parametrize('noise_shape', [(3, 4), (3, 2, 1), (1, 1, 5)])
def test_rejects_noise_shapes_that_do_not_fit(noise_shape):
    with pytest.raises(ValueError, match=r'noise_shape .* input .*\(3, 4, 6\)'):
        N.dropout(ones(3, 4, 6), 0.5, generator=Generator(0), noise_shape=noise_shape)
