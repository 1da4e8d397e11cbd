"""HybridParallel: data-parallel layers first, then model-parallel Dense layers.

Krizhevsky's scheme for AlexNet ("One weird trick for parallelizing
convolutional neural networks", 2014): convolutions hold few weights and
most of the computation, so they are data-parallel; the fully connected
layers hold most of the weights, so each rank keeps only 1/N of their
columns, and of the optimizer's state for them. What moves between ranks is
then the activations of the global batch at the boundary, not those
layers' weight gradients: hybrid pays off when the batch is small against
the fully connected layers' width (:mod:`minidl_dist.model_parallel` has
the layout, and ``benchmarks/RESULTS.md`` the measured traffic).

The model is placed when it is compiled: rank 0's weights are broadcast,
each model-parallel layer keeps its columns, and every layer from the first
model-parallel one on computes the global batch. Gradients of the
data-parallel layers are summed over ranks as in
:class:`~minidl_dist.strategy.DataParallel`; the others are complete on
every rank already. Whatever reads or writes the weights as a whole
(``save``, ``get_weights``, ``summary``, ...) gathers the shards first,
on every rank, so files have the ordinary Keras layout.

The layers to place are found in the model's graph
(:mod:`minidl_dist.hybrid_layers`). Each forward pass's rows (each rank's,
or a round of micro-shards in the invariant mode) are described by a
:class:`~minidl_dist.hybrid_pass.Pass` that the strategy hands to the
placements' shared :class:`~minidl_dist.model_parallel.Region`.
"""

import contextlib

from minidl.layers.nest import flatten
from minidl.models.strategy import count_of
from minidl_dist import data, model_parts, model_sync
from minidl_dist.comm import from_host
from minidl_dist.failfast import doing
from minidl_dist.functions import gather_last_axis
from minidl_dist.hybrid_layers import (check_invariant_mode, check_no_penalties,
                                       downstream_layers, model_parallel_layers)
from minidl_dist.hybrid_pass import Pass
from minidl_dist.model_parallel import ColumnShard, GlobalBatch, Region
from minidl_dist.packing import Packing
from minidl_dist.strategy import DataParallel


