"""Triplet dataset builders: t-STE MNIST nearest-neighbour triplets and aset400 music."""

from __future__ import annotations

import h5py
import numpy as np
import pytest
import scipy.io

from embedlab.datasets import DatasetError, mnist, music

# --------------------------------------------------------------------------------------
# idx reader on hand-made files


def write_idx(path, values: np.ndarray, magic: bytes | None = None) -> None:
    values = np.asarray(values, dtype=np.uint8)
    head = magic if magic is not None else bytes([0, 0, 0x08, values.ndim])
    dims = np.asarray(values.shape, dtype=">i4").tobytes()
    path.write_bytes(head + dims + values.tobytes())


@pytest.fixture
def tiny_mnist(tmp_path):
    """A 3-image, 28 x 28 training set: image k is filled with grey level 100 k."""
    images = np.stack([np.full((28, 28), 100 * k, dtype=np.uint8) for k in range(3)])
    files = {mnist.IMAGES: tmp_path / "images", mnist.LABELS: tmp_path / "labels"}
    write_idx(files[mnist.IMAGES], images)
    write_idx(files[mnist.LABELS], np.array([7, 0, 3]))
    return files


def test_read_idx_round_trip(tiny_mnist):
    images, labels = mnist.read_training_set(tiny_mnist)
    assert images.shape == (3, 784)
    assert labels.tolist() == [7, 0, 3]
    assert images[:, 0].tolist() == [0, 100, 200]


def test_build_vectors_on_tiny_file_scales_pixels(tiny_mnist):
    art = mnist.build_vectors(tiny_mnist, n_digits=3, seed=1)
    order = art.items["training_index"].to_numpy()
    assert sorted(order.tolist()) == [0, 1, 2]
    np.testing.assert_allclose(art["X"][:, 5], 100 * order / 255.0)
    assert art["labels"].tolist() == [[7, 0, 3][i] for i in order]


def test_build_vectors_pools_training_and_test_sets(tmp_path, tiny_mnist):
    """Two test images (grey levels 50 and 150) after the three training ones: all five."""
    files = dict(tiny_mnist)
    files[mnist.TEST_IMAGES], files[mnist.TEST_LABELS] = tmp_path / "ti", tmp_path / "tl"
    write_idx(files[mnist.TEST_IMAGES], np.stack([np.full((28, 28), g) for g in (50, 150)]))
    write_idx(files[mnist.TEST_LABELS], np.array([4, 9]))
    art = mnist.build_vectors(files, n_digits=5, seed=0, sets=["train", "test"])
    assert art.items["name"].tolist() == ["train0", "train1", "train2", "test0", "test1"]
    assert art.items["set"].tolist() == ["train"] * 3 + ["test"] * 2
    assert art.items["set_index"].tolist() == [0, 1, 2, 0, 1]
    np.testing.assert_allclose(art["X"][:, 0] * 255.0, [0, 100, 200, 50, 150])
    assert art["labels"].tolist() == [7, 0, 3, 4, 9] and art.meta["sets"] == ["train", "test"]
    with pytest.raises(DatasetError, match="n_digits=6"):
        mnist.build_vectors(files, n_digits=6, sets=["train", "test"])
    with pytest.raises(DatasetError, match="distinct"):
        mnist.build_vectors(files, n_digits=2, sets=["train", "train"])
    with pytest.raises(DatasetError, match="validation"):
        mnist.build_vectors(files, n_digits=2, sets=["validation"])


def test_read_idx_gzip(tmp_path, tiny_mnist):
    import gzip

    packed = tmp_path / "images.gz"
    packed.write_bytes(gzip.compress(tiny_mnist[mnist.IMAGES].read_bytes()))
    assert mnist.read_idx(packed, 3).shape == (3, 28, 28)


@pytest.mark.parametrize(
    "damage, message",
    [
        (lambda b: b"\x00\x00\x0d\x03" + b[4:], "magic"),  # float type code
        (lambda b: b[:-1], "does not match"),  # truncated
        (lambda b: b + b"\x00", "does not match"),  # trailing byte
        (lambda b: b[:6], "too short"),
    ],
)
def test_read_idx_rejects_malformed(tiny_mnist, damage, message):
    path = tiny_mnist[mnist.IMAGES]
    path.write_bytes(damage(path.read_bytes()))
    with pytest.raises(DatasetError, match=message) as err:
        mnist.read_training_set(tiny_mnist)
    assert str(path) in str(err.value)


