"""The wheel carries the ontology, the named queries and the bundled sample."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

from .conftest import ROOT


def test_wheel_ships_data_folders(tmp_path: Path) -> None:
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(tmp_path), str(ROOT)],
        check=True,
        capture_output=True,
    )
    (wheel,) = tmp_path.glob("kg-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    assert any(n.startswith("kg/ontology/concepts/") and n.endswith(".ttl") for n in names)
    assert any(n.startswith("kg/queries/") for n in names)
    assert {"kg/extract/sample/icml2024-part1.txt", "kg/extract/sample/icml2024-part2.txt", "kg/py.typed"} <= names
    assert not any(n.startswith(("tests/", "graphs/")) for n in names)
