"""Helpers shared by the oneDNN kernel tests (their fixtures are in conftest.py)."""

import collections

import numpy as np
import pytest

import minidl
from minidl.compute import blas_threads, vendor
from minidl.compute.onednn import api, primitive
from minidl.compute.onednn.library import OnednnUnavailable
from minidl.tensor import Tensor


def require_onednn(what):
    """Skip the calling test module, saying why, where oneDNN does not load."""
    try:
        api.functions()
    except OnednnUnavailable as error:
        pytest.skip(f'oneDNN does not load, so {what} cannot be tested: {error}',
                    allow_module_level=True)


def assert_close(actual, expected, tolerance, name=''):
    """``actual`` (an array or a Tensor) is ``expected`` within ``tolerance`` times the
    largest magnitude of ``expected``, shape included."""
    actual = actual.numpy() if isinstance(actual, Tensor) else np.asarray(actual)
    expected = np.asarray(expected)
    assert actual.shape == expected.shape, name
    scale = float(np.abs(expected).max())
    np.testing.assert_allclose(actual, expected, rtol=0, atol=tolerance * scale, err_msg=name)


def vendor_kernels_seen(patch, function_class):
    """A list that collects the ``vendor_kernel`` of each ``function_class`` call, right
    after its forward (``patch`` is a ``MonkeyPatch``)."""
    seen = []
    forward = function_class.forward

    def spy(self, *arrays):
        result = forward(self, *arrays)
        seen.append(self.vendor_kernel)
        return result

    patch.setattr(function_class, 'forward', spy)
    return seen


def on_threads(monkeypatch, count, fresh_primitives, run):
    """``run()`` with minidl's pool on ``count`` threads; with ``fresh_primitives`` the
    oneDNN primitives are made anew, as in a process that only ever had that count."""
    monkeypatch.setattr(minidl.config, 'num_threads', count)
    if fresh_primitives:
        monkeypatch.setattr(primitive, '_cache', collections.OrderedDict())
    try:
        return run()
    finally:
        blas_threads.blas.release()


def assert_same_bits_on_one_and_two_threads(monkeypatch, fresh_primitives, run, names,
                                            run_to_run=False):
    """``run()``, a list of arrays named ``names``, gives the same bits with minidl's pool
    on one thread and on two (see :func:`on_threads` for ``fresh_primitives``), and with
    ``run_to_run`` on two threads a second time too.

    Returns:
        The arrays of the two-thread run.
    """
    one = on_threads(monkeypatch, 1, fresh_primitives, run)
    two = on_threads(monkeypatch, 2, fresh_primitives, run)
    again = on_threads(monkeypatch, 2, fresh_primitives, run) if run_to_run else two
    assert len(one) == len(two) == len(again) == len(names)
    for name, a, b, c in zip(names, one, two, again):
        assert np.array_equal(a, b), name
        assert np.array_equal(b, c), f'{name}, run to run'
    return two


def assert_moved_far(initial, weights, tolerance):
    """Training moved every weight far beyond ``tolerance``, so that comparing two trainings
    within ``tolerance`` says something."""
    for before, after in zip(initial, weights, strict=True):
        assert np.abs(after - before).max() > 100 * tolerance * np.abs(after).max()


def assert_training_repeats_and_matches_the_reference(train, tolerance, count):
    """``train(use_onednn)`` gives the same bits twice with oneDNN ('always') and, within
    ``tolerance``, what the reference code gives ('never'); ``count`` arrays each time."""
    first, second, reference = train('always'), train('always'), train('never')
    vendor.forget()
    assert len(first) == len(second) == len(reference) == count
    for a, b, r in zip(first, second, reference):
        assert np.array_equal(a, b)
        assert_close(a, r, tolerance)