def test_label_count_mismatch(tiny_mnist):
    write_idx(tiny_mnist[mnist.LABELS], np.array([1, 2]))
    with pytest.raises(DatasetError, match="2 labels for 3 images"):
        mnist.read_training_set(tiny_mnist)


def test_label_file_with_image_magic_is_rejected(tiny_mnist):
    write_idx(tiny_mnist[mnist.LABELS], np.zeros((3, 1, 1)))
    with pytest.raises(DatasetError, match="magic"):
        mnist.read_training_set(tiny_mnist)


# --------------------------------------------------------------------------------------
# the triplet sampler on a hand-made distance matrix


def line_distances(points) -> np.ndarray:
    x = np.asarray(points, dtype=np.int64)
    return ((x[:, None] - x[None, :]) ** 2).astype(np.int32)


def test_sampler_respects_neighbours_and_ties():
    # points 0, 1, 1, 2, 5, 9: item 0's 2 nearest are items 1 and 2 (both at distance 1),
    # item 1's are item 2 (distance 0) and one of items 0/3 (distance 1, tie -> item 0).
    dist = line_distances([0, 1, 1, 2, 5, 9])
    rng = np.random.default_rng(3)
    T = mnist.neighbour_triplets(dist, 20000, 2, rng)
    assert T.dtype == np.int64 and T.shape == (20000, 3)
    i, j, l = T.T
    assert (dist[i, l] > dist[i, j]).all()
    for item in range(6):
        others = np.delete(np.arange(6), item)
        rank = np.argsort(dist[item, others], kind="stable")
        allowed = set(others[rank[:2]].tolist())
        assert set(j[i == item].tolist()) <= allowed
    assert set(j[i == 1].tolist()) == {2, 0}
    # l is uniform over the strictly farther items: for i = 0, j in {1, 2} (d = 1), l in {3, 4, 5}
    counts = np.bincount(l[i == 0], minlength=6)
    assert counts[:3].sum() == 0
    share = counts[3:] / counts[3:].sum()
    np.testing.assert_allclose(share, 1 / 3, atol=0.04)
    # i uniform, j uniform over its 2 neighbours
    np.testing.assert_allclose(np.bincount(i, minlength=6) / len(i), 1 / 6, atol=0.02)
    np.testing.assert_allclose(np.mean(j[i == 0] == 1), 0.5, atol=0.04)


def test_sampler_fails_when_nothing_is_farther():
    dist = line_distances([0, 1, 1, 1])  # from item 0 every other item is at distance 1
    with pytest.raises(ValueError, match="farther"):
        mnist.neighbour_triplets(dist, 1000, 1, np.random.default_rng(0))


def test_squared_distances_are_exact():
    rng = np.random.default_rng(0)
    pix = rng.integers(0, 256, size=(40, 784), dtype=np.uint8)
    ref = ((pix[:, None, :].astype(np.int64) - pix[None, :, :]) ** 2).sum(-1)
    np.testing.assert_array_equal(mnist.squared_distances(pix), ref)


# --------------------------------------------------------------------------------------
# MNIST triplets from the mirror


SMALL = {"n_digits": 300, "n_triplets": 5000}


@pytest.fixture(scope="module")
def mnist_pixels(mirror):
    files = {k: mirror / k for k in (mnist.IMAGES, mnist.LABELS)}
    return mnist.read_training_set(files)


def test_mnist_triplets_structure(build_from_mirror, mnist_pixels):
    art = build_from_mirror("mnist_triplets_1k", **SMALL)
    T = art["triplets"]
    assert art.kind == "triplets" and art.meta["n"] == 300
    assert T.shape == (5000, 3) and T.dtype == np.int64
    assert T.min() >= 0 and T.max() < 300
    assert ((T[:, 0] != T[:, 1]) & (T[:, 0] != T[:, 2]) & (T[:, 1] != T[:, 2])).all()
    index = art.items["training_index"].to_numpy()
    assert len(np.unique(index)) == 300 and index.max() < 60000
    images, digits = mnist_pixels
    np.testing.assert_array_equal(art["labels"], digits[index])
    assert len(np.unique(art["labels"])) == 10
    # every item is drawn as i about n_triplets / n times
    assert np.bincount(T[:, 0], minlength=300).min() > 0


