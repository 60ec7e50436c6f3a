"""Similarity builders (SNEST datasets): co-authorship (NIPS17, NIPS22, GrQc) and USF words.

Each builder is checked on tiny hand-made files (tests/data/similarity/) against P computed by
hand, on malformed files (DatasetError naming the file), and on the mirror files against the
construction facts of EXPERIMENTS.md, recomputed here independently where possible.
"""

from __future__ import annotations

import io
import itertools
import json
import re
import shutil
from collections import Counter
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp

from embedlab.affinities import row_normalised_symmetric
from embedlab.datasets import DatasetError, coauthor, usf

DATA = Path(__file__).parent / "data" / "similarity"
NIPS17_FILES = ["authors", "authors.key", "docnames", "vols", "years"]
USF_TINY = ["Cue_Target_Pairs.A-B", "Cue_Target_Pairs.C-D"]


def tiny_files(root: Path, folder: str, names: list[str]) -> dict[str, Path]:
    return {f"{folder}/{name}": root / folder / name for name in names}


def nips17_files(root: Path = DATA) -> dict[str, Path]:
    return tiny_files(root, "nips17", [f"nips17.{s}" for s in NIPS17_FILES])


def nips22_files(root: Path = DATA) -> dict[str, Path]:
    return tiny_files(root, "nips22", ["1987.json", "1988.json"])


def usf_files(root: Path = DATA) -> dict[str, Path]:
    return tiny_files(root, "usf", USF_TINY)


def copy_tiny(tmp_path: Path, folder: str) -> Path:
    shutil.copytree(DATA / folder, tmp_path / folder)
    return tmp_path


def pair_matrix(names: list[str], pairs: dict[tuple[str, str], float]) -> np.ndarray:
    """Dense symmetric matrix over ``names`` with the given unordered-pair values."""
    index = {name: i for i, name in enumerate(names)}
    M = np.zeros((len(names), len(names)))
    for (a, b), value in pairs.items():
        M[index[a], index[b]] = M[index[b], index[a]] = value
    return M


def assert_similarity(P: sp.spmatrix) -> None:
    """The similarity invariants, checked directly (not through artifacts.validate)."""
    P = sp.csr_matrix(P)
    assert P.shape[0] == P.shape[1]
    assert abs(P - P.T).max() < 1e-15
    assert P.sum() == pytest.approx(1.0, abs=1e-12)
    assert (P.data > 0).all()
    assert not P.diagonal().any()
    assert (np.diff(P.indptr) > 0).all(), "empty row"


# --------------------------------------------------------------------------------------
# tiny hand-made files: P computed by hand
#
# Both NIPS tiny sets: A (3 papers), B, C, D (2 each), F (2, but no co-author with >= 2 papers),
# E and G (1 each). C_AB = 2, C_AC = C_BC = C_CD = 1, so the row sums are 3, 3, 3, 1 and
# p ∝ C_ij/s_i + C_ij/s_j: AB 4/3, AC 2/3, BC 2/3, CD 4/3, doubled total 8.
TINY_COAUTHOR_P = {("A", "B"): 1 / 6, ("A", "C"): 1 / 12, ("B", "C"): 1 / 12, ("C", "D"): 1 / 6}


def test_nips17_tiny_by_hand():
    art = coauthor.build_nips17(nips17_files())
    names = art.items["name"].tolist()
    assert names == ["Alpha_A", "Beta_B", "Gamma_C", "Delta_D"]
    expected = pair_matrix([n[-1] for n in names], TINY_COAUTHOR_P)  # Alpha_A -> A
    np.testing.assert_allclose(art["P"].toarray(), expected, rtol=0, atol=1e-15)
    assert art.items["n_papers"].tolist() == [3, 2, 2, 2]
    assert art.items["first_year"].tolist() == [1987, 1987, 1987, 1988]
    assert art.items["last_year"].tolist() == [1988, 1987, 1988, 1989]
    assert art.meta["counts"] == {
        "papers": 3, "papers_listed": 7, "authors_before_filter": 7, "authors_min_papers": 5,
        "n": 4, "coauthor_pairs": 4,
    }


