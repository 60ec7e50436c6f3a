"""aset400 music-artist triplets (t-STE, Fig. 2 right and Fig. 4) with super-genre labels.

``music_triplets.mat``: ``triplets`` (9107 x 3), 1-based artist indices up to 412 ("i is more
similar to j than to l"). The artists that occur (400) are relabelled 0..n-1 in increasing
order of their original index. 17 rows of the file repeat an index (14 with i = j, which any
embedding satisfies, 3 with i = l, which none can); they are dropped, leaving 9090 triplets over
the same 400 artists (``meta["counts"]`` records both numbers).

``music_labels.mat`` (MATLAB v7.3 = HDF5): ``label_matrix`` (artists x 58 tags in MATLAB; h5py
shows it transposed, 58 x 412) and ``lablist`` (the tag names). The file has no artist names,
so an artist's name is its original 1-based index.

Genres: tag k (1-based, file order) belongs to super-genre ``SUPER_GENRE_OF_TAG[k-1]`` (1..8 =
rock, metal, pop, dance, hiphop, jazz, country, reggae). The paper labels an artist with "its
first super-genre present", else "other". Two readings, chosen by ``genre_rule``:

* ``"super_genre_order"`` (default): the lowest-numbered super-genre among the artist's tags
  (rock before metal before pop ...). This is what van der Maaten's STE_Release experiment
  scripts do (``find(any-tag-of-super-genre, 1, 'first')``).
* ``"first_tag"``: the super-genre of the artist's first tag in file order.

The two disagree for 100 of the 400 artists (rock 237 vs 175, hiphop 29 vs 79).
"""

from __future__ import annotations

import html
from pathlib import Path

import h5py
import numpy as np
import pandas as pd

from embedlab.artifacts import Artifact
from embedlab.datasets import DatasetError
from embedlab.datasets.readers import check_shape, load_mat, raw_file, require

TRIPLETS = "music/music_triplets.mat"
LABELS = "music/music_labels.mat"
SUPER_GENRES = ("rock", "metal", "pop", "dance", "hiphop", "jazz", "country", "reggae", "other")
SUPER_GENRE_OF_TAG = np.array(
    [5, 1, 1, 1, 1, 1, 1, 1, 5, 3, 3, 3, 3, 2, 1, 1, 4, 4, 4, 1, 4, 7, 7, 4, 1, 2, 2, 1, 5,
     6, 6, 6, 8, 1, 3, 4, 4, 1, 3, 1, 2, 2, 1, 7, 7, 1, 1, 1, 1, 1, 4, 5, 2, 3, 6, 2, 2, 5]
)
GENRE_RULES = ("super_genre_order", "first_tag")


def read_triplets(path: Path) -> np.ndarray:
    """The 1-based triplets of ``music_triplets.mat`` as an (m, 3) int64 array."""
    triplets = load_mat(path, ("triplets",))["triplets"]
    check_shape(path, "triplets", triplets, (None, 3))
    triplets = triplets.astype(np.int64)
    require(triplets.size > 0 and triplets.min() >= 1, path, "triplet indices must be >= 1")
    return triplets


def read_tags(path: Path) -> tuple[np.ndarray, list[str]]:
    """``label_matrix`` as a boolean (artists x tags) array, and the tag names."""
    try:
        with h5py.File(path, "r") as mat:
            membership = np.asarray(mat["label_matrix"]).T.astype(bool)
            refs = np.asarray(mat["lablist"]).ravel()
            tags = [html.unescape("".join(map(chr, np.asarray(mat[r]).ravel()))) for r in refs]
    except (OSError, KeyError, TypeError, ValueError) as exc:
        raise DatasetError(
            f"{path}: not a MATLAB v7.3 file with 'label_matrix' and 'lablist': {exc}"
        ) from exc
    require(
        membership.shape[1] == len(tags) == len(SUPER_GENRE_OF_TAG),
        path,
        f"label_matrix has {membership.shape[1]} tags and lablist {len(tags)}; "
        f"the super-genre map has {len(SUPER_GENRE_OF_TAG)}",
    )
    return membership, tags


def super_genre(membership: np.ndarray, genre_rule: str) -> np.ndarray:
    """Genre index per artist (0..7 as in SUPER_GENRES; 8 = other) from its tags."""
    other = len(SUPER_GENRES) - 1
    has_tag = membership.any(axis=1)
    if genre_rule == "first_tag":
        genre = SUPER_GENRE_OF_TAG[membership.argmax(axis=1)] - 1
    elif genre_rule == "super_genre_order":
        has_genre = np.stack(
            [membership[:, SUPER_GENRE_OF_TAG == g + 1].any(axis=1) for g in range(other)], axis=1
        )
        genre = has_genre.argmax(axis=1)
    else:
        raise ValueError(f"genre_rule={genre_rule!r}; expected one of {GENRE_RULES}")
    return np.where(has_tag, genre, other).astype(np.int64)


def build(files: dict, genre_rule: str = "super_genre_order") -> Artifact:
    """Triplets relabelled to the artists that occur; labels = super-genre (see module doc)."""
    if genre_rule not in GENRE_RULES:
        raise ValueError(f"music: genre_rule={genre_rule!r}; expected one of {GENRE_RULES}")
    triplets_path, labels_path = raw_file(files, TRIPLETS), raw_file(files, LABELS)
    original = read_triplets(triplets_path)
    membership, tags = read_tags(labels_path)
    require(
        original.max() <= membership.shape[0],
        triplets_path,
        f"artist index {original.max()} exceeds the {membership.shape[0]} artists "
        f"in {labels_path.name}",
    )
    included, triplets = np.unique(original, return_inverse=True)
    triplets = triplets.reshape(original.shape).astype(np.int64)
    degenerate = (
        (triplets[:, 0] == triplets[:, 1])
        | (triplets[:, 0] == triplets[:, 2])
        | (triplets[:, 1] == triplets[:, 2])
    )
    triplets = triplets[~degenerate]
    artist_tags = membership[included - 1]
    genre = super_genre(artist_tags, genre_rule)
    items = pd.DataFrame(
        {
            "name": [str(i) for i in included],
            "genre": [SUPER_GENRES[g] for g in genre],
            "original_index": included,
            "tags": [";".join(t for t, on in zip(tags, row, strict=True) if on)
                     for row in artist_tags],
        }
    )
    return Artifact(
        kind="triplets",
        arrays={"triplets": triplets, "labels": genre},
        items=items,
        meta={
            "n": int(len(included)),
            "label_names": list(SUPER_GENRES),
            "genre_rule": genre_rule,
            "counts": {
                "artists_in_file": int(membership.shape[0]),
                "triplets_in_file": int(len(original)),
                "degenerate_dropped": int(degenerate.sum()),
            },
        },
    )
