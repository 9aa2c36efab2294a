"""Every command accepts every name kg prints for a concept or a paper (kg.graph.names, the one resolver).

One table: the names of one concept and of one paper (label, slug, prefixed name, IRI, `<IRI>`, the original id in
its original case; paper IRIs lower-case ids) × the commands that take them: `kg query -p`, `kg render --concept`
and `kg render --query … -p`, and `kg serve`'s named queries. Each name must give the answer its full IRI gives.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Callable, Iterator

import pytest
from click.testing import CliRunner

from kg.cli import cli
from kg.graph.vocabulary import DEFAULT_BASE, KGC

from .conftest import FIXTURES

CONCEPT = KGC + "rlhf"  # prefLabel "reinforcement learning from human feedback", altLabel "RLHF"
CONCEPT_NAMES = ["reinforcement learning from human feedback", "Reinforcement Learning From Human Feedback", "RLHF",
                 "rlhf", "kgc:rlhf", CONCEPT, f"<{CONCEPT}>"]
PAPER_ID = "Conf-P2"  # the paper's own id; its IRI is lower case
PAPER = DEFAULT_BASE + "paper/conf-p2"
PAPER_NAMES = [PAPER_ID, "conf-p2", "paper:conf-p2", PAPER, f"<{PAPER}>", "Aligning chatbots", "CONF-P2"]  # last: another case


@pytest.fixture(scope="module")
def graph(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The mini corpus with ids in mixed case (p2 -> Conf-P2), on the mini scheme."""
    import os

    import kg

    os.environ.setdefault("SOURCE_DATE_EPOCH", "1700000000")
    folder = tmp_path_factory.mktemp("names")
    lines = (FIXTURES / "query" / "mini-papers.jsonl").read_text(encoding="utf-8").splitlines()
    records = [json.loads(line) for line in lines if line.strip()]
    for r in records:
        r["id"] = "Conf-P" + r["id"][1:]
    source = folder / "papers.jsonl"
    source.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    built = kg.build([source], schemes=[FIXTURES / "query" / "mini-scheme.ttl"], default_scheme=False)
    return kg.write(built, folder / "mini.ttl")


@pytest.fixture(scope="module")
def app(graph: Path) -> Iterator:
    from kg.endpoint.app import make_app

    application = make_app(graph, workers=1, timeout=10.0, max_rows=100, memory=False)
    yield application
    application.close()


def _cli(*args: str) -> tuple[int, str]:
    got = CliRunner().invoke(cli, list(args))
    return got.exit_code, got.output


def _page(path: Path) -> dict:
    found = re.search(r'<script type="application/json" id="kg-data">(.*?)</script>', path.read_text(encoding="utf-8"), re.S)
    assert found
    return json.loads(found.group(1))


def query_concept(graph: Path, app, tmp: Path, name: str) -> tuple[int, str]:
    return _cli("query", "papers-by-concept", "--graph", str(graph), "-p", f"concept={name}", "-f", "csv")


def query_paper(graph: Path, app, tmp: Path, name: str) -> tuple[int, str]:
    return _cli("query", "concepts-of-paper", "--graph", str(graph), "-p", f"paper={name}", "-f", "csv")


def render_concept(graph: Path, app, tmp: Path, name: str) -> tuple[int, str]:
    out = tmp / "concept.html"
    code, text = _cli("render", str(graph), "-o", str(out), "--concept", name, "--hops", "1")
    if code:
        return code, text
    data = _page(out)
    return code, json.dumps([data["focus"], sorted(n["id"] for n in data["nodes"])])


def render_paper(graph: Path, app, tmp: Path, name: str) -> tuple[int, str]:
    out = tmp / "paper.html"
    code, text = _cli("render", str(graph), "-o", str(out), "--query", "paper-graph", "-p", f"paper={name}")
    return (code, text) if code else (code, json.dumps(sorted(n["id"] for n in _page(out)["nodes"])))


def _http(app, path: str, params: dict[str, str]) -> tuple[int, str]:
    from .test_serve import call

    status, _, body = call(app, path=path, query={**params, "format": "csv"})
    return (0 if status == 200 else status), body.decode("utf-8")


def serve_concept(graph: Path, app, tmp: Path, name: str) -> tuple[int, str]:
    return _http(app, "/queries/papers-by-concept", {"concept": name})


def serve_paper(graph: Path, app, tmp: Path, name: str) -> tuple[int, str]:
    return _http(app, "/queries/concepts-of-paper", {"paper": name})


Command = Callable[[Path, object, Path, str], tuple[int, str]]
CONCEPT_COMMANDS: list[Command] = [query_concept, render_concept, serve_concept]
PAPER_COMMANDS: list[Command] = [query_paper, render_paper, serve_paper]


@pytest.mark.parametrize("command", CONCEPT_COMMANDS, ids=lambda c: c.__name__)
@pytest.mark.parametrize("name", CONCEPT_NAMES)
def test_every_name_of_a_concept(command: Command, name: str, graph: Path, app, tmp_path: Path) -> None:
    code, want = command(graph, app, tmp_path, CONCEPT)
    assert code == 0 and CONCEPT in want, want
    assert command(graph, app, tmp_path, name) == (0, want)