class HybridParallel(DataParallel):
    """Data parallelism up to the model-parallel Dense layers, model parallelism from there.

    Args:
        comm: The mpi4py communicator of the ranks.
        reducer: The :class:`~minidl_dist.allreduce.Reducer` that sums over them.
        model_parallel: Names of the Dense layers to split by columns, or
            'dense' for every Dense layer after the model's last convolution.
        micro_shards: None, or S for the rank-count-invariant mode
            (:mod:`minidl_dist.tiled_product` says how the model-parallel
            layers keep it).
        every_rank_writes: Let every rank print progress and write files.
    """

    def __init__(self, comm, reducer, model_parallel, micro_shards=None, every_rank_writes=False):
        super().__init__(comm, reducer, micro_shards, every_rank_writes)
        self.model_parallel = model_parallel
        self._attached = None
        self._sharded = []  # the model-parallel layers
        self._complete = set()  # ids of weights whose gradients every rank computes whole
        self._region = None  # what the placements share; it carries each pass's rows
        self._whole = False

    # ----- placing the model at compile time ------------------------------------------

    def attach(self, model):
        """Check the model-parallel layers, broadcast rank 0's weights, keep this rank's shards."""
        if self._attached is model:
            return
        if self._attached is not None:
            raise ValueError('a DistributedOptimizer with model_parallel places one model; '
                             'make a new one for another model')
        super().attach(model)  # refuses a model placed by another strategy
        if not model.built:
            raise ValueError(f'minidl_dist: model {model.name!r} has no weights yet; '
                             f'model_parallel needs them at compile time (give the first '
                             f'layer input_shape=, or call the model once)')
        sharded = model_parallel_layers(model, self.model_parallel, self.size)
        downstream = downstream_layers(model, sharded)
        check_no_penalties(downstream)
        if self.micro_shards is not None:
            check_invariant_mode(downstream, sharded, self.micro_shards)
        with doing("broadcasting rank 0's weights"):
            model_sync.broadcast_model(self.comm, model)
        region = Region(self.comm, self.reducer,
                        [tensor.node.layer for tensor in flatten(model.outputs)])
        for layer in downstream:
            if layer in sharded:
                layer.placement = ColumnShard(region, layer.units, self.rank, self.size,
                                              self.micro_shards)
            else:
                layer.placement = GlobalBatch(region)
            self._complete.update(id(weight) for weight in layer.weights)
        self._sharded = sharded
        self._region = region
        self._attached = model
        self._keep_own_columns()

    # ----- the shards -------------------------------------------------------------------

    def _arrays_of(self, layer):
        """``(get, put)`` of each array a model-parallel layer shards (weights and slots)."""
        optimizer = self._attached.optimizer
        for weight in layer.weights:
            yield (lambda w=weight: w.data), (lambda array, w=weight: setattr(w, 'data', array))
            if optimizer is None or not optimizer.built:
                continue
            try:
                optimizer.get_slot(weight, optimizer.slot_names[0])
            except (ValueError, IndexError):  # not a parameter of the optimizer, or no slots
                continue
            for slot in optimizer.slot_names:
                yield (lambda w=weight, s=slot: optimizer.get_slot(w, s)), \
                    (lambda array, w=weight, s=slot: optimizer.set_slot(w, s, array))

    def _keep_own_columns(self):
        for layer in self._sharded:
            start, stop = layer.placement.start, layer.placement.stop
            for get, put in self._arrays_of(layer):
                put(get()[..., start:stop].copy())

    @contextlib.contextmanager
    def whole_weights(self, model):
        """Within the block, the model-parallel layers hold their whole weights (and slots)."""
        if self._whole or model is not self._attached:
            yield
            return
        with doing('gathering the model-parallel weights'):
            for layer in self._sharded:
                widths = [layer.placement.width] * self.size
                for get, put in self._arrays_of(layer):
                    array = get()
                    put(from_host(gather_last_axis(self.comm, array, widths), array))
        self._whole = True
        try:
            yield
        finally:
            self._whole = False
            self._keep_own_columns()

    # ----- training, evaluating, predicting ---------------------------------------------

    def begin(self, model):
        if model is not self._attached:
            raise ValueError(f'this DistributedOptimizer placed model {self._attached.name!r}, '
                             f'not {model.name!r}')
        super().begin(model)

    def _broadcast(self, model):
        # Shards differ from rank to rank by design; everything else is rank 0's.
        model_sync.broadcast_model(self.comm, model, keep=self._shard_ids())

    def _shard_ids(self):
        return {id(weight) for layer in self._sharded for weight in layer.weights}

    def _packing_for(self, model):
        params = [w for w in model.trainable_weights if id(w) not in self._complete]
        states = [w for w in model_parts.state_weights(model) if id(w) not in self._complete]
        if self._packing is None or not self._packing.matches(params, states):
            self._packing = Packing(params, states)
        return self._packing

    def reduce_gradients(self, params):
        """Sum the data-parallel layers' gradients; the others are complete on every rank.

        In the invariant mode the model-parallel layers' gradients came through
        autograd in the step's last round (:mod:`minidl_dist.tiled_product`).
        """
        if self.micro_shards is not None:
            for layer in self._sharded:
                layer.placement.gradients.check_taken(layer.name)
        super().reduce_gradients([p for p in params if id(p) not in self._complete])

    def run_step(self, step, indices):
        """Run ``step`` as data parallelism does, each forward pass computing a :class:`Pass`.

        In the invariant mode each of this rank's micro-shards is computed in
        a round of its own: rank ``r``'s part ``j`` meets every other rank's
        part ``j`` in the model-parallel layers.
        """
        count = count_of(indices)
        if self.micro_shards is None:
            with self._region.computing(Pass(self._counts_of(count), streams=self._streams)):
                super().run_step(step, indices)
            return
        if count < self.micro_shards:
            raise ValueError(f'a batch of {count} samples leaves some of the {self.micro_shards} '
                             f'micro-shards empty, and every rank computes the model-parallel '
                             f'layers for each; use batches (and a last batch) of at least '
                             f'{self.micro_shards}')
        sizes = [stop - start for start, stop in data.block_bounds(count, self.micro_shards)]
        per_rank = self.micro_shards // self.size
        rounds = iter(range(per_rank))

        def step_in_round(local):
            turn = next(rounds)
            together = [rank * per_rank + turn for rank in range(self.size)]
            round_pass = Pass([sizes[index] for index in together], together, self._streams)
            with self._region.computing(round_pass):
                step(local)

        super().run_step(step_in_round, indices)

    def shard(self, indices):
        """This rank's rows of an evaluate or predict batch; the placements compute the
        batch's global rows until the next."""
        self._region.begin(Pass(self._counts_of(count_of(indices)), streams=self._streams))
        return super().shard(indices)

    def _counts_of(self, count):
        if count < self.size:
            raise ValueError(f'a batch of {count} samples leaves some of the {self.size} ranks '
                             f'without samples, and every rank computes the model-parallel '
                             f'layers; use batches (and a last batch) of at least {self.size}')
        return [stop - start for start, stop in data.block_bounds(count, self.size)]
