"""The paper-vs-ours summary: every published number gets exactly one line."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from embedlab import summary

from .conftest import REPO

PAPER_VALUES = REPO / "config" / "paper_values"


def test_every_published_number_has_a_line_even_without_results(tmp_path):
    df = summary.summary_table(PAPER_VALUES.glob("*.csv"), tmp_path)
    # one line per published number and reading (the t-STE claims are read twice: the
    # paper's text and the authors' released code)
    readings = {
        p.name: 1 + len(summary.MORE_READERS.get(p.name, [])) for p in PAPER_VALUES.glob("*.csv")
    }
    expected = sum(len(pd.read_csv(p)) * readings[p.name] for p in PAPER_VALUES.glob("*.csv"))
    assert len(df) == expected
    assert set(df["verdict"]) == {"not reproduced"}
    assert df["note"].str.startswith("paper not in this run").all()


def _write(path, rows):
    pd.DataFrame(rows).to_csv(path, index=False)
    return path


def test_snest_rows_take_value_and_verdict_from_the_kl_table(tmp_path):
    paper = _write(
        tmp_path / "snest_table1.csv",
        [
            {"dataset": "school", "method": "sne", "n_space": 2, "n_time": 0, "kl": 0.52},
            {"dataset": "school", "method": "snest", "n_space": 2, "n_time": 1, "kl": 0.31},
            {"dataset": "grqc", "method": "sne", "n_space": 2, "n_time": 0, "kl": 3.19},
        ],
    )
    ours = _write(
        tmp_path / "snest_kl.csv",
        [
            {"dataset": "school", "cell": "sne-2", "kl": 0.5, "verdict": "better", "runs": "3/3"},
            {
                "dataset": "school",
                "cell": "snest-2-1",
                "kl": 0.4,
                "verdict": "worse",
                "runs": "1/2",
            },
        ],
    )
    rows = pd.DataFrame(summary.snest_rows(paper, ours)).set_index("item")
    assert rows.loc["school SNE R^2 KL", "ours"] == 0.5
    assert rows.loc["school SNE R^2 KL", "diff"] == pytest.approx(-0.02)
    assert rows.loc["school SNEST R^{2,1} KL", "verdict"] == "worse"
    assert rows.loc["grqc SNE R^2 KL", "verdict"] == "not reproduced"
    assert "cell not in this run" in rows.loc["grqc SNE R^2 KL", "note"]


ALL_IN_RANGE = {
    "dataset": "mnist",
    "dims": 2,
    "metric": "generalisation_error",
    "method": "all",
    "low": 0.34,
    "high": 0.37,
    "note": "all in range",
}


def test_a_tste_claim_holds_or_does_not_hold_never_better(tmp_path):
    """A claim is judged as a claim: below the published range it does not hold (the note
    says the errors are lower), it is never 'better' or 'worse' as a number would be."""
    paper = _write(
        tmp_path / "tste_claims.csv",
        [
            ALL_IN_RANGE,
            {
                "dataset": "mnist",
                "dims": 2,
                "metric": "loo_1nn_error",
                "method": "tste_x",
                "low": 0.66,
                "high": 0.66,
                "note": "t-STE 66%",
            },
        ],
    )
    ours = _write(
        tmp_path / "ours.csv",
        [
            {"claim": "all in range", "ours": "GNMDS-X 0.110, t-STE-X 0.120", "holds": False},
            {"claim": "t-STE 66%", "ours": "t-STE-X 0.900", "holds": False},
        ],
    )
    rows = pd.DataFrame(summary.tste_rows(paper, ours)).set_index("item")
    assert rows.loc["all in range", "verdict"] == "does not hold"
    assert rows.loc["all in range", "note"] == "our errors all below the published range"
    assert rows.loc["t-STE 66%", "verdict"] == "does not hold"
    assert rows.loc["t-STE 66%", "note"] == ""  # above the range: no remark
    holding = _write(tmp_path / "holds.csv", [
        {"claim": "all in range", "ours": "GNMDS-X 0.350, t-STE-X 0.360", "holds": True},
    ])  # fmt: skip
    rows = pd.DataFrame(summary.tste_rows(paper, holding)).set_index("item")
    assert rows.loc["all in range", "verdict"] == "holds"
    assert {"better", "worse", "matched"}.isdisjoint(rows["verdict"])


def test_a_claims_ours_in_short():
    """compact_ours: several methods' values as their range, one as it is, the music claim
    as its count of dimensions; anything else unchanged."""
    full = "GNMDS-K 0.199, GNMDS-X 0.122, t-STE-X 0.111; not run in this configuration: CKL-K"
    assert summary.compact_ours(full) == "0.111\u20130.199 (3 methods)"
    assert summary.compact_ours("t-STE-X 0.396") == "t-STE-X 0.396"
    lowest = "t-STE-X lowest at 0/15 dims; GNMDS-K 0.583, t-STE-X 0.503 (d=2)"
    assert summary.compact_ours(lowest) == "t-STE-X lowest at 0/15 dims"
    for other in ["0.5156", "dims 2 not run", "", "GNMDS-K 0.1 and more"]:
        assert summary.compact_ours(other) == other


def test_dataset_counts_matched_or_differs(tmp_path):
    meta = tmp_path / "meta.json"
    meta.write_text(
        json.dumps(
            {
                "name": "nips22",
                "paper": {"n": 1418, "papers": 2121, "edges": 5},
                "summary": {"n": 1383},
                "counts": {"papers": 2121},
            }
        )
    )
    rows = pd.DataFrame(summary.dataset_rows([meta])).set_index("item")
    assert rows.loc["n", "verdict"] == "differs"
    assert rows.loc["n", "diff"] == -35
    assert rows.loc["papers", "verdict"] == "matched"
    assert rows.loc["edges", "verdict"] == "not reproduced"


def test_unknown_paper_values_file_is_an_error_naming_it(tmp_path):
    (tmp_path / "newpaper_table9.csv").write_text("a,b\n1,2\n")
    with pytest.raises(ValueError, match="newpaper_table9.csv"):
        summary.summary_table([tmp_path / "newpaper_table9.csv"], tmp_path)


def test_verdict_table_counts_every_line_once():
    df = pd.DataFrame(
        {
            "paper": ["A", "A", "B", "B", "B"],
            "verdict": ["matched", "worse", "matched", "not reproduced", "not reproduced"],
        }
    )
    table = summary.verdict_table(df).set_index("paper")
    assert list(table.columns) == ["matched", "worse", "not reproduced", "total"]
    assert table.loc["B", "not reproduced"] == 2
    assert table.loc["all"].tolist() == [2, 1, 2, 5]


def test_tste_claims_are_read_under_both_protocols(tmp_path):
    paper_dir = tmp_path / "paper"
    paper_dir.mkdir()
    paper = _write(
        paper_dir / "tste_claims.csv",
        [ALL_IN_RANGE],
    )
    tables = tmp_path / "tables"
    tables.mkdir()
    _write(
        tables / "tste_claims.csv",
        [{"claim": "all in range", "ours": "STE-X 0.110", "holds": False}],
    )
    df = summary.summary_table([paper], tables)
    assert list(df["table"]) == [
        "Fig. 2", "Fig. 2 (authors' code)", "Fig. 2 (authors' code, sum of p, t-STE alpha 1)"
    ]  # fmt: skip
    assert list(df["verdict"]) == ["does not hold", "not reproduced", "not reproduced"]

    def with_authors_claim(**row):
        """The summary once the authors' claims table holds this one row."""
        _write(tables / "tste_authors_claims.csv", [{"claim": "all in range", **row}])
        return summary.summary_table([paper], tables)

    df = with_authors_claim(ours="STE-X 0.350", holds=True)
    assert list(df["verdict"]) == ["does not hold", "holds", "not reproduced"]
    df = with_authors_claim(ours="GNMDS-K 0.000", holds=False, degenerate="GNMDS-K")
    assert list(df["verdict"]) == ["does not hold", "not comparable", "not reproduced"]
    assert "GNMDS-K: degenerate fit" in df["note"].iloc[1]
    # a sound fit outside the range fails the claim whatever the degenerate one says
    df = with_authors_claim(ours="GNMDS-K 0.000, CKL-K 0.682", holds=False, degenerate="GNMDS-K")
    assert list(df["verdict"]) == ["does not hold", "does not hold", "not reproduced"]
    assert "GNMDS-K: degenerate fit" in df["note"].iloc[1]


def test_an_own_dataset_has_a_line_per_table_that_holds_it(tmp_path):
    meta = tmp_path / "meta.json"
    meta.write_text(json.dumps({"name": "digits60", "own_dataset": True, "summary": {"n": 60}}))
    tables = tmp_path / "tables"
    tables.mkdir()
    pd.DataFrame({"dataset": ["iris", "digits60", "digits60"], "kl": [1, 2, 3]}).to_csv(
        tables / "ee_sweep.csv", index=False
    )
    pd.DataFrame({"dims": [2], "gen": [0.3]}).to_csv(tables / "tste_digits60.csv", index=False)
    pd.DataFrame({"dims": [2], "gen": [0.3]}).to_csv(tables / "tste_music.csv", index=False)
    df = summary.summary_table([], tables, [meta])
    rows = df.set_index("table")
    assert list(rows.index) == ["ee_sweep", "tste_digits60"]
    assert set(rows["verdict"]) == {"no paper value"} and set(rows["item"]) == {"digits60"}
    assert rows.loc["ee_sweep", "ours"] == 2
    assert "no paper value" in summary.verdict_table(df).columns
