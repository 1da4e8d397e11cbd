"""Helpers shared by the oneDNN kernel tests (their fixtures are in conftest.py)."""

import collections

import minidl
from minidl.compute import threads
from minidl.compute.onednn import primitive


def on_threads(monkeypatch, count, fresh_primitives, run):
    """``run()`` with minidl's pool on ``count`` threads; with ``fresh_primitives`` the
    oneDNN primitives are made anew, as in a process that only ever had that count."""
    monkeypatch.setattr(minidl.config, 'num_threads', count)
    if fresh_primitives:
        monkeypatch.setattr(primitive, '_cache', collections.OrderedDict())
    try:
        return run()
    finally:
        threads._blas.release()
