"""Co-occurrence builders: NIPS 0-12 (D-CODE counts, Diffeomap text vectors), D-CODE synthetic.

The tiny corpus in tests/data/cooccurrence/tiny (3 papers, 2 authors, 4 words, 2 volumes):

    paper 0, volume 0, authors {Smith_A}:          alpha 2, beta 1
    paper 1, volume 0, authors {Smith_A, Jones_B}: beta 3, delta 1
    paper 2, volume 1, authors {Jones_B}:          gamma 4, delta 2
"""

from __future__ import annotations

import re
import zipfile
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from embedlab import artifacts
from embedlab import registry as registry_mod
from embedlab.datasets import DatasetError, build_dataset, dcode_synthetic, nips12

TINY = Path(__file__).parent / "data" / "cooccurrence" / "tiny"

# hand-computed from the table in the module docstring (rows Smith_A, Jones_B;
# columns alpha, beta, gamma, delta)
TINY_COUNTS = [
    [[2, 1 + 3, 0, 1], [0, 3, 0, 1]],
    [[0, 0, 0, 0], [0, 0, 4, 2]],
]
TINY_TEXT_W20 = [
    [2, 1, 0, 0, 20, 0],
    [0, 3, 0, 1, 20, 20],
    [0, 0, 4, 2, 0, 20],
]


def make_zip(folder: Path, replace: dict[str, str] | None = None) -> dict[str, Path]:
    """Zip the tiny corpus (members ``corpus-example/<file>``), replacing some file texts."""
    path = folder / "tiny.zip"
    with zipfile.ZipFile(path, "w") as z:
        for f in sorted(TINY.iterdir()):
            text = (replace or {}).get(f.name, f.read_text())
            z.writestr(nips12.MEMBER_DIR + f.name, text)
    return {nips12.ZIP_FILE: path}


# --------------------------------------------------------------------------------------
# tiny hand-made corpus


def test_tiny_counts_match_hand_computation(tmp_path):
    art = nips12.build_cooccurrence(make_zip(tmp_path))
    assert len(art["counts"]) == 2
    for t, expected in enumerate(TINY_COUNTS):
        np.testing.assert_array_equal(art["counts"][t].toarray(), expected)
    np.testing.assert_array_equal(art["paper_step"], [0, 0, 1])
    np.testing.assert_array_equal(art["paper_authors"].toarray(), [[1, 0], [1, 1], [0, 1]])
    np.testing.assert_array_equal(
        art["paper_words"].toarray(), [[2, 1, 0, 0], [0, 3, 0, 1], [0, 0, 4, 2]]
    )
    items = art.items
    authors = items[items.role == "author"]
    assert authors.name.tolist() == ["Smith_A", "Jones_B"]
    assert authors.n_papers.tolist() == [2, 2]
    assert items[items.role == "word"].name.tolist() == ["alpha", "beta", "gamma", "delta"]
    papers = items[items.role == "paper"]
    assert papers.name.tolist()[2] == "Gamma Rays"
    assert papers.step.tolist() == [0, 0, 1]
    assert art.meta["counts"] == {"papers": 3, "words": 4, "authors": 2, "time_steps": 2}


def test_tiny_round_trip(tmp_path):
    art = nips12.build_cooccurrence(make_zip(tmp_path))
    back = artifacts.load(artifacts.save(art, tmp_path / "art", "tiny"))
    for a, b in zip(art["counts"], back["counts"], strict=True):
        np.testing.assert_array_equal(a.toarray(), b.toarray())
    assert back.items.role.tolist() == art.items.role.tolist()
    assert back.items.n_papers.tolist() == art.items.n_papers.tolist()


def test_tiny_text(tmp_path):
    art = nips12.build_text(make_zip(tmp_path), author_weight=20)
    assert art.kind == "vectors"
    np.testing.assert_array_equal(art["X"], TINY_TEXT_W20)
    assert art["X"].dtype == np.float64
    half = nips12.build_text(make_zip(tmp_path), author_weight=0.5)
    np.testing.assert_array_equal(half["X"][:, 4:], 0.5 * art["paper_authors"].toarray())
    assert art.items.name.tolist() == ["Alpha and Beta", "Beta Delta Networks", "Gamma Rays"]
    with pytest.raises(ValueError, match="author_weight"):
        nips12.build_text(make_zip(tmp_path), author_weight=-1)


