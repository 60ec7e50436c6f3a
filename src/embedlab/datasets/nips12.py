"""NIPS volumes 0-12 (Roweis' ``nips12raw_str602``): author x word counts and paper vectors.

The raw file is the text export ``nips-corpus-20111211.zip``; its members (folder
``corpus-example/``, formats from the zip's ``readme.txt``; every id is 0-based, line ``k + 1``
describes id ``k``):

* ``nips.corpus``      -- one line per paper, svm-light style ``nterms (wordid:count)+``;
* ``nips.vocab``       -- one line per word, ``word = wordid = total_count n_papers``;
* ``nips.authors``     -- one line per paper, its space-separated author ids;
* ``nips.authors.key`` -- one line per author, the name (``Jordan_M``);
* ``nips.vols``        -- one line per paper, its volume 0..12 (volume v = NIPS year 1987 + v);
* ``nips.vols.key``    -- one line per volume, ``NIPS v, year``;
* ``nips.docs``        -- one line per paper, its title (Latin-1).

Two datasets are built from it:

* :func:`build_cooccurrence` -- D-CODE's sequence ``C_t = A_t^T W_t`` (t = volume), where
  ``A_t`` is the 0/1 paper x author incidence and ``W_t`` the paper x word counts of the papers
  of volume t: ``C_t(i, j)`` = the number of times author i used word j in volume t (every
  author of a paper gets the paper's full word counts).
* :func:`build_text` -- Diffeomap's paper vectors ``X = [W | author_weight * A]``.
"""

from __future__ import annotations

import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import NoReturn

import numpy as np
import pandas as pd
import scipy.sparse as sp

from embedlab.artifacts import Artifact
from embedlab.datasets import DatasetError
from embedlab.datasets.readers import raw_file

ZIP_FILE = "nips12/nips-corpus-20111211.zip"
MEMBER_DIR = "corpus-example/"
MEMBERS = {
    "corpus": "nips.corpus",
    "vocab": "nips.vocab",
    "authors": "nips.authors",
    "author_names": "nips.authors.key",
    "vols": "nips.vols",
    "vol_names": "nips.vols.key",
    "titles": "nips.docs",
}


@dataclass
class NipsCorpus:
    """The parsed corpus; row k of every per-paper array is paper k (line k + 1)."""

    paper_words: sp.csr_matrix  # papers x words, int64 counts
    paper_authors: sp.csr_matrix  # papers x authors, int64 0/1 incidence
    paper_step: np.ndarray  # (papers,) int64 volume index
    words: list[str]
    authors: list[str]
    titles: list[str]
    step_names: list[str]  # "NIPS v, year" per volume

    @property
    def n_steps(self) -> int:
        return len(self.step_names)


# --------------------------------------------------------------------------------------
# parsing


class _Member:
    """The lines of one zip member; :meth:`fail` raises a DatasetError naming member and line."""

    def __init__(self, archive: zipfile.ZipFile, zip_path: Path, key: str, encoding: str):
        self.name = MEMBER_DIR + MEMBERS[key]
        self.zip_path = zip_path
        try:
            raw = archive.read(self.name)
        except KeyError:
            raise DatasetError(f"{zip_path}: member {self.name!r} missing") from None
        try:
            text = raw.decode(encoding)
        except UnicodeDecodeError as err:
            raise DatasetError(
                f"{zip_path}: member {self.name!r} is not {encoding}: {err}"
            ) from None
        lines = text.replace("\r\n", "\n").split("\n")
        while lines and not lines[-1].strip():  # trailing blank lines end the file
            lines.pop()
        self.lines = lines

    def fail(self, line_index: int, message: str) -> NoReturn:
        raise DatasetError(
            f"{self.zip_path}: member {self.name!r} line {line_index + 1}: {message}"
        )

    def expect_lines(self, n: int, what: str) -> None:
        if len(self.lines) != n:
            raise DatasetError(
                f"{self.zip_path}: member {self.name!r} has {len(self.lines)} lines, "
                f"expected {n} (one per {what})"
            )


def _parse_ints(member: _Member, k: int, tokens: list[str]) -> np.ndarray:
    try:
        return np.array([int(t) for t in tokens], dtype=np.int64)
    except ValueError as err:
        member.fail(k, f"not an integer ({err})")


