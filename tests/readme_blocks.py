"""The README's fenced code blocks, what each needs installed, and how the tests run them.

:data:`INVENTORY` lists every fenced block of README.md in order, with a marker
line it contains, the extras the README says it needs and the test that runs
it; ``tests/test_readme.py`` checks that the README and the list agree, so a
new block needs a test before it lands.

:func:`sandbox` gives a subprocess only what ``pip install .[extras]`` would
install: a ``sitecustomize`` on ``PYTHONPATH`` puts a meta-path finder first
that refuses every top-level module that is neither the standard library,
nor the project's installed packages, nor a distribution that minidl's
requirements (with those extras) pull in, recursively, as installed here.
So a README block that says it needs a plain ``pip install .`` fails in the
sandbox if it imports matplotlib, scikit-learn or torch, although the test
machine has them all.
"""

import importlib.metadata
import json
import os
import pathlib
import re
import subprocess
import sys
import textwrap
from dataclasses import dataclass

from tests.minidl_dist.launch import run_process

ROOT = pathlib.Path(__file__).resolve().parent.parent
README = ROOT / 'README.md'
INSTALLED_PACKAGES = ('minidl', 'minidl_dist', 'zoo')  # pyproject's packages.find


@dataclass(frozen=True)
class Entry:
    name: str
    language: str  # the fence's info string: 'python', 'py', 'bash' or ''
    marker: str  # a line of the block, so that the list stays aligned with the README
    extras: tuple  # what the README says the block needs beyond a plain `pip install .`
    test: str  # where it runs, and how


INVENTORY = [
    Entry('make', '', 'make demo', (),
          'test_readme_shell.py: `make -n` of the three targets; CI runs `make test` itself, '
          "tests/tutorials runs demo's lesson 01, tests/test_benchmarks.py the benchmarks"),
    Entry('keras', 'python', 'from minidl.callbacks import EarlyStopping', (),
          'test_readme.py: run as typed, plain install'),
    Entry('tensor', 'python', 'from minidl import Tensor, functions as F', (),
          'test_readme.py: run as typed, plain install'),
    Entry('function', 'python', 'class Cube(minidl.Function):', (),
          "test_readme.py: run as typed in the tensor block's namespace (its imports)"),
    Entry('mixed', 'python', 'from minidl import mixed_precision', (),
          'test_readme.py: run as typed, plain install'),
    Entry('install-dist', 'bash', "pip install -e '.[dist,data]'", ('dist', 'data'),
          'test_readme_shell.py: `pip install --dry-run` of the same requirement'),
    Entry('train.py', 'py', '# train.py', ('dist', 'data'),
          'minidl_dist/test_readme_train_script.py: by the mpirun block, and plainly'),
    Entry('mpirun', 'bash', 'mpirun -np 2 python -m minidl_dist train.py # also runs as a plain '
          '`python train.py`', ('dist', 'data'),
          'minidl_dist/test_readme_train_script.py: run as typed by bash, beside train.py'),
    Entry('hybrid', 'py', '# hybrid.py', ('dist',),
          'minidl_dist/test_readme_train_script.py: under mpirun -np 2, as the README says'),
    Entry('zoo', 'python', "model = zoo.ResNet20(weights='glyphs')", ('plot',),
          'test_readme.py: run as typed, plot extra'),
    Entry('torchvision', 'py', 'from zoo.convert import load_torch_weights', ('torch',),
          "test_readme.py: run as typed in the test process beside a stand-in for "
          "torchvision's file"),
    Entry('transfer', 'py', 'base.trainable = False', ('plot',),
          'test_readme.py: run with EPOCHS = 1 (the one line changed), plot extra'),
    Entry('speech', 'python', "model = speech.DeepSpeech2(weights='espeak')", (),
          'test_readme.py: run as typed, plain install'),
    Entry('wav', '', '$ espeak-ng -w hello.wav "hello world"', (),
          'test_readme_shell.py: each $ line run by bash, the output compared, plain install; '
          'skipped without espeak-ng'),
]
BY_NAME = {entry.name: entry for entry in INVENTORY}


@dataclass(frozen=True)
class Block:
    language: str
    text: str
    line: int  # the README line of the block's first line of code

    def source(self):
        """The code, preceded by blank lines so that tracebacks give README line numbers."""
        return '\n' * (self.line - 1) + self.text


def blocks():
    """Every fenced block of the README, in order."""
    found, lines, number = [], README.read_text().splitlines(), 0
    while number < len(lines):
        fence = re.fullmatch(r'```(\w*)\s*', lines[number])
        number += 1
        if fence is None:
            continue
        start = number
        while not lines[number].startswith('```'):
            number += 1
        found.append(Block(fence.group(1), ''.join(line + '\n' for line in lines[start:number]),
                           start + 1))
        number += 1
    return found


def block(name):
    """The README block that :data:`INVENTORY` calls ``name``."""
    entry = BY_NAME[name]
    matching = [found for found, listed in zip(blocks(), INVENTORY) if listed is entry]
    assert matching and entry.marker in matching[0].text, \
        f'the README and tests/readme_blocks.INVENTORY disagree at block {name!r}'
    return matching[0]


