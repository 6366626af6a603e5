"""The import graph of ``py/``: no circle (deferred imports inside functions included), and the
decoding library (the modules directly in ``py/lesson/``) never imports a lesson package.

The graph is read from the source with ``ast`` (every ``import`` and ``from ... import`` anywhere in
a module, function bodies too), not by importing, so an import that runs only on some call path
counts. An edge goes from a module to each module of ``py/`` it names: ``from lesson.sampling
import generate`` is an edge to ``lesson.sampling``; ``from . import studies`` is an edge to the
module ``studies`` of the same package. Two kinds of import are not edges, because neither can make
a circle at run time: the implicit import of a parent package that Python runs before a submodule
(a package's ``__init__`` importing its own submodules to export their names is how a package is
built), and an import under ``if TYPE_CHECKING:``, which only a type checker reads.
"""
from __future__ import annotations

import ast
from pathlib import Path

import build

PY = Path(__file__).resolve().parents[1] / "py"


def module_names(root: Path) -> dict[str, Path]:
    """``{dotted name: file}`` for every ``.py`` under ``root`` (a package's ``__init__.py`` is the
    package's own name)."""
    names = {}
    for path in sorted(root.rglob("*.py")):
        parts = list(path.relative_to(root).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        names[".".join(parts)] = path
    return names


def is_type_checking(node: ast.AST) -> bool:
    """True for ``if TYPE_CHECKING:`` (or ``if typing.TYPE_CHECKING:``)."""
    test = getattr(node, "test", None)
    return isinstance(node, ast.If) and (
        (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING")
        or (isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"))


def walk_run_time(tree: ast.AST):
    """Every node of ``tree`` (function bodies included) but the body of ``if TYPE_CHECKING:``."""
    todo = [tree]
    while todo:
        node = todo.pop()
        yield node
        if is_type_checking(node):
            todo.extend(node.orelse)
        else:
            todo.extend(ast.iter_child_nodes(node))


def imports_of(name: str, path: Path, known: set[str]) -> set[str]:
    """The modules of ``known`` that module ``name`` (source ``path``) imports, anywhere in it."""
    is_package = path.name == "__init__.py"
    package = name if is_package else name.rpartition(".")[0]
    found = set()
    for node in walk_run_time(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = package.split(".") if package else []
            if node.level:
                base = base[:len(base) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module
            # a name that is a submodule is an edge to it; any other name, to the module itself
            targets = [f"{target}.{alias.name}" if f"{target}.{alias.name}" in known else target
                       for alias in node.names]
        else:
            continue
        for target in targets:
            # "import a.b.c" names a.b.c; the nearest module of py/ that it is or lies in
            while target and target not in known:
                target = target.rpartition(".")[0]
            if target and target != name:
                found.add(target)
    return found


def import_graph(root: Path) -> dict[str, set[str]]:
    """``{module: modules it imports}`` over the modules of ``root`` (see the module docstring)."""
    names = module_names(root)
    return {name: imports_of(name, path, set(names)) for name, path in names.items()}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan's algorithm), each
    sorted: every import circle lies inside one of them."""
    index, low, stack, on_stack, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def lesson_packages(root: Path = PY) -> list[str]:
    """The lesson packages: the folders of ``py/lesson/`` that are packages."""
    return sorted(p.parent.name for p in (root / "lesson").glob("*/__init__.py"))


def test_there_is_no_import_circle_in_py():
    assert cycles(import_graph(PY)) == []


def test_the_checker_finds_a_deferred_import_circle(tmp_path):
    pkg = tmp_path / "pkg"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from .b import f\n")
    (pkg / "b.py").write_text("def f():\n    from pkg.sub.c import g\n    return g\n")
    (pkg / "d.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .a import f\n")
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "sub" / "c.py").write_text("from .. import a\n")
    graph = import_graph(tmp_path)
    assert graph["pkg.b"] == {"pkg.sub.c"} and graph["pkg.sub.c"] == {"pkg.a"}
    assert graph["pkg.d"] == set()  # under TYPE_CHECKING: never run
    assert cycles(graph) == [["pkg.a", "pkg.b", "pkg.sub.c"]]


def test_the_library_never_imports_a_lesson_package():
    graph = import_graph(PY)
    pages = tuple(f"lesson.{name}" for name in lesson_packages())
    library = [m for m in graph if m == "lesson" or (m.startswith("lesson.") and not m.startswith(pages))]
    assert "lesson.sampling" in library and "lesson.course" in library
    offending = {m: sorted(t for t in graph[m] if t.startswith(pages)) for m in library}
    assert {m: ts for m, ts in offending.items() if ts} == {}
    # nor do the tokenizer, the model or the masker import the lessons at all
    below = {m: sorted(t for t in ts if t.split(".")[0] == "lesson")
             for m, ts in graph.items() if m.split(".")[0] in ("minigpt", "masker")}
    assert {m: ts for m, ts in below.items() if ts} == {}


def test_each_lesson_package_is_named_as_its_page():
    pages = {Path(spec["out"]).stem for spec in build.PAGES}
    packages = lesson_packages()
    assert packages and set(packages) <= pages
    for spec in build.PAGES:  # a page's figures module lives in the package named as the page
        if spec.get("figures"):
            assert spec["figures"] == f"lesson.{Path(spec['out']).stem}.figures"
