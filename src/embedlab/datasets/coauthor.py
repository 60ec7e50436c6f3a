"""Co-authorship similarities (SNEST paper): NIPS17, NIPS22 and GrQc.

C_ij is the number of papers co-authored by authors i and j (zero diagonal), and
P = :func:`embedlab.affinities.row_normalised_symmetric` (C), i.e.
p_ij ∝ C_ij / sum_k C_ik + C_ji / sum_k C_jk.

NIPS17 and NIPS22 share one construction (:func:`coauthor_similarity`): keep the authors with
at least ``min_papers`` papers, count the papers co-authored among them, drop the authors left
without a co-author. ``meta["counts"]`` holds ``papers`` (papers with >= 2 kept authors, the ones
that contribute to C), ``papers_listed``, ``authors_before_filter``, ``authors_min_papers``
(after the paper-count filter) and ``n`` (after dropping authors without a co-author).
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
import pandas as pd
import scipy.sparse as sp

from embedlab.affinities import drop_isolated, row_normalised_symmetric
from embedlab.artifacts import Artifact
from embedlab.datasets import DatasetError
from embedlab.datasets.readers import raw_file


def _read_lines(path: Path) -> list[str]:
    """Lines of a text file without their line ends (LF or CRLF)."""
    try:
        return path.read_text(encoding="utf-8").splitlines()
    except UnicodeDecodeError as exc:
        raise DatasetError(f"{path}: not UTF-8 text ({exc})") from None


# --------------------------------------------------------------------------------------
# shared construction


def coauthorship_counts(paper_authors: Sequence[np.ndarray], n_authors: int) -> sp.csr_matrix:
    """C = B^T B without its diagonal, B the binary papers x authors incidence matrix."""
    lengths = np.array([len(a) for a in paper_authors], dtype=np.int64)
    cols = np.concatenate([np.zeros(0, dtype=np.int64), *paper_authors]).astype(np.int64)
    rows = np.repeat(np.arange(len(paper_authors)), lengths)
    B = sp.csr_matrix((np.ones(cols.size), (rows, cols)), shape=(len(paper_authors), n_authors))
    B.data[:] = 1.0  # an author listed twice on one paper still counts once
    C = (B.T @ B).tocsr()
    C.setdiag(0)
    C.eliminate_zeros()
    return C


def coauthor_similarity(
    paper_authors: Sequence[np.ndarray],
    paper_years: np.ndarray,
    names: Sequence[str],
    min_papers: int,
    source: str,
) -> tuple[sp.csr_matrix, pd.DataFrame, dict[str, int]]:
    """P, items and counts for authors with >= ``min_papers`` papers and >= 1 co-author.

    ``paper_authors[k]`` holds the (unique) author indices of paper k, ``paper_years[k]`` its
    year. Items: ``name``, ``n_papers`` (all papers of the author in the data), ``first_year``,
    ``last_year``, ``n_coauthors`` (distinct kept co-authors).
    """
    if int(min_papers) != min_papers or min_papers < 1:
        raise ValueError(f"{source}: min_papers must be a positive integer, got {min_papers!r}")
    n_all = len(names)
    paper_authors = [np.unique(np.asarray(a, dtype=np.int64)) for a in paper_authors]
    lengths = np.array([len(a) for a in paper_authors], dtype=np.int64)
    flat = np.concatenate([np.zeros(0, dtype=np.int64), *paper_authors])
    flat_years = np.repeat(np.asarray(paper_years, dtype=np.int64), lengths)
    n_papers = np.bincount(flat, minlength=n_all)
    first_year = np.full(n_all, np.iinfo(np.int64).max)
    last_year = np.full(n_all, np.iinfo(np.int64).min)
    np.minimum.at(first_year, flat, flat_years)
    np.maximum.at(last_year, flat, flat_years)

    kept = np.flatnonzero(n_papers >= min_papers)
    new_index = np.full(n_all, -1, dtype=np.int64)
    new_index[kept] = np.arange(kept.size)
    kept_per_paper = [new_index[a][new_index[a] >= 0] for a in paper_authors]
    C = coauthorship_counts(kept_per_paper, kept.size)
    C, with_coauthor = drop_isolated(C)
    if C.shape[0] == 0:
        raise DatasetError(f"{source}: no author with >= {min_papers} papers has a co-author")
    authors = kept[with_coauthor]
    items = pd.DataFrame(
        {
            "name": [names[i] for i in authors],
            "n_papers": n_papers[authors],
            "first_year": first_year[authors],
            "last_year": last_year[authors],
            "n_coauthors": np.diff(C.indptr),
        }
    )
    counts = {
        "papers": int(sum(len(a) >= 2 for a in kept_per_paper)),
        "papers_listed": len(paper_authors),
        "authors_before_filter": int(np.count_nonzero(n_papers)),
        "authors_min_papers": int(kept.size),
        "n": int(authors.size),
        "coauthor_pairs": int(C.nnz // 2),
    }
    return row_normalised_symmetric(C, name=source), items, counts


# --------------------------------------------------------------------------------------
# NIPS17: knowceans corpus-example (ids are 0-based line numbers of nips17.authors.key)


def build_nips17(files: Mapping[str, Path], min_papers: int = 2) -> Artifact:
    """NIPS 1987-2003 co-authorship from the knowceans ``nips17`` files.

    ``nips17.authors`` has one line per paper with the paper's author ids, 0-based indices into
    the lines of ``nips17.authors.key`` (checked: an id outside [0, number of keys) is an
    error). ``nips17.years`` gives each paper's year; ``nips17.docnames`` (``<year>/<id>``) and
    ``nips17.vols`` (year - 1987) are cross-checked against it.
    """
    suffixes = ("authors", "authors.key", "docnames", "vols", "years")
    paths = {s: raw_file(files, f"nips17/nips17.{s}") for s in suffixes}
    lines = {s: _read_lines(p) for s, p in paths.items()}
    names = [line.strip() for line in lines["authors.key"]]
    for i, name in enumerate(names, 1):
        if not name:
            raise DatasetError(f"{paths['authors.key']}, line {i}: empty author key")
    n_papers = len(lines["authors"])
    for s in ("docnames", "vols", "years"):
        if len(lines[s]) != n_papers:
            raise DatasetError(
                f"{paths[s]}: {len(lines[s])} lines, but {paths['authors']} lists {n_papers} papers"
            )

    def ints(kind: str, lineno: int, text: str) -> list[int]:
        try:
            return [int(tok) for tok in text.split()]
        except ValueError:
            raise DatasetError(f"{paths[kind]}, line {lineno}: not integers: {text!r}") from None

    years = np.zeros(n_papers, dtype=np.int64)
    paper_authors = []
    for k in range(n_papers):
        year = ints("years", k + 1, lines["years"][k])
        vol = ints("vols", k + 1, lines["vols"][k])
        if len(year) != 1 or len(vol) != 1:
            raise DatasetError(
                f"{paths['years']} / {paths['vols']}, line {k + 1}: expected one integer"
            )
        doc_year = lines["docnames"][k].strip().partition("/")[0]
        if doc_year != str(year[0]) or vol[0] != year[0] - 1987:
            raise DatasetError(
                f"{paths['docnames']}, line {k + 1}: docname {lines['docnames'][k]!r} / volume "
                f"{vol[0]} disagree with year {year[0]} in {paths['years']}"
            )
        ids = np.asarray(ints("authors", k + 1, lines["authors"][k]), dtype=np.int64)
        if ids.size and (ids.min() < 0 or ids.max() >= len(names)):
            raise DatasetError(
                f"{paths['authors']}, line {k + 1}: author id outside [0, {len(names)}) "
                f"(the number of lines of {paths['authors.key']}): {ids.tolist()}"
            )
        years[k] = year[0]
        paper_authors.append(ids)
    P, items, counts = coauthor_similarity(paper_authors, years, names, min_papers, "nips17")
    return Artifact(kind="similarity", arrays={"P": P}, items=items, meta={"counts": counts})


# --------------------------------------------------------------------------------------
# NIPS22: papers.nips.cc listings, one JSON list of {title, authors, pdf, abstract} per year

#: Author strings of papers.nips.cc listings that cannot be parsed by rule, keyed by the
#: paper's pdf URL. The listings lost the surname of three authors with a suffix:
#: "Michael Ii" (Michael J. Berry II, 2002), "John Iii" (John W. Fisher III, 2002),
#: "Charles Jr." (Charles Lee Isbell Jr., 2004) and "Jr. Isbell, Charles Lee" (2008).
LISTING_FIXES = {
    "http://papers.nips.cc/paper/2231-an-information-theoretic-approach-to-the-functional-"
    "classification-of-neurons.pdf": "Elad Schneidman, William Bialek, Michael J. Berry II",
    "http://papers.nips.cc/paper/2182-recovering-articulated-model-topology-from-observed-"
    "rigid-motion.pdf": "Leonid Taycher, John W. Fisher III, Trevor Darrell",
    "http://papers.nips.cc/paper/2592-schema-learning-experience-based-construction-of-"
    "predictive-action-models.pdf": "Michael P. Holmes, Charles Lee Isbell Jr.",
    "http://papers.nips.cc/paper/3473-quic-svd-fast-svd-using-cosine-trees.pdf":
        "Michael P. Holmes, Charles Lee Isbell Jr., Alexander G. Gray",
}
#: Name suffixes dropped from names; a comma-separated part that holds only these (", Jr.",
#: ", MD") belongs to the name before it and is dropped too.
NAME_SUFFIXES = frozenset({"jr", "jr.", "ii", "iii", "md"})
#: Letters that NFKD does not decompose into an ASCII base letter.
_ASCII_LETTERS = str.maketrans(
    {"ø": "o", "Ø": "O", "æ": "ae", "Æ": "AE", "œ": "oe", "Œ": "OE", "ß": "ss", "ł": "l",
     "Ł": "L", "đ": "d", "Đ": "D", "ı": "i", "þ": "th", "ð": "d"}
)
_LATEX_ESCAPE = re.compile(r"\\(?:[a-zA-Z](?:\s+|\{\}|(?=[^a-zA-Z]))|[^a-zA-Z\s])")
_SEPARATOR = re.compile(r"\s*,\s*|\s+and\s+|\s*&\s*|\s*;\s*")


def ascii_fold(text: str) -> str:
    """Remove accents (unicodedata NFKD, combining marks dropped; ø -> o, ß -> ss, ...)."""
    decomposed = unicodedata.normalize("NFKD", text.translate(_ASCII_LETTERS))
    return "".join(c for c in decomposed if not unicodedata.combining(c)).encode(
        "ascii", "ignore").decode()


def split_authors(authors: str) -> list[str]:
    """Names in a listing's author string, cleaned; see :func:`build_nips22` for the rules."""
    names = []
    for part in _SEPARATOR.split(_LATEX_ESCAPE.sub("", authors)):
        tokens = [t for t in part.split() if t.lower() not in NAME_SUFFIXES]
        if tokens:
            names.append(" ".join(tokens))
    return names


