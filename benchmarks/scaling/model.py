"""A latency-bandwidth model of minidl_dist's step time and traffic, per scheme.

A message of ``n`` bytes between two ranks takes ``alpha + beta n`` seconds
(:class:`Link`, measured by :mod:`benchmarks.scaling.pingpong`); adding
received values costs ``gamma`` seconds per byte and packing a buffer
``copy`` per byte. Ranks fill hosts in order, ``per_host`` to a host, so in
the allreduce's recursive halving and doubling (minidl_dist.allreduce: the
partner at distance ``d`` is ``rank ^ d``) a level with ``d < per_host``
stays on the host (shared memory) and the others cross the network, where
the host's ``per_host`` ranks send at once and share its link.

Traffic is the mean over ranks of the bytes each sends
(:func:`minidl_dist.bytes_sent`): an allreduce of ``n`` bytes sends
``2 (p - 1) / p n`` per rank, exactly, whatever the buckets (recursive
halving/doubling and the ring both move ``(p - 1) n`` bytes in all per
phase); an all-gather of ``n`` bytes in all sends ``(p - 1) / p n``.

Step time = compute + communication, nothing overlapped (minidl_dist sums
the gradients after the backward pass). Compute for ``b`` samples on one
core is ``fixed + per_sample b`` (fitted on one rank, one thread), where
``fixed`` (the optimizer's update, per-layer overheads) scales with the
share of the parameters a rank holds. ``oversubscription`` (ranks per core,
at least 1) multiplies both compute and communication: with more ranks than
cores, each rank runs for that share of the time and every exchange waits
for its partner to be scheduled.
"""

from dataclasses import dataclass

from minidl_dist.allreduce import BUCKET_BYTES

FLOAT32, FLOAT64 = 4, 8
TOTALS = 2  # the loss sum and sample count, float64, summed over ranks at every step


@dataclass(frozen=True)
class Link:
    """One message of ``n`` bytes takes ``alpha + beta * n`` seconds."""
    alpha: float
    beta: float


@dataclass(frozen=True)
class Machine:
    """Where the ranks run: links, local rates, ranks per host, and ranks per core."""
    local: Link
    network: Link
    gamma: float
    copy: float
    per_host: int
    oversubscription: float = 1.0


def allreduce_bytes(count, itemsize, ranks):
    """Mean bytes a rank sends in minidl_dist's allreduce of ``count`` items."""
    return 2 * (ranks - 1) / ranks * count * itemsize


def allgather_bytes(total, ranks):
    """Mean bytes a rank sends in an all-gather of ``total`` bytes (its rows to each other rank)."""
    return (ranks - 1) / ranks * total


def _link(distance, machine):
    return machine.local if distance < machine.per_host else machine.network


def _sharing(distance, ranks, machine):
    """Ranks of a host sending over its link at once at this distance."""
    return 1 if distance < machine.per_host else min(machine.per_host, ranks)


def allreduce_seconds(nbytes, ranks, machine, bucket_bytes=BUCKET_BYTES):
    """Seconds of minidl_dist's allreduce of ``nbytes`` over ``ranks``.

    Each bucket is reduced on its own: with a power-of-two number of ranks,
    log2(p) exchanges of half, a quarter, ... of it and log2(p) back, each
    halving step adding what it received; otherwise a ring of 2 (p - 1)
    exchanges of 1/p of it, which crosses the network if the ranks span hosts.
    """
    if ranks == 1 or nbytes == 0:
        return 0.0
    seconds, left = 0.0, nbytes
    while left > 0:
        piece = min(left, bucket_bytes)
        left -= piece
        if ranks & (ranks - 1) == 0:
            distance, part = 1, piece / 2
            while distance < ranks:
                link = _link(distance, machine)
                wire = link.beta * _sharing(distance, ranks, machine)
                seconds += 2 * (link.alpha + part * wire) + part * machine.gamma
                distance, part = 2 * distance, part / 2
        else:
            link = machine.network if ranks > machine.per_host else machine.local
            share = min(machine.per_host, ranks) if ranks > machine.per_host else 1
            part = piece / ranks
            seconds += 2 * (ranks - 1) * (link.alpha + part * link.beta * share)
            seconds += (ranks - 1) * part * machine.gamma
    return seconds * machine.oversubscription


def allgather_seconds(total, ranks, machine):
    """Seconds of an all-gather of ``total`` bytes (MPICH's recursive doubling)."""
    if ranks == 1 or total == 0:
        return 0.0
    seconds, distance = 0.0, 1
    while distance < ranks:
        link = _link(distance, machine)
        share = _sharing(distance, ranks, machine)
        seconds += link.alpha + total / ranks * distance * link.beta * share
        distance *= 2
    return seconds * machine.oversubscription


def compute_seconds(workload, samples, held=1.0, oversubscription=1.0):
    """Seconds of one rank's forward, backward and update on ``samples`` samples.

    Args:
        workload: dict with ``fixed_s`` and ``per_sample_s`` (one core).
        samples: Samples this rank computes (may be fractional: a share of a layer).
        held: Share of the parameters this rank updates.
        oversubscription: Ranks per core (at least 1).
    """
    return oversubscription * (workload['fixed_s'] * held + workload['per_sample_s'] * samples)