def test_nips17_tiny_min_papers_one_keeps_everyone_with_a_coauthor():
    art = coauthor.build_nips17(nips17_files(), min_papers=1)
    assert set(art.items["name"]) == {"Alpha_A", "Beta_B", "Gamma_C", "Delta_D", "Epsilon_E",
                                      "Phi_F", "Gamma-Ray_G"}
    assert_similarity(art["P"])


def test_nips22_tiny_by_hand():
    art = coauthor.build_nips22(nips22_files(), first_year=1987, last_year=1988)
    names = art.items["name"].tolist()
    assert names == ["Alpha_A", "Beta_B", "Delta_D", "Gamma_C"]  # sorted keys
    expected = pair_matrix([n[-1] for n in names], TINY_COAUTHOR_P)
    np.testing.assert_allclose(art["P"].toarray(), expected, rtol=0, atol=1e-15)
    assert art.items["n_papers"].tolist() == [3, 2, 2, 2]
    assert art.items["full_name"].tolist()[:2] == ["Ann Alpha", "Bob Beta"]
    counts = art.meta["counts"]
    assert counts["papers"] == 3
    assert counts["papers_listed"] == 7  # the second 1987 listing of "Second" is dropped
    assert counts["duplicate_listings"] == 1
    assert counts["authors_before_filter"] == 7
    assert counts["authors_min_papers"] == 5


def test_nips22_one_year_only():
    art = coauthor.build_nips22(nips22_files(), first_year=1987, last_year=1987, min_papers=1)
    assert art.items["name"].tolist() == ["Alpha_A", "Beta_B", "Gamma_C"]
    assert art.meta["counts"]["papers"] == 2


@pytest.mark.parametrize(
    ("authors", "expected"),
    [
        ("Ann Alpha and Bob Beta, ", ["Ann Alpha", "Bob Beta"]),
        ("I. M. Elfadel, J. L. Wyatt, Jr.", ["I. M. Elfadel", "J. L. Wyatt"]),
        ("Ronald Klein, MD, Barbara Klein, MD", ["Ronald Klein", "Barbara Klein"]),
        ("Giorgio Gia\\-cin\\-to, Tomá\\v S. Gedeon", ["Giorgio Giacinto", "TomáS. Gedeon"]),
        ("Robert J. Marks II,, Gillette Elvgreen III", ["Robert J. Marks", "Gillette Elvgreen"]),
    ],
)
def test_split_authors_oddities(authors, expected):
    assert coauthor.split_authors(authors) == expected


@pytest.mark.parametrize(
    ("name", "key"),
    [("Søren Brunak", "Brunak_S"), ("Özgür Şimşek", "Simsek_O"), ("J.t. Lindgren", "Lindgren_J"),
     ("Klaus-Robert Müller", "Muller_K"), ("Renato de Mori", "Mori_R")],
)
def test_author_key(name, key):
    assert coauthor.author_key(name) == key


def test_grqc_tiny_by_hand():
    art = coauthor.build_grqc(tiny_files(DATA, "grqc", ["ca-GrQc.txt"]))
    assert art.items["name"].tolist() == ["1", "2", "3", "4"]  # node 5 has only a self-loop
    # degrees 2, 2, 3, 1 (3 -> 4 listed in one direction only still links them):
    # 12: 1/2 + 1/2, 13 and 23: 1/2 + 1/3, 34: 1/3 + 1; doubled total 8
    expected = pair_matrix(
        ["1", "2", "3", "4"],
        {("1", "2"): 1 / 8, ("1", "3"): 5 / 48, ("2", "3"): 5 / 48, ("3", "4"): 1 / 6},
    )
    np.testing.assert_allclose(art["P"].toarray(), expected, rtol=0, atol=1e-15)
    assert art.meta["counts"] == {
        "nodes_in_file": 5, "edges": 5, "self_loops": 1, "edges_used": 4, "lines": 8, "n": 4,
    }


