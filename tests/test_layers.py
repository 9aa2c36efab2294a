"""kg's folders are its layers: a folder imports only its own layer and those below, with no cycle.

The layer table is the one in docs/architecture.md (section "Layers"): this test reads it, so the
page and the code cannot drift apart. Inside a folder, modules import each other without a cycle.
Every import counts, also one inside a function (a deferred import is still a dependency).
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).parent.parent
KG = ROOT / "kg"
TOP_ENTRIES = 12  # at most this many files and folders at the top of kg/


def layers(page: Path = ROOT / "docs" / "architecture.md") -> dict[str, int]:
    """Folder or top-level module -> its layer, from the table `| layer | parts | … |` of the page."""
    text = page.read_text(encoding="utf-8")
    section = text.split("## Layers", 1)[1].split("\n## ", 1)[0]
    found: dict[str, int] = {}
    for line in section.splitlines():
        row = re.match(r"\|\s*(\d+)\s*\|([^|]*)\|", line)
        if row:
            for name in re.findall(r"`kg/([\w.]+?)(?:/|\.py)?`", row.group(2)):
                found[name] = int(row.group(1))
    return found


def _unit(path: Path) -> str:
    """`kg/sparql/store.py` -> `sparql`; `kg/errors.py` -> `errors`."""
    return path.relative_to(KG).with_suffix("").parts[0]


def _imports(path: Path, root: Path = KG) -> set[str]:
    """The kg modules (dotted, without `kg.`) a file of the package at `root` imports, anywhere in it."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = path.relative_to(root.parent).with_suffix("").parts[:-1]
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(a.name[3:] for a in node.names if a.name.startswith("kg."))
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = list(package[: len(package) - node.level + 1])
                target = [*base, *(node.module.split(".") if node.module else [])]
            else:
                target = (node.module or "").split(".")
            if target[:1] != ["kg"]:
                continue
            prefix = ".".join(target[1:])
            for a in node.names:  # `from kg.sparql import store` names a module; `from kg.errors import X` a name
                dotted = f"{prefix}.{a.name}" if prefix else a.name
                sub = root / Path(*dotted.split("."))
                found.add(dotted if sub.with_suffix(".py").exists() or sub.is_dir() else prefix)
    return {f for f in found if f}


def _modules() -> dict[str, Path]:
    return {".".join(p.relative_to(KG).with_suffix("").parts): p for p in sorted(KG.rglob("*.py"))}


def unit_graph() -> dict[str, set[str]]:
    """Folder (or top-level module) -> the folders and modules it imports, itself left out."""
    edges: dict[str, set[str]] = {}
    for name, path in _modules().items():
        unit = "__init__" if name == "__init__" else _unit(path)
        edges.setdefault(unit, set()).update(d.split(".")[0] for d in _imports(path) if d.split(".")[0] != unit)
    return edges


def _cycles(edges: dict[str, set[str]]) -> list[list[str]]:
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
    return cycles


def test_the_top_of_kg_is_a_few_folders_and_modules() -> None:
    entries = sorted(p.name for p in KG.iterdir() if p.name != "__pycache__" and not p.name.startswith("."))
    assert len(entries) <= TOP_ENTRIES, entries


def test_every_folder_and_module_has_a_layer() -> None:
    assert sorted(set(unit_graph()) - set(layers())) == []


def test_no_import_points_up() -> None:
    table = layers()
    upward = sorted(f"{a} (L{table[a]}) imports {b} (L{table[b]})" for a, bs in unit_graph().items() for b in bs if table[b] > table[a])
    assert upward == []


def test_no_cycle_between_folders() -> None:
    assert _cycles(unit_graph()) == []


def test_no_cycle_between_modules() -> None:
    modules = _modules()
    edges = {name: {d for d in _imports(path) if d in modules and d != name} for name, path in modules.items()}
    # a package's __init__ that re-exports its modules is the package itself, not a cycle through it
    for name in modules:
        if name.endswith("__init__") or name == "__init__":
            edges[name] = set()
    assert _cycles(edges) == []


def test_the_check_sees_imports_inside_functions(tmp_path: Path) -> None:
    nested = tmp_path / "kg" / "x.py"
    (tmp_path / "kg" / "sparql").mkdir(parents=True)
    (tmp_path / "kg" / "sparql" / "run.py").write_text("")
    nested.write_text("def f():\n    from .cli import main\n    from .sparql import run\n    import kg.endpoint.app\n")
    assert _imports(nested, tmp_path / "kg") == {"cli", "sparql.run", "endpoint.app"}


def test_the_layer_table_is_read_from_the_page() -> None:
    table = layers()
    assert table["cli"] > table["views"] > table["pipeline"] > table["sparql"] > table["graph"] > table["core"]
