"""minidl_dist: deterministic MPI data-parallel training for minidl.

Built on minidl's public API and mpi4py; launched with ``mpirun -np N``.
The communicator, reductions and DistributedOptimizer arrive with the
distributed-training work (see DESIGN.md §5).
"""
