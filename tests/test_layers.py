"""The modules of kg import one way: a layer imports only its own layer and those below, with no cycle.

Every import counts, also one inside a function (a deferred import is still a dependency).
"""

from __future__ import annotations

import ast
from pathlib import Path

KG = Path(__file__).parent.parent / "kg"

# Layer of each module (a package counts as its folder's modules; `kg` itself re-exports the API).
LAYERS: dict[str, int] = {
    # L0: errors, vocabulary, defaults, files
    "errors": 0, "sandbox": 0, "admission": 0, "deadline": 0, "vocabulary": 0, "defaults": 0, "atomic": 0, "resources": 0, "progress": 0,
    # L1: ingest, scheme, graph reading, query catalog and results
    "ingest": 1, "scheme": 1, "graphio": 1, "facts": 1, "catalog": 1, "results": 1, "sparql": 1, "sanitise": 1,
    "keywords": 1, "expert": 1, "shards": 1, "guard": 1, "names": 1, "qadvice": 1,
    # L2: extraction, triples, query engines
    "extract": 2, "parallel": 2, "triples": 2, "index": 2, "engine": 2, "store": 2, "qindex": 2, "qbuild": 2, "qschema": 2,
    "remote": 2, "partitions": 2,
    # L3: build and update, running a query
    "build": 3, "update": 3, "query": 3, "snapshot": 3, "training": 3, "cluster": 3, "upload": 3,
    # L4: serve, render, analyze, report, export, evaluate
    "serve": 4, "pages": 4, "workers": 4, "views": 4, "render": 4, "conceptmap": 4, "paperlinks": 4, "searchindex": 4, "network": 4, "analyze": 4, "report": 4, "export": 4, "tables": 4, "evaluate": 4,
    # L5: the command line and the package's public API
    "cli": 5, "__main__": 5, "__init__": 5,
}


def _module_of(path: Path) -> str:
    """`kg/extract/matcher.py` -> `extract`; `kg/query.py` -> `query`."""
    parts = path.relative_to(KG).with_suffix("").parts
    return parts[0]


def _imports(path: Path, root: Path = KG) -> set[str]:
    """The kg modules a file of the package at `root` imports, anywhere in it (top level or inside functions)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = path.relative_to(root.parent).with_suffix("").parts[:-1]  # ("kg",) or ("kg", "extract")
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(a.name.split(".")[1] for a in node.names if a.name.startswith("kg.") and "." in a.name)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = list(package[: len(package) - node.level + 1])
                target = [*base, *(node.module.split(".") if node.module else [])]
            else:
                target = (node.module or "").split(".")
            if target[:1] != ["kg"]:
                continue
            if len(target) > 1:
                found.add(target[1])
            else:  # `from . import x, y` names modules
                found.update(a.name for a in node.names)
    return found


def graph() -> dict[str, set[str]]:
    """Module -> the kg modules it imports (edges inside a package folder left out)."""
    edges: dict[str, set[str]] = {}
    for path in sorted(KG.rglob("*.py")):
        name = _module_of(path) if path.parent != KG or path.stem != "__init__" else "__init__"
        edges.setdefault(name, set()).update(m for m in _imports(path) if m != name)
    return edges


def test_every_module_has_a_layer() -> None:
    assert sorted(set(graph()) - set(LAYERS)) == []


def test_no_import_points_up() -> None:
    upward = sorted(f"{a} (L{LAYERS[a]}) imports {b} (L{LAYERS[b]})" for a, bs in graph().items() for b in bs if LAYERS[b] > LAYERS[a])
    assert upward == []


def test_no_import_cycle() -> None:
    edges = graph()
    cycles: list[list[str]] = []
    state: dict[str, int] = {}  # 1 on the path, 2 done

    def visit(node: str, path: list[str]) -> None:
        state[node] = 1
        for nxt in sorted(edges.get(node, ())):
            if state.get(nxt) == 1:
                cycles.append([*path[path.index(nxt):], nxt])
            elif nxt not in state:
                visit(nxt, [*path, nxt])
        state[node] = 2

    for start in sorted(edges):
        if start not in state:
            visit(start, [start])
    assert cycles == []


def test_the_check_sees_imports_inside_functions(tmp_path: Path) -> None:
    source = KG / "query.py"
    assert "store" in _imports(source) or "engine" in _imports(source)
    nested = tmp_path / "kg" / "x.py"
    nested.parent.mkdir()
    nested.write_text("def f():\n    from .cli import main\n    from . import build\n    import kg.serve\n")
    assert _imports(nested, tmp_path / "kg") == {"cli", "build", "serve"}