def test_mnist_triplets_neighbour_and_farther(build_from_mirror, mnist_pixels):
    art = build_from_mirror("mnist_triplets_1k", **SMALL)
    images, _ = mnist_pixels
    x = images[art.items["training_index"].to_numpy()].astype(np.int64)
    sample = art["triplets"][np.random.default_rng(1).choice(5000, 200, replace=False)]
    for i, j, l in sample:
        d = ((x - x[i]) ** 2).sum(axis=1)
        d[i] = -1
        closer = int((d < d[j]).sum()) - 1  # items other than i strictly closer than j
        assert closer < 50, f"j={j} is not among the 50 nearest of i={i}"
        assert d[l] > d[j]


def test_mnist_triplets_deterministic(build_from_mirror):
    a = build_from_mirror("mnist_triplets_1k", **SMALL)
    b = build_from_mirror("mnist_triplets_1k", **SMALL, seed=0)  # a separate build
    c = build_from_mirror("mnist_triplets_1k", **SMALL, seed=1)
    np.testing.assert_array_equal(a["triplets"], b["triplets"])
    assert not np.array_equal(a["triplets"], c["triplets"])
    assert not np.array_equal(a.items["training_index"], c.items["training_index"])


def test_mnist_triplets_rejects_bad_params(build_from_mirror):
    with pytest.raises(DatasetError, match="n_neighbours"):
        build_from_mirror("mnist_triplets_1k", n_digits=30, n_triplets=10, n_neighbours=50)


# --------------------------------------------------------------------------------------
# music


def test_music_from_mirror(build_from_mirror):
    art = build_from_mirror("music")
    T = art["triplets"]
    assert art.meta["n"] == 400 and art.n == 400
    counts = art.meta["counts"]
    assert counts["triplets_in_file"] == 9107
    assert len(T) + counts["degenerate_dropped"] == 9107
    assert 0 < counts["degenerate_dropped"] < 50
    assert T.dtype == np.int64 and T.min() == 0 and T.max() == 399
    assert len(np.unique(T)) == 400
    hist = np.bincount(art["labels"], minlength=9)
    assert len(hist) == 9 and (hist > 0).all()  # all 8 super-genres and "other" occur
    assert hist.argmax() == music.SUPER_GENRES.index("rock")
    assert art.items["genre"].tolist() == [music.SUPER_GENRES[g] for g in art["labels"]]
    orig = art.items["original_index"].to_numpy()
    assert (np.diff(orig) > 0).all() and orig.max() == 412


def test_music_triplets_match_file(build_from_mirror, mirror):
    art = build_from_mirror("music")
    raw = scipy.io.loadmat(mirror / music.TRIPLETS)["triplets"].astype(np.int64)
    keep = (raw[:, 0] != raw[:, 1]) & (raw[:, 0] != raw[:, 2]) & (raw[:, 1] != raw[:, 2])
    orig = art.items["original_index"].to_numpy()
    np.testing.assert_array_equal(orig[art["triplets"]], raw[keep])


def write_music(tmp_path, triplets, membership, tags):
    """A v5 triplet file and a v7.3-style (HDF5) label file shaped like STE_Release's."""
    files = {music.TRIPLETS: tmp_path / "t.mat", music.LABELS: tmp_path / "l.mat"}
    scipy.io.savemat(files[music.TRIPLETS], {"triplets": np.asarray(triplets, dtype=np.uint16)})
    with h5py.File(files[music.LABELS], "w") as f:
        f["label_matrix"] = np.asarray(membership, dtype=np.uint8).T  # tags x artists on disk
        refs = []
        for k, tag in enumerate(tags):
            f[f"#refs#/{k}"] = np.array([[ord(c)] for c in tag], dtype=np.uint16)
            refs.append(f[f"#refs#/{k}"].ref)
        f.create_dataset("lablist", data=np.array([refs], dtype=h5py.ref_dtype))
    return files


def tiny_membership():
    # 58 tags; tag 1 -> hiphop(5), tag 2 -> rock(1), tag 10 -> pop(3), tag 14 -> metal(2)
    m = np.zeros((5, 58), dtype=bool)
    m[0, [0, 1]] = True  # r&b + alternative rock: first tag says hiphop, super-genre order rock
    m[1, 9] = True  # pop
    m[2, 13] = True  # metal
    # artist 4 (index 3) has no tags -> other; artist 5 never occurs in a triplet
    return m


