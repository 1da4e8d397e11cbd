"""The README's Python examples run as written."""

import pathlib
import re

README = pathlib.Path(__file__).resolve().parent.parent / 'README.md'


def test_readme_examples_run():
    blocks = re.findall(r'```python\n(.*?)```', README.read_text(), re.S)
    assert blocks, 'the README shows no Python example'
    namespace = {}
    for block in blocks:  # later blocks build on earlier ones, as a reader's session would
        exec(compile(block, str(README), 'exec'), namespace)
    assert namespace['kernel'].grad is not None