@pytest.mark.parametrize("command", PAPER_COMMANDS, ids=lambda c: c.__name__)
@pytest.mark.parametrize("name", PAPER_NAMES)
def test_every_name_of_a_paper(command: Command, name: str, graph: Path, app, tmp_path: Path) -> None:
    code, want = command(graph, app, tmp_path, PAPER)
    assert code == 0 and PAPER in want, want
    assert command(graph, app, tmp_path, name) == (0, want)


@pytest.mark.parametrize("command", CONCEPT_COMMANDS, ids=lambda c: c.__name__)
def test_an_unknown_concept_is_one_clear_error_everywhere(command: Command, graph: Path, app, tmp_path: Path) -> None:
    code, text = command(graph, app, tmp_path, "reinforcment learning")
    assert code != 0 and "Traceback" not in text
    assert "no concept labelled 'reinforcment learning'" in text and "did you mean: reinforcement learning" in text, text


@pytest.mark.parametrize("command", PAPER_COMMANDS, ids=lambda c: c.__name__)
def test_an_unknown_paper_is_one_clear_error_everywhere(command: Command, graph: Path, app, tmp_path: Path) -> None:
    code, text = command(graph, app, tmp_path, "Conf-P99")
    assert code != 0 and "Traceback" not in text and "no paper with identifier, IRI or title 'Conf-P99'" in text, text


def test_one_comparison_form_of_a_name() -> None:
    from kg.graph.names import topic_key

    assert topic_key("Large-Language  Models") == topic_key("large language model") == "large language model"
    assert topic_key("loss") == "loss"
    import kg.extract.keywords
    import kg.extract.scheme

    assert kg.extract.keywords.topic_key is topic_key and not hasattr(kg.extract.scheme, "_label_key")


def test_the_names_in_the_table_are_those_kg_prints(graph: Path) -> None:
    """The table's names are what `kg query` prints: the prefixed names, the id and the label."""
    code, text = _cli("query", "concepts-of-paper", "--graph", str(graph), "-p", f"paper={PAPER}")
    assert code == 0 and "paper: paper:conf-p2" in text and "kgc:rlhf" in text, text
    code, text = _cli("query", "papers-by-concept", "--graph", str(graph), "-p", f"concept={CONCEPT}", "-f", "csv")
    assert PAPER_ID in text and "Aligning chatbots" in text, text


def test_a_label_of_several_concepts_lists_their_slugs_to_pass_instead(sample_ttl: Path) -> None:
    result = CliRunner().invoke(cli, ["query", "papers-by-concept", "-p", "concept=GP", "--graph", str(sample_ttl)])
    assert result.exit_code == 1
    line = result.output.strip().splitlines()[-1]
    assert re.search(r"'GP' names several concepts: [a-z0-9-]+(, [a-z0-9-]+)+; pass one of these instead$", line), line
    slug = line.split("concepts: ")[1].split(",")[0]
    assert CliRunner().invoke(cli, ["query", "papers-by-concept", "-p", f"concept={slug}", "--graph", str(sample_ttl)]).exit_code == 0


# Names where the two look-ups once differed: the scheme itself (a prefLabel but no skos:Concept), a prefLabel in
# another language that is another concept's English altLabel ("LLM"@de), and the plain cases around them.
SAME_ANSWER_NAMES = ["mini scheme", "kgc:mini", "LLM", "llm", "Diffusionsmodell", "RL", "rlhf", "nothing like it"]


@pytest.fixture(scope="module")
def labelled_graph(graph: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The mini graph with a German prefLabel "LLM" on the diffusion model (the large language model's English altLabel)."""
    out = tmp_path_factory.mktemp("labelled") / "labelled.ttl"
    extra = ('<https://w3id.org/kg/concept/diffusion-model> <http://www.w3.org/2004/02/skos/core#prefLabel> "LLM"@de , '
             '"Diffusionsmodell"@de .\n')
    out.write_text(graph.read_text(encoding="utf-8") + "\n" + extra, encoding="utf-8")
    return out


def _resolved(code: int, text: str) -> str:
    """What a command made of a concept name: its IRI, or the reason it gave (after the option or query it names)."""
    return re.sub(r"^(Error: )?(query '[^']*'|--concept): ", "", text.strip().splitlines()[-1]) if code else text


@pytest.mark.parametrize("name", SAME_ANSWER_NAMES)
def test_render_and_query_resolve_a_concept_name_alike(name: str, labelled_graph: Path, tmp_path: Path) -> None:
    """`kg render --concept` (the in-memory graph) and `kg query -p concept=` (SPARQL) give one answer for every name."""
    rq = tmp_path / "which.rq"
    rq.write_text("# Parameters:\n#   concept (concept, required)  a concept\nSELECT ?concept WHERE {}\n", encoding="utf-8")
    code, text = _cli("query", str(rq), "--graph", str(labelled_graph), "-p", f"concept={name}", "-f", "csv")
    by_query = _resolved(code, text.splitlines()[1] if not code else text)
    out = tmp_path / "concept.html"
    code, text = _cli("render", str(labelled_graph), "-o", str(out), "--concept", name, "--hops", "1")
    by_render = _resolved(code, _page(out)["focus"] if not code else text)
    assert by_render == by_query
