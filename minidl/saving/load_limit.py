"""The most bytes of weights that building a model from a file may allocate.

A file describes its model as data, and a hostile or mistaken one can ask
for any size: ``Dense(units=2**31)`` wants a 24 GiB kernel before a single
value is read. :func:`~minidl.saving.load_model` and
:func:`~minidl.saving.model_from_json` count the weights of the model they
build against a limit and refuse, naming the layer and the shapes, before
allocating past it. The limit is the ``max_bytes`` argument
if given, else the environment variable ``MINIDL_MAX_LOAD_BYTES`` (a whole
number of bytes), else 16 GiB. The default is fixed rather than a share of
this machine's memory, so that whether a file loads does not depend on
where; it is far above the models minidl trains and below what would bring
an ordinary machine to a halt.
"""

import numbers
import os

ENVIRONMENT_VARIABLE = 'MINIDL_MAX_LOAD_BYTES'
DEFAULT_MAX_LOAD_BYTES = 16 * 2 ** 30


def max_load_bytes(max_bytes=None):
    """The limit in bytes: ``max_bytes``, else ``MINIDL_MAX_LOAD_BYTES``, else 16 GiB.

    Raises:
        TypeError: If ``max_bytes`` is not an integer.
        ValueError: If the limit is not a positive whole number of bytes.
    """
    if max_bytes is None:
        text = os.environ.get(ENVIRONMENT_VARIABLE, '').strip()
        if not text:
            return DEFAULT_MAX_LOAD_BYTES
        source = f'the environment variable {ENVIRONMENT_VARIABLE}={text!r}'
        try:
            value = int(text)
        except ValueError:
            raise ValueError(f'{source} is not a whole number of bytes') from None
    else:
        if isinstance(max_bytes, bool) or not isinstance(max_bytes, numbers.Integral):
            raise TypeError(f'max_bytes must be a whole number of bytes, got '
                            f'{type(max_bytes).__name__} {max_bytes!r}')
        value, source = int(max_bytes), f'max_bytes={max_bytes!r}'
    if value <= 0:
        raise ValueError(f'{source}: the limit on the bytes of weights must be positive')
    return value


def hint(function, source):
    """How to raise the limit, for the end of the refusal's message."""
    return (f'; if you trust the {source}, raise the limit with {function}(..., max_bytes=...) '
            f'or the environment variable {ENVIRONMENT_VARIABLE}')