def author_key(name: str) -> str:
    """``Lastname_F``: last word of the ASCII-folded name and the initial of its first word."""
    tokens = ascii_fold(name).split()
    return f"{tokens[-1]}_{tokens[0][0].upper()}"


def _read_listing(path: Path) -> list[dict]:
    try:
        papers = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise DatasetError(f"{path}: not a JSON listing ({exc})") from None
    if not isinstance(papers, list):
        raise DatasetError(f"{path}: expected a JSON list of papers, got {type(papers).__name__}")
    for i, paper in enumerate(papers):
        for field_name in ("title", "authors"):
            if not isinstance(paper, dict) or not isinstance(paper.get(field_name), str):
                raise DatasetError(f"{path}, paper {i}: field {field_name!r} missing or not text")
    return papers


def build_nips22(
    files: Mapping[str, Path],
    first_year: int = 1987,
    last_year: int = 2008,
    min_papers: int = 2,
) -> Artifact:
    """NIPS co-authorship rebuilt from the papers.nips.cc listings ``nips22/<year>.json``.

    Author strings are cleaned as follows (every rule is needed by the 1987-2009 listings):

    * the four mangled strings in :data:`LISTING_FIXES` are replaced (matched by pdf URL);
    * LaTeX escape remnants are removed (``Gia\\-cin\\-to`` -> ``Giacinto``, ``Tomá\\v S.``);
    * names are separated by commas (also `` and ``, ``&``, ``;``); empty parts (trailing or
      doubled commas) are skipped;
    * suffixes Jr / Jr. / II / III / MD are dropped, also when they stand alone after a comma
      (``J. L. Wyatt, Jr.``, ``Ronald Klein, MD``);
    * a remaining name of a single word cannot be keyed and is an error naming file and paper.

    Authors are keyed ``Lastname_F`` (:func:`author_key`; particles are not part of the last
    name: "Renato de Mori" -> ``Mori_R``), matched case-insensitively (``Shawe-taylor_J`` and
    ``Shawe-Taylor_J`` are one author; the item name is the most frequent spelling, items are
    sorted by it). An author listed twice on one paper counts once, and a paper listed twice in
    a year (same pdf URL; 1995 lists "A Model of Auditory Streaming" twice) counts once.
    ``meta["counts"]`` adds ``duplicate_listings`` and ``listing_fixes`` to the counts of
    :func:`coauthor_similarity`. Items also hold ``full_name`` (most frequent spelling).
    """
    if first_year > last_year:
        raise ValueError(f"nips22: first_year {first_year} is after last_year {last_year}")
    key_index: dict[str, int] = {}
    spellings: list[Counter] = []
    full_names: list[Counter] = []
    paper_authors, paper_years = [], []
    duplicates = fixes = 0
    for year in range(first_year, last_year + 1):
        path = raw_file(files, f"nips22/{year}.json")
        seen_pdfs: set[str] = set()
        for i, paper in enumerate(_read_listing(path)):
            pdf = paper.get("pdf") or f"{year}:{paper['title']}"
            if pdf in seen_pdfs:
                duplicates += 1
                continue
            seen_pdfs.add(pdf)
            authors = paper["authors"]
            if pdf in LISTING_FIXES:
                authors, fixes = LISTING_FIXES[pdf], fixes + 1
            indices = []
            for name in split_authors(authors):
                if len(ascii_fold(name).split()) < 2:
                    raise DatasetError(
                        f"{path}, paper {i} ({paper['title']!r}): author {name!r} in "
                        f"{paper['authors']!r} is not 'First ... Last'; add a LISTING_FIXES entry"
                    )
                key = author_key(name)
                idx = key_index.setdefault(key.lower(), len(key_index))
                if idx == len(spellings):
                    spellings.append(Counter())
                    full_names.append(Counter())
                spellings[idx][key] += 1
                full_names[idx][name] += 1
                indices.append(idx)
            paper_authors.append(np.asarray(indices, dtype=np.int64))
            paper_years.append(year)

    def most_frequent(counter: Counter) -> str:
        return min(counter.items(), key=lambda kv: (-kv[1], kv[0]))[0]

    keys = [most_frequent(c) for c in spellings]
    order = sorted(range(len(keys)), key=lambda i: (keys[i].lower(), keys[i]))
    rank = np.empty(len(keys), dtype=np.int64)
    rank[order] = np.arange(len(keys))
    names = [keys[i] for i in order]
    full_names = [full_names[i] for i in order]
    P, items, counts = coauthor_similarity(
        [rank[a] for a in paper_authors], np.asarray(paper_years), names, min_papers, "nips22"
    )
    by_name = {name: most_frequent(full) for name, full in zip(names, full_names, strict=True)}
    items.insert(1, "full_name", items["name"].map(by_name))
    counts.update(duplicate_listings=duplicates, listing_fixes=fixes)
    return Artifact(kind="similarity", arrays={"P": P}, items=items, meta={"counts": counts})


