"""QSGD: gradients stochastically quantized to a few levels, unbiased (Alistarh et al. 2017).

A vector is cut into buckets of ``bucket_size`` elements. Each bucket ``v``
is sent as its norm ``||v||_2`` and, per element, a sign and a level
``l_i`` in ``0 ... s``: with ``r_i = s |v_i| / ||v||_2``, the level is
``floor(r_i) + 1`` with probability ``r_i - floor(r_i)`` and ``floor(r_i)``
otherwise, so that the decoded value ``||v||_2 sign(v_i) l_i / s`` has
expectation ``v_i``. The variance added is at most
``min(d / s^2, sqrt(d) / s) ||v||_2^2`` for a bucket of ``d`` elements
(the paper's Lemma 3.1).

The encoding is fixed-width rather than the paper's Elias code, so that
every rank's message has the same length (one all-gather, no sizes to
exchange): the norms as float32, then one code per element of ``1 +
ceil(log2(s + 1))`` bits (the sign in the lowest bit, the level above it),
packed little-endian into bytes. Its size is :meth:`QSGD.encoded_bytes`.
"""

import math
import numbers

import numpy as np

# Elements packed at a time: a multiple of 8, so each chunk's bits fill whole bytes.
_CHUNK = 1 << 20


class QSGD:
    """The QSGD codec with ``levels`` quantization levels per sign.

    Args:
        levels: ``s``, the number of nonzero levels (1 to 32767); 7 gives 4
            bits per element (a sign and 3 bits of level).
        bucket_size: Elements that share one norm (the paper uses 512).

    Raises:
        ValueError: For levels or a bucket size out of range.
    """

    #: QSGD is unbiased; it keeps no residual between steps.
    error_feedback = False

    def __init__(self, levels=7, bucket_size=512):
        for name, value, high in (('levels', levels, 32767), ('bucket_size', bucket_size, None)):
            if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1 \
                    or (high is not None and value > high):
                bounds = f'1 to {high}' if high else 'at least 1'
                raise ValueError(f'QSGD: {name} must be an integer, {bounds}; got {value!r}')
        self.levels, self.bucket_size = int(levels), int(bucket_size)
        self.bits = 1 + math.ceil(math.log2(self.levels + 1))

    def __repr__(self):
        return f'QSGD(levels={self.levels}, bucket_size={self.bucket_size})'

    def encoded_bytes(self, size):
        """Bytes of the encoding of ``size`` elements: the norms, then the packed codes."""
        return 4 * -(-size // self.bucket_size) + -(-size * self.bits // 8)

    def encode(self, vector, rng):
        """The bytes (a uint8 array) that encode the 1-D float ``vector``.

        Args:
            vector: The values to quantize.
            rng: A ``numpy.random.Generator`` that draws the random rounding
                (one uniform draw per element, in order).
        """
        vector = np.asarray(vector).reshape(-1)
        size, buckets = vector.size, -(-vector.size // self.bucket_size)
        padded = np.zeros(buckets * self.bucket_size, np.float64)
        padded[:size] = vector
        padded = padded.reshape(buckets, self.bucket_size)
        norms = np.sqrt(np.einsum('ij,ij->i', padded, padded)).astype(np.float32)
        # Scale by the norm that is sent (float32), so the decoded values stay unbiased.
        scale = norms.astype(np.float64)[:, None]
        with np.errstate(divide='ignore', invalid='ignore'):
            ratio = np.abs(padded) * (self.levels / np.where(scale > 0, scale, 1))
        ratio = np.nan_to_num(ratio, nan=0.0, posinf=0.0).reshape(-1)[:size]
        np.minimum(ratio, self.levels, out=ratio)  # guards rounding above s
        floor = np.floor(ratio)
        levels = floor + (rng.random(size) < ratio - floor)
        codes = levels.astype(np.uint32) << 1 | np.signbit(vector).astype(np.uint32)
        packed = [_pack(codes[start:start + _CHUNK], self.bits)
                  for start in range(0, size, _CHUNK)]
        return np.concatenate([norms.view(np.uint8)] + packed)

    def decode(self, encoded, size):
        """The float32 vector of ``size`` elements that ``encoded`` stands for."""
        encoded = np.asarray(encoded, np.uint8).reshape(-1)
        if encoded.size != self.encoded_bytes(size):
            raise ValueError(f'QSGD: {encoded.size} bytes do not encode {size} elements '
                             f'({self.encoded_bytes(size)} bytes)')
        buckets = -(-size // self.bucket_size)
        norms = encoded[:4 * buckets].view(np.float32)
        codes, offset = [], 4 * buckets
        for start in range(0, size, _CHUNK):
            count = min(_CHUNK, size - start)
            length = -(-count * self.bits // 8)
            codes.append(_unpack(encoded[offset:offset + length], count, self.bits))
            offset += length
        codes = np.concatenate(codes) if codes else np.zeros(0, np.uint32)
        values = (codes >> 1).astype(np.float32)
        np.negative(values, out=values, where=(codes & 1).astype(bool))
        step = np.repeat(norms / np.float32(self.levels), self.bucket_size)[:size]
        return values * step


def _pack(codes, bits):
    """``codes`` (each below ``2**bits``) as a little-endian bit stream of ``bits`` each."""
    planes = (codes[:, None] >> np.arange(bits, dtype=np.uint32)) & 1
    return np.packbits(planes.astype(np.uint8).reshape(-1), bitorder='little')


def _unpack(data, count, bits):
    """The ``count`` codes of ``bits`` bits each that :func:`_pack` wrote into ``data``."""
    planes = np.unpackbits(data, count=count * bits, bitorder='little').reshape(count, bits)
    return planes.astype(np.uint32) @ (np.uint32(1) << np.arange(bits, dtype=np.uint32))
