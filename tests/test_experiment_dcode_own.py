"""D-CODE on own co-occurrence data (experiments/dcode/own.py): the documents of a long table,
the pool and the subset sizes scaled from the paper's, Table 2's protocol on a table whose two
author groups swap topics halfway (D-CODE must rank the true authors better than chance, both
computed on the same subsets), Fig. 4's map of it, and the workflow's steps as its rules run
them."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from embedlab import artifacts, runs, steps
from embedlab.datasets import own, topic_swap
from embedlab.experiments.dcode import own as dcode_own
from embedlab.experiments.dcode.settings import RankSettings

# (period, row, column, count); rows alice, bob, carol; columns apple, pear, plum
TINY = """time,row,column,count
2019,bob,apple,1
2019,carol,plum,4
2020,alice,apple,1
2020,alice,pear,0
2020,bob,pear,1
2021,alice,apple,5
"""
SWAP = {"n_periods": 8, "group_size": 4, "topic_words": 6, "shared_words": 3, "seed": 1}


def build(tmp_path: Path, name: str, text: str | None = None, **columns) -> artifacts.Artifact:
    """The own dataset of ``text`` (default: the topic swap table :data:`SWAP`)."""
    path = tmp_path / f"{name}.csv"
    if text is None:
        topic_swap.write_table(path, **SWAP)
        columns = topic_swap.COLUMNS
    else:
        path.write_text(text)
    entry = {"kind": "cooccurrence", "format": "csv", "path": str(path)}
    return own.build_own(name, {**entry, "columns": columns} if columns else entry)


def rank_settings(**changes) -> dict:
    """dcode.rank settings for the swap table: its 8 rows and 15 columns are the pool, so
    a paper size equal to it scales to itself; fit_step is the paper's (replaced)."""
    settings = {
        "pool": [8, 15],
        "subsets": 3,
        "seed": 0,
        "fit_step": 11,
        "observations": ["counts"],
        "prediction": "predictive",
        "paper_words": "set",
        "methods": ["dcode", "dcode_mle"],
        "references": ["empirical", "chance"],
        "params": {},
        "grid": {"transition_var": [0.1, 1.0], "initial_var": [1.0, 10.0]},
        "val_subsets": 1,
        "val_steps": 2,
        "grid_extensions": 0,
    }
    return {**settings, **changes}


def test_each_period_and_row_with_counts_is_one_document(tmp_path):
    art = dcode_own.with_row_documents(build(tmp_path, "tiny", TINY))
    np.testing.assert_array_equal(art["paper_step"], [0, 0, 1, 1, 2])
    authors = art["paper_authors"].toarray()
    assert authors.sum(axis=1).tolist() == [1] * 5  # one author a document
    assert authors.argmax(axis=1).tolist() == [1, 2, 0, 1, 0]  # bob, carol, alice, bob, alice
    assert art["paper_words"].toarray().tolist() == [
        [1, 0, 0], [0, 0, 4], [1, 0, 0], [0, 1, 0], [5, 0, 0],
    ]  # fmt: skip
    assert dcode_own.with_row_documents(art) is art  # papers already there


def test_the_pool_counts_rows_with_documents_and_the_columns_they_use(tmp_path):
    art = dcode_own.with_row_documents(build(tmp_path, "tiny", TINY))
    assert dcode_own.own_pool(art, (100, 500), fit_step=2) == (3, 3)
    with pytest.raises(ValueError, match="2 row items have counts up to the fitted period 0"):
        dcode_own.own_pool(art, (100, 500), fit_step=0)  # bob and carol only
    swap = dcode_own.with_row_documents(build(tmp_path, "swap"))
    assert dcode_own.own_pool(swap, (100, 500), fit_step=6) == (8, 15)
    assert dcode_own.own_pool(swap, (5, 4), fit_step=6) == (5, 4)


def test_subset_sizes_keep_the_papers_fractions_of_the_pool():
    assert dcode_own.scaled_size((20, 188), (100, 500), (100, 500)) == (20, 188)
    assert dcode_own.scaled_size((20, 188), (100, 500), (20, 20)) == (4, 8)  # 7.52 -> 8
    assert dcode_own.scaled_size((40, 348), (100, 500), (30, 60)) == (12, 42)
    assert dcode_own.scaled_size((20, 188), (100, 500), (3, 3)) == (2, 2)  # at least 2
    assert dcode_own.scaled_size((100, 500), (100, 500), (5, 5)) == (4, 4)  # subsets differ


@pytest.fixture(scope="module")
def swap_result(tmp_path_factory):
    folder = tmp_path_factory.mktemp("swap")
    settings = RankSettings.from_mapping(rank_settings(), "test")
    return dcode_own.rank_own(build(folder, "swap"), (6, 12), "counts", settings, "swap")


def test_dcode_ranks_the_swapped_groups_better_than_chance(swap_result):
    """Before 2019 the X authors write topic A and the Y authors topic B, from 2019 the other
    way round. D-CODE, filtering the periods in order, places each group by its last topic and
    ranks a 2022 document's author among about half the subset; pooled counts (Empirical NB)
    keep each group on the topic it held longest (4 periods of 7), the wrong one."""
    rows = pd.DataFrame(swap_result["rows"])
    assert set(rows["status"]) == {"ok"} and (rows["pairs"] > 0).all()
    assert (rows["candidates"] == 6).all()
    mean = rows.groupby("method")["median_rank"].mean()
    assert mean["chance"] == pytest.approx((6 + 1) / 2)  # every candidate tied
    assert mean["dcode"] < mean["chance"] - 1.0, mean.to_dict()
    assert mean["dcode_mle"] < mean["chance"] - 1.0, mean.to_dict()
    assert mean["empirical"] > mean["chance"], mean.to_dict()


