"""Unique default names for layers and models: 'dense', 'dense_1', ...

Keras derives a layer's default name from its class name in snake case and
numbers repeats within a session; ``clear_session`` starts the count again.
"""

import collections
import re

_counts = collections.Counter()


def snake_case(class_name):
    """'GlobalAveragePooling2D' -> 'global_average_pooling2d', 'SimpleRNN' -> 'simple_rnn'."""
    words = re.sub(r'(.)([A-Z][a-z0-9]+)', r'\1_\2', class_name)
    return re.sub(r'([a-z])([A-Z])', r'\1_\2', words).lower()


def unique_name(base, zero_based=True):
    """``base``, then ``base_1``, ``base_2``, ... (``base_1`` first when not ``zero_based``).

    Keras numbers input layers from one ('input_1') and everything else from zero.
    """
    count = _counts[base]
    _counts[base] += 1
    if not zero_based:
        return f'{base}_{count + 1}'
    return base if count == 0 else f'{base}_{count}'


def clear_session():
    """Forget the names given so far, so that the next layer is 'dense' again."""
    _counts.clear()
