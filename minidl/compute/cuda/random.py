"""Uniform draws on the GPU with the very bits numpy's PCG64 would give on the host.

minidl's :class:`~minidl.compute.Generator` wraps numpy's PCG64. PCG64 is a
128-bit linear congruential generator (``s <- a s + c mod 2**128``) whose
output is a permutation of the state; ``Generator.random`` turns each 64-bit
output into a double as ``(bits >> 11) * 2**-53``. Because an LCG can jump
ahead ``k`` steps in O(log k) (Brown, "Random number generation with
arbitrary strides", 1994), every GPU thread can start at its own position of
the stream and produce its share of the draws in parallel: the numbers equal
those the host would have drawn, element for element, and the host generator
is then jumped past them. A CPU run and a GPU run with the same seed therefore
see the same dropout masks, and checkpoints hold the same generator state.

Only draws built from uniform doubles are made here (``uniform``,
``bernoulli``); normal draws use numpy's ziggurat, which has no such
parallel form, and stay on the host.
"""

import functools
import math

import numpy as np

from minidl.compute.cuda.runtime import require_gpu

MULTIPLIER = 0x2360ED051FC65DA44385DF649FCCF645  # numpy's PCG64 (PCG_DEFAULT_MULTIPLIER_128)
MASK = (1 << 128) - 1
DRAWS_PER_THREAD = 64
THREADS_PER_BLOCK = 256

_SOURCE = r'''
typedef unsigned __int128 u128;

extern "C" __global__ void minidl_pcg64_uniform(
        unsigned long long state_high, unsigned long long state_low,
        unsigned long long increment_high, unsigned long long increment_low,
        double offset, double scale, double* out, long long count, long long per_thread) {
    const long long first = (blockIdx.x * (long long)blockDim.x + threadIdx.x) * per_thread;
    if (first >= count) return;
    const u128 multiplier = ((u128)0x2360ED051FC65DA4ULL << 64) | 0x4385DF649FCCF645ULL;
    const u128 increment = ((u128)increment_high << 64) | increment_low;
    u128 state = ((u128)state_high << 64) | state_low;
    // Jump `first` steps ahead: compose the step with itself by repeated squaring.
    u128 jump_multiplier = 1, jump_increment = 0;
    u128 step_multiplier = multiplier, step_increment = increment;
    for (unsigned long long delta = first; delta; delta >>= 1) {
        if (delta & 1) {
            jump_multiplier *= step_multiplier;
            jump_increment = jump_increment * step_multiplier + step_increment;
        }
        step_increment = (step_multiplier + 1) * step_increment;
        step_multiplier *= step_multiplier;
    }
    state = jump_multiplier * state + jump_increment;
    const long long last = first + per_thread < count ? first + per_thread : count;
    for (long long i = first; i < last; ++i) {
        state = state * multiplier + increment;  // numpy steps, then outputs (XSL RR)
        const unsigned long long high = (unsigned long long)(state >> 64);
        const unsigned long long mixed = high ^ (unsigned long long)state;
        const unsigned int rotation = (unsigned int)(state >> 122);
        const unsigned long long bits = (mixed >> rotation) | (mixed << ((64 - rotation) & 63));
        const double unit = (double)(bits >> 11) * (1.0 / 9007199254740992.0);
        // Explicit rounding stops the compiler fusing these into an FMA, which
        // the host's "offset + scale * unit" does not use.
        out[i] = __dadd_rn(offset, __dmul_rn(scale, unit));
    }
}
'''


def jump(state, increment, steps):
    """The PCG64 state ``steps`` steps after ``state`` (Brown's algorithm, as in the kernel)."""
    jump_multiplier, jump_increment = 1, 0
    step_multiplier, step_increment = MULTIPLIER, increment
    while steps:
        if steps & 1:
            jump_multiplier = jump_multiplier * step_multiplier & MASK
            jump_increment = (jump_increment * step_multiplier + step_increment) & MASK
        step_increment = (step_multiplier + 1) * step_increment & MASK
        step_multiplier = step_multiplier * step_multiplier & MASK
        steps >>= 1
    return (jump_multiplier * state + jump_increment) & MASK


def skip(bit_generator, steps):
    """Advance numpy's PCG64 ``bit_generator`` by ``steps`` 64-bit draws.

    Unlike ``PCG64.advance`` this keeps a buffered 32-bit half-draw (left by
    an earlier 32-bit draw), which the host's own double draws do not touch
    either.
    """
    state = bit_generator.state
    inner = state['state']
    inner['state'] = jump(inner['state'], inner['inc'], steps)
    bit_generator.state = state


@functools.cache
def _kernel():
    # CuPy compiles a RawKernel on first call and caches it for each device. NVRTC
    # takes the 128-bit integers of PCG64's state only when told to.
    return require_gpu().RawKernel(_SOURCE, 'minidl_pcg64_uniform', options=('--device-int128',))


def uniform(bit_generator, shape, low=0.0, high=1.0):
    """float64 CuPy array of uniform draws in [low, high) with the host's bits.

    Args:
        bit_generator: numpy's PCG64 bit generator; it is advanced past the draws.
        shape: Shape of the result.
        low, high: Bounds, as for ``numpy.random.Generator.uniform``.
    """
    cupy = require_gpu()
    shape = (int(shape),) if np.ndim(shape) == 0 else tuple(int(s) for s in shape)
    count = math.prod(shape)
    out = cupy.empty(shape, dtype=cupy.float64)
    if count:
        inner = bit_generator.state['state']
        state, increment = inner['state'], inner['inc']
        threads = -(-count // DRAWS_PER_THREAD)
        blocks = -(-threads // THREADS_PER_BLOCK)
        _kernel()(
            (blocks,), (THREADS_PER_BLOCK,),
            (np.uint64(state >> 64), np.uint64(state & (2**64 - 1)), np.uint64(increment >> 64),
             np.uint64(increment & (2**64 - 1)), np.float64(low), np.float64(high - low), out,
             np.int64(count), np.int64(DRAWS_PER_THREAD)))
        skip(bit_generator, count)
    return out