@pytest.mark.parametrize(
    ("member", "text", "line"),
    [
        ("nips.corpus", "2 0:2 1:1\n2 1:3 3\n2 2:4 3:2\n", 2),  # pair without a count
        ("nips.corpus", "2 0:2 1:1\n3 1:3 3:1\n2 2:4 3:2\n", 2),  # nterms disagrees
        ("nips.corpus", "2 0:2 1:1\n2 1:3 3:1\n2 2:4 9:2\n", 3),  # word id out of range
        ("nips.corpus", "2 0:2 1:1\n2 1:x 3:1\n2 2:4 3:2\n", 2),  # count not an integer
        ("nips.authors", "0\n0 2\n1\n", 2),  # author id out of range
        ("nips.vols", "0\n0\n7\n", 3),  # volume without a name in nips.vols.key
        ("nips.vocab", "alpha = 0 = 2 1\nbeta = 1 = 4 2\ngamma = 5 = 4 1\ndelta = 3 = 3 2\n", 3),
        ("nips.vocab", "alpha = 0 = 2 1\nbeta = 1 = 5 2\ngamma = 2 = 4 1\ndelta = 3 = 3 2\n", 2),
    ],
)
def test_malformed_line_names_member_and_line(tmp_path, member, text, line):
    files = make_zip(tmp_path, {member: text})
    with pytest.raises(DatasetError, match=rf"{re.escape(member)}' line {line}:"):
        nips12.build_cooccurrence(files)


def test_member_line_count_mismatch_is_an_error(tmp_path):
    files = make_zip(tmp_path, {"nips.vols": "0\n0\n"})
    with pytest.raises(DatasetError, match=r"nips\.vols' has 2 lines, expected 3"):
        nips12.build_cooccurrence(files)


def test_missing_member_is_an_error(tmp_path):
    path = tmp_path / "bad.zip"
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("corpus-example/nips.corpus", "1 0:1\n")
    with pytest.raises(DatasetError, match="missing"):
        nips12.build_cooccurrence({nips12.ZIP_FILE: path})


# --------------------------------------------------------------------------------------
# the real NIPS 0-12 zip (mirror)


def raw_members(mirror: Path) -> dict[str, list[str]]:
    """The zip's text members as lines, read independently of the builder."""
    out = {}
    with zipfile.ZipFile(mirror / nips12.ZIP_FILE) as z:
        for m in ("nips.corpus", "nips.authors", "nips.authors.key", "nips.vols"):
            text = z.read("corpus-example/" + m).decode("ascii")
            out[m] = [s for s in text.splitlines() if s.strip()]
    return out


def row_dict(row) -> dict[int, int]:
    """A sparse 1 x n row as {column: value}."""
    return dict(zip(row.indices.tolist(), row.data.tolist(), strict=True))


def raw_word_counts(line: str) -> Counter:
    return Counter({int(p.split(":")[0]): int(p.split(":")[1]) for p in line.split()[1:]})


def test_nips12_matches_paper_counts(build_from_mirror, registry):
    art = build_from_mirror("nips12")
    paper = registry["datasets"]["nips12"]["paper"]
    counts = art.meta["counts"]
    assert counts["papers"] == paper["papers"]
    assert counts["words"] == paper["words"]
    assert counts["authors"] == paper["n"] == art.n
    assert len(art["counts"]) == paper["time_steps"]
    assert art.meta["step_names"][-1].endswith("1999")
    for c in art["counts"]:
        assert c.shape == (paper["n"], paper["words"])
        assert np.issubdtype(c.dtype, np.integer)
        assert c.data.min() >= 0
    assert np.bincount(art["paper_step"]).size == paper["time_steps"]


def test_nips12_totals_and_rows_against_raw_lines(build_from_mirror, mirror):
    art = build_from_mirror("nips12")
    raw = raw_members(mirror)
    # sum_t sum C_t = sum over papers of (number of authors) x (words in the paper)
    expected_total = sum(
        len(authors.split()) * sum(raw_word_counts(line).values())
        for line, authors in zip(raw["nips.corpus"], raw["nips.authors"], strict=True)
    )
    assert sum(int(c.sum()) for c in art["counts"]) == expected_total
    for p in (0, 871, len(raw["nips.corpus"]) - 1):
        row = art["paper_words"][p]
        assert row_dict(row) == raw_word_counts(raw["nips.corpus"][p])
        assert art["paper_authors"][p].indices.tolist() == sorted(
            int(a) for a in raw["nips.authors"][p].split()
        )


def test_nips12_one_author_one_volume(build_from_mirror, mirror):
    art = build_from_mirror("nips12")
    raw = raw_members(mirror)
    author = [s.strip() for s in raw["nips.authors.key"]].index("Jordan_M")
    volume = 12
    expected: Counter = Counter()
    n_papers = 0
    for line, authors, vol in zip(
        raw["nips.corpus"], raw["nips.authors"], raw["nips.vols"], strict=True
    ):
        if int(vol) == volume and str(author) in authors.split():
            expected.update(raw_word_counts(line))
            n_papers += 1
    assert n_papers > 0
    row = art["counts"][volume][author]
    assert row_dict(row) == dict(expected)
    assert art["counts"][volume - 1][author].sum() != row.sum()


