"""Rewrite ontology/concepts/*.ttl in the scheme's one layout: each statement once, each concept in one block.

Usage: python bench/scheme_format.py [--check]
Every concept is written in the file that defines it (`kgc:x a skos:Concept`), with all its statements
from every file (a broader link stated in another area's file joins its block), in the order
type, scheme, broader, related / prefLabel / altLabels / kg: properties / other / definition, values
in file order and each once. Section comments stay before the concept they preceded. With --check,
nothing is written: the exit status is 1 if a file would change (the graph is the same either way;
tests/test_scheme_review.py checks that no statement is repeated).
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CONCEPTS = ROOT / "ontology" / "concepts"
PREFIXES = {
    "kgc": "https://w3id.org/kg/concept/",
    "kg": "https://w3id.org/kg/ontology#",
    "skos": "http://www.w3.org/2004/02/skos/core#",
    "wd": "http://www.wikidata.org/entity/",
    "rdf": "http://www.w3.org/1999/02/22-rdf-syntax-ns#",
}
SKOS, KG, RDF_TYPE = PREFIXES["skos"], PREFIXES["kg"], PREFIXES["rdf"] + "type"
HEAD = [RDF_TYPE, SKOS + "inScheme", SKOS + "topConceptOf", SKOS + "broader", SKOS + "related"]
BODY_FIRST = [SKOS + "prefLabel", SKOS + "altLabel"]
DEFINES = re.compile(r"^kgc:([a-z0-9-]+) a skos:Concept")


@dataclass
class Area:
    """One concepts file: its opening comment lines and prefixes, then comments and concepts in order."""

    path: Path
    head: list[str]
    items: list[str] = field(default_factory=list)  # "# comment" lines or concept IRIs


@dataclass
class SchemeFiles:
    """The concept files as areas, and every concept's statements (predicate → values, in file order)."""

    areas: list[Area]
    statements: dict[str, dict[str, list]]  # subject IRI → predicate IRI → [pyoxigraph term]
    home: dict[str, Area]

    def values(self, iri: str, predicate: str) -> list:
        return self.statements.get(iri, {}).get(predicate, [])


def read(folder: Path = CONCEPTS) -> SchemeFiles:
    """Read every concepts file except 00-scheme.ttl (the scheme and its top concepts, kept as written)."""
    import pyoxigraph as ox

    areas: list[Area] = []
    statements: dict[str, dict[str, list]] = {}
    home: dict[str, Area] = {}
    for path in sorted(folder.glob("*.ttl")):
        if path.name == "00-scheme.ttl":
            continue
        lines = path.read_text(encoding="utf-8").splitlines()
        n = 0
        while n < len(lines) and (lines[n].startswith("#") or lines[n].startswith("@prefix") or not lines[n].strip()):
            n += 1
        area = Area(path, [line for line in lines[:n] if line.strip()])
        for line in lines[n:]:
            found = DEFINES.match(line)
            if found:
                iri = PREFIXES["kgc"] + found.group(1)
                if iri not in home:
                    home[iri] = area
                    area.items.append(iri)
            elif line.startswith("# ---") and "links from this area" not in line:
                area.items.append(line)
        areas.append(area)
        for t in ox.parse(path=str(path), format=ox.RdfFormat.TURTLE):
            values = statements.setdefault(t.subject.value, {}).setdefault(t.predicate.value, [])
            if t.object not in values:
                values.append(t.object)
    stray = sorted(s for s in statements if s not in home)
    if stray:
        raise SystemExit(f"statements about concepts no file defines: {stray[:5]}")
    return SchemeFiles(areas, statements, home)


def term(node) -> str:
    """A term in Turtle, IRIs with the files' prefixes."""
    if node.__class__.__name__ == "NamedNode":
        for prefix, ns in PREFIXES.items():
            if node.value.startswith(ns) and re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_-]*", node.value[len(ns):]):
                return f"{prefix}:{node.value[len(ns):]}"
        return f"<{node.value}>"
    return str(node)


def block(files: SchemeFiles, iri: str) -> list[str]:
    """The lines of one concept."""
    props = files.statements[iri]
    head = [f"{term_of(iri)} a " + ", ".join(term(o) for o in props.get(RDF_TYPE, []))]
    head += [f"{name(p)} " + ", ".join(term(o) for o in props[p]) for p in HEAD[1:] if props.get(p)]
    order = BODY_FIRST + sorted(p for p in props if p not in HEAD and p not in BODY_FIRST and p != SKOS + "definition")
    order.append(SKOS + "definition")
    body = [f"    {name(p)} " + ", ".join(term(o) for o in props[p]) for p in order if props.get(p)]
    return [" ; ".join(head) + " ;", *(line + " ;" for line in body[:-1]), body[-1] + " ."]


def name(predicate: str) -> str:
    for prefix, ns in PREFIXES.items():
        if predicate.startswith(ns):
            return "a" if predicate == RDF_TYPE else f"{prefix}:{predicate[len(ns):]}"
    return f"<{predicate}>"


def term_of(iri: str) -> str:
    return "kgc:" + iri[len(PREFIXES["kgc"]):]


def render(files: SchemeFiles, area: Area) -> str:
    out = [*area.head, ""]
    for item in area.items:
        if item.startswith("#"):
            out += ["", item]
        elif item in files.statements:
            out += block(files, item)
    return "\n".join(out).replace("\n\n\n", "\n\n") + "\n"


def write(files: SchemeFiles, check: bool = False) -> list[Path]:
    """Write every area file that changes; return the files that differ."""
    changed = []
    for area in files.areas:
        text = render(files, area)
        if area.path.read_text(encoding="utf-8") != text:
            changed.append(area.path)
            if not check:
                area.path.write_text(text, encoding="utf-8")
    return changed


if __name__ == "__main__":
    check = "--check" in sys.argv[1:]
    differ = write(read(), check=check)
    for path in differ:
        print(f"{path.relative_to(ROOT)}: {'would change' if check else 'rewritten'}")
    sys.exit(1 if check and differ else 0)