def test_usf_tiny_by_hand():
    art = usf.build(usf_files(), n_words=4)
    # scores (self pair APPLE-APPLE and the '?' row dropped): APPLE 2 + 2, BANANA 1 + 2,
    # CAR 1 + 1, DOG 2 + 0; CAR before DOG alphabetically
    assert art.items["name"].tolist() == ["APPLE", "BANANA", "CAR", "DOG"]
    assert art.items["score"].tolist() == [4, 3, 2, 2]
    # WS: A->B .5, B->A .4, C->A .25, D->C .6, D->B .1; row-normalised: A->B 1, B->A 1,
    # C->A 1, D->C 6/7, D->B 1/7; pairs AB 2, AC 1, BD 1/7, CD 6/7; doubled total 8
    expected = pair_matrix(
        ["APPLE", "BANANA", "CAR", "DOG"],
        {("APPLE", "BANANA"): 1 / 4, ("APPLE", "CAR"): 1 / 8, ("BANANA", "DOG"): 1 / 56,
         ("CAR", "DOG"): 3 / 28},
    )
    np.testing.assert_allclose(art["P"].toarray(), expected, rtol=0, atol=1e-15)
    counts = art.meta["counts"]
    assert (counts["rows"], counts["self_pairs"], counts["missing_fsg"]) == (7, 1, 1)
    assert counts["targets_not_cues"] == 1  # RED


def test_usf_tiny_top_three():
    art = usf.build(usf_files(), n_words=3)
    assert art.items["name"].tolist() == ["APPLE", "BANANA", "CAR"]
    # WS: A->B .5, B->A .4, C->A .25: pairs AB 1 + 1, AC 1; doubled total 6
    expected = pair_matrix(["APPLE", "BANANA", "CAR"],
                           {("APPLE", "BANANA"): 1 / 3, ("APPLE", "CAR"): 1 / 6})
    np.testing.assert_allclose(art["P"].toarray(), expected, rtol=0, atol=1e-15)


# --------------------------------------------------------------------------------------
# malformed files


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_bytes()
    assert old.encode() in text
    path.write_bytes(text.replace(old.encode(), new.encode(), 1))


def test_nips17_author_id_out_of_range(tmp_path):
    root = copy_tiny(tmp_path, "nips17")
    edit(root / "nips17" / "nips17.authors", "5 6\n", "5 7\n")  # 7 keys: ids are 0..6
    with pytest.raises(DatasetError, match=r"nips17\.authors, line 7: author id outside"):
        coauthor.build_nips17(nips17_files(root))


def test_nips17_years_disagree_with_docnames(tmp_path):
    root = copy_tiny(tmp_path, "nips17")
    edit(root / "nips17" / "nips17.docnames", "1988/0001", "1990/0001")
    with pytest.raises(DatasetError, match=r"nips17\.docnames, line 3"):
        coauthor.build_nips17(nips17_files(root))


def test_nips17_not_integers(tmp_path):
    root = copy_tiny(tmp_path, "nips17")
    edit(root / "nips17" / "nips17.authors", "2 3\n", "2 x\n")
    with pytest.raises(DatasetError, match=r"nips17\.authors, line 3: not integers"):
        coauthor.build_nips17(nips17_files(root))


def test_nips22_invalid_json(tmp_path):
    root = copy_tiny(tmp_path, "nips22")
    edit(root / "nips22" / "1988.json", '"title": "Fourth"', '"title": "Fourth",,')
    with pytest.raises(DatasetError, match=r"1988\.json: not a JSON listing"):
        coauthor.build_nips22(nips22_files(root), first_year=1987, last_year=1988)


def test_nips22_single_word_author(tmp_path):
    root = copy_tiny(tmp_path, "nips22")
    edit(root / "nips22" / "1988.json", '"Fay Phi"', '"Fay Phi, Charles Jr."')
    with pytest.raises(DatasetError, match=r"1988\.json, paper 3 .*'Charles'"):
        coauthor.build_nips22(nips22_files(root), first_year=1987, last_year=1988)


