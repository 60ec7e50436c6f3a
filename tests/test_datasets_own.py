"""Generic builders of user-declared datasets (datasets/own.py).

Each format is checked on a tiny hand-made file against arrays worked out by hand; each bad
file (NaN or inf, text in a numeric cell, a ragged row, a non-square matrix, an index out of
range, a wrong sha256) must fail with a message naming the file, the line and the column, and
leave no file in the output folder. The example config's entries must build.
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
import yaml

from embedlab import artifacts, cli
from embedlab.affinities import row_normalised_symmetric
from embedlab.datasets import (
    DatasetError,
    own,
    own_cooccurrence,
    own_papers,
    own_triplets,
    own_vectors,
    topic_swap,
)
from embedlab.fetch import ChecksumError

REPO = Path(__file__).resolve().parents[1]
EXAMPLES = REPO / "config" / "examples" / "own_datasets.yaml"


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def assert_bad_file(tmp_path: Path, e: dict, path: Path, line, column, words: str) -> None:
    """Building entry ``e`` fails with a message that starts with the file, line and column
    and holds ``words``, and writes nothing."""
    out = tmp_path / "out"
    with pytest.raises(DatasetError) as info:
        own.build_own("bad", e, out=out)
    message = str(info.value)
    assert message.startswith(f"{path}, line {line}, column {column}"), message
    assert words in message
    assert not out.exists()


def entry(kind: str, fmt: str, path: Path, **options) -> dict:
    return {"kind": kind, "format": fmt, "path": str(path), **options}


# --------------------------------------------------------------------------------------
# the entry


@pytest.mark.parametrize(
    "item",
    [
        {"kind": "vectors", "format": "csv", "path": "a.csv", "labels": "y", "names": "id"},
        {"kind": "vectors", "format": "tsv", "path": "a.tsv"},
        {"kind": "vectors", "format": "npy", "path": "a.npy"},
        {"kind": "vectors", "format": "npz", "path": "a.npz", "array": "X", "labels": "y"},
        {"kind": "similarity", "format": "edges", "path": "a.txt", "directed": True},
        {"kind": "similarity", "format": "matrix", "url": "https://x/a.txt", "sha256": "a" * 64},
        {"kind": "triplets", "format": "triplets", "path": "t.csv", "labels": "l.txt", "n": 5,
         "first_index": 1, "description": "five items"},
    ],
)
def test_a_well_formed_entry_has_no_problem(item):
    assert own.entry_problems("mine", item) == []
    assert own.check_entry("mine", item)["format"] == item["format"]


@pytest.mark.parametrize(
    "item, field, words",
    [
        ({"kind": "graph", "format": "edges", "path": "a"}, "kind", "not one of"),
        ({"kind": "vectors", "format": "edges", "path": "a"}, "format", "not a format of kind"),
        ({"kind": "vectors", "format": "csv"}, "", "exactly one of path"),
        ({"kind": "vectors", "format": "csv", "path": "a", "url": "u"}, "", "exactly one of"),
        ({"kind": "vectors", "format": "csv", "url": "https://x/a"}, "sha256", "required with"),
        ({"kind": "vectors", "format": "csv", "path": "a", "sha256": "abc"}, "sha256", "64 hex"),
        ({"kind": "vectors", "format": "npy", "path": "a", "labels": "y"}, "labels", "no labels"),
        ({"kind": "similarity", "format": "edges", "path": "a", "labels": "l"}, "labels",
         "no labels"),
        ({"kind": "similarity", "format": "matrix", "path": "a", "weights": 1}, "weights",
         "not a field"),
        ({"kind": "similarity", "format": "edges", "path": "a", "directed": "yes"}, "directed",
         "must be a bool"),
        ({"kind": "triplets", "format": "triplets", "path": "a", "first_index": 2},
         "first_index", "0 or 1"),
        ({"kind": "triplets", "format": "triplets", "path": "a", "n": "10"}, "n", "integer"),
        ({"kind": "vectors", "format": "csv", "path": "a", "labels": 3}, "labels", "must be a str"),
        ({"kind": "vectors", "format": "csv", "path": ""}, "path", "non-empty"),
        ({"kind": "cooccurrence", "format": "tsv", "path": "a"}, "format", "one of csv"),
        ({"kind": "cooccurrence", "format": "csv", "path": "a", "columns": {"when": "y"}},
         "columns.when", "not a role"),
        ({"kind": "cooccurrence", "format": "csv", "path": "a",
          "columns": {"row": "a", "column": "a"}}, "columns", "the same column"),
        ({"kind": "cooccurrence", "format": "csv", "path": "a", "columns": "year"},
         "columns", "must be a dict"),
        ({"kind": "cooccurrence", "format": "csv", "path": "a", "labels": "l"},
         "labels", "not a field"),
    ],
)
def test_a_bad_entry_is_named_with_its_field(item, field, words):
    problems = own.entry_problems("mine", item)
    assert problems, item
    prefix = "own_datasets.mine" + (f".{field}:" if field else ":")
    assert any(p.startswith(prefix) and words in p for p in problems), problems
    assert all("\n" not in p for p in problems)
    with pytest.raises(own.EntryError, match=re.escape(prefix)):
        own.check_entry("mine", item)


def test_an_entry_must_be_a_map_with_a_folder_name():
    assert "must be a map" in own.entry_problems("mine", ["vectors"])[0]
    assert "letters, digits" in own.entry_problems("my data", {"kind": "vectors"})[0]


def test_check_entry_fills_the_defaults_and_lists_the_files_read():
    e = own.check_entry("t", {"kind": "triplets", "format": "triplets", "path": "t.csv",
                              "labels": "l.txt"})
    assert e["first_index"] == 0
    assert own.entry_files(e) == ["t.csv", "l.txt"]
    assert own.check_entry("e", {"kind": "similarity", "format": "edges", "path": "e"})[
        "directed"] is False
    assert own.check_entry("z", {"kind": "vectors", "format": "npz", "path": "z"})["array"] == "X"
    assert own.entry_files({"kind": "vectors", "format": "csv", "url": "u", "sha256": "a"}) == []


# --------------------------------------------------------------------------------------
# vectors


def test_csv_with_text_labels_and_names(tmp_path):
    path = write(tmp_path, "v.csv", "id,x,y,species\na,1,2.5,cat\nb, -3 ,4e1,dog\nc,0,0,cat\n")
    art = own.build_own("v", entry("vectors", "csv", path, labels="species", names="id"))
    np.testing.assert_array_equal(art["X"], [[1, 2.5], [-3, 40], [0, 0]])
    assert art["X"].dtype == np.float64
    np.testing.assert_array_equal(art["labels"], [0, 1, 0])
    assert art["labels"].dtype == np.int64
    assert art.meta["label_names"] == ["cat", "dog"]
    assert art.items["name"].tolist() == ["a", "b", "c"]
    assert art.items["label"].tolist() == ["cat", "dog", "cat"]
    assert art.meta["columns"] == ["x", "y"]


def test_tsv_with_integer_labels_keeps_them(tmp_path):
    path = write(tmp_path, "v.tsv", "a\tb\tclass\n1\t2\t7\n3\t4\t3\n")
    art = own.build_own("v", entry("vectors", "tsv", path, labels="class"))
    np.testing.assert_array_equal(art["X"], [[1, 2], [3, 4]])
    np.testing.assert_array_equal(art["labels"], [7, 3])
    assert "label_names" not in art.meta
    assert art.items["name"].tolist() == ["0", "1"]


def test_csv_without_labels_has_no_labels_array(tmp_path):
    path = write(tmp_path, "v.csv", "x,y\n1,2\n3,4\n\n")  # a blank line at the end is no row
    art = own.build_own("v", entry("vectors", "csv", path))
    assert set(art.arrays) == {"X"}
    assert art["X"].shape == (2, 2)


def test_npy_and_npz(tmp_path):
    X = np.arange(12, dtype=np.float32).reshape(4, 3)
    np.save(tmp_path / "x.npy", X)
    art = own.build_own("x", entry("vectors", "npy", tmp_path / "x.npy"))
    np.testing.assert_array_equal(art["X"], X)
    assert art["X"].dtype == np.float64
    np.savez(tmp_path / "x.npz", points=X, y=np.array(["b", "a", "b", "b"]))
    art = own.build_own("x", entry("vectors", "npz", tmp_path / "x.npz", array="points",
                                   labels="y"))
    np.testing.assert_array_equal(art["labels"], [1, 0, 1, 1])
    assert art.meta["label_names"] == ["a", "b"]
    assert art.items["label"].tolist() == ["b", "a", "b", "b"]


@pytest.mark.parametrize(
    "text, line, column, words",
    [
        ("x,y\n1,2\n3,nan\n", 3, 2, "not a finite number"),
        ("x,y\n1,2\ninf,4\n", 3, 1, "not a finite number"),
        ("x,y\n1,x\nz,4\n", 2, 2, "'x' is not a number"),  # the first in file order
        ("x,y\n1,2\n3,four\n", 3, 2, "'four' is not a number"),
        ("x,y\n1,\n3,4\n", 2, 2, "empty cell"),
        ("x,y\n1,2\n3\n", 3, 2, "ragged row"),
        ("x,y\n1,2\n3,4,5\n", 3, 3, "ragged row"),
        ("x,y,label\n1,2,a\n3,4,\n", 3, 3, "empty label"),
    ],
)
def test_a_bad_csv_names_file_line_and_column(tmp_path, text, line, column, words):
    path = write(tmp_path, "bad.csv", text)
    out = tmp_path / "out"
    labels = "label" if "label" in text else None
    e = entry("vectors", "csv", path, **({"labels": labels} if labels else {}))
    with pytest.raises(DatasetError) as info:
        own.build_own("bad", e, out=out)
    message = str(info.value)
    assert str(path) in message
    assert f"line {line}" in message and f"column {column}" in message, message
    assert words in message
    assert not out.exists()  # nothing written


def test_a_blank_line_between_rows_and_a_missing_label_column_are_named(tmp_path):
    path = write(tmp_path, "v.csv", "x,y\n1,2\n\n3,4\n")
    with pytest.raises(DatasetError, match=r"v\.csv, line 3: blank line"):
        own.build_own("v", entry("vectors", "csv", path))
    path = write(tmp_path, "w.csv", "x,y\n1,2\n")
    with pytest.raises(DatasetError, match=r"w\.csv, line 1: no column 'label'"):
        own.build_own("w", entry("vectors", "csv", path, labels="label"))


def test_a_bad_array_names_file_row_and_column(tmp_path):
    X = np.ones((3, 2))
    X[2, 1] = np.nan
    np.save(tmp_path / "x.npy", X)
    with pytest.raises(DatasetError, match=r"x\.npy: the array row 2, column 1 \(from 0\)"):
        own.build_own("x", entry("vectors", "npy", tmp_path / "x.npy"))
    np.save(tmp_path / "s.npy", np.array(["a", "b"]).reshape(1, 2))
    with pytest.raises(DatasetError, match=r"s\.npy: .*not numbers"):
        own.build_own("s", entry("vectors", "npy", tmp_path / "s.npy"))
    np.savez(tmp_path / "z.npz", X=np.ones((3, 2)), y=np.arange(2))
    with pytest.raises(DatasetError, match=r"z\.npz: labels array 'y' has shape \(2,\)"):
        own.build_own("z", entry("vectors", "npz", tmp_path / "z.npz", labels="y"))
    with pytest.raises(DatasetError, match=r"z\.npz: no array 'points'"):
        own.build_own("z", entry("vectors", "npz", tmp_path / "z.npz", array="points"))


# --------------------------------------------------------------------------------------
# similarity


def test_unweighted_edges_with_integer_ids_as_the_papers_networks(tmp_path):
    # ids 10, 2, 7, 30 (sorted numerically: 2, 7, 10, 30); 30 has only a self-loop; 7-10 is
    # listed in both directions (one edge), as SNAP's files do
    path = write(tmp_path, "g.edges", "# comment\n10 2\n2\t7\n7 10\n10 7  # again\n30 30\n")
    art = own.build_own("g", entry("similarity", "edges", path))
    C = np.array([[0, 1, 1], [1, 0, 1], [1, 1, 0]], dtype=float)  # 2, 7, 10
    expected = row_normalised_symmetric(sp.csr_matrix(C)).toarray()
    np.testing.assert_allclose(art["P"].toarray(), expected)
    np.testing.assert_allclose(art["P"].toarray(), C / 6)
    assert art.items["name"].tolist() == ["2", "7", "10"]
    assert art.items["degree"].tolist() == [2, 2, 2]
    counts = art.meta["counts"]
    assert counts["self_loops"] == 1 and counts["isolated_dropped"] == 1
    assert counts["edges"] == 4 and counts["lines"] == 5 and counts["n"] == 3


def test_weighted_edges_with_names_undirected_and_directed(tmp_path):
    path = write(tmp_path, "w.edges", "ann bob 2\nbob cy 1\nann cy 1\n")
    art = own.build_own("w", entry("similarity", "edges", path))
    W = np.array([[0, 2, 1], [2, 0, 1], [1, 1, 0]], dtype=float)  # ann, bob, cy
    R = W / W.sum(axis=1, keepdims=True)
    np.testing.assert_allclose(art["P"].toarray(), (R + R.T) / (R + R.T).sum())
    assert art.items["name"].tolist() == ["ann", "bob", "cy"]
    art = own.build_own("w", entry("similarity", "edges", path, directed=True))
    W = np.array([[0, 2, 1], [0, 0, 1], [0, 0, 0]], dtype=float)
    expected = row_normalised_symmetric(sp.csr_matrix(W)).toarray()
    np.testing.assert_allclose(art["P"].toarray(), expected)
    assert abs(art["P"].sum() - 1) < 1e-12


def test_tab_separated_edges_keep_names_with_spaces(tmp_path):
    path = write(tmp_path, "f.edges", "Ann Lee\tBob Roy\t2\nBob Roy\tCy\t1\n")
    art = own.build_own("f", entry("similarity", "edges", path, sep="tab"))
    assert art.items["name"].tolist() == ["Ann Lee", "Bob Roy", "Cy"]
    W = np.array([[0, 2, 0], [2, 0, 1], [0, 1, 0]], dtype=float)
    R = W / W.sum(axis=1, keepdims=True)
    np.testing.assert_allclose(art["P"].toarray(), (R + R.T) / (R + R.T).sum())
    # split at whitespace (the default), the same file has five fields on line 1: named
    with pytest.raises(own.DatasetError, match="f.edges, line 1: 5 fields"):
        own.build_own("f", entry("similarity", "edges", path))
    problems = own.entry_problems("f", entry("similarity", "edges", path, sep="comma"))
    assert any("sep: must be one of whitespace, tab, got 'comma'" in p for p in problems)


def test_a_square_matrix_text_and_npy(tmp_path):
    W = np.array([[5, 1, 3], [1, 0, 0], [2, 0, 0]], dtype=float)  # diagonal ignored
    path = write(tmp_path, "m.txt", "5 1 3\n1,0,0\n2\t0 0\n")
    art = own.build_own("m", entry("similarity", "matrix", path))
    off = W - np.diag(np.diag(W))
    np.testing.assert_allclose(art["P"].toarray(), row_normalised_symmetric(off).toarray())
    np.save(tmp_path / "m.npy", W)
    art2 = own.build_own("m", entry("similarity", "matrix", tmp_path / "m.npy"))
    np.testing.assert_allclose(art2["P"].toarray(), art["P"].toarray())
    assert art.items["name"].tolist() == ["0", "1", "2"]


@pytest.mark.parametrize(
    "name, text, line, column, words",
    [
        ("e.edges", "a b 1\nb c\n", 2, 3, "ragged row"),
        ("e.edges", "a b\nb c 1\n", 2, 3, "ragged row"),
        ("e.edges", "a b 1\nb c heavy\n", 2, 3, "'heavy' is not a number"),
        ("e.edges", "a b nan\n", 1, 3, "not a finite number"),
        ("e.edges", "a b inf\n", 1, 3, "not a finite number"),
        ("e.edges", "a b -1\n", 1, 3, "not positive"),
        ("e.edges", "a b 1\nb a 2\n", 2, 3, "weight 2.0 here and 1.0 on line 1"),
        ("m.txt", "0 1\n1 0 1\n", 2, 3, "ragged row"),
        ("m.txt", "0 1\n1 x\n", 2, 2, "'x' is not a number"),
        ("m.txt", "0 nan\n1 0\n", 1, 2, "not a finite number"),
        ("m.txt", "0 -1\n1 0\n", 1, 2, "negative"),
    ],
)
def test_a_bad_similarity_file_names_file_line_and_column(tmp_path, name, text, line, column,
                                                          words):
    path = write(tmp_path, name, text)
    fmt = "edges" if name.endswith(".edges") else "matrix"
    assert_bad_file(tmp_path, entry("similarity", fmt, path), path, line, column, words)


def test_a_non_square_or_unlinked_matrix_is_an_error(tmp_path):
    path = write(tmp_path, "m.txt", "0 1 1\n1 0 1\n")
    with pytest.raises(DatasetError, match=r"m\.txt, line 1, column 3: not square, 2 rows of 3"):
        own.build_own("m", entry("similarity", "matrix", path))
    path = write(tmp_path, "b.txt", "0 1\n\n1 0\n")
    with pytest.raises(DatasetError, match=r"b\.txt, line 2: blank line"):
        own.build_own("b", entry("similarity", "matrix", path))
    path = write(tmp_path, "z.txt", "0 1 0\n1 0 0\n0 0 4\n")
    with pytest.raises(DatasetError, match=r"z\.txt, line 3: item 2 .* no weight"):
        own.build_own("z", entry("similarity", "matrix", path))
    np.save(tmp_path / "r.npy", np.ones((2, 3)))
    with pytest.raises(DatasetError, match=r"r\.npy: row 0, column 2 \(from 0\): not square"):
        own.build_own("r", entry("similarity", "matrix", tmp_path / "r.npy"))
    path = write(tmp_path, "t.txt", "0 1\n1 0\n1 1\n")
    with pytest.raises(DatasetError, match=r"t\.txt, line 3, column 1: not square, 3 rows of 2"):
        own.build_own("t", entry("similarity", "matrix", path))


# --------------------------------------------------------------------------------------
# triplets


def test_triplets_with_a_header_and_a_labels_file(tmp_path):
    path = write(tmp_path, "t.csv", "anchor,near,far\n0,1,2\n3, 2 ,0\n")
    labels = write(tmp_path, "l.txt", "rock\npop\nrock\njazz\nrock\n")
    art = own.build_own("t", entry("triplets", "triplets", path, labels=str(labels)))
    np.testing.assert_array_equal(art["triplets"], [[0, 1, 2], [3, 2, 0]])
    assert art["triplets"].dtype == np.int64
    assert art.meta["n"] == 5  # the labels file lists item 4, which no triplet names
    np.testing.assert_array_equal(art["labels"], [2, 1, 2, 0, 2])
    assert art.meta["label_names"] == ["jazz", "pop", "rock"]
    assert art.items["name"].tolist() == ["0", "1", "2", "3", "4"]
    assert art.meta["columns"] == ["anchor", "near", "far"]
    assert art.meta["raw"]["labels"]["sha256"] == hashlib.sha256(labels.read_bytes()).hexdigest()


def test_triplets_from_one_without_labels(tmp_path):
    path = write(tmp_path, "t.csv", "1,2,3\n4,3,1\n")
    art = own.build_own("t", entry("triplets", "triplets", path, first_index=1))
    np.testing.assert_array_equal(art["triplets"], [[0, 1, 2], [3, 2, 0]])
    assert art.meta["n"] == 4 and "labels" not in art.arrays
    assert art.items["name"].tolist() == ["1", "2", "3", "4"]
    art = own.build_own("t", entry("triplets", "triplets", path, first_index=1, n=6))
    assert art.meta["n"] == 6 and len(art.items) == 6


@pytest.mark.parametrize(
    "text, options, line, column, words",
    [
        ("0,1,2\n0,1,5\n", {"n": 5}, 2, 3, "index 5 is out of range [0, 4]"),
        ("0,1,2\n0,-1,2\n", {}, 2, 2, "index -1 is out of range"),
        ("1,2,3\n0,2,3\n", {"first_index": 1}, 2, 1, "index 0 is out of range"),
        ("0,1,2\n0,x,2\n", {}, 2, 2, "'x' is not a number"),
        ("0,1,2\n0,1.5,2\n", {}, 2, 2, "not an integer index"),
        ("0,1,2\n0,nan,2\n", {}, 2, 2, "not a finite number"),
        ("0,1,2\n0,1\n", {}, 2, 3, "ragged row"),
        ("i,j,l\n0,1,2\n3,1,2,4\n", {}, 3, 4, "ragged row"),
    ],
)
def test_a_bad_triplets_file_names_file_line_and_column(tmp_path, text, options, line, column,
                                                        words):
    path = write(tmp_path, "t.csv", text)
    e = entry("triplets", "triplets", path, **options)
    assert_bad_file(tmp_path, e, path, line, column, words)


def test_a_triplet_index_beyond_the_labels_and_a_repeated_index_are_errors(tmp_path):
    path = write(tmp_path, "t.csv", "0,1,2\n0,1,3\n")
    labels = write(tmp_path, "l.txt", "a\nb\nc\n")
    with pytest.raises(DatasetError, match=r"t\.csv, line 2, column 3: index 3 is out of range "
                                           r"\[0, 2\]"):
        own.build_own("t", entry("triplets", "triplets", path, labels=str(labels)))
    with pytest.raises(DatasetError, match=r"l\.txt: 3 labels .* n = 4"):
        own.build_own("t", entry("triplets", "triplets", path, labels=str(labels), n=4))
    path = write(tmp_path, "r.csv", "0,1,2\n2,1,2\n")
    with pytest.raises(DatasetError, match=r"r\.csv, line 2: the triplet .* repeats an index"):
        own.build_own("r", entry("triplets", "triplets", path))
    labels = write(tmp_path, "e.txt", "a\n\nc\n")
    with pytest.raises(DatasetError, match=r"e\.txt, line 2, column 1: empty label"):
        own.build_own("t", entry("triplets", "triplets", path, labels=str(labels)))


# --------------------------------------------------------------------------------------
# large files: pandas' parser first, the cell-by-cell reader only to name a problem


def test_a_regular_file_is_read_without_the_cell_by_cell_reader(tmp_path, monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("the cell-by-cell reader ran on a regular file")

    for reader in (own_vectors, own_triplets, own_cooccurrence):
        monkeypatch.setattr(reader, "read_delimited", refuse)
    path = write(tmp_path, "v.csv", "id,x,y,c\na,1,2.5,cat\nb,-3,40,dog\n")
    art = own.build_own("v", entry("vectors", "csv", path, labels="c", names="id"))
    np.testing.assert_array_equal(art["X"], [[1, 2.5], [-3, 40]])
    assert art.items["name"].tolist() == ["a", "b"] and art.meta["label_names"] == ["cat", "dog"]
    path = write(tmp_path, "t.csv", "i,j,l\n0,1,2\n3,2,0\n")
    art = own.build_own("t", entry("triplets", "triplets", path))
    np.testing.assert_array_equal(art["triplets"], [[0, 1, 2], [3, 2, 0]])
    path = write(tmp_path, "c.csv", "time,row,column,count\n1,a,x,2\n2,b,y,3\n")
    art = own.build_own("c", entry("cooccurrence", "csv", path))
    assert [c.toarray().tolist() for c in art["counts"]] == [[[2, 0], [0, 0]], [[0, 0], [0, 3]]]
    path = write(tmp_path, "bad.csv", "x,y\n1,2\n3,four\n")
    with pytest.raises(AssertionError, match="cell-by-cell"):
        own.build_own("b", entry("vectors", "csv", path))


@pytest.mark.parametrize(
    "fmt, text, options",
    [
        ("csv", "n,x,y,c\np,1,2,7\nq,3,4.5,8\nr,-1e-3,0,7\n", {"labels": "c", "names": "n"}),
        ("tsv", "x\ty\tc\n1\t2\tb\n3\t4\ta\n", {"labels": "c"}),
        ("triplets", "1,2,3\n3,1,2\n", {"first_index": 1}),
        ("matrix", "0 1 2\n1 0 0.5\n2 0.5 0\n", {}),
        ("matrix", "0,1,2\n1,0,0.5\n2,0.5,0\n", {}),
    ],
)
def test_both_readers_give_the_same_artifact(tmp_path, fmt, text, options):
    kind = {"triplets": "triplets", "matrix": "similarity"}.get(fmt, "vectors")
    fast = own.build_own("f", entry(kind, fmt, write(tmp_path, "f", text), **options))
    # blank lines at the end send the file to the cell-by-cell reader, which ignores them
    slow = own.build_own("s", entry(kind, fmt, write(tmp_path, "s", text + "\n\n"), **options))
    assert fast.arrays.keys() == slow.arrays.keys()
    for key in fast.arrays:
        a, b = (x.toarray() if sp.issparse(x) else x for x in (fast[key], slow[key]))
        np.testing.assert_array_equal(a, b)
        assert a.dtype == b.dtype
    assert fast.items.equals(slow.items)
    assert {k: v for k, v in fast.meta.items() if k not in ("raw", "entry")} == {
        k: v for k, v in slow.meta.items() if k not in ("raw", "entry")}


# --------------------------------------------------------------------------------------
# sha256, the written artifact, the command line


def test_the_sha256_is_recorded_and_a_wrong_one_stops_the_build(tmp_path):
    path = write(tmp_path, "v.csv", "x,y\n1,2\n3,4\n")
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    art = own.build_own("v", entry("vectors", "csv", path, sha256=digest.upper()))
    assert art.meta["raw"]["data"]["sha256"] == digest
    assert art.meta["raw"]["data"]["bytes"] == path.stat().st_size
    out = tmp_path / "out"
    with pytest.raises(ChecksumError, match=re.escape(str(path))) as info:
        own.build_own("v", entry("vectors", "csv", path, sha256="0" * 64), out=out)
    assert digest in str(info.value)
    assert not out.exists()


def test_the_written_artifact_reads_back_like_a_registry_artifact(tmp_path):
    path = write(tmp_path, "v.csv", "x,y,c\n1,2,a\n3,4,b\n5,7,a\n")
    out = tmp_path / "art"
    own.build_own("v", entry("vectors", "csv", path, labels="c", description="three"), out=out)
    assert sorted(p.name for p in out.iterdir()) == sorted(artifacts.FILES)
    back = artifacts.load(out)
    assert back.kind == "vectors"
    np.testing.assert_array_equal(back["X"], [[1, 2], [3, 4], [5, 7]])
    np.testing.assert_array_equal(back["labels"], [0, 1, 0])
    assert back.items["label"].tolist() == ["a", "b", "a"]
    meta = json.loads((out / "meta.json").read_text())
    assert meta["builder"] == "own.csv" and meta["description"] == "three"
    assert meta["summary"] == {"kind": "vectors", "n": 3, "dims": 2, "classes": 2}
    assert meta["entry"]["labels"] == "c"


def test_a_failed_rebuild_leaves_the_finished_artifact_untouched(tmp_path):
    path = write(tmp_path, "v.csv", "x,y\n1,2\n3,4\n")
    out = tmp_path / "art"
    own.build_own("v", entry("vectors", "csv", path), out=out)
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    write(tmp_path, "v.csv", "x,y\n1,2\n3,oops\n")
    with pytest.raises(DatasetError):
        own.build_own("v", entry("vectors", "csv", path), out=out)
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before


def test_the_cli_builds_from_flags_or_json_and_reports_a_bad_file_in_one_line(tmp_path, capsys):
    path = write(tmp_path, "g.edges", "a b\nb c\n")
    out = tmp_path / "g"
    argv = ["build-own-dataset", "--name", "g", "--kind", "similarity", "--format", "edges",
            "--path", str(path), "--out", str(out)]
    assert cli.main(argv) == 0
    assert artifacts.load(out).n == 3
    raw = write(tmp_path, "other.edges", "a b\n")
    js = json.dumps({"kind": "similarity", "format": "edges", "path": "nowhere.edges"})
    argv = ["build-own-dataset", "--name", "h", "--entry", js, "--raw", str(raw),
            "--out", str(tmp_path / "h")]
    assert cli.main(argv) == 0
    meta = json.loads((tmp_path / "h" / "meta.json").read_text())
    assert meta["raw"]["data"]["path"] == str(raw)
    bad = write(tmp_path, "bad.edges", "a b 1\nb c x\n")
    argv = ["build-own-dataset", "--name", "b", "--entry", js, "--raw", str(bad),
            "--out", str(tmp_path / "b")]
    assert cli.main(argv) == 1
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert err.startswith("embedlab build-own-dataset: error: ")
    assert f"{bad}, line 2, column 3" in err


def test_fetch_entry_verifies_a_url_entry(tmp_path):
    cached = write(tmp_path, "cache.csv", "x\n1\n")
    digest = hashlib.sha256(cached.read_bytes()).hexdigest()
    e = {"kind": "vectors", "format": "csv", "url": "https://example.invalid/x.csv",
         "sha256": digest}
    assert own.fetch_entry("u", e, cached, allow_download=False) == cached
    with pytest.raises(own.EntryError, match="has a path"):
        own.fetch_entry("p", {"kind": "vectors", "format": "csv", "path": "x"}, cached)


# --------------------------------------------------------------------------------------
# papers


def test_papers_for_each_kind():
    assert [p.paper for p in own_papers.papers_for_kind("vectors")] == ["snest", "ee", "diffeomap"]
    assert [p.paper for p in own_papers.papers_for_kind("similarity")] == ["snest"]
    assert [p.paper for p in own_papers.papers_for_kind("triplets")] == ["tste"]
    assert [p.paper for p in own_papers.papers_for_kind("cooccurrence")] == ["dcode"]
    with pytest.raises(ValueError, match="unknown kind"):
        own_papers.papers_for_kind("graph")


def test_paper_problems():
    problems = own_papers.paper_problems
    assert problems("tste", "triplets", n=60, has_labels=True, n_triplets=300) == []
    assert "needs labels" in problems("tste", "triplets", has_labels=False)[0]
    assert "takes vectors" in problems("ee", "similarity")[0]
    assert problems("ee", "vectors", n=60, has_labels=False) == []
    assert "at least 42 points" in problems("ee", "vectors", n=41)[0]
    assert problems("ee", "vectors", n=14, perplexity=12) == []
    assert "3 dimensions" in problems("diffeomap", "vectors", dims=2)[0]
    assert "20 triplets" in problems("tste", "triplets", n_triplets=15, n_folds=20)[0]
    assert "at least 30 points" in problems("tste", "triplets", n=20)[0]
    assert problems("tste", "triplets", n=20, max_dim=10) == []
    assert problems("snest", "similarity", n=34, has_labels=False) == []
    assert problems("snest", "vectors", n=60, perplexity=30) == []
    assert "at least 32 points" in problems("snest", "vectors", n=20, perplexity=30)[0]
    assert "takes similarity or vectors" in problems("snest", "triplets")[0]
    assert problems("dcode", "cooccurrence", n=3, words=3, periods=5) == []
    assert "at least 3 row items" in problems("dcode", "cooccurrence", n=2)[0]
    assert "at least 3 column items" in problems("dcode", "cooccurrence", words=2)[0]
    assert "at least 5 periods" in problems("dcode", "cooccurrence", periods=4)[0]
    assert problems("dcode", "cooccurrence", periods=4, val_steps=2) == []
    assert "at least 6 periods" in problems("dcode", "cooccurrence", periods=5, val_steps=4)[0]


# --------------------------------------------------------------------------------------
# the example config


def test_the_example_entries_build():
    own_datasets = yaml.safe_load(EXAMPLES.read_text())["own_datasets"]
    assert set(own_datasets) == {"digits60", "digits60_triplets", "karate", "topic_swap"}
    built = {}
    for name, item in own_datasets.items():
        assert own.entry_problems(name, item) == []
        resolved = {**item, "path": str(REPO / item["path"])}
        if item["format"] == "triplets":
            resolved["labels"] = str(REPO / item["labels"])
        built[name] = own.build_own(name, resolved)
    assert built["digits60"]["X"].shape == (60, 64)
    assert np.bincount(built["digits60"]["labels"]).tolist() == [6] * 10
    assert built["digits60_triplets"].meta["n"] == 60
    np.testing.assert_array_equal(built["digits60_triplets"]["labels"],
                                  built["digits60"]["labels"])
    karate = built["karate"]
    assert karate.n == 34 and karate["P"].nnz == 2 * 78
    swap = built["topic_swap"]
    assert swap.n == 20 and swap.summary()["words"] == 20
    assert swap.meta["step_names"] == [str(year) for year in range(2015, 2025)]


def test_the_example_table_is_the_one_its_generator_writes(tmp_path):
    """config/examples/data/topic_swap.csv is reproducible: the generator with its defaults
    writes the same bytes."""
    shipped = REPO / yaml.safe_load(EXAMPLES.read_text())["own_datasets"]["topic_swap"]["path"]
    written = topic_swap.write_table(tmp_path / "swap.csv")
    assert written.read_bytes() == shipped.read_bytes()


def test_count_items_glances_at_a_local_file(tmp_path):
    table = tmp_path / "v.csv"
    table.write_text("a,b,label\n1,2,x\n\n3,4,y\n5,6,x\n")
    assert own.count_items(own.check_entry("v", {"kind": "vectors", "format": "csv",
                                                 "path": str(table)})) == 3  # fmt: skip
    arrays = tmp_path / "v.npz"
    np.savez(arrays, X=np.zeros((7, 2)))
    npz = {"kind": "vectors", "format": "npz", "path": str(arrays)}
    assert own.count_items(own.check_entry("v", npz)) == 7
    np.save(tmp_path / "v.npy", np.zeros((5, 3)))
    npy = {"kind": "vectors", "format": "npy", "path": str(tmp_path / "v.npy")}
    assert own.count_items(own.check_entry("v", npy)) == 5
    edges = {"kind": "similarity", "format": "edges", "path": str(table)}
    assert own.count_items(own.check_entry("e", edges)) is None  # nodes need a parse
    url = {"kind": "vectors", "format": "csv", "url": "https://example.invalid/v.csv",
           "sha256": "0" * 64}  # fmt: skip
    assert own.count_items(own.check_entry("u", url)) is None
