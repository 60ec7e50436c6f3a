"""The artifact contract: round trip, and each kind's invariants enforced with a named field."""

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp

from embedlab import artifacts
from embedlab.artifacts import Artifact, ArtifactError


def _similarity(P):
    n = P.shape[0]
    return Artifact("similarity", {"P": P}, pd.DataFrame({"name": [f"i{k}" for k in range(n)]}))


def _ring(n=5):
    rows = np.arange(n)
    W = sp.csr_matrix((np.ones(n), (rows, (rows + 1) % n)), shape=(n, n))
    P = W + W.T
    return P / P.sum()


def test_round_trip_all_kinds(tmp_path):
    rng = np.random.default_rng(0)
    arts = {
        "sim": _similarity(sp.csr_matrix(_ring())),
        "vec": Artifact(
            "vectors",
            {"X": rng.normal(size=(4, 3)), "labels": np.array([0, 1, 0, 1])},
            pd.DataFrame({"name": list("abcd")}),
        ),
        "tri": Artifact(
            "triplets",
            {"triplets": np.array([[0, 1, 2], [2, 1, 0]], dtype=np.int64)},
            pd.DataFrame({"name": list("abc")}),
            {"n": 3},
        ),
        "coo": Artifact(
            "cooccurrence",
            {"counts": [sp.csr_matrix(np.eye(2, 3)), sp.csr_matrix(np.ones((2, 3)))]},
            pd.DataFrame(
                {"name": ["a1", "a2", "w1", "w2", "w3"], "role": ["author"] * 2 + ["word"] * 3}
            ),
        ),
    }
    for name, art in arts.items():
        artifacts.save(art, tmp_path / name, name)
        back = artifacts.load(tmp_path / name)
        assert back.kind == art.kind
        assert back.n == art.n
        assert back.summary() == art.summary()
        for key, value in art.arrays.items():
            got = back.arrays[key]
            if isinstance(value, list):
                assert all((a != b).nnz == 0 for a, b in zip(value, got, strict=True))
            elif sp.issparse(value):
                assert abs(value - got).max() == 0
            else:
                np.testing.assert_array_equal(value, got)
        pd.testing.assert_frame_equal(back.items, art.items, check_dtype=False)


@pytest.mark.parametrize(
    "mutate, message",
    [
        (lambda P: P * 2, "sums to"),
        (
            lambda P: (
                P + sp.diags(np.full(5, 0.0)) + sp.csr_matrix(([0.1], ([0], [0])), shape=(5, 5))
            ),
            "diagonal",
        ),
        (lambda P: sp.csr_matrix(np.triu(P.toarray())) * 2, "not symmetric"),
        (
            lambda P: P.multiply(np.where(np.arange(5) == 3, np.nan, 1.0)[:, None]).tocsr(),
            "non-finite",
        ),
    ],
)
def test_similarity_invariants(mutate, message):
    with pytest.raises(ArtifactError, match=message) as err:
        artifacts.validate(_similarity(sp.csr_matrix(mutate(sp.csr_matrix(_ring())))), "toy")
    assert "'toy'" in str(err.value) and "'P'" in str(err.value)


def test_empty_row_is_named():
    P = sp.lil_matrix((4, 4))
    P[0, 1] = P[1, 0] = P[1, 2] = P[2, 1] = 0.25
    with pytest.raises(ArtifactError, match="empty rows .*item 3"):
        artifacts.validate(_similarity(P.tocsr()), "toy")


def test_triplet_invariants():
    items = pd.DataFrame({"name": list("abc")})
    bad_range = Artifact("triplets", {"triplets": np.array([[0, 1, 3]])}, items, {"n": 3})
    with pytest.raises(ArtifactError, match=r"indices must lie in \[0, 3\)"):
        artifacts.validate(bad_range)
    repeated = Artifact("triplets", {"triplets": np.array([[0, 1, 2], [1, 1, 2]])}, items, {"n": 3})
    with pytest.raises(ArtifactError, match=r"row 1 repeats an index: \[1, 1, 2\]"):
        artifacts.validate(repeated)


def test_vectors_reject_nan_and_bad_labels():
    items = pd.DataFrame({"name": list("ab")})
    with pytest.raises(ArtifactError, match="'X'.*non-finite"):
        artifacts.validate(Artifact("vectors", {"X": np.array([[0.0], [np.inf]])}, items))
    with pytest.raises(ArtifactError, match="'labels'"):
        artifacts.validate(
            Artifact("vectors", {"X": np.zeros((2, 1)), "labels": np.zeros(3)}, items)
        )


def test_load_refuses_unfinished_artifact(tmp_path):
    art = _similarity(sp.csr_matrix(_ring()))
    artifacts.save(art, tmp_path / "a")
    (tmp_path / "a" / "meta.json").unlink()
    with pytest.raises(FileNotFoundError, match="meta.json"):
        artifacts.load(tmp_path / "a")


def test_failed_save_leaves_no_meta(tmp_path):
    good = _similarity(sp.csr_matrix(_ring()))
    artifacts.save(good, tmp_path / "a")
    bad = _similarity(sp.csr_matrix(_ring()) * 3)
    with pytest.raises(ArtifactError):
        artifacts.save(bad, tmp_path / "a")
    # validation happens before anything is written: the old, valid artifact is intact
    assert artifacts.load(tmp_path / "a").summary() == good.summary()
