"""Ctrl-C (SIGINT) that neither cuts a save in half nor gets lost.

Python turns SIGINT into a KeyboardInterrupt raised wherever the main thread
happens to be, between any two bytecodes. Two places make that harmful:

* Inside a save, between creating the temporary file and renaming it over
  the target: the interrupt comes out of h5py's own Python code, or out of
  the cleanup that removes the temporary.
* Inside a finalizer: h5py keeps its objects in a weak-value registry whose
  removal callback is Python code, run whenever an h5py object is freed. An
  exception raised there is printed as "Exception ignored in ..." and
  dropped, so the Ctrl-C is lost and ``fit`` goes on training.

:func:`deferred` holds SIGINT back during a critical section and delivers it
as soon as the section is over; :func:`kept` makes a Ctrl-C during ``fit``
end it even where the KeyboardInterrupt was swallowed. Both act only in the
main thread (the one Python runs signal handlers in) and only while SIGINT
has a handler installed from Python, and both put the previous handler back.
"""

import contextlib
import signal
import sys
import threading


@contextlib.contextmanager
def deferred():
    """Hold SIGINT back inside the ``with`` block; deliver it right after.

    The signal goes to the handler that was in place before (so by default a
    KeyboardInterrupt is raised when the block ends, after its cleanup).
    """
    previous = _replaceable_handler()
    if previous is None:
        yield
        return
    received = []
    signal.signal(signal.SIGINT, lambda signum, frame: received.append(signum))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
        if received:
            _deliver(previous)


@contextlib.contextmanager
def kept():
    """Yield a function that raises KeyboardInterrupt if Ctrl-C came since entering.

    Call it at points where stopping is safe (after each batch): a Ctrl-C
    whose KeyboardInterrupt was swallowed by a finalizer still ends the loop
    there. Only Python's default handler is wrapped; a handler of your own
    keeps deciding alone what Ctrl-C means.
    """
    previous = _replaceable_handler()
    if previous is not signal.default_int_handler:
        yield lambda: None
        return
    received = []

    def interrupt(signum, frame):
        received.append(signum)
        raise KeyboardInterrupt

    def raise_if_received():
        if received:
            raise KeyboardInterrupt

    signal.signal(signal.SIGINT, interrupt)
    try:
        yield raise_if_received
    finally:
        signal.signal(signal.SIGINT, previous)


def _replaceable_handler():
    """The SIGINT handler if this thread may swap it for a while, else None."""
    if threading.current_thread() is not threading.main_thread():
        return None
    # None means a handler installed from C, which Python cannot put back.
    return signal.getsignal(signal.SIGINT)


def _deliver(handler):
    """Do with a held-back SIGINT what ``handler`` would have done on arrival."""
    if handler == signal.SIG_IGN:
        return
    if handler == signal.SIG_DFL:
        signal.raise_signal(signal.SIGINT)
        return
    handler(signal.SIGINT, sys._getframe(1))
