"""FakeHosts: the namespaces, their links, and the command that runs mpiexec over them.

Each host is a network namespace with its loopback and one interface,
``eth0``, at ``10.213.0.<i + 1>/24``: one end of a veth pair whose other end
is a port of a bridge in a namespace of its own (the switch). Addresses
exist only inside these namespaces, so nothing outside them can see or
reach them. Each host's processes also get a UTS namespace whose host name
is the host's (``socket.gethostname()``, minidl_dist's rank map and
mpirun's messages name it).

MPICH's hydra (the ``mpich`` wheel's ``mpiexec``) runs on the first host, as
on a cluster's first node, and starts each other host's proxy through its
``ssh`` launcher, given a script (``-launcher-exec``) that runs hydra's
command with ``ip netns exec`` instead of ssh. The host names in ``-hosts``
are the namespaces' names; ``-iface eth0`` makes hydra give its address,
not a name, to the proxies, so no name needs to resolve. The ranks talk
over TCP: the wheel's MPICH uses UCX between hosts (its own shared memory
within one), and UCX, which would find the other namespaces' ranks on the
same machine and use shared memory, is held to ``UCX_TLS=tcp,self`` on
``eth0`` (``FI_PROVIDER=tcp`` does the same for a libfabric build).

Names carry the creating process's id (``minidl-<pid>-<n>-h<i>``, the switch
``...-sw``): :meth:`FakeHosts.close` kills every process in them and removes
them, and :func:`remove_stale` removes those of processes that no longer
exist (a run killed before it could clean up).
"""

import itertools
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile

INTERFACE = 'eth0'
SUBNET = '10.213.0'
#: What keeps MPI between the hosts on the hosts' link: TCP on eth0, never shared memory.
NETWORK_ENV = {'UCX_TLS': 'tcp,self', 'UCX_NET_DEVICES': INTERFACE,
               'FI_PROVIDER': 'tcp', 'FI_TCP_IFACE': INTERFACE}
_NAME = re.compile(r'minidl-(\d+)-\d+-(h\d+|sw)$')
_serial = itertools.count()
# A command run as a host: its own host name (sh's $0), then the command (exec "$@").
_AS_HOST = 'hostname "$0" && exec "$@"'
# Hydra's ssh launcher runs `<script> -x HOST "COMMAND"`, COMMAND one string for a shell.
_LAUNCHER = """#!/bin/sh
[ "$1" = -x ] && shift
host=$1; shift
case " {hosts} " in *" $host "*) ;; *) echo "fakehosts: no host $host" >&2; exit 255;; esac
exec ip netns exec "$host" unshare --uts sh -c "hostname $host && exec $*"
"""


class FakeHostsUnavailable(RuntimeError):
    """Network namespaces cannot be made here (the message says why)."""


def unavailable_reason():
    """Why fake hosts cannot be made on this machine, or None if they can (as far as known)."""
    if not sys.platform.startswith('linux'):
        return 'network namespaces exist on Linux only'
    if os.geteuid() != 0:
        return 'making network namespaces (ip netns add) needs root'
    for tool, package in (('ip', 'iproute2'), ('unshare', 'util-linux'),
                          ('hostname', 'hostname')):
        if shutil.which(tool) is None:
            return f'{tool!r} is not installed (Debian package {package})'
    return None


