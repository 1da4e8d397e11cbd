"""Keras 2's ``preprocessing``: data preparation outside the model.

``sequence`` (padding, skip-grams, time-series windows), ``text`` (word
splitting, hashing, the Tokenizer) and ``image`` (ImageDataGenerator with
on-the-fly augmentation, image files). Augmentation draws only from minidl's
seeded generators, so the same seeds give the same batches on every run.
"""

from minidl.preprocessing import image, sequence, text

__all__ = ['image', 'sequence', 'text']
