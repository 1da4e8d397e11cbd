"""No import cycle between minidl's modules, inside a package or across packages.

The floor rules (test_import_rules.py) see packages; a cycle among the modules
of one package (a deferred import closing it) is invisible there. Every
``import`` statement counts, at module level or inside a function. Imports of
a package's ``__init__`` do not: it gathers the public API and may import
anything (test_import_rules.py).
"""

import ast
import pathlib

ROOT = pathlib.Path(__file__).resolve().parents[1]


def module_names():
    """Dotted name -> path of every module of minidl (a package by its ``__init__``)."""
    names = {}
    for path in (ROOT / 'minidl').rglob('*.py'):
        parts = path.relative_to(ROOT).with_suffix('').parts
        names['.'.join(parts[:-1] if parts[-1] == '__init__' else parts)] = path
    return names


def imported_modules(name, path, names):
    """The minidl modules (not package ``__init__``s) that ``name``'s source imports."""
    package = name if path.name == '__init__.py' else name.rpartition('.')[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            candidates = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ''
            if node.level:
                anchor = package.split('.')[:len(package.split('.')) - node.level + 1]
                base = '.'.join(anchor + ([node.module] if node.module else []))
            candidates = [f'{base}.{alias.name}' for alias in node.names] + [base]
        else:
            continue
        found.update(c for c in candidates if c in names and names[c].name != '__init__.py')
    return found


def cycles(graph):
    """The strongly connected components of more than one module (Tarjan's algorithm)."""
    index, low, stack, on_stack, components = {}, {}, [], set(), []

    def visit(node):
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for successor in graph[node]:
            if successor not in index:
                visit(successor)
                low[node] = min(low[node], low[successor])
            elif successor in on_stack:
                low[node] = min(low[node], index[successor])
        if low[node] == index[node]:
            component = set()
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.add(member)
                if member == node:
                    break
            if len(component) > 1:
                components.append(sorted(component))

    for node in graph:
        if node not in index:
            visit(node)
    return components


def test_the_finder_sees_a_cycle_closed_inside_a_function():
    graph = {'a': {'b'}, 'b': {'c'}, 'c': {'a'}, 'd': {'a'}}
    assert cycles(graph) == [['a', 'b', 'c']]


def test_minidl_has_no_import_cycle():
    names = module_names()
    graph = {name: imported_modules(name, path, names) for name, path in names.items()}
    assert cycles(graph) == []