def test_music_tiny_files(tmp_path):
    tags = [f"tag{k}" for k in range(58)]
    tags[0] = "r&amp;b"
    triplets = [[1, 2, 3], [4, 1, 2], [2, 2, 3]]  # the last row is degenerate
    files = write_music(tmp_path, triplets, tiny_membership(), tags)
    art = music.build(files)
    assert art.meta["n"] == 4
    assert art["triplets"].tolist() == [[0, 1, 2], [3, 0, 1]]
    assert art.items["genre"].tolist() == ["rock", "pop", "metal", "other"]
    assert art.items["tags"][0] == "r&b;tag1"
    first = music.build(files, genre_rule="first_tag")
    assert first.items["genre"].tolist() == ["hiphop", "pop", "metal", "other"]
    with pytest.raises(ValueError, match="genre_rule"):
        music.build(files, genre_rule="majority")


def test_music_rejects_index_beyond_labels(tmp_path):
    files = write_music(tmp_path, [[1, 2, 9]], tiny_membership(), ["t"] * 58)
    with pytest.raises(DatasetError, match="artist index 9"):
        music.build(files)


def test_music_rejects_malformed_files(tmp_path):
    files = write_music(tmp_path, [[1, 2, 3]], tiny_membership(), ["t"] * 58)
    files[music.LABELS].write_bytes(b"not hdf5")
    with pytest.raises(DatasetError, match="l.mat"):
        music.build(files)
    scipy.io.savemat(files[music.TRIPLETS], {"triplets": np.ones((3, 2))})
    with pytest.raises(DatasetError, match="t.mat.*shape"):
        music.build(files)


# --------------------------------------------------------------------------------------
# the authors' released rule (STE_Release) on a hand-made point set


def test_authors_rule_gives_exactly_the_expected_rank_ranges():
    # 8 points on a line at distinct distances from each other: ranks are unambiguous
    x = np.array([0.0, 1.0, 3.0, 6.0, 10.0, 15.0, 21.0, 28.0])
    dist = (x[:, None] - x[None, :]) ** 2
    order = mnist.rank_order(dist)
    n, max_away = len(x), 3
    assert (order[:, 0] == np.arange(n)).all()  # rank 1 is i itself
    T = mnist.authors_triplets(order, 40000, max_away, np.random.default_rng(5))
    assert T.dtype == np.int64 and T.shape == (40000, 3)
    rank = np.argsort(order, axis=1) + 1  # rank[i, p] = 1-based rank of p from i
    i, j, l = T.T
    r_j, r_l = rank[i, j], rank[i, l]
    assert set(r_j.tolist()) == {1, 2, 3}  # j rank uniform over 1..max_away
    assert (j[r_j == 1] == i[r_j == 1]).all()  # rank 1: j = i, kept
    for r in (1, 2, 3):  # l at rank r + 1 .. r + max_away, capped at n
        got = set(r_l[r_j == r].tolist())
        assert got == set(range(r + 1, min(n, r + max_away) + 1)), (r, got)
    np.testing.assert_allclose(np.mean(r_j == 1), 1 / max_away, atol=0.01)
    np.testing.assert_allclose(np.bincount(i, minlength=n) / len(i), 1 / n, atol=0.01)
    # the cap: with max_away = n - 1 the largest ranks pile up on rank n
    T = mnist.authors_triplets(order, 20000, n - 1, np.random.default_rng(1))
    r_j, r_l = rank[T[:, 0], T[:, 1]], rank[T[:, 0], T[:, 2]]
    assert r_l.max() == n and (r_l > r_j).all()
    # u = 1..7 from r = 7: every l is rank 8 (= n)
    assert (r_l[r_j == 7] == n).all()


def test_authors_rank_order_puts_i_first_beside_duplicates():
    dist = np.array([[0.0, 0.0, 1.0], [0.0, 0.0, 1.0], [1.0, 1.0, 0.0]])
    order = mnist.rank_order(dist)
    assert order.tolist() == [[0, 1, 2], [1, 0, 2], [2, 0, 1]]


