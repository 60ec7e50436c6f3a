"""SCHOOL: the SNEST paper's synthetic social network (n = 2 * (n_students + 1)).

Each of two classes has ``n_students`` students on a ring; student i is linked to students
i +- 1 .. i +- ring_neighbours (mod n_students) and to the class's teacher; the two teachers are
linked to each other. P is uniform over linked ordered pairs (each link counted as (i, j) and
(j, i)).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import scipy.sparse as sp

from embedlab.artifacts import Artifact


def school_links(n_students: int = 20, ring_neighbours: int = 2) -> list[tuple[int, int]]:
    """Undirected links (i < j). Items: class 0 students, teacher 0, class 1 students, teacher 1."""
    if n_students < 2 * ring_neighbours + 1:
        raise ValueError(
            f"school: n_students={n_students} is too small for ring_neighbours={ring_neighbours}"
        )
    links: set[tuple[int, int]] = set()
    block = n_students + 1
    for c in range(2):
        base, teacher = c * block, c * block + n_students
        for s in range(n_students):
            for k in range(1, ring_neighbours + 1):
                a, b = base + s, base + (s + k) % n_students
                links.add((min(a, b), max(a, b)))
            links.add((base + s, teacher))
    links.add((n_students, block + n_students))
    return sorted(links)


def build(files: dict, n_students: int = 20, ring_neighbours: int = 2) -> Artifact:
    """Build SCHOOL: uniform P over the links of :func:`school_links`."""
    n = 2 * (n_students + 1)
    links = np.asarray(school_links(n_students, ring_neighbours))
    rows = np.concatenate([links[:, 0], links[:, 1]])
    cols = np.concatenate([links[:, 1], links[:, 0]])
    P = sp.csr_matrix((np.full(rows.size, 1.0 / rows.size), (rows, cols)), shape=(n, n))
    role = (["student"] * n_students + ["teacher"]) * 2
    klass = np.repeat([0, 1], n_students + 1)
    names = [
        f"{'T' if r == 'teacher' else 'S'}{c}.{i % (n_students + 1)}"
        for i, (r, c) in enumerate(zip(role, klass, strict=True))
    ]
    items = pd.DataFrame({"name": names, "class": klass, "role_in_class": role})
    return Artifact(
        kind="similarity",
        arrays={"P": P, "labels": klass, "links": links},
        items=items,
        meta={"counts": {"links": int(len(links))}},
    )
