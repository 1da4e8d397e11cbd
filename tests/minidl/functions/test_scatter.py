import numpy as np
import pytest

from minidl.functions.scatter import index_add


def loop_sum(indices, values, num_rows):
    """The reference: rows added one at a time in index order."""
    flat = indices.reshape(-1)
    rows = values.reshape((flat.size,) + values.shape[indices.ndim:])
    output = np.zeros((num_rows,) + rows.shape[1:], dtype=values.dtype)
    for j, i in enumerate(flat):
        output[i] += rows[j]
    return output


@pytest.mark.parametrize('index_shape, row_shape', [((40,), ()), ((40,), (3,)), ((5, 8), (2, 3))])
def test_matches_a_python_loop(index_shape, row_shape):
    rng = np.random.default_rng(0)
    indices = rng.integers(0, 9, size=index_shape)  # some rows repeated, some never named
    values = rng.standard_normal(index_shape + row_shape).astype(np.float32)
    result = index_add(indices, values, 11)
    assert result.shape == (11,) + row_shape and result.dtype == np.float32
    np.testing.assert_allclose(result, loop_sum(indices, values, 11), rtol=1e-6, atol=1e-6)
    assert not result[9:].any()


def test_each_row_sum_depends_only_on_its_own_rows():
    # Bitwise: interleaving other indices' rows does not change a row's sum.
    rng = np.random.default_rng(1)
    indices = rng.integers(0, 4, size=500)
    values = (rng.standard_normal((500, 6)) * 10.0 ** rng.integers(-4, 4, size=(500, 1)))
    values = values.astype(np.float32)
    result = index_add(indices, values, 4)
    assert np.array_equal(result, index_add(indices, values, 4))
    for row in range(4):
        own = values[indices == row]
        alone = index_add(np.zeros(len(own), dtype=np.int64), own, 1)[0]
        assert np.array_equal(result[row], alone)


def test_empty_indices_give_zeros():
    result = index_add(np.zeros(0, dtype=np.int64), np.zeros((0, 3), dtype=np.float32), 4)
    assert result.shape == (4, 3) and not result.any()


@pytest.mark.parametrize('indices, values, error, message', [
    (np.array([0, 4]), np.ones(2), ValueError, r'\[0, 4\), got values from 0 to 4'),
    (np.array([-1, 2]), np.ones(2), ValueError, r'from -1 to 2'),
    (np.array([0.0, 1.0]), np.ones(2), TypeError, 'integer indices'),
    (np.array([0, 1]), np.ones((3, 2)), ValueError, r'\(3, 2\) do not start with .*\(2,\)'),
])
def test_rejects_bad_arguments(indices, values, error, message):
    with pytest.raises(error, match=message):
        index_add(indices, values, 4)