def test_authors_rule_rejects_a_max_away_out_of_range():
    order = mnist.rank_order(np.zeros((4, 4)))
    with pytest.raises(ValueError, match="max_away=4"):
        mnist.authors_triplets(order, 10, 4, np.random.default_rng(0))


def test_authors_triplets_on_tiny_file(tmp_path):
    # 6 images: grey levels 0, 10, 30, 70, 150, 250 (PCA-1 is the grey level, up to sign);
    # no two distances from one image are equal, so no rank hangs on a rounding-level tie
    levels = [0, 10, 30, 70, 150, 250]
    images = np.stack([np.full((28, 28), v, dtype=np.uint8) for v in levels])
    files = {mnist.IMAGES: tmp_path / "images", mnist.LABELS: tmp_path / "labels"}
    write_idx(files[mnist.IMAGES], images)
    write_idx(files[mnist.LABELS], np.arange(6))
    art = mnist.build_triplets_authors(
        files, n_digits=6, n_triplets=3000, max_away=2, pca_dims=1, seed=0
    )
    assert art.meta["self_triplets"] is True and art.meta["n"] == 6
    T = art["triplets"]
    g = np.asarray(levels, dtype=float)[art.items["training_index"].to_numpy()]
    d = np.abs(g[:, None] - g[None, :])
    rank = np.argsort(mnist.rank_order(d**2), axis=1) + 1
    r_j, r_l = rank[T[:, 0], T[:, 1]], rank[T[:, 0], T[:, 2]]
    assert set(r_j.tolist()) == {1, 2}
    assert ((r_l > r_j) & (r_l <= r_j + 2)).all()
    assert (T[:, 0] == T[:, 1]).any() and (T[:, 0] != T[:, 2]).all()
    assert art.meta["counts"]["self_triplets"] == int((T[:, 0] == T[:, 1]).sum())
    with pytest.raises(DatasetError, match="max_away=6"):
        mnist.build_triplets_authors(files, n_digits=6, n_triplets=10, max_away=6)


def test_authors_triplets_from_mirror(build_from_mirror, mnist_pixels):
    art = build_from_mirror("mnist_triplets_1k_authors", n_digits=300, n_triplets=5000)
    T = art["triplets"]
    assert art.meta["n"] == 300 and art.meta["self_triplets"] is True
    assert T.shape == (5000, 3) and T.min() >= 0 and T.max() < 300
    max_away = 50  # the registry's value
    self_share = float(np.mean(T[:, 0] == T[:, 1]))
    assert 0.5 / max_away < self_share < 1.5 / max_away
    # ranks in the PCA-50 space of the whole training set
    images, digits = mnist_pixels
    np.testing.assert_array_equal(art["labels"], digits[art.items["training_index"]])
    scores = mnist.pca_scores(images, 50)[art.items["training_index"].to_numpy()]
    for i, j, l in T[np.random.default_rng(0).choice(5000, 200, replace=False)]:
        d = ((scores - scores[i]) ** 2).sum(axis=1)
        d[i] = -1.0
        rj = int((d < d[j]).sum()) + 1  # 1-based rank (no ties in float PCA distances)
        rl = int((d < d[l]).sum()) + 1
        assert 1 <= rj <= max_away and rj < rl <= rj + max_away


def test_self_triplets_are_valid_only_where_the_artifact_says_so():
    import pandas as pd

    from embedlab import artifacts
    from embedlab.methods.triplets import check_triplets

    items = pd.DataFrame({"name": ["a", "b", "c"]})

    def art(T, **meta):
        return artifacts.Artifact("triplets", {"triplets": np.asarray(T)}, items, {"n": 3, **meta})

    T = np.array([[0, 0, 1], [1, 2, 0]])
    artifacts.validate(art(T, self_triplets=True), "authors")
    with pytest.raises(artifacts.ArtifactError, match="row 0 repeats"):
        artifacts.validate(art(T), "paper_text")
    with pytest.raises(artifacts.ArtifactError, match="repeats"):
        artifacts.validate(art([[0, 1, 1]], self_triplets=True), "authors")
    check_triplets(T, allow_self=True)
    with pytest.raises(ValueError, match="row 0 repeats"):
        check_triplets(T)
    for row in ([0, 1, 0], [1, 0, 0]):
        with pytest.raises(ValueError, match="repeats"):
            check_triplets([row], n=3, allow_self=True)
