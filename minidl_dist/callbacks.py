"""Callbacks for scripts written for Horovod."""

from minidl.callbacks import Callback
from minidl_dist import comm
from minidl_dist.model_sync import broadcast_model


class BroadcastWeights(Callback):
    """Copy ``root_rank``'s weights and optimizer state to all ranks when training starts.

    Horovod's ``BroadcastGlobalVariablesCallback``. A DistributedOptimizer
    already broadcasts rank 0's model at the start of ``fit``; this callback
    is for other roots and for scripts that keep Horovod's structure.

    Args:
        root_rank: The rank whose values are copied.
    """

    def __init__(self, root_rank=0):
        super().__init__()
        self.root_rank = root_rank

    def on_train_begin(self, logs=None):
        broadcast_model(comm.world(), self.model, self.root_rank)
