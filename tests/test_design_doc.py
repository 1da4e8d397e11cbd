"""docs/design.md's table of floors is the layering that tests/test_import_rules.py enforces."""

import pathlib
import re

from tests.test_import_rules import ROWS

DESIGN = pathlib.Path(__file__).resolve().parents[1] / 'docs' / 'design.md'


def test_the_floor_table_lists_the_enforced_rows():
    text = DESIGN.read_text()
    start = text.index('### The floors inside minidl')
    section = text[start:text.index('\n## ', start)]
    rows = re.findall(r'^\| (\d+) \| (.*) \|$', section, re.M)
    floors = [sorted(re.findall(r'^`(\w+)`|, `(\w+)`', components)) for _, components in rows]
    named = [sorted(name for pair in floor for name in pair if name) for floor in floors]
    assert [int(number) for number, _ in rows] == list(range(len(rows)))
    assert named == [sorted(row) for row in ROWS]
