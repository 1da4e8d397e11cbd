"""The repository is self-contained: no file points at a document outside it.

The design and benchmark documents live in ``docs/``. These tests fail when a
tracked file refers to the team's old notes outside the repository, or when
a relative Markdown link in the README or ``docs/`` leads nowhere.
"""

import pathlib
import re
import subprocess

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent

# Names of documents outside the repository, matched case-sensitively. They are
# built from pieces so that this file does not match them itself.
OUTSIDE_DOCUMENTS = ['..' + '/shared', 'DESIGN' + '.md', 'BENCHMARKS' + '.md',
                     'shared' + '/notes']

# Files the Markdown link check reads.
MARKDOWN = ['README.md', *sorted(str(path.relative_to(ROOT))
                                  for path in (ROOT / 'docs').glob('*.md'))]


def git(*args):
    result = subprocess.run(['git', *args], cwd=ROOT, capture_output=True, text=True)
    return result


def tracked_files():
    result = git('ls-files', '-z')
    if result.returncode != 0:
        pytest.skip(f'not a git checkout: {result.stderr.strip()}')
    return [name for name in result.stdout.split('\0') if name]


def text_of(path):
    """The file's text, or None for a binary file (a NUL byte, or not UTF-8)."""
    try:
        data = path.read_bytes()
    except (FileNotFoundError, IsADirectoryError):  # deleted, or a submodule
        return None
    if b'\0' in data[:8192]:
        return None
    try:
        return data.decode('utf-8')
    except UnicodeDecodeError:
        return None


def test_no_tracked_file_refers_to_documents_outside_the_repository():
    found = []
    for name in tracked_files():
        text = text_of(ROOT / name)
        if text is None:
            continue
        for number, line in enumerate(text.splitlines(), 1):
            for document in OUTSIDE_DOCUMENTS:
                if document in line:
                    found.append(f'{name}:{number}: {document!r} in {line.strip()[:120]!r}')
    assert not found, ('files refer to documents outside the repository (docs/ has the '
                       'design and the benchmarks):\n' + '\n'.join(found))


def relative_links(text):
    """``(line number, target)`` of each relative link of Markdown ``text``, outside code."""
    links, fenced = [], False
    for number, line in enumerate(text.splitlines(), 1):
        if line.lstrip().startswith('```'):
            fenced = not fenced
            continue
        if fenced:
            continue
        line = re.sub(r'`[^`]*`', '', line)  # code spans (a link's text may be one)
        for target in re.findall(r'\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)', line):
            if re.match(r'[a-zA-Z][a-zA-Z0-9+.-]*:', target) or target.startswith('#'):
                continue  # a URL (https:, mailto:) or an anchor in the same file
            links.append((number, target))
    return links


@pytest.mark.parametrize('document', MARKDOWN)
def test_relative_markdown_links_lead_to_files_of_the_repository(document):
    path = ROOT / document
    broken = []
    for number, target in relative_links(path.read_text()):
        target_path = (path.parent / target.split('#')[0]).resolve()
        if not target_path.is_relative_to(ROOT):
            broken.append(f'{document}:{number}: {target} leaves the repository')
        elif not target_path.exists():
            broken.append(f'{document}:{number}: {target} does not exist')
        elif git('check-ignore', '-q', str(target_path)).returncode == 0:
            broken.append(f'{document}:{number}: {target} is ignored by git, so not in the '
                          f'repository')
    assert not broken, 'broken links:\n' + '\n'.join(broken)


def test_the_link_check_sees_links():
    text = ('[a](docs/design.md) [`b`](../x.md#part "title") [c](https://example.org)\n'
            '[d](#local)\n```\n[e](inside/code.md)\n```\n`[f](in/span.md)`\n')
    assert relative_links(text) == [(1, 'docs/design.md'), (1, '../x.md#part')]


def test_the_documents_exist_and_the_readme_points_to_them():
    for name in ('docs/design.md', 'docs/benchmarks.md'):
        assert (ROOT / name).is_file(), f'{name} is missing'
    readme = (ROOT / 'README.md').read_text()
    targets = {target for _, target in relative_links(readme)}
    assert {'docs/design.md', 'docs/benchmarks.md'} <= targets
