"""Regressions from trying the CLI as a user on inputs the team did not write (Storm's documented examples,
topology documents given where a timings file is expected, hostile files)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from app.cli import main

ROOT = Path(__file__).resolve().parents[2]


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def _flux_document(capsys, tmp_path: Path) -> Path:
    doc = tmp_path / "wc.storm.json"
    assert run(capsys, "import", "flux", str(ROOT / "models" / "wordcount.flux.yaml"), "-o", str(doc))[0] == 0
    return doc


def test_a_storm_ui_page_with_a_duplicate_key_is_refused_for_that_reason(capsys, tmp_path: Path) -> None:
    """Storm's REST API documentation shows its topology page with the key "workers" twice; saved as is, the page
    was read as a Flux file and refused as 'a JSON topology document, not a Flux file ... nothing to import'."""
    doc = _flux_document(capsys, tmp_path)
    page = json.loads((ROOT / "tests" / "data" / "storm-ui" / "topology.json").read_text())
    text = json.dumps(page)
    bad = tmp_path / "page.json"
    bad.write_text(text[:-1] + ', "workers": []}')
    code, _, err = run(capsys, "annotate", str(doc), "--from", str(bad))
    assert code == 2 and err.count("\n") == 1, err
    assert "duplicate key 'workers'" in err and str(bad) in err and "Flux" not in err


def test_a_topology_document_given_as_a_timings_file_says_so(capsys, tmp_path: Path) -> None:
    """A .storm.json or D-VerT document given to --from was taken for a Storm UI page ('the replies do not make a
    topology: topology: is empty', the path twice) or for a Flux file."""
    doc = _flux_document(capsys, tmp_path)
    for other in (ROOT / "models" / "getting-started.storm.json",
                  ROOT / "tests" / "data" / "dvert" / "example-storm_example.json"):
        given = tmp_path / other.name
        shutil.copy(other, given)
        code, _, err = run(capsys, "annotate", str(doc), "--from", str(given))
        assert code == 2 and err.count("\n") == 1, err
        assert "is a topology document, not a timings file" in err and err.count(str(given)) == 1


def test_a_json_timings_file_still_annotates(capsys, tmp_path: Path) -> None:
    doc = _flux_document(capsys, tmp_path)
    timings = tmp_path / "timings.json"
    timings.write_text(json.dumps({"count": {"alpha": "2ms", "sigma": 0}}))
    code, _, err = run(capsys, "annotate", str(doc), "--from", str(timings))
    assert code == 0, err


def test_an_empty_or_headerless_timings_file_is_refused(capsys, tmp_path: Path) -> None:
    """An empty CSV, or a CSV whose header has no component column, annotated nothing and exited 0."""
    doc = _flux_document(capsys, tmp_path)
    before = doc.read_bytes()
    for name, text, says in (("empty.csv", "", "is empty"), ("empty.json", "", "is empty"),
                             ("x.csv", "x", "needs a `component` column")):
        bad = tmp_path / name
        bad.write_text(text)
        code, _, err = run(capsys, "annotate", str(doc), "--from", str(bad))
        assert code == 2 and says in err and str(bad) in err and err.count("\n") == 1, err
    assert doc.read_bytes() == before


def test_a_folder_without_a_run_is_named_once(capsys, tmp_path: Path) -> None:
    """`analyze DIR` said `DIR: DIR: no event log in this folder`."""
    folder = tmp_path / "nothing"
    folder.mkdir()
    code, _, err = run(capsys, "analyze", str(folder))
    assert code == 2 and err.count(str(folder)) == 1 and "no event log" in err, err
