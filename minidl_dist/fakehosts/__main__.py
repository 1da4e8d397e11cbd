"""``python -m minidl_dist.fakehosts [--hosts N] -np R command...`` (:mod:`minidl_dist.fakehosts`).

Exits with the command's status under mpiexec; 2 for bad arguments, 3 where
the hosts cannot be made (the message says why).
"""

import argparse
import signal
import subprocess
import sys

from minidl_dist.fakehosts.hosts import FakeHosts, FakeHostsUnavailable, remove_stale


def main(argv):
    parser = argparse.ArgumentParser(
        prog='python -m minidl_dist.fakehosts',
        description='Run an MPI command on fake hosts (network namespaces joined by a link).')
    parser.add_argument('--hosts', type=int, default=2, help='number of hosts (default 2)')
    parser.add_argument('-np', type=int, dest='ranks', help='number of ranks (default 2 a host)')
    parser.add_argument('--clean', action='store_true',
                        help='only remove the hosts that killed runs left behind')
    parser.add_argument('command', nargs=argparse.REMAINDER,
                        help='what each rank runs, e.g. python -m minidl_dist train.py')
    options = parser.parse_args(argv)
    if options.clean:
        remove_stale()
        return 0
    if not options.command:
        parser.error('give the command the ranks run (python -m minidl_dist train.py)')
    # SIGTERM ends the run through `finally`, so that the hosts are removed.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    try:
        with FakeHosts(options.hosts) as hosts:
            command = hosts.command(options.command, options.ranks or 2 * options.hosts)
            sys.stderr.write(f'fakehosts: {", ".join(hosts.names)} at '
                             f'{", ".join(hosts.addresses)}\n')
            sys.stderr.flush()
            return subprocess.run(command).returncode
    except FakeHostsUnavailable as error:
        sys.stderr.write(f'fakehosts: cannot make the hosts here: {error}\n')
        return 3
    except ValueError as error:
        parser.error(str(error))


sys.exit(main(sys.argv[1:]))