def _requirement(text):
    """('name', extra or None) of a requirement string such as 'mpi4py>=4; extra == "dist"'."""
    name = re.match(r'[A-Za-z0-9._-]+', text).group(0)
    extra = re.search(r'''extra\s*==\s*['"]([^'"]+)['"]''', text)
    return _normalize(name), extra.group(1) if extra else None


def _normalize(name):
    return re.sub(r'[-_.]+', '-', name).lower()


def distributions(extras=()):
    """The installed distributions that ``pip install .[extras]`` pulls in (minidl's
    requirements and theirs, without their own extras). A name in ``extras`` that is not
    one of minidl's extras is a distribution to add (``'torch'``)."""
    own_extras = {_requirement(text)[1] for text in importlib.metadata.requires('minidl') or ()}
    wanted = [_normalize(extra) for extra in extras if extra not in own_extras]
    wanted += [name for name, extra in map(_requirement, importlib.metadata.requires('minidl'))
               if extra is None or extra in extras]
    found = set()
    while wanted:
        name = wanted.pop()
        if name in found:
            continue
        try:
            requires = importlib.metadata.requires(name) or ()
        except importlib.metadata.PackageNotFoundError:
            continue  # not for this platform, or not installed here: nothing to allow
        found.add(name)
        wanted += [name for name, extra in map(_requirement, requires) if extra is None]
    return found


def importable(extras=()):
    """The top-level module names a plain ``pip install .[extras]`` makes importable."""
    allowed = distributions(extras)
    return sorted({module for module, owners in importlib.metadata.packages_distributions().items()
                   if any(_normalize(owner) in allowed for owner in owners)}
                  | set(INSTALLED_PACKAGES))


SITECUSTOMIZE = '''\
"""Written by tests/readme_blocks.py: only what `pip install .{extras}` installs imports."""
import sys


class _OnlyTheInstall:
    allowed = frozenset({allowed!r})

    def find_spec(self, name, path=None, target=None):
        top = name.partition('.')[0]
        if top in sys.stdlib_module_names or top in self.allowed or top.startswith('_'):
            return None
        raise ModuleNotFoundError(
            f'No module named {{top!r}}: the README promises this block works with '
            f'pip install .{extras} alone', name=name)


sys.meta_path.insert(0, _OnlyTheInstall())
'''


def sandbox(directory, extras=()):
    """The environment of a subprocess that can import only what ``pip install
    .[extras]`` installs (the sitecustomize goes to ``directory``)."""
    directory = pathlib.Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    shown = f'[{",".join(extras)}]' if extras else ''
    (directory / 'sitecustomize.py').write_text(
        SITECUSTOMIZE.format(allowed=importable(extras), extras=shown))
    # ROOT comes after the sandbox for a checkout that is not pip-installed; the
    # finder refuses what is there beside the installed packages (tests, tutorials).
    path = [str(directory), str(ROOT), *filter(None, [os.environ.get('PYTHONPATH')])]
    return dict(os.environ, PYTHONPATH=os.pathsep.join(path), OMP_NUM_THREADS='1',
                OPENBLAS_NUM_THREADS='1')


def run(command, cwd, env, timeout, shell=False):
    """``command`` (a list, or a bash script if ``shell``), killed with its process group
    on timeout; returns the CompletedProcess."""
    argv = ['bash', '-e', '-c', command] if shell else command
    return subprocess.CompletedProcess(argv, *run_process(argv, cwd, env, timeout))


RUNNER = textwrap.dedent('''\
    import json, sys
    namespaces = {}
    for name, filename, source, context, check in json.loads(sys.stdin.read()):
        namespace = namespaces[context] if context else {'__name__': '__main__'}
        print(f'--- README block {name}', flush=True)
        exec(compile(source, filename, 'exec'), namespace)
        namespaces[name] = namespace
        exec(check, namespace)
    print('--- all ran', flush=True)
''')


def run_python_blocks(steps, cwd, extras=(), timeout=300):
    """Run README Python blocks, in order, in one sandboxed interpreter with ``cwd`` as its
    working directory. ``steps`` are ``(name, source, context, check)``: ``source`` runs in
    a fresh ``__main__`` namespace, or in the namespace of the step named ``context`` (a
    block that builds on an earlier one); ``check`` (test code, not the README's) runs
    after it in the same namespace."""
    payload = json.dumps([(name, str(README), source, context, check)
                          for name, source, context, check in steps])
    env = sandbox(pathlib.Path(cwd) / '.sandbox', extras)
    process = subprocess.run([sys.executable, '-c', RUNNER], input=payload, cwd=cwd, env=env,
                             capture_output=True, text=True, timeout=timeout)
    assert process.returncode == 0 and '--- all ran' in process.stdout, \
        f'exit {process.returncode}\n{process.stdout[-3000:]}\n{process.stderr[-5000:]}'
    return process.stdout