class FakeHosts:
    """``count`` hosts joined by a switch; a context manager (``with FakeHosts(2) as hosts:``).

    Attributes:
        names: The hosts' names (namespaces and host names), first the launching one.
        addresses: Their IPv4 addresses on ``eth0``.
    """

    def __init__(self, count=2):
        if isinstance(count, bool) or not isinstance(count, int) or not 2 <= count <= 200:
            raise ValueError(f'count must be an integer from 2 to 200, got {count!r}')
        prefix = f'minidl-{os.getpid()}-{next(_serial)}'
        self.names = [f'{prefix}-h{index}' for index in range(count)]
        self.addresses = [f'{SUBNET}.{index + 1}' for index in range(count)]
        self.switch = f'{prefix}-sw'
        self.launcher = None  # the -launcher-exec script, once made
        self._made = []

    def __enter__(self):
        self.create()
        return self

    def __exit__(self, *exception):
        self.close()

    def create(self):
        """Make the namespaces, the links and the launcher script.

        Raises:
            FakeHostsUnavailable: If this machine cannot make them.
        """
        reason = unavailable_reason()
        if reason:
            raise FakeHostsUnavailable(reason)
        remove_stale()
        listing = _namespaces()
        for name in [self.switch, *self.names]:
            if name in listing:  # left by an ended process that had this process's id
                _remove(name)
        try:
            self._namespace(self.switch)
            _ip('-n', self.switch, 'link', 'add', 'br0', 'type', 'bridge')
            _ip('-n', self.switch, 'link', 'set', 'br0', 'up')
            for index, (name, address) in enumerate(zip(self.names, self.addresses)):
                self._namespace(name)
                port = f'port{index}'
                _ip('link', 'add', INTERFACE, 'netns', name, 'type', 'veth',
                    'peer', 'name', port, 'netns', self.switch)
                _ip('-n', self.switch, 'link', 'set', port, 'master', 'br0', 'up')
                _ip('-n', name, 'addr', 'add', f'{address}/24', 'dev', INTERFACE)
                _ip('-n', name, 'link', 'set', 'lo', 'up')
                _ip('-n', name, 'link', 'set', INTERFACE, 'up')
            directory = tempfile.mkdtemp(prefix=f'{self.switch}-')
            self.launcher = os.path.join(directory, 'launch-on-host')
            with open(self.launcher, 'w') as file:
                file.write(_LAUNCHER.format(hosts=' '.join(self.names)))
            os.chmod(self.launcher, 0o755)
        except BaseException:
            self.close()
            raise

    def _namespace(self, name):
        _ip('netns', 'add', name)
        self._made.append(name)

    def command(self, argv, ranks, mpiexec=None):
        """The command that runs ``argv`` under mpiexec, ``ranks / count`` ranks per host.

        Args:
            argv: The ranks' command (``[python, '-m', 'minidl_dist', 'train.py']``).
            ranks: The number of ranks, a multiple of the number of hosts.
            mpiexec: Hydra's mpiexec; by default the one beside this Python.

        Raises:
            ValueError: If the hosts cannot hold the same number of ranks each.
        """
        per_host, rest = divmod(ranks, len(self.names))
        if rest or per_host < 1:
            raise ValueError(f'{ranks} ranks cannot be spread evenly over '
                             f'{len(self.names)} hosts')
        mpiexec = mpiexec or os.path.join(os.path.dirname(sys.executable), 'mpiexec')
        environment = [item for name, value in NETWORK_ENV.items()
                       for item in ('-genv', name, value)]
        return ['ip', 'netns', 'exec', self.names[0], 'unshare', '--uts', 'sh', '-c', _AS_HOST,
                self.names[0], mpiexec, '-iface', INTERFACE, '-launcher', 'ssh',
                '-launcher-exec', self.launcher,
                '-hosts', ','.join(f'{name}:{per_host}' for name in self.names),
                '-np', str(ranks), *environment, *argv]

    def set_link(self, host, up):
        """Take the link of ``host`` (a name or index) down, or bring it up again."""
        _ip('-n', self._name(host), 'link', 'set', INTERFACE, 'up' if up else 'down')

    def processes(self, host):
        """Process ids of every process on ``host`` (ranks, hydra's proxy, mpiexec)."""
        return _pids(self._name(host))

    def rank_pids(self, host):
        """Process ids of the ranks on ``host``: the processes its hydra proxy started."""
        return [pid for pid in self.processes(host)
                if _program(_parent(pid)) == 'hydra_pmi_proxy']

    def kill_ranks(self, host, signal_number=signal.SIGKILL):
        """Send the ranks on ``host`` a signal (by default kill them, as a host that dies)."""
        pids = self.rank_pids(host)
        for pid in pids:
            _kill(pid, signal_number)
        return pids

    def _name(self, host):
        return self.names[host] if isinstance(host, int) else host

    def close(self):
        """Kill every process in the hosts and remove them (any number of times)."""
        for name in reversed(self._made):
            _remove(name)
        self._made.clear()
        if self.launcher:
            shutil.rmtree(os.path.dirname(self.launcher), ignore_errors=True)
            self.launcher = None


def remove_stale():
    """Remove the namespaces (and scripts) of fake hosts whose creating process has ended."""
    for name in _namespaces():
        match = _NAME.match(name)
        if match and not os.path.exists(f'/proc/{match.group(1)}'):
            _remove(name)
    for entry in os.scandir(tempfile.gettempdir()):
        match = re.match(r'minidl-(\d+)-\d+-sw-', entry.name)
        if match and entry.is_dir() and not os.path.exists(f'/proc/{match.group(1)}'):
            shutil.rmtree(entry.path, ignore_errors=True)


def _namespaces():
    listing = subprocess.run(['ip', 'netns', 'list'], capture_output=True, text=True).stdout
    return [line.split(' ', 1)[0] for line in listing.splitlines()]


def _remove(name):
    # A namespace outlives its name while a process is in it: kill them first.
    for pid in _pids(name):
        _kill(pid, signal.SIGKILL)
    subprocess.run(['ip', 'netns', 'delete', name], capture_output=True)


def _ip(*args):
    done = subprocess.run(['ip', *args], capture_output=True, text=True)
    if done.returncode:
        raise FakeHostsUnavailable(f'ip {" ".join(args)} failed: {done.stderr.strip()}')


def _pids(name):
    listing = subprocess.run(['ip', 'netns', 'pids', name], capture_output=True, text=True)
    return [int(pid) for pid in listing.stdout.split()]


def _parent(pid):
    try:
        with open(f'/proc/{pid}/stat') as file:
            return int(file.read().rsplit(')', 1)[1].split()[1])
    except (OSError, IndexError, ValueError):
        return None


def _program(pid):
    try:
        with open(f'/proc/{pid}/cmdline', 'rb') as file:
            return os.path.basename(file.read().split(b'\0', 1)[0].decode())
    except (OSError, TypeError):
        return None


def _kill(pid, signal_number):
    try:
        os.kill(pid, signal_number)
    except ProcessLookupError:
        pass
