"""Top-k sparsification with error feedback: send the largest values, keep the rest for later.

Each step a rank sends only the ``k`` entries of largest magnitude of its
gradient, as their indices (int32) and values (float32), and keeps what it
did not send, the *residual*, to add to the next step's gradient (Seide et
al. 2014's error feedback, as in Lin et al.'s Deep Gradient Compression):
nothing is lost, only delayed. The invariant, kept bit for bit at every step::

    sent + new residual == gradient + old residual

so over steps the sum of what was sent plus the last residual is the sum of
the gradients (exactly, where those float32 additions are exact).

Ties in magnitude are broken towards the lower index, so the selection,
and with it a whole run, is a function of the values alone.
"""

import math
import numbers

import numpy as np


class TopK:
    """The top-k codec: ``k = ceil(ratio * size)`` entries per step, at least one.

    Args:
        ratio: Fraction of the entries sent each step, in (0, 1].

    Raises:
        ValueError: For a ratio outside (0, 1].
    """

    #: The residual of each step is added to the next (:func:`error_feedback_step`).
    error_feedback = True

    def __init__(self, ratio=0.01):
        if isinstance(ratio, bool) or not isinstance(ratio, numbers.Real) \
                or not 0 < ratio <= 1:
            raise ValueError(f'TopK: ratio must be a number in (0, 1], got {ratio!r}')
        self.ratio = float(ratio)

    def __repr__(self):
        return f'TopK(ratio={self.ratio})'

    def count(self, size):
        """``k``, the number of entries sent of a vector of ``size`` (0 for an empty one)."""
        return min(size, max(1, math.ceil(self.ratio * size)))

    def encoded_bytes(self, size):
        """Bytes of the encoding of ``size`` elements: k int32 indices and k float32 values."""
        return 8 * self.count(size)

    def encode(self, vector, rng=None):
        """The bytes (a uint8 array) of the ``k`` largest-magnitude entries of ``vector``.

        Args:
            vector: A 1-D float array.
            rng: Unused (top-k draws nothing); for the same call as QSGD's.
        """
        vector = np.asarray(vector).reshape(-1)
        if vector.size >= 2 ** 31:
            raise ValueError(f'TopK: int32 indices cannot address {vector.size} elements')
        k = self.count(vector.size)
        magnitude = np.abs(vector.astype(np.float32, copy=False))
        # A stable sort on -|v| puts equal magnitudes in index order: deterministic ties.
        # NaN sorts last in numpy; make it first, so a NaN gradient is always sent.
        key = np.where(np.isnan(magnitude), -np.inf, -magnitude)
        if k < vector.size:
            bound = np.partition(key, k - 1)[k - 1]      # the k-th smallest key
            candidates = np.flatnonzero(key <= bound)   # every entry tied with it, in order
            chosen = candidates[np.argsort(key[candidates], kind='stable')[:k]]
        else:
            chosen = np.arange(vector.size)
        indices = np.sort(chosen).astype(np.int32)
        values = vector[indices].astype(np.float32)
        return np.concatenate([indices.view(np.uint8), values.view(np.uint8)])

    def decode(self, encoded, size):
        """The dense float32 vector of ``size`` elements, zero where nothing was sent."""
        encoded = np.asarray(encoded, np.uint8).reshape(-1)
        if encoded.size != self.encoded_bytes(size):
            raise ValueError(f'TopK: {encoded.size} bytes do not encode {size} elements '
                             f'({self.encoded_bytes(size)} bytes)')
        k = self.count(size)
        indices = encoded[:4 * k].view(np.int32)
        result = np.zeros(size, np.float32)
        result[indices] = encoded[4 * k:].view(np.float32)
        return result


def error_feedback_step(codec, gradient, residual, rng=None):
    """Encode ``gradient`` plus the residual; return the encoding and the new residual.

    With a codec without error feedback (QSGD) the gradient is encoded as it
    is and the residual stays None.

    Args:
        codec: A :class:`TopK` or :class:`~minidl_dist.qsgd.QSGD`.
        gradient: This step's 1-D gradient.
        residual: What earlier steps did not send (None or zeros at the start).
        rng: The generator the codec draws from (QSGD's rounding).

    Returns:
        ``(encoded, residual)``: the bytes to send, and what is left to send later.
    """
    if not codec.error_feedback:
        return codec.encode(gradient, rng), None
    corrected = gradient if residual is None else gradient + residual
    encoded = codec.encode(corrected, rng)
    # Exactly zero where an entry was sent (x - x), the corrected value elsewhere.
    return encoded, corrected - codec.decode(encoded, corrected.size)
