"""Own co-occurrence data (datasets/own_cooccurrence.py): a long table, one line per (period,
row item, column item) with a count, read into D-CODE's count matrices.

The tiny file below is worked out by hand; every bad file must fail with a message naming the
file, the line and the column, and leave nothing in the output folder.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from embedlab import artifacts
from embedlab.datasets import DatasetError, own, own_cooccurrence

# periods 2019 (written twice as "2019" and "2019.0"), 2020, 2021; the two 2021 alice-apple
# lines add up; the 2020 alice-pear line (count 0) makes pear known to alice's row
TINY = """time,row,column,count
2021,alice,apple,2
2020,bob,pear,1
2020,alice,apple,1
2021,alice,apple,3
2020,alice,pear,0
2019.0,carol,plum,4
2019,bob,apple,1
"""
# rows alice, bob, carol; columns apple, pear, plum (sorted names)
TINY_COUNTS = [
    [[0, 0, 0], [1, 0, 0], [0, 0, 4]],  # 2019
    [[1, 0, 0], [0, 1, 0], [0, 0, 0]],  # 2020
    [[5, 0, 0], [0, 0, 0], [0, 0, 0]],  # 2021
]


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def entry(path: Path, **options) -> dict:
    return {"kind": "cooccurrence", "format": "csv", "path": str(path), **options}


def test_the_tiny_table_gives_the_hand_computed_counts(tmp_path):
    art = own.build_own("tiny", entry(write(tmp_path, "tiny.csv", TINY)))
    assert art.kind == "cooccurrence"
    assert [c.toarray().tolist() for c in art["counts"]] == TINY_COUNTS
    assert all(c.dtype == np.int64 for c in art["counts"])
    assert art.meta["step_names"] == ["2019", "2020", "2021"]
    assert art.meta["periods"] == "number"
    assert art.meta["counts"] == {"time_steps": 3, "lines": 7, "repeated_lines": 1, "tokens": 12}
    assert art.meta["builder"] == "own.cooccurrence.csv" and art.meta["own_dataset"]
    authors = art.items[art.items["role"] == "author"]
    words = art.items[art.items["role"] == "word"]
    assert authors["name"].tolist() == ["alice", "bob", "carol"]
    assert authors["count"].tolist() == [6, 2, 4]
    assert words["name"].tolist() == ["apple", "pear", "plum"]
    assert words["count"].tolist() == [7, 1, 4]
    assert authors["index"].tolist() == words["index"].tolist() == [0, 1, 2]
    back = artifacts.load(artifacts.save(art, tmp_path / "out", "tiny"))
    assert [c.toarray().tolist() for c in back["counts"]] == TINY_COUNTS
    assert back.summary() == {"kind": "cooccurrence", "n": 3, "time_steps": 3, "words": 3,
                              "nnz": 5}  # fmt: skip


def test_columns_are_renamed_and_periods_may_be_dates(tmp_path):
    text = (
        "year,who,what,n,note\n"
        "2020-03,x,a,1,hi\n"
        " 2020-01-15 , y , b ,2,\n"
        "2019-12,x,b,3,z\n"
        "2020-03-01T00:00Z,y,a,4,\n"
    )
    path = write(tmp_path, "dated.csv", text)
    columns = {"time": "year", "row": "who", "column": "what", "count": "n"}
    art = own.build_own("d", entry(path, columns=columns))
    assert art.meta["periods"] == "date"
    # 2020-03 and 2020-03-01T00:00Z are one instant: one period, labelled by the first spelling
    assert art.meta["step_names"] == ["2019-12", "2020-01-15", "2020-03"]
    assert [c.toarray().tolist() for c in art["counts"]] == [
        [[0, 3], [0, 0]],
        [[0, 0], [0, 2]],
        [[1, 0], [4, 0]],
    ]
    assert art.meta["columns"] == columns


def test_periods_sort_as_numbers_not_as_text(tmp_path):
    path = write(tmp_path, "n.csv", "time,row,column,count\n10,a,x,1\n9,a,x,2\n-1.5,a,x,3\n")
    art = own.build_own("n", entry(path))
    assert art.meta["step_names"] == ["-1.5", "9", "10"]
    assert [int(c.sum()) for c in art["counts"]] == [3, 2, 1]


def assert_bad_file(tmp_path: Path, text: str, where: str, words: str, **options) -> None:
    """Building a table of ``text`` fails with a message that starts with the file and
    ``where`` (line and column) and holds ``words``, and writes nothing."""
    path = write(tmp_path, "bad.csv", text)
    out = tmp_path / "out"
    with pytest.raises(DatasetError) as info:
        own.build_own("bad", entry(path, **options), out=out)
    message = str(info.value)
    assert message.startswith(f"{path}{where}"), message
    assert words in message, message
    assert not out.exists() or not any(out.iterdir())


HEADER = "time,row,column,count\n"


@pytest.mark.parametrize(
    ("text", "where", "words"),
    [
        (HEADER + "1,a,x,2\n2,a,y,-3\n", ", line 3, column 4 ('count')", "count -3 is negative"),
        (HEADER + "1,a,x,2.5\n", ", line 2, column 4 ('count')", "count 2.5 is not an integer"),
        (HEADER + "1,a,x,2\n1,b,x,many\n", ", line 3, column 4 ('count')",
         "'many' is not a number"),
        (HEADER + "1,a,x,\n", ", line 2, column 4 ('count')", "empty cell"),
        ("time,row,col,count\n1,a,x,2\n", ", line 1:", "no column 'column' (role column)"),
        ("time,row,count\n1,a,2\n", ", line 1:", "no column 'column' (role column)"),
        (HEADER + "1,a,x,2\nspring,a,x,1\n", ", line 3, column 1 ('time')",
         "period 'spring' is neither a number nor an ISO 8601 date"),
        (HEADER + "2020-01,a,x,2\n2020-13,a,x,1\n", ", line 3, column 1 ('time')",
         "period '2020-13' is neither"),
        (HEADER + "2020-01,a,x,2\n3,a,x,1\n", ", line 3, column 1 ('time')",
         "period '3' is a number, but line 2 has the date '2020-01'"),
        (HEADER + "1,,x,2\n", ", line 2, column 2 ('row')", "empty cell"),
        (HEADER + "1,a,x,2\n1,a,x\n", ", line 3, column 4", "a ragged row"),
        (HEADER + "1,a,x,2\n\n1,b,x,1\n", ", line 3", "blank line"),
        ("", ":", "the file is empty"),
        ("\n\n", ":", "the file is empty"),
        (HEADER, ":", "a header line and no rows"),
        ("time,row,column,row,count\n1,a,x,b,1\n", ", line 1:", "two columns are named 'row'"),
    ],
)
def test_a_bad_table_names_file_line_and_column(tmp_path, text, where, words):
    assert_bad_file(tmp_path, text, where, words)


def test_a_renamed_column_missing_from_the_header_is_named(tmp_path):
    assert_bad_file(tmp_path, HEADER + "1,a,x,1\n", ", line 1:", "no column 'year' (role time)",
                    columns={"time": "year"})  # fmt: skip


def test_a_bad_count_is_named_on_the_fast_path_too(tmp_path):
    """Regular numeric cells are read by pandas: the line of a bad count is still exact."""
    rows = "".join(f"{t},r{t % 7},c{t % 5},{t}\n" for t in range(200))
    assert_bad_file(tmp_path, HEADER + rows + "3,a,x,-1\n", ", line 202, column 4 ('count')",
                    "is negative")  # fmt: skip
    assert_bad_file(tmp_path, HEADER + rows + "3,a,x,0.5\n", ", line 202, column 4 ('count')",
                    "is not an integer")  # fmt: skip


def test_glance_counts_rows_columns_and_periods(tmp_path):
    path = write(tmp_path, "tiny.csv", TINY)
    checked = own.check_entry("t", entry(path))
    assert own.entry_facts(checked) == {"n": 3, "words": 3, "periods": 3}
    assert own.count_items(checked) == 3
    bad = write(tmp_path, "bad.csv", HEADER + "1,a,x,1\nspring,a,x,1\n")
    assert own.entry_facts(own.check_entry("b", entry(bad))) == {}  # the build says why
    url = {"kind": "cooccurrence", "format": "csv", "url": "https://example.invalid/c.csv",
           "sha256": "0" * 64}  # fmt: skip
    assert own.entry_facts(own.check_entry("u", url)) == {}
    missing = own.check_entry("m", entry(tmp_path / "nowhere.csv"))
    assert own.entry_facts(missing) == {} and own.count_items(missing) is None


def test_columns_problems():
    assert own_cooccurrence.columns_problems("c", {"time": "year", "count": "n"}) == []
    assert "not a role" in own_cooccurrence.columns_problems("c", {"author": "a"})[0]
    assert "non-empty" in own_cooccurrence.columns_problems("c", {"row": " "})[0]
    assert re.search("same column", own_cooccurrence.columns_problems("c", {"row": "time"})[0])