# --------------------------------------------------------------------------------------
# GrQc: SNAP edge list


def build_grqc(files: Mapping[str, Path]) -> Artifact:
    """SNAP ca-GrQc: C_ij = 1 for every listed pair i != j (in either direction).

    '#' lines are comments; each data line is ``FromNodeId <whitespace> ToNodeId``. Self-loops
    are ignored and nodes left without an edge dropped. Items are the SNAP node ids, ascending.
    ``meta["counts"]``: ``nodes_in_file``, ``edges`` (distinct undirected pairs in the file,
    self-loops included: SNAP's count), ``self_loops``, ``edges_used`` (without self-loops),
    ``lines``.
    """
    path = raw_file(files, "grqc/ca-GrQc.txt")
    pairs = []
    for lineno, line in enumerate(_read_lines(path), 1):
        text = line.strip()
        if not text or text.startswith("#"):
            continue
        fields = text.split()
        if len(fields) != 2 or not all(f.isdigit() for f in fields):
            raise DatasetError(f"{path}, line {lineno}: expected two node ids, got {line!r}")
        pairs.append((int(fields[0]), int(fields[1])))
    if not pairs:
        raise DatasetError(f"{path}: no edges")
    edges = np.asarray(pairs, dtype=np.int64)
    node_ids, idx = np.unique(edges, return_inverse=True)
    idx = idx.reshape(edges.shape)
    undirected = np.unique(np.sort(idx, axis=1), axis=0)
    loops = undirected[:, 0] == undirected[:, 1]
    used = undirected[~loops]
    n_all = node_ids.size
    C = sp.coo_matrix(
        (np.ones(2 * len(used)), (np.r_[used[:, 0], used[:, 1]], np.r_[used[:, 1], used[:, 0]])),
        shape=(n_all, n_all),
    ).tocsr()
    C, kept = drop_isolated(C)
    items = pd.DataFrame({"name": node_ids[kept].astype(str), "degree": np.diff(C.indptr)})
    counts = {
        "nodes_in_file": int(n_all),
        "edges": int(len(undirected)),
        "self_loops": int(loops.sum()),
        "edges_used": int(len(used)),
        "lines": int(len(edges)),
        "n": int(kept.size),
    }
    P = row_normalised_symmetric(C, name="grqc")
    return Artifact(kind="similarity", arrays={"P": P}, items=items, meta={"counts": counts})