def test_nips22_missing_authors_field(tmp_path):
    root = copy_tiny(tmp_path, "nips22")
    edit(root / "nips22" / "1987.json", '"authors": "Ann Alpha, Bob Beta"', '"authors": null')
    with pytest.raises(DatasetError, match=r"1987\.json, paper 0: field 'authors'"):
        coauthor.build_nips22(nips22_files(root), first_year=1987, last_year=1988)


def test_nips22_year_without_file():
    with pytest.raises(DatasetError, match=r"nips22/1989\.json"):
        coauthor.build_nips22(nips22_files(), first_year=1987, last_year=1989)


def test_grqc_bad_line(tmp_path):
    root = copy_tiny(tmp_path, "grqc")
    edit(root / "grqc" / "ca-GrQc.txt", "2\t3\r\n", "2\tthree\r\n")
    with pytest.raises(DatasetError, match=r"ca-GrQc\.txt, line 7: expected two node ids"):
        coauthor.build_grqc(tiny_files(root, "grqc", ["ca-GrQc.txt"]))


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        ("50, .500,", "50, .5x0,", r"Pairs\.A-B, line 5: field FSG = '\.5x0'"),
        ("50, .500,", "50, 1.5,", r"Pairs\.A-B, line 5: field FSG = '1\.5'"),
        ("APPLE, RED, NO,", "APPLE, RED, NO, extra,", r"Pairs\.A-B, line 6: 32 fields"),
        ("<PRE>", "<P>", r"Pairs\.A-B: expected one <PRE>"),
        ("CUE, TARGET", "CUE, TGT", r"Pairs\.A-B, line 4: header has no column 'TARGET'"),
    ],
)
def test_usf_malformed(tmp_path, old, new, message):
    root = copy_tiny(tmp_path, "usf")
    edit(root / "usf" / "Cue_Target_Pairs.A-B", old, new)
    with pytest.raises(DatasetError, match=message):
        usf.build(usf_files(root), n_words=4)


def test_usf_pair_listed_twice(tmp_path):
    root = copy_tiny(tmp_path, "usf")
    edit(root / "usf" / "Cue_Target_Pairs.C-D", "DOG, CAR,", "BANANA, APPLE,")
    with pytest.raises(DatasetError, match=r"\(BANANA, APPLE\) listed twice: .*A-B, line 8"):
        usf.build(usf_files(root), n_words=4)


def test_usf_selected_word_without_association(tmp_path):
    root = copy_tiny(tmp_path, "usf")
    # EEL names two targets nobody else uses: score 2, selected fifth, no link to the others
    edit(root / "usf" / "Cue_Target_Pairs.C-D", "</pre>",
         "EEL, SLIMY, YES, 9, 1, .5" + ", ?" * 25 + "\nEEL, SEA, YES, 9, 1, .5" + ", ?" * 25
         + "\n</pre>")
    with pytest.raises(DatasetError, match=r"'EEL'.*empty row"):
        usf.build(usf_files(root), n_words=5)
    assert usf.build(usf_files(root), n_words=4).items["name"].tolist()[-1] == "DOG"


def test_usf_too_many_words():
    with pytest.raises(DatasetError, match=r"n_words = 9 must lie in \[1, 4\]"):
        usf.build(usf_files(), n_words=9)


# --------------------------------------------------------------------------------------
# mirror files


def simple_lines(path: Path) -> list[str]:
    return path.read_text().splitlines()