def _parse_corpus(member: _Member, n_words: int) -> sp.csr_matrix:
    """``nterms (wordid:count)+`` per paper -> papers x words counts (CSR, int64)."""
    indptr = [0]
    indices: list[np.ndarray] = []
    counts: list[np.ndarray] = []
    for k, line in enumerate(member.lines):
        head, _, rest = line.strip().partition(" ")
        pairs = rest.split()
        numbers = rest.replace(":", " ").split()
        nterms = _parse_ints(member, k, [head])[0] if head else -1
        if nterms != len(pairs) or rest.count(":") != len(pairs) or len(numbers) != 2 * nterms:
            member.fail(k, f"expected 'nterms (wordid:count)+' with nterms = {len(pairs)} pairs")
        ids_counts = _parse_ints(member, k, numbers).reshape(-1, 2)
        ids, cnt = ids_counts[:, 0], ids_counts[:, 1]
        if ids.size and (ids.min() < 0 or ids.max() >= n_words):
            bad = ids[(ids < 0) | (ids >= n_words)][0]
            member.fail(k, f"word id {bad} outside [0, {n_words}) (vocabulary size)")
        if (cnt <= 0).any():
            member.fail(k, f"non-positive count {cnt[cnt <= 0][0]}")
        if np.unique(ids).size != ids.size:
            member.fail(k, "a word id is repeated")
        order = np.argsort(ids)
        indices.append(ids[order])
        counts.append(cnt[order])
        indptr.append(indptr[-1] + ids.size)
    n_papers = len(member.lines)
    empty = np.zeros(0, dtype=np.int64)
    return sp.csr_matrix(
        (
            np.concatenate(counts) if counts else empty,
            np.concatenate(indices) if indices else empty,
            np.asarray(indptr, dtype=np.int64),
        ),
        shape=(n_papers, n_words),
    )


def _parse_vocab(member: _Member) -> tuple[list[str], np.ndarray, np.ndarray]:
    """``word = wordid = total_count n_papers`` -> words, totals, paper counts."""
    words, totals, dfs = [], [], []
    for k, line in enumerate(member.lines):
        parts = line.strip().split(" = ")
        stats = parts[2].split() if len(parts) == 3 else []
        if len(stats) != 2:
            member.fail(k, f"expected 'word = id = total n_papers', got {line.strip()!r}")
        wid, total, df = _parse_ints(member, k, [parts[1], *stats])
        if wid != k:
            member.fail(k, f"word id {wid} differs from its 0-based line index {k}")
        words.append(parts[0])
        totals.append(total)
        dfs.append(df)
    return words, np.asarray(totals, dtype=np.int64), np.asarray(dfs, dtype=np.int64)


def _parse_authors(member: _Member, n_authors: int) -> sp.csr_matrix:
    """Space-separated author ids per paper -> papers x authors 0/1 incidence (CSR, int64)."""
    rows, cols = [], []
    for k, line in enumerate(member.lines):
        ids = _parse_ints(member, k, line.split())
        if ids.size and (ids.min() < 0 or ids.max() >= n_authors):
            bad = ids[(ids < 0) | (ids >= n_authors)][0]
            member.fail(k, f"author id {bad} outside [0, {n_authors}) (number of names)")
        if np.unique(ids).size != ids.size:
            member.fail(k, "an author id is repeated")
        rows.extend([k] * ids.size)
        cols.extend(ids.tolist())
    shape = (len(member.lines), n_authors)
    return sp.csr_matrix((np.ones(len(rows), dtype=np.int64), (rows, cols)), shape=shape)


def _parse_names(member: _Member) -> list[str]:
    names = [line.strip() for line in member.lines]
    for k, name in enumerate(names):
        if not name:
            member.fail(k, "empty name")
    return names


def read_corpus(path: str | Path) -> NipsCorpus:
    """Parse the NIPS 0-12 zip at ``path`` (raises DatasetError naming member and line)."""
    path = Path(path)
    try:
        archive = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError) as err:
        raise DatasetError(f"{path}: not a readable zip file ({err})") from None
    with archive:

        def member(key: str, encoding: str = "ascii") -> _Member:
            return _Member(archive, path, key, encoding)

        vocab = member("vocab")
        words, word_totals, word_dfs = _parse_vocab(vocab)
        authors = _parse_names(member("author_names"))
        step_names = _parse_names(member("vol_names"))
        titles_member = member("titles", "latin-1")
        titles = [line.strip() for line in titles_member.lines]
        n_papers = len(titles)

        corpus = member("corpus")
        corpus.expect_lines(n_papers, f"paper in {titles_member.name}")
        paper_words = _parse_corpus(corpus, len(words))

        authors_member = member("authors")
        authors_member.expect_lines(n_papers, f"paper in {titles_member.name}")
        paper_authors = _parse_authors(authors_member, len(authors))

        vols = member("vols")
        vols.expect_lines(n_papers, f"paper in {titles_member.name}")
        paper_step = np.array(
            [_parse_ints(vols, k, [line.strip()])[0] for k, line in enumerate(vols.lines)],
            dtype=np.int64,
        )
        bad = np.flatnonzero((paper_step < 0) | (paper_step >= len(step_names)))
        if bad.size:
            vols.fail(int(bad[0]), f"volume {paper_step[bad[0]]} outside [0, {len(step_names)})")

    # the vocabulary's statistics must agree with the corpus
    totals = np.asarray(paper_words.sum(axis=0)).ravel()
    dfs = np.diff(paper_words.tocsc().indptr)
    bad = np.flatnonzero((totals != word_totals) | (dfs != word_dfs))
    if bad.size:
        w = int(bad[0])
        vocab.fail(
            w,
            f"word {words[w]!r}: vocabulary says {word_totals[w]} occurrences in {word_dfs[w]} "
            f"papers, {corpus.name} has {totals[w]} in {dfs[w]}",
        )
    return NipsCorpus(
        paper_words=paper_words,
        paper_authors=paper_authors,
        paper_step=paper_step,
        words=words,
        authors=authors,
        titles=titles,
        step_names=step_names,
    )


