"""The README's Python examples run as written."""

import pathlib
import re

README = pathlib.Path(__file__).resolve().parent.parent / 'README.md'


def test_readme_examples_run(tmp_path, monkeypatch):
    blocks = re.findall(r'```python\n(.*?)```', README.read_text(), re.S)
    assert blocks, 'the README shows no Python example'
    monkeypatch.chdir(tmp_path)  # the examples write files
    namespace = {}
    for block in blocks:  # later blocks build on earlier ones, as a reader's session would
        exec(compile(block, str(README), 'exec'), namespace)
    assert namespace['kernel'].grad is not None
    assert set(namespace['history'].history) == {'loss', 'accuracy', 'val_loss', 'val_accuracy'}
    assert namespace['two_inputs'].count_params() == 20 * 8 + 8 + 5 * 8 + 8 + 16 + 1
    assert (tmp_path / 'model.h5').exists()
