"""``mpirun -np N python -m minidl_dist train.py [args...]``: see :mod:`minidl_dist.launcher`."""

import sys

from minidl_dist.launcher import main

sys.exit(main(sys.argv[1:]))
