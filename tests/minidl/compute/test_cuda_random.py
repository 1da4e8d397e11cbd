"""Device-side uniform draws reproduce the host's PCG64 stream bit for bit."""

import numpy as np
import pytest

from minidl.compute import Generator
from minidl.compute.cuda.random import jump, skip

from tests.minidl.compute.gpu_support import require_gpu


def pcg64(seed):
    return np.random.Generator(np.random.PCG64(seed))


@pytest.mark.parametrize('steps', [0, 1, 2, 63, 64, 1000, 123457])
def test_jump_lands_where_the_host_stream_arrives(steps):
    host = pcg64(3)
    start = host.bit_generator.state['state']
    host.random(steps)
    assert jump(start['state'], start['inc'], steps) == host.bit_generator.state['state']['state']


def test_skip_keeps_the_buffered_half_draw_and_the_rest_of_the_stream():
    host, skipped = pcg64(11), pcg64(11)
    for rng in (host, skipped):
        rng.integers(0, 10)  # a 32-bit draw: leaves half a 64-bit draw buffered
    assert skipped.bit_generator.state['has_uint32'] == 1
    host.random(500)
    skip(skipped.bit_generator, 500)
    assert host.bit_generator.state == skipped.bit_generator.state
    np.testing.assert_array_equal(host.integers(0, 10, 7), skipped.integers(0, 10, 7))
    np.testing.assert_array_equal(host.random(5), skipped.random(5))


@pytest.mark.parametrize('shape', [(1,), (3, 5), (1000, 37), 4097])
def test_gpu_bernoulli_and_uniform_have_the_cpu_bits(shape):
    cupy = require_gpu()
    cpu, gpu = Generator(5), Generator(5)
    for _ in range(2):  # the second draw checks that the host stream was advanced
        np.testing.assert_array_equal(cpu.bernoulli(shape, 0.3),
                                      cupy.asnumpy(gpu.bernoulli(shape, 0.3, xp=cupy)))
        np.testing.assert_array_equal(cpu.uniform(shape, -0.5, 2.0, dtype='float32'),
                                      cupy.asnumpy(gpu.uniform(shape, -0.5, 2.0, xp=cupy)))
    assert cpu.get_state() == gpu.get_state()
    np.testing.assert_array_equal(cpu.normal((4,)), cupy.asnumpy(gpu.normal((4,), xp=cupy)))