def test_nips17_mirror(build_from_mirror, mirror):
    art = build_from_mirror("nips17")
    assert_similarity(art["P"])
    # independent recount: authors with >= 2 papers, papers among them, drop the lonely ones
    lines = simple_lines(mirror / "nips17/nips17.authors")
    papers = [set(map(int, line.split())) for line in lines]
    keys = simple_lines(mirror / "nips17/nips17.authors.key")
    n_papers = Counter(a for p in papers for a in p)
    kept = {a for a, c in n_papers.items() if c >= 2}
    pair_counts = Counter(
        pair for p in papers for pair in itertools.combinations(sorted(p & kept), 2)
    )
    authors = sorted({a for pair in pair_counts for a in pair})
    assert art.items["name"].tolist() == [keys[a] for a in authors]
    assert art.items["n_papers"].tolist() == [n_papers[a] for a in authors]
    counts = art.meta["counts"]
    assert counts["n"] == art.n == len(authors)
    assert counts["authors_min_papers"] == len(kept)
    assert counts["papers"] == sum(len(p & kept) >= 2 for p in papers)
    assert art["P"].nnz == 2 * len(pair_counts)
    index = {a: i for i, a in enumerate(authors)}
    C = np.zeros((len(authors), len(authors)))
    for (a, b), c in pair_counts.items():
        C[index[a], index[b]] = C[index[b], index[a]] = c
    np.testing.assert_allclose(art["P"].toarray(), row_normalised_symmetric(C).toarray(),
                               rtol=0, atol=1e-15)


def test_nips22_mirror(build_from_mirror, mirror):
    art = build_from_mirror("nips22")
    assert_similarity(art["P"])
    counts, items = art.meta["counts"], art.items
    # EXPERIMENTS.md: volumes 1987-2008 give 1384 authors / 2125 papers with plain keying; the
    # builder also merges case variants, drops one duplicated listing and repairs four
    # mangled author strings, which moves the counts by a few
    assert abs(counts["n"] - 1384) <= 5 and abs(counts["papers"] - 2125) <= 5
    assert counts["n"] == art.n == len(items)
    assert counts["duplicate_listings"] == 1 and counts["listing_fixes"] == 4
    assert (items["n_papers"] >= 2).all() and (items["n_coauthors"] >= 1).all()
    assert items["first_year"].min() == 1987 and items["last_year"].max() == 2008
    assert art["P"].nnz == 2 * counts["coauthor_pairs"]
    names = set(items["name"])
    assert all(re.fullmatch(r"[A-Za-z'.-]+_[A-Z]", name) for name in names)
    assert len({name.lower() for name in names}) == len(names)
    # repaired listings: Charles Lee Isbell Jr. (also "Charles L. Isbell"; "Charles Jr." in
    # 2004), John W. Fisher III, Michael J. Berry II
    listed = [p["authors"] for year in range(1987, 2009)
              for p in json.loads((mirror / f"nips22/{year}.json").read_text())]
    isbell = items.set_index("name").loc["Isbell_C"]
    assert isbell["n_papers"] == sum("Isbell" in a or "Charles Jr." in a for a in listed)
    assert (isbell["first_year"], isbell["last_year"]) == (1996, 2008)
    assert "Fisher_J" in names and "Berry_M" in names


def test_nips22_paper_years(build_from_mirror):
    art = build_from_mirror("nips22", first_year=1988, last_year=2009)
    assert art.items["first_year"].min() == 1988 and art.items["last_year"].max() == 2009
    assert_similarity(art["P"])


def test_grqc_mirror(build_from_mirror, mirror):
    art = build_from_mirror("grqc")
    assert_similarity(art["P"])
    edges = {
        tuple(map(int, line.split()))
        for line in simple_lines(mirror / "grqc/ca-GrQc.txt")
        if line and not line.startswith("#")
    }
    undirected = {(min(e), max(e)) for e in edges}
    without_loops = {e for e in undirected if e[0] != e[1]}
    nodes = sorted({v for e in without_loops for v in e})
    counts = art.meta["counts"]
    assert len({v for e in edges for v in e}) == counts["nodes_in_file"] == 5242  # SNAP header
    assert len(undirected) == counts["edges"] == 14496  # SNAP / paper edge count
    assert len(without_loops) == counts["edges_used"]
    assert art.n == len(nodes) == 5241
    assert art["P"].nnz == 2 * len(without_loops)
    assert art.items["name"].tolist() == [str(v) for v in nodes]
    index = {v: i for i, v in enumerate(nodes)}
    rows = [index[a] for a, b in without_loops] + [index[b] for a, b in without_loops]
    cols = [index[b] for a, b in without_loops] + [index[a] for a, b in without_loops]
    C = sp.csr_matrix((np.ones(len(rows)), (rows, cols)), shape=(len(nodes), len(nodes)))
    assert abs(art["P"] - row_normalised_symmetric(C)).max() < 1e-12


