"""The end of a rank's script: the ranks agree that every one of them has ended.

A rank whose script ends without failing (its last line, ``sys.exit(0)``)
while another rank still waits for it in a collective would leave that rank
waiting until the collective timeout; and a rank must not shut MPI down
while the others still need it. So when a rank's script ends,
:func:`finish`

1. tells every other rank, on a communicator of its own, how many watched
   collectives it entered (:mod:`minidl_dist.watchdog` numbers them) and
   how it ended;
2. waits in a non-blocking barrier until every rank has ended, at most the
   collective timeout.

Every rank's watchdog thread runs :func:`check`, which takes these notices.
All ranks enter the same collectives in the same order, so a rank waiting
in its collective number ``n`` when rank ``f`` ended after ``c < n``
collectives waits for one that rank ``f`` never entered: it aborts the job
at once, naming rank ``f`` and how it ended. This depends on the numbers,
not on timing: a rank that ended while another still works alone (not in a
collective, or in one that the ended rank took part in) is simply waited
for, and a job whose ranks all end normally passes the barrier at once.
"""

import os
import socket
import sys
import threading
import time

from mpi4py import MPI

from minidl_dist import failfast, watchdog

_TAG = 29  # the notices' tag, on the communicator of this module alone

_state = {}  # world, comm, rank, size, ended {rank: (collectives, how)}, lock, finished


def start(world, timeout):
    """Start watching the ends of the ranks of ``world`` (once; a collective).

    Also starts the watchdog (with ``timeout``) and has rank 0 print which
    process is which rank.
    """
    if _state:
        return
    rank, size = world.Get_rank(), world.Get_size()
    _state.update(world=world, rank=rank, size=size, ended={}, lock=threading.Lock())
    watchdog.start(world, rank, size, timeout, check=check)
    with watchdog.waiting('making the communicator for the ends of the ranks'):
        # A communicator of its own: the notices cannot meet the script's messages.
        _state['comm'] = world.Dup()
    print_rank_map(world)


def started():
    """Whether :func:`start` has run in this process."""
    return bool(_state)


def check():
    """Abort if this rank waits in a collective that a rank which has ended never entered.

    Runs in the watchdog thread.
    """
    if 'comm' not in _state:
        return
    _collect()
    wait = watchdog.current_wait()
    if wait is None:
        return
    what, _, number = wait
    for source, (count, how) in sorted(_state['ended'].items()):
        if count < number:
            rank, size = _state['rank'], _state['size']
            failfast.abort(_state['world'],
                           f'minidl_dist: {failfast.rank_name(source, size)} {how} after '
                           f'{count} collectives; rank {rank} ({failfast.current_activity()}) '
                           f'still waits for it in {what!r} (collective {number}): an early end '
                           f'(every rank must run the same collectives to the end)\n'
                           f'minidl_dist: aborting all {size} ranks\n')


def finish(how):
    """This rank's script has ended (``how``, in words): wait until every rank's has.

    Tells the other ranks (whose watchdogs abort the job if they wait for
    this rank in a collective it never entered), then waits for all of them
    to end, at most the collective timeout; past it, aborts the job naming
    the ranks that have not ended. Does nothing without :func:`start`, or the
    second time.
    """
    if 'comm' not in _state or _state.get('finished'):
        return
    _state['finished'] = True
    watchdog.stop()  # from here on only this thread makes MPI calls
    comm, rank, size = _state['comm'], _state['rank'], _state['size']
    notice = (watchdog.entered(), how)
    sends = [comm.isend(notice, dest=other, tag=_TAG) for other in range(size) if other != rank]
    barrier = comm.Ibarrier()
    began, limit = time.monotonic(), watchdog.timeout()
    while not barrier.Test():
        waited = time.monotonic() - began
        if waited > limit:
            _collect()
            missing = [other for other in range(size)
                       if other != rank and other not in _state['ended']]
            failfast.abort(_state['world'],
                           f'minidl_dist: rank {rank} of {size} {how} and waited {waited:.1f} s '
                           f'(timeout {limit:g} s, MINIDL_DIST_TIMEOUT) for the other ranks to '
                           f'end; rank(s) {", ".join(map(str, missing))} did not (stuck, or '
                           f'working alone for longer than the timeout)\n'
                           f'minidl_dist: aborting all {size} ranks\n')
        time.sleep(0.01)
    # Every rank sent its notice before entering the barrier: take the ones not yet taken.
    for other in range(size):
        if other != rank and other not in _state['ended']:
            _state['ended'][other] = comm.recv(source=other, tag=_TAG)
    MPI.Request.Waitall(sends)


def _collect():
    """Take the notices of the ranks that have ended (either thread)."""
    comm, status = _state['comm'], MPI.Status()
    with _state['lock']:
        while comm.iprobe(source=MPI.ANY_SOURCE, tag=_TAG, status=status):
            source = status.Get_source()
            _state['ended'][source] = comm.recv(source=source, tag=_TAG)


def print_rank_map(world):
    """Rank 0 prints each rank's process id and host, once, on stderr (a collective).

    A rank killed by a signal (kill -9, the out-of-memory killer) cannot say
    so itself; mpirun then reports the dead process by its pid and host,
    and this line tells which rank that was. Every rank keeps the hosts, so
    that its messages name the host of a rank (:func:`failfast.rank_name`).
    """
    with watchdog.waiting("gathering the ranks' process ids"):
        processes = world.allgather((os.getpid(), socket.gethostname()))
    failfast.set_hosts([host for _, host in processes])
    if world.Get_rank() == 0:
        listing = ', '.join(f'rank {rank} = pid {pid} on {host}'
                            for rank, (pid, host) in enumerate(processes))
        sys.stderr.write(f'minidl_dist: {len(processes)} ranks: {listing}\n')
        sys.stderr.flush()
