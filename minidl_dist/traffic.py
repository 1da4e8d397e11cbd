"""Bytes this rank has sent to other ranks: what the benchmarks report as traffic.

Every collective of minidl_dist adds what it sends here: the fixed-order
allreduce the bytes of each exchange (in the wire dtype), an all-gather the
bytes of this rank's rows once per other rank (what a ring all-gather sends).
Broadcasts and the small metadata exchanges (shapes, plans) are not counted:
they happen once per fit, not per step.
"""

_sent = [0]


def add(nbytes):
    """Count ``nbytes`` more bytes sent by this rank."""
    _sent[0] += int(nbytes)


def bytes_sent():
    """Bytes this rank has sent in the counted collectives since the process started."""
    return _sent[0]