def _corpus_counts(corpus: NipsCorpus) -> dict[str, int]:
    return {
        "papers": len(corpus.titles),
        "words": len(corpus.words),
        "authors": len(corpus.authors),
        "time_steps": corpus.n_steps,
    }


# --------------------------------------------------------------------------------------
# builders


def cooccurrence_counts(corpus: NipsCorpus) -> list[sp.csr_matrix]:
    """``C_t = A_t^T W_t`` for every volume t: authors x words counts (CSR, int64)."""
    counts = []
    for t in range(corpus.n_steps):
        in_step = corpus.paper_step == t
        c = (corpus.paper_authors[in_step].T @ corpus.paper_words[in_step]).tocsr()
        c.sort_indices()
        counts.append(c)
    return counts


def build_cooccurrence(files: dict) -> Artifact:
    """D-CODE's NIPS sequence: one authors x words count matrix per volume (13 steps).

    Arrays: ``counts`` (list of T sparse authors x words), ``paper_step`` (volume per paper),
    ``paper_words`` (sparse papers x words counts), ``paper_authors`` (sparse papers x authors
    0/1). Items (``role``): authors (name, n_papers), words (name, n_papers = papers using it,
    occurrences = total count), papers (name = title, step = volume); ``index`` is the row
    within the role and inapplicable integer columns hold -1.
    """
    corpus = read_corpus(raw_file(files, ZIP_FILE))
    n_authors, n_words, n_papers = len(corpus.authors), len(corpus.words), len(corpus.titles)
    author_papers = np.diff(corpus.paper_authors.tocsc().indptr)
    word_papers = np.diff(corpus.paper_words.tocsc().indptr)
    word_totals = np.asarray(corpus.paper_words.sum(axis=0)).ravel()
    items = pd.concat(
        [
            pd.DataFrame(
                {
                    "role": "author",
                    "index": np.arange(n_authors),
                    "name": corpus.authors,
                    "n_papers": author_papers,
                    "occurrences": -1,
                    "step": -1,
                }
            ),
            pd.DataFrame(
                {
                    "role": "word",
                    "index": np.arange(n_words),
                    "name": corpus.words,
                    "n_papers": word_papers,
                    "occurrences": word_totals,
                    "step": -1,
                }
            ),
            pd.DataFrame(
                {
                    "role": "paper",
                    "index": np.arange(n_papers),
                    "name": corpus.titles,
                    "n_papers": -1,
                    "occurrences": -1,
                    "step": corpus.paper_step,
                }
            ),
        ],
        ignore_index=True,
    )
    arrays = {
        "counts": cooccurrence_counts(corpus),
        "paper_step": corpus.paper_step,
        "paper_words": corpus.paper_words,
        "paper_authors": corpus.paper_authors,
    }
    meta = {"counts": _corpus_counts(corpus), "step_names": corpus.step_names}
    return Artifact(kind="cooccurrence", arrays=arrays, items=items, meta=meta)


def build_text(files: dict, author_weight: float = 20) -> Artifact:
    """Diffeomap's NIPS text vectors: ``X = [W | author_weight * A]`` (papers x (words+authors)).

    ``X`` is dense float64 (1740 x 15686 for the full corpus); ``paper_authors`` (sparse 0/1)
    is kept so an experiment can pick its set of author classes. No ``labels`` are stored.
    Items: one per paper (name = title, step = volume).
    """
    if not np.isfinite(author_weight) or author_weight <= 0:
        raise ValueError(
            f"nips_text: author_weight must be a positive number, got {author_weight!r}"
        )
    corpus = read_corpus(raw_file(files, ZIP_FILE))
    X = sp.hstack(
        [
            corpus.paper_words.astype(np.float64),
            float(author_weight) * corpus.paper_authors.astype(np.float64),
        ],
        format="csr",
    ).toarray()
    items = pd.DataFrame({"name": corpus.titles, "step": corpus.paper_step})
    counts = {**_corpus_counts(corpus), "dims": int(X.shape[1])}
    return Artifact(
        kind="vectors",
        arrays={"X": X, "paper_authors": corpus.paper_authors},
        items=items,
        meta={"counts": counts, "n_word_columns": len(corpus.words)},
    )