def test_the_result_names_the_dataset_its_periods_and_sizes(swap_result):
    assert swap_result["dataset"] == "swap"
    assert swap_result["fit_step"] == 6
    assert swap_result["periods"] == {"count": 8, "first": "2015", "fitted": "2021",
                                      "ranked": "2022"}  # fmt: skip
    assert swap_result["pool"] == [8, 15]
    assert swap_result["paper_size"] == [6, 12] and swap_result["size"] == [6, 12]
    assert set(swap_result["chosen"]) == {"dynamic", "static"}


def test_too_few_periods_is_an_error_naming_the_need(tmp_path):
    settings = RankSettings.from_mapping(rank_settings(), "test")
    with pytest.raises(ValueError, match=r"3 periods; the rank protocol needs 4"):
        dcode_own.rank_own(build(tmp_path, "tiny", TINY), (2, 2), "counts", settings, "tiny")


def corpus_files(folder: Path) -> list[str]:
    return [str(folder / name) for name in artifacts.FILES]


def test_the_steps_give_the_table_rows_and_the_map(tmp_path):
    """dcode.own_rank, dcode.table and dcode.own_map as the rules call them: the own rows
    follow the paper corpus's without a paper value, a left-out dataset is named with its
    reason, and the map puts each group nearer the topic it writes in the last period."""
    swap = build(tmp_path, "swap")
    own_dir = artifacts.save(swap, tmp_path / "own", "swap")
    # the paper corpus's result: the same table as papers, through the NIPS step
    paper_dir = artifacts.save(dcode_own.with_row_documents(swap), tmp_path / "paper", "p")
    settings = rank_settings(methods=["dcode"], references=["chance"], subsets=2)
    paper_result, own_result = tmp_path / "paper.json", tmp_path / "own.json"
    steps.call("dcode.rank", {**settings, "fit_step": 6, "pool": [8, 15]},
               {"corpus": corpus_files(paper_dir), "result": str(paper_result),
                "observation": "counts", "a": "6", "w": "12"})  # fmt: skip
    steps.call("dcode.own_rank", settings,
               {"corpus": corpus_files(own_dir), "result": str(own_result), "dataset": "swap",
                "observation": "counts", "a": "6", "w": "12"})  # fmt: skip
    paper_values = tmp_path / "paper.csv"
    paper_values.write_text("n_authors,n_words,method,median_rank\n6,12,dcode,2.0\n")
    out = {k: str(tmp_path / f"rank.{k}") for k in ("csv", "md", "md_long")}
    left_out = {"short": "dcode needs at least 4 periods, the dataset has 3"}
    steps.call("dcode.table", {"left_out": left_out},
               {"results": [str(paper_result)], "own_results": [str(own_result)],
                "paper": str(paper_values), "csv": out["csv"], "md": out["md"],
                "md_long": out["md_long"]})  # fmt: skip
    table = pd.read_csv(out["csv"])
    assert table["dataset"].tolist() == ["nips12"] * 2 + ["swap"] * 2
    mine = table[table["dataset"] == "swap"]
    assert mine["paper"].isna().all() and set(mine["verdict"]) == {"no paper value"}
    assert mine["subset"].tolist() == ["6a,12w"] * 2
    assert table.loc[table["dataset"] == "nips12", "paper"].notna().sum() == 1
    md = Path(out["md"]).read_text()
    assert "## Your own datasets" in md and "### swap" in md
    assert "8 periods: embedded 2015 to 2021, the documents of 2022 ranked" in md
    assert "short (dcode needs at least 4 periods, the dataset has 3)" in md

    figure = {"params": {"transition_var": 1.0, "initial_var": 10.0}, "n_authors": 40,
              "n_words": 428, "seed": 0}  # fmt: skip
    files = (str(tmp_path / f"map.{ext}") for ext in ("png", "pdf", "csv", "npz"))
    png, pdf, coordinates, drawn = files
    steps.call("dcode.own_map", figure,
               {"corpus": corpus_files(own_dir), "drawn": drawn, "coordinates": coordinates,
                "dataset": "swap"})  # fmt: skip
    info = runs.load_npz(drawn)[1]
    assert info["author_label"] == "name" and info["roles"] == ["row items", "column items"]
    assert info["title"] == "swap, period 2022"
    steps.call("dcode.own_map_figure", {},
               {"drawn": drawn, "png": png, "pdf": pdf, "dataset": "swap"})  # fmt: skip
    assert Path(png).stat().st_size > 0 and Path(pdf).stat().st_size > 0
    placed = pd.read_csv(coordinates)
    assert (placed["role"] == "author").sum() == 8 and (placed["role"] == "word").sum() == 15
    xy = {name: np.array([x, y]) for name, x, y in placed[["name", "x", "y"]].itertuples(False)}

    def mean_distance(authors: str, words: str) -> float:
        return float(np.mean([np.linalg.norm(xy[a] - xy[w]) for a in xy if a[0] == authors
                              for w in xy if w[0] == words]))  # fmt: skip

    # after the swap, X writes B and Y writes A
    assert mean_distance("X", "B") < mean_distance("X", "A")
    assert mean_distance("Y", "A") < mean_distance("Y", "B")
    assert json.loads(own_result.read_text())["dataset"] == "swap"
