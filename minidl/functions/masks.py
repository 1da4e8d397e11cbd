"""Mask arithmetic: which time steps of padded sequences hold data.

A mask is a boolean tensor ``(batch, steps)``, True where a step is real
(:mod:`minidl.layers.masking` says how masks travel through a graph). Masks
are not differentiable: the functions that make or combine them return
tensors that record no graph. :func:`masked_mean` is differentiable in its
``inputs`` (the mask only weighs them).
"""

from minidl.functions.reduction import sum as reduce_sum
from minidl.tensor import Tensor


def nonzero_mask(x):
    """``x != 0``: the mask of an Embedding's indices (``mask_zero=True``)."""
    return Tensor.wrap(x.data != 0) if isinstance(x, Tensor) else Tensor(x) != 0


def steps_differing_from(x, value, keepdims=False, dtype=bool):
    """Where any feature of a step differs from ``value``.

    Args:
        x: Tensor ``(batch, steps, ..., features)``.
        value: The padding value.
        keepdims: Keep the feature axis (size 1), to multiply ``x`` with.
        dtype: The result's dtype: bool for a mask, ``x``'s dtype for 0/1 weights.

    Returns:
        Tensor ``(batch, steps, ...)`` (or with a trailing 1 when ``keepdims``).
    """
    differs = x.xp.any(x.data != value, axis=-1, keepdims=keepdims)
    return Tensor.wrap(differs if dtype is bool else differs.astype(dtype))


def all_masks(masks):
    """The steps unmasked in every one of ``masks`` (boolean tensors of one shape)."""
    result = masks[0].data
    for mask in masks[1:]:
        result = result & mask.data
    return Tensor.wrap(result)


def concatenated_mask(inputs, masks, axis):
    """The mask of ``inputs`` concatenated along ``axis`` (Keras 2's Concatenate rule).

    Each input's mask (all True for an input without one, None in
    ``masks``) gets a trailing axis of size 1, the masks are concatenated
    along ``axis`` as their inputs are, and an output step is unmasked where
    every mask joined into it is: an AND across the inputs for features
    joined on the last axis, the masks end to end for sequences joined in time.
    """
    xp = inputs[0].xp
    parts = [(xp.ones(x.shape[:-1], bool) if mask is None else mask.data.astype(bool))[..., None]
             for x, mask in zip(inputs, masks)]
    return Tensor.wrap(xp.concatenate(parts, axis=axis).all(axis=-1))


def masked_mean(inputs, mask, axis, keepdims=False):
    """Mean of ``inputs`` over the unmasked steps along ``axis``; 0 for a sample with no
    unmasked step (Keras 2's GlobalAveragePooling1D with a mask).

    Args:
        inputs: Tensor ``(batch, steps, ...)``.
        mask: Boolean tensor or array ``(batch, steps)``.
        axis: The steps' axis of ``inputs``.
        keepdims: Keep ``axis`` with size 1.
    """
    weights = mask.data if isinstance(mask, Tensor) else inputs.xp.asarray(mask)
    shape = [1] * inputs.ndim
    shape[0], shape[axis] = inputs.shape[0], inputs.shape[axis]
    weights = weights.astype(inputs.dtype).reshape(shape)
    counts = inputs.xp.maximum(weights.sum(axis=axis, keepdims=keepdims), 1)
    return reduce_sum(inputs * Tensor.wrap(weights), axis=axis, keepdims=keepdims) / \
        Tensor.wrap(counts)
