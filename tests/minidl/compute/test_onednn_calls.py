"""What every oneDNN call from Python relies on: array addresses read from the array object,
the status of the unchecked calls, and a thread's kept scratchpad."""

import threading

import numpy as np
import pytest

from tests.minidl.compute.onednn_support import require_onednn

require_onednn('its calls')

from minidl.compute.onednn import api, memory, primitive  # noqa: E402


def _arrays():
    base = np.arange(120, dtype=np.float32).reshape(4, 5, 6)
    return [base, base[1:3], base[:, 2:, 1:4], base.T, base[::2, ::-1], np.empty(0, np.float32),
            np.float64(2.0) * np.ones((3, 1)), np.asfortranarray(base),
            np.frombuffer(bytearray(64), np.uint8)[3:], memory.buffer(1000)]


@pytest.mark.parametrize('index', range(len(_arrays())))
def test_the_address_read_from_the_array_is_numpys_own(index):
    array = _arrays()[index]
    assert memory._HEAD_HOLDS_DATA  # CPython and numpy as built here: the fast way runs
    assert memory.address(array) == array.ctypes.data


def test_other_than_an_ndarray_asks_numpy(monkeypatch):
    class Sub(np.ndarray):
        pass

    array = np.arange(6.0).view(Sub)[2:]
    assert memory.address(array) == array.ctypes.data
    monkeypatch.setattr(memory, '_HEAD_HOLDS_DATA', False)  # a Python whose layout differs
    plain = np.arange(6.0)[3:]
    assert memory.address(plain) == plain.ctypes.data


def test_buffers_are_aligned_to_64_bytes():
    for nbytes in (1, 63, 64, 1000, 4097):
        assert memory.address(memory.buffer(nbytes)) % 64 == 0


def test_a_failed_unchecked_call_raises_with_the_function_and_status():
    functions = api.functions()
    # A null memory is refused with dnnl_invalid_arguments (status 2).
    status = functions.memory_set_data_handle_status(None, 0)
    assert status == 2
    with pytest.raises(api.OnednnError, match=r'dnnl_memory_set_data_handle failed: '
                                              r'invalid arguments \(status 2\)'):
        api.raise_for_status('memory_set_data_handle', status)
    api.raise_for_status('memory_set_data_handle', 0)  # success: nothing
    assert functions.stream_wait_status(None) == 2
    assert functions.stream_wait_status(primitive._stream()) == 0


def test_each_thread_keeps_one_scratchpad_for_small_calls_and_large_ones_are_new():
    seen = {}

    def look(name):
        first = primitive._scratchpad(100)
        again = primitive._scratchpad(80)
        grown = primitive._scratchpad(5000)
        large = primitive._scratchpad(primitive.KEPT_SCRATCHPAD_BYTES + 1)
        seen[name] = first, again, grown, large, primitive._scratchpad(4000)

    threads = [threading.Thread(target=look, args=(name,)) for name in ('a', 'b')]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for first, again, grown, large, after in seen.values():
        assert again is first and grown.nbytes >= 5000 and after is grown
        assert large is not grown and large.nbytes == primitive.KEPT_SCRATCHPAD_BYTES + 1
        assert memory.address(grown) % 64 == 0
    assert seen['a'][2] is not seen['b'][2]  # one per thread: calls in two threads never share
