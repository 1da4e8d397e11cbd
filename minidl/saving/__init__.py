"""Saving and loading models and weights in Keras 2's HDF5 format.

Files written here load in Keras 2 and files written by Keras 2 load here,
for the same architectures; what tf.keras / tf-keras 2.x add to the layout
is translated by :mod:`minidl.saving.tf_keras_compat`. Only this package
imports h5py.

Full model (:func:`save_model`, ``Model.save``)::

    /  attrs  keras_version    '2.15.0': the Keras release whose layout this is
              backend          'minidl'
              model_config     JSON {"class_name": "Sequential" | "Model" | ...,
                                     "config": model.get_config()}
              training_config  JSON {"loss", "metrics", "weighted_metrics", "loss_weights",
                                     "optimizer_config": {"class_name", "config"}}
                               (a compiled model saved with include_optimizer=True)
              minidl_state     JSON, minidl's own (below)
    /model_weights  attrs  layer_names: array of UTF-8 bytes, every layer (input layers
                           included) in model.layers order; backend; keras_version
    /model_weights/<layer>  attrs  weight_names: array of bytes (empty without weights)
    /model_weights/<layer>/<weight name>  one dataset per weight at the path of its name,
                           e.g. /model_weights/dense/dense/kernel:0
    /optimizer_weights  attrs  weight_names; one dataset per optimizer array at the path
                           of its name, iterations first ('Adam/iter:0',
                           'Adam/dense/kernel/m:0', ...); absent before the first update

Architecture only (``model.to_json()``, :func:`model_from_json`): the
'model_config' JSON (:mod:`minidl.saving.model_json`).

Weights only (:func:`save_weights`): the content of /model_weights at the
root. :func:`load_weights` reads either kind of file, pairing the layers
that have weights in order (Keras 2's rule) or, with ``by_name=True``, by
layer name.

Losses and metrics in 'training_config' are names or ``{"class_name",
"config"}`` objects, nested in lists or objects by output as given to
``compile``. Lists of strings that would not fit an HDF5 attribute are split
over ``<name>0``, ``<name>1``, ... as Keras does.

'minidl_state' is what Keras's file lacks for an exact resume: the states of
the model's own random generators, ``{"layer_generators": {"<layer>/<attribute>":
state}}`` (:mod:`minidl.saving.state`). Each epoch's order of samples is
drawn from the model's generator as the epoch starts, so its state is also
the position in the data. With the optimizer's iterations and slots
(/optimizer_weights) and its learning rate (optimizer_config), a run resumed
from a full-model checkpoint with ``fit(..., initial_epoch=k)`` gives the same
bits as the uninterrupted run; loading touches no other model's generators.
Keras ignores the attribute.

Safety: files are replaced atomically (temporary file in the same
directory, fsync, rename), so a failed save leaves the old file intact.
Loading never runs code: configs are parsed with ``json.loads`` and only
minidl's registered classes or those in ``custom_objects`` are built (a
Keras Lambda layer, whose function is marshalled bytecode, is refused). A
damaged or malformed file raises a ValueError naming the file and the
problem.

Nothing is allocated before it is checked. A rebuilt model's weights are
counted against a limit as its layers create them (the ``max_bytes``
argument, else the environment variable ``MINIDL_MAX_LOAD_BYTES``, else
16 GiB: :mod:`minidl.saving.load_limit`) and start as zeros, not drawn
values. Every dataset's declared shape and dtype (which h5py gives without
reading) is compared with the model's weights, or the optimizer's slots,
before any is read: a file of a few KB declaring a 149 GiB dataset is
refused, as are values that are not real numbers (complex, strings,
records) and values kept in other files (external or virtual storage).
Loading is all or nothing: everything is checked and read before the first
weight changes, so a refused ``load_weights`` leaves the model as it was,
and a saved optimizer state that does not fit is not applied at all (a
warning says so and training continues from a fresh state).
"""

from minidl.saving.model_file import load_model, save_model
from minidl.saving.model_json import model_from_config, model_from_json, model_to_json
from minidl.saving.weights import load_weights, save_weights

__all__ = ['load_model', 'load_weights', 'model_from_config', 'model_from_json', 'model_to_json',
           'save_model', 'save_weights']
