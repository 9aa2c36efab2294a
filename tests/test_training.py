"""Fitting the link scorer on expert topic lists (kg.extract.training.expert, `kg train --expert`), held out by paper."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from kg.cli import cli

GOLD = Path(__file__).parent.parent.parent / "shared" / "gold"
EXPERT, PAPERS = GOLD / "expert-dev.jsonl", GOLD / "keywords-dev.jsonl"


def _figures(output: str) -> tuple[float, float]:
    line = next(x for x in output.splitlines() if x.startswith("precision"))
    return float(line.split()[1]), float(line.split()[3])


@pytest.mark.skipif(not EXPERT.is_file(), reason="the shared expert dev set is not beside the project")
def test_fitted_on_four_fifths_of_the_expert_lists_it_finds_more_of_the_fifth(tmp_path: Path) -> None:
    """`kg train --expert` on 160 papers, then the other 40 built with that model and scored by `kg eval --expert`:
    more of the experts' topics found than the keyword-fitted scorer of scheme 1.2.3 found on the same 40 (P 0.828,
    R 0.297, measured with that release), at about its precision (this fit: P 0.837, R 0.386)."""
    lines = EXPERT.read_text(encoding="utf-8").splitlines()
    ids = [json.loads(x)["id"] for x in lines]
    held = set(ids[::5])
    (tmp_path / "fit.jsonl").write_text("\n".join(x for x, i in zip(lines, ids) if i not in held) + "\n", encoding="utf-8")
    (tmp_path / "held.jsonl").write_text("\n".join(x for x, i in zip(lines, ids) if i in held) + "\n", encoding="utf-8")
    papers = [x for x in PAPERS.read_text(encoding="utf-8").splitlines() if json.loads(x)["id"] in held]
    (tmp_path / "papers.jsonl").write_text("\n".join(papers) + "\n", encoding="utf-8")
    runner = CliRunner()
    model = tmp_path / "model.json"
    trained = runner.invoke(cli, ["train", "--expert", str(tmp_path / "fit.jsonl"), "--papers", str(PAPERS), "-o", str(model)])
    assert trained.exit_code == 0, trained.output
    assert "threshold" in trained.output and model.is_file()
    graph = tmp_path / "held.ttl"
    built = runner.invoke(cli, ["build", str(tmp_path / "papers.jsonl"), "--model", str(model), "-o", str(graph), "--no-render"])
    assert built.exit_code == 0, built.output
    scored = runner.invoke(cli, ["eval", "--expert", str(tmp_path / "held.jsonl"), str(graph)])
    precision, recall = _figures(scored.output)
    assert recall >= 0.35 and precision >= 0.80, scored.output


def test_train_needs_one_source_and_never_writes_over_an_input(tmp_path: Path) -> None:
    runner = CliRunner()
    expert = tmp_path / "e.jsonl"
    expert.write_text("{}\n", encoding="utf-8")
    cases = [
        (["-o", "m.json"], "give --expert EXPERT.jsonl --papers PAPERS.jsonl, or --keywords KEYWORDS.jsonl, one of them"),
        (["--expert", str(expert), "-o", "m.json"], "--expert and --papers go together"),
        (["--expert", str(expert), "--papers", str(expert), "-o", str(expert)], "is also an input of this run"),
    ]
    for args, message in cases:
        result = runner.invoke(cli, ["train", *args])
        assert result.exit_code == 1 and message in result.output, result.output
    assert expert.read_text(encoding="utf-8") == "{}\n"


def test_a_file_too_small_to_cross_validate_is_one_line(tmp_path: Path) -> None:
    """One paper for five folds was 'unexpected TypeError … a bug in kg' (issue 30 L4)."""
    papers = tmp_path / "papers.jsonl"
    papers.write_text(json.dumps({"id": "a", "title": "Offline reinforcement learning", "abstract": "We study offline reinforcement learning with diffusion models.", "keywords": ["offline RL"]}) + "\n")
    expert = tmp_path / "expert.jsonl"
    expert.write_text(json.dumps({"id": "a", "about": [{"label": "offline reinforcement learning"}], "not_about": []}) + "\n")
    runner = CliRunner()
    for args in (["--expert", str(expert), "--papers", str(papers)], ["--keywords", str(papers)]):
        result = runner.invoke(cli, ["train", *args, "-o", str(tmp_path / "m.json")])
        assert result.exit_code == 1, result.output
        assert "1 usable papers for 5 folds; kg train needs at least as many papers as folds (--folds)" in result.output
        assert not (tmp_path / "m.json").exists()
