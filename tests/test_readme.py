"""The README's code blocks run as typed, each with only what the README says to install.

Every fenced block is listed in ``tests/readme_blocks.INVENTORY`` with the
test that runs it (the shell sessions: ``test_readme_shell.py``; the mpirun
ones: ``minidl_dist/test_readme_train_script.py``). The Python ones run here,
in a subprocess that can import only what ``pip install .`` with the block's
extras installs (the torchvision one in this process: it needs PyTorch).
Each block runs in a fresh namespace, except the ``Function`` example, which
continues the Tensor API block (its ``np`` and ``minidl``), as the README
shows them one after the other. The checks after each block are the test's
own.
"""

import fnmatch
import re
import subprocess
import tomllib

import numpy as np
import pytest

from tests.readme_blocks import BY_NAME, INVENTORY, README, block, blocks, run_python_blocks


def test_every_block_of_the_readme_is_listed_with_its_test():
    found = blocks()
    assert [(b.language, entry.marker in b.text) for b, entry in zip(found, INVENTORY)] == \
        [(entry.language, True) for entry in INVENTORY[:len(found)]], \
        'a README block changed: update tests/readme_blocks.INVENTORY and its test'
    assert len(found) == len(INVENTORY), \
        f'the README has {len(found)} fenced blocks, the inventory {len(INVENTORY)}'


def test_the_blocks_a_plain_install_runs(tmp_path):
    """The Keras, Tensor API and speech examples with numpy, h5py, tqdm and threadpoolctl
    alone: the README names no extra for them (the speech one reads the utterances that
    ship with the package)."""
    assert all(BY_NAME[name].extras == ()
               for name in ('keras', 'tensor', 'function', 'mixed', 'speech'))
    output = run_python_blocks([
        ('keras', block('keras').source(), None,
         "assert set(history.history) == {'loss', 'accuracy', 'val_loss', 'val_accuracy'}\n"
         'assert two_inputs.count_params() == 20 * 8 + 8 + 5 * 8 + 8 + 16 + 1'),
        ('tensor', block('tensor').source(), None, 'assert kernel.grad is not None'),
        ('function', block('function').source(), 'tensor', ''),
        ('mixed', block('mixed').source(), None,
         "assert str(model.layers[0].kernel.dtype) == 'float32'\n"
         "assert model.layers[0](x[:2].astype('float32')).dtype == 'float16'"),
        ('speech', block('speech').source(), None, 'assert 0 <= speech.cer(held_out.'
         'transcripts, texts) < 0.1'),
    ], tmp_path)
    assert (tmp_path / 'model.h5').exists()
    assert 'Total params: 1,474' in output  # the Keras block's summary


def test_the_zoo_blocks_with_the_plot_extra(tmp_path):
    """The glyph example as typed; the transfer-learning recipe with its one variable
    ``EPOCHS`` at 1 instead of 30, its only change."""
    assert BY_NAME['zoo'].extras == BY_NAME['transfer'].extras
    transfer = block('transfer').source()
    line = re.compile(r'^EPOCHS = 30 .*$', re.M)
    assert len(line.findall(transfer)) == 1, 'the recipe sets EPOCHS = 30 in one line'
    output = run_python_blocks([
        ('zoo', block('zoo').source(), None, ''),
        ('transfer', line.sub('EPOCHS = 1', transfer), None,
         'assert model.evaluate(x_test, y_test, verbose=0)[1] > 0.3'),
    ], tmp_path, extras=BY_NAME['zoo'].extras)
    # The glyph block prints the top guess for four letters: [[(class, name, score)], ...].
    assert re.search(r"\[\[\('\w+', '\w', \d", output), output


def test_the_torchvision_block(tmp_path, monkeypatch):
    """Run beside a stand-in ``resnet50-11ad3fa6.pth``: torchvision's keys and shapes,
    each tensor a constant (torchvision is not installed here, and nothing is downloaded).
    It runs in this process, which the other tests have given PyTorch already (the
    README says a .pth needs it)."""
    assert BY_NAME['torchvision'].extras == ('torch',)
    pytest.importorskip('torch')
    write_stand_in_resnet50(tmp_path / 'resnet50-11ad3fa6.pth')
    monkeypatch.chdir(tmp_path)
    namespace = {'__name__': '__main__'}
    exec(compile(block('torchvision').source(), str(README), 'exec'), namespace)
    assert np.array_equal(namespace['model'].get_layer('predictions').get_weights()[1],
                          np.arange(1000, dtype='float32') / 1000)


def write_stand_in_resnet50(path):
    import torch

    import zoo
    from zoo.convert import torch_weights
    model = zoo.ResNet50()
    plan = torch_weights._plan(model, 'resnet', torch_weights._resnet_prefix)
    state = {key: torch.full(torch_weights._torch_shape(weight.shape), 0.01)
             for _, items in plan for weight, key, _ in items}
    state['fc.bias'] = torch.arange(1000, dtype=torch.float32) / 1000
    torch.save(state, path)


def test_a_plain_install_carries_every_data_file_of_the_packages():
    """``pip install .`` (not editable) copies a package's other files only where
    pyproject's package-data names them: each file of minidl, minidl_dist and zoo that git
    tracks, other than Python sources, is named there (the weights and the speech samples
    that the blocks above read)."""
    root = README.parent
    listed = subprocess.run(['git', 'ls-files', 'minidl', 'minidl_dist', 'zoo'], cwd=root,
                            capture_output=True, text=True)
    if listed.returncode != 0:
        pytest.skip('not a git checkout: the tracked files are unknown')
    with open(root / 'pyproject.toml', 'rb') as file:
        package_data = tomllib.load(file)['tool']['setuptools'].get('package-data', {})
    data_files = [path for path in listed.stdout.split() if not path.endswith('.py')]
    assert data_files, 'expected the zoo weights at least'
    for path in data_files:
        assert any(path.startswith(package.replace('.', '/') + '/') and
                   fnmatch.fnmatch(path[len(package) + 1:], pattern)
                   for package, patterns in package_data.items() for pattern in patterns), \
            f'{path} is not in pyproject.toml\'s package-data: pip install . leaves it out'
