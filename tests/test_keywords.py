"""The author-keyword rule (kg.extract.keywords), `kg eval --keywords`, the learned scorer's model file and `kg train`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from kg.cli import cli
from kg.extract import scorer as scorer_
from kg.extract.features import FEATURES
from kg.extract.keywords import Hierarchy, KeywordPaper, read_keywords, score_keywords

DEV = Path(__file__).parent.parent.parent / "shared" / "gold" / "keywords-dev.jsonl"
SCHEME = Path(__file__).parent / "fixtures" / "extract-scheme.ttl"

# rl ← offline-rl; ml ← rl; dm (diffusion) ← ml; gen (unused by keywords) ← ml
TREE = Hierarchy(
    labels={
        "rl": frozenset({"reinforcement learning", "rl"}),
        "offline": frozenset({"offline reinforcement learning"}),
        "ml": frozenset({"machine learning"}),
        "dm": frozenset({"diffusion model"}),
        "gen": frozenset({"generative model"}),
    },
    broader={"offline": frozenset({"rl"}), "rl": frozenset({"ml"}), "dm": frozenset({"gen"}), "gen": frozenset({"ml"})},
)


def _paper(i: int, *keywords: str) -> KeywordPaper:
    return KeywordPaper(f"p{i}", keywords)


def test_rule_rolls_up_judges_frequent_concepts_and_leaves_out_unnamed_papers():
    papers = [
        _paper(1, "Offline Reinforcement Learning"),  # → offline, rl, ml
        _paper(2, "reinforcement-learning"),  # → rl, ml
        _paper(3, "RL", "robots"),  # → rl, ml
        _paper(4, "Diffusion Models"),  # → dm, gen, ml (gen, dm: 1 paper each, not judged)
        _paper(5, "something else"),  # names no concept: left out
    ]
    predicted = {"p1": {"rl"}, "p2": {"offline"}, "p3": set(), "p4": {"dm"}, "p5": {"rl"}}
    ev = score_keywords(papers, predicted, TREE)
    assert [p.id for p in ev.papers] == ["p1", "p2", "p3", "p4"] and ev.left_out == 1
    assert ev.judged == {"rl", "ml"}  # gold concepts of at least 3 papers
    rolled = ev.figures()
    # p1: rl, ml found, offline missed; p2: rl, ml found, offline extra but not judged; p3: rl, ml missed; p4: all found
    assert (rolled.tp, rolled.fn, rolled.fp) == (2 + 2 + 0 + 3, 1 + 0 + 2 + 0, 0)
    direct = ev.figures(direct=True)
    # direct gold: p1 offline, p2 rl, p3 rl, p4 dm; judged directly: rl only (2 papers) → nothing judged
    assert (direct.tp, direct.fn) == (1, 3)
    assert ev.coverage == 0.0  # no keyword is used by 3 papers ("RL" and "reinforcement learning" are different keywords)
    assert rolled.f1 == pytest.approx(2 * 7 / (2 * 7 + 3))


def test_extras_count_only_judged_concepts():
    papers = [_paper(i, "reinforcement learning") for i in range(3)] + [_paper(9, "diffusion model")]
    ev = score_keywords(papers, {"p9": {"offline"}}, TREE)
    (p9,) = [p for p in ev.papers if p.id == "p9"]
    assert ev.extras(p9) == {"rl"}  # offline is not judged, rl is (3 papers); ml is gold for p9 (found)
    assert ev.figures().fp == 1 and ev.unmatched == 3


def test_figures_per_venue_and_year_add_up_to_the_whole(tmp_path: Path):
    lines = [
        {"id": "a", "keywords": ["offline reinforcement learning"], "venue": "ICLR", "year": 2017},
        {"id": "b", "keywords": ["reinforcement learning"], "venue": "ICLR", "year": 2017},
        {"id": "c", "keywords": ["diffusion models"], "venue": "NeurIPS", "year": 2024},
        {"id": "d", "keywords": ["RL"]},
    ]
    path = tmp_path / "kw.jsonl"
    path.write_text("\n".join(json.dumps(x) for x in lines) + "\n")
    papers = read_keywords(path)
    assert [p.group for p in papers] == ["ICLR 2017", "ICLR 2017", "NeurIPS 2024", ""]
    ev = score_keywords(papers, {"a": {"rl"}, "b": {"offline"}, "c": {"rl"}, "d": set()}, TREE)
    assert ev.groups() == ["", "ICLR 2017", "NeurIPS 2024"]
    parts = [ev.figures(group=g) for g in ev.groups()]
    whole = ev.figures()
    assert (sum(f.tp for f in parts), sum(f.fp for f in parts), sum(f.fn for f in parts)) == (whole.tp, whole.fp, whole.fn)
    # ICLR 2017: a finds rl, ml and misses offline; b finds rl, ml (offline extra, not judged)
    assert (parts[1].tp, parts[1].fn) == (4, 1)


def test_read_keywords_names_file_and_line(tmp_path: Path):
    bad = tmp_path / "kw.jsonl"
    bad.write_text('{"id": "a", "keywords": ["x"]}\n{"id": "b", "keywords": "x"}\n')
    with pytest.raises(Exception, match=r"kw\.jsonl:2: a keyword line needs 'id'"):
        read_keywords(bad)
    result = CliRunner().invoke(cli, ["eval", "--keywords", str(bad)])
    assert result.exit_code == 1 and "kw.jsonl:2" in result.output and "Traceback" not in result.output


def test_eval_keywords_cli_on_a_built_graph(tmp_path: Path):
    """Two papers built with the fixture scheme; the keywords name one found and one missed concept."""
    rows = [
        {"id": "a", "title": "Offline reinforcement learning", "abstract": "We study offline reinforcement learning from logged data. Offline reinforcement learning is hard.", "keywords": ["offline reinforcement learning", "transfer learning"]},
        {"id": "b", "title": "Diffusion models", "abstract": "Diffusion models generate images. We study diffusion models for robotics.", "keywords": ["diffusion models"]},
    ]
    papers = tmp_path / "kw.jsonl"
    papers.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    runner = CliRunner()
    graph = tmp_path / "g.ttl"
    assert runner.invoke(cli, ["build", str(papers), "-o", str(graph), "--scheme", str(SCHEME), "--no-default-scheme", "--no-render"]).exit_code == 0
    result = runner.invoke(cli, ["eval", "--keywords", str(papers), str(graph), "-v"])
    assert result.exit_code == 0, result.output
    assert "papers 2: 2 scored, 0 without a keyword that names a concept" in result.output
    assert "missed, not in the text: transfer learning" in result.output
    assert "roll-up" in result.output and "direct" in result.output and "coverage" in result.output
    assert "(no venue)" not in result.output  # one group only: no per-group lines
    both = runner.invoke(cli, ["eval", "--keywords", str(papers), str(graph), str(graph)])
    assert both.exit_code == 1
    assert "at most one argument" in both.output


def test_shipped_model_is_small_json_with_this_kgs_features():
    path = scorer_.default_model_path()
    assert path.stat().st_size < 10_000
    body = json.loads(path.read_text())
    assert body["features"] == list(FEATURES)
    model = scorer_.load()
    assert 0.05 <= model.threshold <= 0.7
    # Probabilities are monotone in the evidence the model weighs most: more title and focus evidence, higher score.
    base = [0.0] * len(FEATURES)
    more = list(base)
    for name in ("mentions", "best_weight", "weight_sum", "in_title", "focus"):
        more[FEATURES.index(name)] = 1.0
    low, high = model.probabilities([base, more])
    assert 0.0 < low < high < 1.0


def test_damaged_model_is_one_clear_error(tmp_path: Path):
    bad = tmp_path / "m.json"
    body = json.loads(scorer_.default_model_path().read_text())
    body["features"] = body["features"][:-1]
    bad.write_text(json.dumps(body))
    result = CliRunner().invoke(cli, ["build", "--model", str(bad), "-o", str(tmp_path / "g.ttl"), "--no-render"])
    assert result.exit_code == 1 and "m.json" in result.output and "retrain it with `kg train`" in result.output
    assert not (tmp_path / "g.ttl").exists()


@pytest.mark.skipif(not DEV.is_file(), reason="the shared keyword dev set is not beside the project")
def test_trained_on_four_folds_beats_the_old_salience_on_the_fifth(tmp_path: Path):
    """Fit on 4/5 of the dev papers, score the held-out fifth: the learned scorer is above the hand-set
    salience's level on the whole file (roll-up F1 0.618) and the model file it writes loads and builds."""
    from kg.extract import scheme
    from kg.extract.training.scorer import train

    entries = read_keywords(DEV)
    held = entries[: len(entries) // 5]
    trained = train(entries[len(entries) // 5 :], scheme.load(), folds=2)
    path = tmp_path / "model.json"
    path.write_text(trained.scorer.to_json())
    held_file = tmp_path / "held.jsonl"
    held_file.write_text("".join(json.dumps({"id": e.id, "title": e.title, "abstract": e.abstract, "keywords": list(e.keywords)}) + "\n" for e in held))
    graph = tmp_path / "held.ttl"
    runner = CliRunner()
    assert runner.invoke(cli, ["build", str(held_file), "--model", str(path), "-o", str(graph), "--no-render"]).exit_code == 0
    result = runner.invoke(cli, ["eval", "--keywords", str(held_file), str(graph)])
    line = next(x for x in result.output.splitlines() if x.startswith("roll-up"))
    f1 = float(line.split("F1 ")[1].split()[0])
    assert f1 >= 0.625, result.output
