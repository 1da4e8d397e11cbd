"""Holding the BLAS libraries (OpenBLAS under numpy) to a number of threads.

A hold for the whole process, set by :func:`minidl.compute.threads.limit_blas`
(the policy: one BLAS thread while minidl's pool has several, else at most the
process's share of the cores); threadpoolctl finds and sets the libraries.
"""

import threading


class BlasThreads:
    """Holds the BLAS libraries to at most a given number of threads.

    Held for the whole process, not per task: an idle OpenBLAS thread spins
    for about 0.1 s after each product it shared, taking the core a worker
    (or another process of the job) needs. A library never gets more threads
    than it had before the hold, so a lower count the user chose is kept; a
    limit at or above every library's own count gives them back their counts.
    """

    def __init__(self):
        self.lock = threading.Lock()
        self.count = None  # the limit last set; None before the first and after release()
        self.saved = None  # the libraries' own counts, while any is held below its own
        self.libraries = None

    def limit(self, count):
        """Hold each BLAS library to ``count`` threads or its own count, whichever is less."""
        if count == self.count:  # the usual case: checked without the lock
            return
        with self.lock:
            libraries = self._libraries()
            if self.saved is None:
                self.saved = [library.num_threads for library in libraries]
            for library, own in zip(libraries, self.saved):
                library.set_num_threads(min(own, count))
            if all(own <= count for own in self.saved):
                # Nothing is held below its own count: the next limit reads the counts
                # again, so a change the user makes in between is kept.
                self.saved = None
            self.count = count

    def release(self):
        """Give every library back the count it had before the hold."""
        with self.lock:
            if self.saved is not None:
                for library, own in zip(self._libraries(), self.saved):
                    library.set_num_threads(own)
            self.count = self.saved = None

    def _libraries(self):
        if self.libraries is None:  # found once, on first use: the search reads every library
            # Imported here: pip installs it with minidl (pyproject.toml), but `import
            # minidl` needs only numpy, h5py and tqdm (tests/test_import_rules.py).
            # Without threadpoolctl BLAS keeps its threads (slower, the same bits).
            try:
                from threadpoolctl import ThreadpoolController
            except ImportError:
                self.libraries = []
            else:
                self.libraries = ThreadpoolController().select(user_api='blas').lib_controllers
        return self.libraries


blas = BlasThreads()  # the process's one hold
