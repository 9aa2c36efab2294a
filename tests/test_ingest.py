"""Stage 1, ingest: every input format, and every kind of bad input named by file and line."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from kg import InputError
from kg.extract import ingest

GOOD = "We study reinforcement learning with graph neural networks."


def write(path: Path, content: str | bytes) -> Path:
    """Write text (UTF-8) or raw bytes to `path` and return it."""
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8")
    return path


def jsonl(*records: object) -> str:
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records)


# ---------------------------------------------------------------- good inputs


def test_jsonl_fields_are_read_and_folded(tmp_path: Path) -> None:
    path = write(tmp_path / "p.jsonl", jsonl(
        {"id": "p1", "title": " A\tTitle\n", "abstract": GOOD, "authors": ["Ada  Lovelace", {"name": "Alan Turing"}, 3, None], "venue": "ICML", "year": "2024"},
    ))
    (paper,) = ingest.read([path]).papers
    assert paper == ingest.Paper("p1", GOOD, "A Title", ("Ada Lovelace", "Alan Turing", "3"), "ICML", 2024, f"{path}:1")


def test_json_list_and_papers_object_give_record_numbers(tmp_path: Path) -> None:
    listed = write(tmp_path / "a.json", json.dumps([{"id": "x", "abstract": GOOD}]))
    wrapped = write(tmp_path / "b.json", json.dumps({"papers": [{"id": "y", "abstract": GOOD + " Two."}]}))
    papers = ingest.read([listed, wrapped]).papers
    assert [(p.id, p.where) for p in papers] == [("x", f"{listed}: record 1"), ("y", f"{wrapped}: record 1")]


def test_csv_with_quoted_multiline_field_reports_the_line_where_each_row_starts(tmp_path: Path) -> None:
    path = write(tmp_path / "p.csv", f'id,title,abstract\n1,T,"{GOOD}\nsecond line"\n2,U,"Another abstract."\n')
    papers = ingest.read([path]).papers
    assert [(p.id, p.where) for p in papers] == [("1", f"{path}:2"), ("2", f"{path}:4")]
    assert papers[0].abstract == GOOD + " second line"


def test_unicode_line_separators_inside_records_do_not_split_lines(tmp_path: Path) -> None:
    # str.splitlines() would cut these records in two: U+2028, U+0085 and form feed are line breaks to it.
    text = "Graph neural\u2028networks\x85with\x0cattention."
    path = write(tmp_path / "p.jsonl", jsonl({"id": "a", "abstract": text}, {"id": "b", "abstract": GOOD}))
    csv_path = write(tmp_path / "p.csv", f'id,abstract\na,"{text}"\nb,{GOOD}\n')
    for source in (path, csv_path):
        papers = ingest.read([source]).papers
        assert [(p.id, p.abstract, p.where) for p in papers] == [
            ("a", "Graph neural networks with attention.", f"{source}:2" if source.suffix == ".csv" else f"{source}:1"),
            ("b", GOOD, f"{source}:3" if source.suffix == ".csv" else f"{source}:2"),
        ]


def test_seed_text_format_and_byte_order_mark(tmp_path: Path) -> None:
    path = write(tmp_path / "s.txt", "\ufeffICML 2024 paper list\n\nFirst abstract\ncontinues.\n\n\nSecond abstract.\n")
    papers = ingest.read([path]).papers
    assert [(p.abstract, p.venue, p.year, p.where) for p in papers] == [
        ("First abstract continues.", "ICML", 2024, f"{path}:3"),
        ("Second abstract.", "ICML", 2024, f"{path}:7"),
    ]
    assert papers[0].id == ingest.content_id("First abstract continues.")


def test_control_characters_fold_to_spaces_everywhere(tmp_path: Path) -> None:
    path = write(tmp_path / "c.jsonl", jsonl({
        "id": "a\x00b", "title": "T\x1b[31mitle\x7f", "abstract": "Graph\x00neural\x0bnetworks\u200b\ufffe\uffffwork.",
        "authors": ["Ada\x85Lovelace"], "venue": "NeurIPS\x07",
    }))
    (paper,) = ingest.read([path]).papers
    assert (paper.id, paper.title, paper.abstract, paper.authors, paper.venue) == (
        "a b", "T [31mitle", "Graph neural networks work.", ("Ada Lovelace",), "NeurIPS"
    )


# ---------------------------------------------------------------- bad inputs: one InputError naming file:line

BAD_CASES = {
    "malformed JSON": ("x.json", '[{"id": "a", "abstract": "x"},\n{"id": ', ":2: malformed JSON (Expecting value, column 8)"),
    "JSON not a list": ("x.json", '{"id": "a"}', ':1: expected a JSON list of paper records (or {"papers": [...]})'),
    "malformed JSONL row": ("x.jsonl", jsonl({"abstract": GOOD}) + '{"id": "b", "abstract":\n', ":2: malformed JSON (Expecting value, column 24)"),
    "JSONL row not an object": ("x.jsonl", jsonl({"abstract": GOOD}, ["a"]), ":2: expected an object with 'abstract', got list"),
    "malformed CSV quote": ("x.csv", f'id,abstract\n1,"{GOOD}"\n2,"unterminated\n', ":3: malformed CSV (unexpected end of data); the rest of the file was not read"),
    "CSV row with extra fields": ("x.csv", f"id,abstract\n1,{GOOD}\n2,a,b\n", ":3: 3 fields where the header has 2"),
    "CSV without abstract column": ("x.csv", "id,title\n1,T\n", ":1: the CSV header has no 'abstract' column (found: id, title)"),
    "no abstract": ("x.jsonl", jsonl({"abstract": GOOD}, {"id": "b", "title": "T"}), ":2: the record has no abstract"),
    "abstract not text": ("x.jsonl", jsonl({"id": "b", "abstract": 5}), ":1: the abstract must be text, not int (5)"),
    "seed text with a header only": ("x.txt", "ICML 2024\n\n\n", ": holds no abstracts after its header line"),
    "blank abstract": ("x.jsonl", jsonl({"id": "b", "abstract": " \x00\t"}), ":1: the record has no abstract"),
    "bad year": ("x.jsonl", jsonl({"abstract": GOOD, "year": "20x4"}), ":1: year '20x4' is not a whole year between 1 and 9999"),
    "year out of range": ("x.jsonl", jsonl({"abstract": GOOD, "year": -5}), ":1: year -5 is not a whole year between 1 and 9999"),
    "id is an object": ("x.jsonl", jsonl({"id": {"a": 1}, "abstract": GOOD}), ":1: id {'a': 1} must be a string or a whole number"),
    "id too long": ("x.jsonl", jsonl({"id": "i" * 300, "abstract": GOOD}), ":1: id of 300 characters is longer than the limit of 256; is it a full text?"),
    "unpaired surrogate": ("x.jsonl", '{"abstract": "bad \\ud800 text"}\n', ":1: the abstract holds an unpaired surrogate ('\\ud800'), which no RDF syntax can encode"),
    "non-UTF-8": ("x.jsonl", jsonl({"abstract": GOOD}).encode() + '{"abstract": "café"}\n'.encode("latin-1"), ":2: not UTF-8 text (byte 0xe9 at column 18); re-save the file as UTF-8"),
    "UTF-16": ("x.csv", "id,abstract\n1,x\n".encode("utf-16"), ":1: not UTF-8 text (it looks like UTF-16) (byte 0xff at column 1); re-save the file as UTF-8"),
    "seed text without header": ("x.txt", "\n\nno venue here\n\nAn abstract.\n", ":3: the first line must name the venue and year, e.g. 'ICML 2024'"),
    "empty file": ("x.jsonl", "", ": the file is empty"),
    "blank file": ("x.csv", " \n\n", ": the file is empty"),
    "unknown suffix": ("x.xlsx", "whatever", ": unknown input format '.xlsx' (known: .atom, .bib, .bibtex, .csljson, .csv, .json, .jsonl, .ndjson, .ris, .txt, .xml)"),
}


@pytest.mark.parametrize("name", BAD_CASES)
def test_bad_input_is_one_input_error_naming_file_and_line(tmp_path: Path, name: str) -> None:
    filename, content, message = BAD_CASES[name]
    path = write(tmp_path / filename, content)
    with pytest.raises(InputError) as caught:
        ingest.read([path])
    assert str(caught.value) == f"{path}{message}"


def test_missing_file_and_directory(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"^.*nope\.jsonl: no such file$"):
        ingest.read([tmp_path / "nope.jsonl"])
    (tmp_path / "dir.jsonl").mkdir()
    with pytest.raises(InputError) as caught:
        ingest.read([tmp_path / "dir.jsonl"])
    assert str(caught.value) == f"{tmp_path / 'dir.jsonl'}: is a directory; pass the files inside it (e.g. {tmp_path / 'dir.jsonl'}/*.jsonl)"


def test_input_with_no_records_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"x\.json: the JSON list holds no paper records$"):  # the file is named
        ingest.read([write(tmp_path / "x.json", "[]")])


def test_duplicate_ids_are_kept_once_and_reported(tmp_path: Path) -> None:
    path = write(tmp_path / "d.jsonl", jsonl({"id": "a", "abstract": GOOD}, {"id": "a", "abstract": "Other."}, {"id": "b", "abstract": "Third."}))
    seed = write(tmp_path / "s.txt", f"ICML 2024\n\n{GOOD}\n\n{GOOD}\n")
    got = ingest.read([path, seed])
    assert [p.id for p in got.papers] == ["a", "b", ingest.content_id(GOOD)]
    assert got.papers[0].abstract == GOOD  # the first is kept
    assert got.problems == (
        f"{path}:2: duplicate id 'a', first at {path}:1; kept the first",
        f"{seed}:5: the same abstract as {seed}:3; kept the first",
    )


def test_skip_bad_keeps_the_good_records_and_reports_each_bad_one(tmp_path: Path) -> None:
    path = write(tmp_path / "m.jsonl", jsonl({"id": "a", "abstract": GOOD}) + "{oops\n" + jsonl({"id": "c"}, {"id": "d", "abstract": "Fine."}))
    got = ingest.read([path, tmp_path / "missing.csv"], skip_bad=True)
    assert [p.id for p in got.papers] == ["a", "d"]
    assert got.problems == (
        f"skipped {path}:2: malformed JSON (Expecting property name enclosed in double quotes, column 2)",
        f"skipped {path}:3: the record has no abstract",
        f"skipped {tmp_path / 'missing.csv'}: no such file",
    )


def test_skip_bad_keeps_csv_rows_before_a_broken_quote(tmp_path: Path) -> None:
    path = write(tmp_path / "b.csv", f'id,abstract\n1,{GOOD}\n2,"never closed\n3,lost\n')
    got = ingest.read([path], skip_bad=True)
    assert [p.id for p in got.papers] == ["1"]
    assert got.problems == (f"skipped {path}:3: malformed CSV (unexpected end of data); the rest of the file was not read",)


def test_skip_bad_with_nothing_good_left_is_an_error(tmp_path: Path) -> None:
    path = write(tmp_path / "n.jsonl", jsonl({"id": "c"}))
    with pytest.raises(InputError) as caught:
        ingest.read([path], skip_bad=True)
    assert str(caught.value) == f"no papers to build: all 1 records or files were bad, the first: {path}:1: the record has no abstract"


def test_one_megabyte_abstract_is_refused_quickly_and_the_limit_accepted(tmp_path: Path) -> None:
    sentence = "We study reinforcement learning with diffusion models. "
    huge = (sentence * (1_000_000 // len(sentence) + 1))[:1_000_000]
    at_limit = huge[: ingest.MAX_ABSTRACT].strip()
    path = write(tmp_path / "big.jsonl", jsonl({"id": "huge", "abstract": huge}, {"id": "ok", "abstract": at_limit}))
    start = time.perf_counter()
    with pytest.raises(InputError) as caught:
        ingest.read([path])
    assert time.perf_counter() - start < 2
    assert str(caught.value) == f"{path}:1: abstract of 1,000,000 characters is longer than the limit of 200,000; is it a full text?"
    got = ingest.read([path], skip_bad=True)
    assert [(p.id, len(p.abstract)) for p in got.papers] == [("ok", len(at_limit))]


def test_long_csv_fields_get_the_limit_message_not_a_csv_error(tmp_path: Path) -> None:
    # The csv module's own field limit (131,072) must not pre-empt the clear message.
    path = write(tmp_path / "big.csv", "id,abstract\n1," + "word " * 60_000 + "\n")
    with pytest.raises(InputError, match=r":2: abstract of 299,999 characters is longer than the limit of 200,000"):
        ingest.read([path])
