"""Keras 2's update and per-input loss bookkeeping of a layer, mixed into ``Layer``.

A layer adds updates with ``add_update`` (Keras 2's running statistics: a
``K.moving_average_update`` of a weight made with ``trainable=False``).
Added inside ``call`` while a model runs, an update belongs to that run,
like ``add_loss`` terms (:mod:`minidl.layers.runs`): the training step
applies the updates of the forward pass it just computed, while ``predict``
and ``evaluate`` leave them unapplied, as Keras 2's test and predict
functions do. Added outside any run (at the top level, or in ``build``), an
update is the layer's own for good and runs at every training step, as a
Keras 2 graph's update operation would. ``updates`` lists both, of the layer
and of the layers inside it; a layer that is not trainable (and not
stateful) has none, as in Keras 2, so a frozen layer's statistics stay put.
"""

from minidl.layers.runs import inputs_key, run_losses, run_updates_of, runs, add_run_update


class _Kept:
    """Whether any layer has kept an update outside a run: until one has, a training
    step finds its updates from the current run alone, without walking the model."""

    any = False


class UpdateMethods:
    """``add_update``, ``updates``, ``get_updates_for`` and ``get_losses_for`` of Keras 2."""

    _kept_updates = ()  # (inputs key, update) pairs added outside a run; a list once there are

    def add_update(self, updates, inputs=None):
        """Add update operations (from ``K.update``, ``K.update_add``, ...) to the layer.

        Args:
            updates: An update or a list of them (None or [] adds nothing).
            inputs: The input tensor(s) the updates are conditional on, as
                Keras 2 records them for :meth:`get_updates_for`; None for
                unconditional updates.
        """
        if updates is None or (isinstance(updates, list) and not updates):
            return
        key = inputs_key(inputs)
        for update in updates if isinstance(updates, list) else [updates]:
            if runs.depth:  # inside a call: the update belongs to this run
                add_run_update(self, update, key)
            else:
                if not self._kept_updates:
                    self._kept_updates = []
                self._kept_updates.append((key, update))
                _Kept.any = True

    def _own_updates(self):
        return list(self._kept_updates) + run_updates_of(self)

    def _updates_apply(self):
        # Keras 2: a layer that is not trainable has no updates, unless it is stateful.
        return self.trainable or getattr(self, 'stateful', False)

    @property
    def updates(self):
        """The updates of this layer and of the layers inside it: those added outside a
        run, then those of the latest run (each once)."""
        if not self._updates_apply():
            return []
        found = [update for _, update in self._own_updates()]
        found += [update for layer in self._tracked_layers() for update in layer.updates]
        seen, unique = set(), []
        for update in found:
            if id(update) not in seen:
                seen.add(id(update))
                unique.append(update)
        return unique

    def get_updates_for(self, inputs):
        """This layer's own updates added for ``inputs`` (None: the unconditional ones)."""
        if not self._updates_apply():
            return []
        key = inputs_key(inputs)
        return [update for kept, update in self._own_updates() if kept == key]

    def get_losses_for(self, inputs):
        """This layer's own loss terms added for ``inputs`` in the latest run; for None,
        the unconditional ones, which include its weight penalties (as Keras 2 adds
        its regularizers without inputs)."""
        key = inputs_key(inputs)
        penalties = [regularizer(weight) for weight, regularizer in self._regularized] \
            if key is None else []
        return penalties + run_losses(self, key, keyed=True)


def step_updates(model):
    """The updates a training step of ``model`` applies: ``model.updates``, or at once
    none when no run added any and no layer keeps any (most models)."""
    if not runs.updates and not _Kept.any:
        return []
    return model.updates