def usf_table(mirror: Path) -> pd.DataFrame:
    """All USF rows, re-parsed with pandas from the <PRE> blocks."""
    frames = []
    for path in sorted((mirror / "usf").glob("Cue_Target_Pairs.*")):
        text = path.read_text()
        block = text[text.index("<PRE>") + len("<PRE>"): text.lower().index("</pre>")]
        frames.append(pd.read_csv(io.StringIO(block.strip()), skipinitialspace=True, dtype=str,
                                  keep_default_na=False))
    table = pd.concat(frames, ignore_index=True)
    table = table.apply(lambda col: col.str.strip())
    table = table[(table["CUE"] != table["TARGET"]) & ~table["FSG"].isin(["?", ""])]
    return table.assign(FSG=table["FSG"].astype(float))


def test_w1000_mirror_recomputed_with_pandas(build_from_mirror, mirror):
    art = build_from_mirror("w1000")
    assert art.n == 1000
    assert_similarity(art["P"])
    words = art.items["name"].tolist()
    assert words[:4] == ["FOOD", "MONEY", "WATER", "CAR"]
    table = usf_table(mirror)
    # selection: score = rows as cue + cues naming the word; top 1000, ties alphabetical
    score = table.groupby("CUE").size().add(table.groupby("TARGET")["CUE"].nunique(),
                                            fill_value=0)
    score = score[score.index.isin(table["CUE"])]
    ranked = sorted(score.index, key=lambda w: (-score[w], w))
    assert words == ranked[:1000]
    assert art.items["score"].tolist() == [int(score[w]) for w in words]
    # P = row_normalised_symmetric(WS), WS_ij = FSG of target j for cue i among the words
    index = {w: i for i, w in enumerate(words)}
    inside = table[table["CUE"].isin(index) & table["TARGET"].isin(index)]
    WS = np.zeros((1000, 1000))
    WS[inside["CUE"].map(index), inside["TARGET"].map(index)] = inside["FSG"]
    R = WS / WS.sum(axis=1, keepdims=True).clip(min=1e-300)
    expected = (R + R.T) / (R + R.T).sum()
    assert np.abs(art["P"].toarray() - expected).max() < 1e-12
    assert art["P"].nnz == np.count_nonzero(expected)


def test_w5000_mirror(build_from_mirror):
    art = build_from_mirror("w5000")
    assert art.n == 5000
    assert_similarity(art["P"])
    assert art.items["name"].tolist()[:4] == ["FOOD", "MONEY", "WATER", "CAR"]
    assert art.items["name"].is_unique
    scores = art.items["score"].to_numpy()
    assert (np.diff(scores) <= 0).all()
    counts = art.meta["counts"]
    assert counts["n"] == 5000 and counts["cues"] >= 5000 and counts["missing_fsg"] == 0


def test_mirror_files_are_what_the_tests_assume(mirror):
    """NIPS17 author ids are 0-based: they run 0 .. (number of keys - 1)."""
    ids = [int(t) for line in simple_lines(mirror / "nips17/nips17.authors") for t in line.split()]
    n_keys = len(simple_lines(mirror / "nips17/nips17.authors.key"))
    assert (min(ids), max(ids)) == (0, n_keys - 1)
    listing = json.loads((mirror / "nips22/1995.json").read_text())
    pdfs = Counter(p["pdf"] for p in listing)
    assert max(pdfs.values()) == 2  # the duplicated listing the builder drops