def test_nips_text_shape_and_author_columns(build_from_mirror, registry):
    text = build_from_mirror("nips_text")
    cooc = build_from_mirror("nips12")
    paper = registry["datasets"]["nips_text"]["paper"]
    weight = registry["datasets"]["nips_text"]["params"]["author_weight"]
    X = text["X"]
    assert X.shape == (paper["n"], paper["dims"])
    assert X.dtype == np.float64
    n_words = cooc["paper_words"].shape[1]
    assert text.meta["n_word_columns"] == n_words
    np.testing.assert_array_equal(X[:, :n_words], cooc["paper_words"].toarray())
    np.testing.assert_array_equal(X[:, n_words:], weight * cooc["paper_authors"].toarray())
    assert "labels" not in text.arrays
    assert text.items.step.tolist() == cooc["paper_step"].tolist()


# --------------------------------------------------------------------------------------
# D-CODE synthetic sequence


@pytest.fixture(scope="module")
def synthetic(registry):
    spec = registry_mod.dataset_spec(registry, "dcode_synthetic")
    return build_dataset("dcode_synthetic", spec, raw_dir=Path("."))


def group_means(art, author_group: str) -> np.ndarray:
    """Mean count of the group's authors with the A words at each step."""
    rows = art.items[(art.items.role == "author") & (art.items.group == author_group)]["index"]
    cols = art.items[(art.items.role == "word") & (art.items.group == "A")]["index"]
    return np.array(
        [c.toarray()[np.ix_(rows.to_numpy(), cols.to_numpy())].mean() for c in art["counts"]]
    )


def test_synthetic_entities_and_shapes(synthetic):
    p = synthetic.meta["params"]
    assert len(synthetic["counts"]) == p["n_steps"]
    n_words = 3 + p["n_background_words"]
    assert all(c.shape == (6, n_words) for c in synthetic["counts"])
    assert all(np.issubdtype(c.dtype, np.integer) for c in synthetic["counts"])
    roles = synthetic.items.groupby("role").name.apply(list).to_dict()
    background = [f"B{k + 1}" for k in range(p["n_background_words"])]
    assert roles == {
        "author": ["X1", "X2", "X3", "Y1", "Y2", "Y3"],
        "word": ["A1", "A2", "A3", *background],
    }
    assert synthetic["expected_counts"].shape == (p["n_steps"], 6, n_words)
    # background words: the same constant rate for every author, all the time
    np.testing.assert_array_equal(synthetic["expected_counts"][:, :, 3:], p["background_rate"])


def test_synthetic_x_a_fades_while_y_a_grows(synthetic):
    p = synthetic.meta["params"]
    x, y = group_means(synthetic, "X"), group_means(synthetic, "Y")
    start, end = p["change_start"], p["change_end"]
    early, late = slice(0, start), slice(end + 1, None)
    assert x[early].mean() > 5 * y[early].mean()
    assert y[late].mean() > 5 * x[late].mean()
    # the expected levels move linearly (X-A from high to low, Y-A from low to high)
    mean_x = synthetic["expected_counts"][:, 0, 0]
    mean_y = synthetic["expected_counts"][:, 3, 0]
    assert mean_x[start] == mean_y[end] == p["high"] + p["background"]
    assert mean_x[end] == mean_y[start] == p["low"] + p["background"]
    assert np.all(np.diff(mean_x[start : end + 1]) < 0)
    assert np.all(np.diff(mean_y[start : end + 1]) > 0)
    np.testing.assert_allclose(np.diff(mean_x[start : end + 1], 2), 0, atol=1e-12)
    np.testing.assert_allclose(np.diff(mean_y[start : end + 1], 2), 0, atol=1e-12)
    # monotone-ish draws: the means of 4 blocks strictly decrease (X) / increase (Y)
    blocks_x = np.array([b.mean() for b in np.array_split(x[start:end], 4)])
    blocks_y = np.array([b.mean() for b in np.array_split(y[start:end], 4)])
    assert np.all(np.diff(blocks_x) < 0)
    assert np.all(np.diff(blocks_y) > 0)
    # the draws follow their means
    draws = np.stack([c.toarray() for c in synthetic["counts"]])
    assert abs(draws.mean() / synthetic["expected_counts"].mean() - 1) < 0.05


def test_synthetic_is_deterministic_per_seed():
    a = dcode_synthetic.build({}, seed=3)
    b = dcode_synthetic.build({}, seed=3)
    c = dcode_synthetic.build({}, seed=4)
    same = all((u != v).nnz == 0 for u, v in zip(a["counts"], b["counts"], strict=True))
    differ = any((u != v).nnz for u, v in zip(a["counts"], c["counts"], strict=True))
    assert same and differ


@pytest.mark.parametrize(
    "bad",
    [
        {"change_start": 60, "change_end": 20},
        {"change_end": 80},
        {"high": 1, "low": 1},
        {"background": -1},
    ],
)
def test_synthetic_rejects_bad_parameters(bad):
    with pytest.raises(ValueError, match="dcode_synthetic"):
        dcode_synthetic.build({}, **bad)
