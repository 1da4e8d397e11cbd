"""A model's architecture as JSON, in Keras 2's layout, and back.

``model.to_json()`` writes ``{"class_name": "Sequential" | "Model" | ...,
"config": model.get_config(), "keras_version": ..., "backend": "minidl"}``,
the text of the 'model_config' attribute of a saved file: weights and
training settings are not part of it. :func:`model_from_json` builds a new
model from it, with fresh weights, under the rules of :func:`load_model`:
only minidl's registered classes and those in ``custom_objects`` are built,
a Lambda layer (code) is refused, and a model whose weights would exceed
the limit of :mod:`minidl.saving.load_limit` is refused before they exist.
Losses given to ``add_loss`` are Python computations, not part of the
architecture, and are not written.

YAML is not offered: reading YAML with a general loader can run code.
"""

import json

from minidl.layers.serialization import deserialize
from minidl.layers.weight_budget import weight_budget
from minidl.saving import hdf5, load_limit
from minidl.saving.model_file import checked_model_config
from minidl.saving.weights import BACKEND, KERAS_VERSION


def model_to_json(model, **kwargs):
    """The JSON text of ``model``'s architecture; ``kwargs`` go to ``json.dumps`` (indent, ...)."""
    description = {'class_name': type(model).__name__, 'config': model.get_config(),
                   'keras_version': KERAS_VERSION, 'backend': BACKEND}
    return json.dumps(description, default=hdf5.json_default, **kwargs)


def model_from_json(json_string, custom_objects=None, max_bytes=None):
    """The model that ``json_string`` (from ``to_json``, or Keras 2) describes, newly initialised.

    Args:
        json_string: The JSON text.
        custom_objects: Your own layer classes (and functions) by the names the text uses.
        max_bytes: The most bytes the model's weights may take; by default
            the environment variable ``MINIDL_MAX_LOAD_BYTES``, else 16 GiB.

    Raises:
        ValueError: If the text is not JSON, is not a model description,
            names a class that is neither minidl's nor in ``custom_objects``,
            or describes a model whose weights exceed ``max_bytes``.
    """
    try:
        description = json.loads(json_string)
    except (TypeError, ValueError) as error:
        raise ValueError(f'model_from_json: the text is not valid JSON: {error}') from None
    except RecursionError:  # json nests one call per level: crafted text can exhaust it
        raise ValueError('model_from_json: the JSON nests too deeply to be a model '
                         'description') from None
    return model_from_config(description, custom_objects, max_bytes)


def model_from_config(config, custom_objects=None, max_bytes=None):
    """The model that ``{'class_name', 'config'}`` describes, newly initialised.

    ``max_bytes`` is as in :func:`model_from_json`.

    Raises:
        TypeError: If ``config`` is a list (a Sequential model's list of
            layers: use ``Sequential.from_config``).
        ValueError: As :func:`model_from_json`.
    """
    if isinstance(config, list):
        raise TypeError('model_from_config takes a {"class_name", "config"} dict, not a list; '
                        'for a list of layer configs use Sequential.from_config')
    custom_objects = dict(custom_objects or {})
    limit = load_limit.max_load_bytes(max_bytes)
    config = checked_model_config(config, custom_objects)
    with weight_budget(limit, hint=load_limit.hint('model_from_json', 'description')):
        return deserialize(config, custom_objects)


def model_from_yaml(yaml_string, custom_objects=None):
    """Not offered, as ``Model.to_yaml`` is not: reading YAML with a general loader can run
    code. Use ``model_to_json`` and :func:`model_from_json`."""
    raise NotImplementedError('model_from_yaml is not offered, because reading YAML with a '
                              'general loader can run code; use Model.to_json and '
                              'models.model_from_json')
