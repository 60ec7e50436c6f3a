"""Vector dataset builders: MNIST subset, mocap, vowel, USPS, faces, synthetic sets."""

from __future__ import annotations

import zipfile
from pathlib import Path

import numpy as np
import pytest
import scipy.io
from scipy.stats import spearmanr

from embedlab.artifacts import validate
from embedlab.datasets import DatasetError, faces, mnist, mocap, synthetic, usps, vowel

DATA = Path(__file__).parent / "data" / "vectors"


def assert_vectors(art, n: int, dims: int) -> None:
    validate(art, "test")
    X = art["X"]
    assert art.kind == "vectors"
    assert X.shape == (n, dims) and X.dtype == np.float64
    assert np.isfinite(X).all()
    if "labels" in art.arrays:
        assert art["labels"].shape == (n,)
        assert np.issubdtype(art["labels"].dtype, np.integer)
    assert len(art.items) == n


# --------------------------------------------------------------------------------------
# mirror builds


def test_mnist_6000(build_from_mirror, mirror):
    art = build_from_mirror("mnist_6000")
    assert_vectors(art, 6000, 784)
    assert art["X"].min() == 0.0 and art["X"].max() == 1.0
    index = art.items["training_index"].to_numpy()
    assert len(np.unique(index)) == 6000
    images, digits = mnist.read_training_set({k: mirror / k for k in (mnist.IMAGES, mnist.LABELS)})
    np.testing.assert_array_equal(art["X"] * 255.0, images[index])
    np.testing.assert_array_equal(art["labels"], digits[index])
    assert (np.bincount(art["labels"], minlength=10) > 450).all()  # ~600 per digit
    other = build_from_mirror("mnist_6000", seed=1)
    assert len(np.intersect1d(index, other.items["training_index"])) < 1000


def test_mnist_70000(build_from_mirror, mirror, registry):
    """The registry entry takes every digit of both sets; a 5000-digit build (the quick
    config's override) draws from both and matches the raw files."""
    params = registry["datasets"]["mnist_70000"]["params"]
    assert params["n_digits"] == 70000 and params["sets"] == ["train", "test"]
    art = build_from_mirror("mnist_70000", n_digits=5000)
    assert_vectors(art, 5000, 784)
    files = {k: mirror / k for k in (mnist.IMAGES, mnist.LABELS, *mnist.SETS["test"])}
    counts = art.items["set"].value_counts()
    assert 550 < counts["test"] < 900  # ~5000 / 7 from the test set
    for name in ("train", "test"):
        images, digits = mnist.read_set(files, name)
        assert len(images) == {"train": 60000, "test": 10000}[name]
        rows = (art.items["set"] == name).to_numpy()
        index = art.items.loc[rows, "set_index"].to_numpy()
        np.testing.assert_array_equal(art["X"][rows] * 255.0, images[index])
        np.testing.assert_array_equal(art["labels"][rows], digits[index])


def test_mocap(build_from_mirror):
    art = build_from_mirror("mocap")
    assert_vectors(art, 217, 102)
    np.testing.assert_array_equal(art["labels"], np.arange(217))
    assert len(art.meta["markers"]) == 34 and len(art.meta["dropped_markers"]) == 7
    assert "STRN" in art.meta["dropped_markers"]
    assert (np.abs(art["X"]) < 5000).all()  # no -9999.99 left
    assert (np.diff(art["time"]) > 0).all()
    edges = art["edges"]
    assert edges.shape[1] == 2 and 0 < len(edges) <= 22
    assert edges.min() >= 0 and edges.max() < 34
    # skeleton edges join markers a few hundred mm apart in every frame
    xyz = art["X"].reshape(217, 34, 3)
    lengths = np.linalg.norm(xyz[:, edges[:, 0]] - xyz[:, edges[:, 1]], axis=2)
    assert lengths.max() < 1000


def test_vowel(build_from_mirror):
    art = build_from_mirror("vowel")
    assert_vectors(art, 2700, 24)
    assert (np.bincount(art["labels"]) == 300).all() and art["labels"].max() == 8
    assert art.items["name"].nunique() == 9
    assert art.meta["kept_columns"] == [c for c in range(1, 27) if c not in (13, 26)]
    # every kept column varies (the dropped column 13 is nearly constant)
    assert art["X"].std(axis=0).min() > 0.3


def test_usps(build_from_mirror):
    art = build_from_mirror("usps")
    assert_vectors(art, 3000, 256)
    assert np.bincount(art["labels"]).tolist() == [600] * 5
    assert 0.0 <= art["X"].min() and art["X"].max() <= 1.0 and art["X"].max() > 0.9
    # the class coding (gnd = digit + 1): the mean 0 is a ring with a dark centre, the mean 1
    # a stroke through the centre
    centre = np.array(
        [art["X"][art["labels"] == d].mean(0).reshape(16, 16)[6:10, 6:10].mean() for d in range(5)]
    )
    assert centre.argmin() == 0 and centre.argmax() == 1


def test_frey(build_from_mirror):
    art = build_from_mirror("frey")
    assert_vectors(art, 1965, 560)
    assert 0.0 <= art["X"].min() and art["X"].max() <= 1.0
    assert art.meta["image_shape"] == [28, 20]


def test_olivetti(build_from_mirror):
    art = build_from_mirror("olivetti")
    assert_vectors(art, 400, 10304)
    assert np.bincount(art["labels"]).tolist() == [10] * 40
    assert art.meta["image_shape"] == [112, 92]
    assert 0.0 <= art["X"].min() and art["X"].max() <= 1.0
    assert art.items["name"][0] == "s1/1" and art.items["name"].iloc[-1] == "s40/10"


def test_coil20(build_from_mirror):
    art = build_from_mirror("coil20")
    assert_vectors(art, 1440, 256)
    assert np.bincount(art["labels"]).tolist() == [72] * 20
    assert 0.0 <= art["X"].min() and art["X"].max() <= 1.0


def test_swissroll(build_from_mirror):
    art = build_from_mirror("swissroll")
    assert_vectors(art, 2000, 3)
    t = art["t"]
    assert t.min() >= 1.5 * np.pi and t.max() <= 4.5 * np.pi
    np.testing.assert_allclose(art["X"][:, 0], t * np.cos(t))  # noise 0: exactly on the roll
    assert np.bincount(art["labels"]).tolist() == [200] * 10
    assert spearmanr(art["labels"], t).statistic > 0.99
    again = synthetic.build_swiss_roll({}, n_points=2000, seed=0)
    np.testing.assert_array_equal(again["X"], art["X"])


def test_s1k(build_from_mirror):
    art = build_from_mirror("s1k")
    assert_vectors(art, 1000, 9)
    labels = art["labels"]
    assert np.bincount(labels).tolist() == [100] * 10
    vertices = art["X"][::100]
    gaps = np.linalg.norm(vertices[:, None] - vertices[None], axis=2)
    np.testing.assert_allclose(gaps[~np.eye(10, dtype=bool)], 2.0)
    spread = art["X"] - vertices[labels]
    assert 0.45 < spread[np.arange(1000) % 100 != 0].std() < 0.55
    other = synthetic.build_s1k({}, seed=1)
    assert not np.array_equal(other["X"], art["X"])
    np.testing.assert_array_equal(synthetic.build_s1k({}, seed=0)["X"], art["X"])


def test_iris(build_from_mirror):
    art = build_from_mirror("iris")
    assert_vectors(art, 150, 4)
    assert np.bincount(art["labels"]).tolist() == [50, 50, 50]
    assert art.items["species"][0] == "setosa"


def test_simplex_vertices_regular():
    v = synthetic.simplex_vertices(4, 5, edge=3.0)
    d = np.linalg.norm(v[:, None] - v[None], axis=2)
    np.testing.assert_allclose(d[~np.eye(4, dtype=bool)], 3.0)
    np.testing.assert_allclose(v.mean(axis=0), 0.0, atol=1e-12)
    with pytest.raises(ValueError, match="dims"):
        synthetic.simplex_vertices(10, 8)


# --------------------------------------------------------------------------------------
# hand-made files


def mocap_files(tmp_path, table: bytes) -> dict:
    archive = tmp_path / "run.zip"
    with zipfile.ZipFile(archive, "w") as z:
        z.writestr("tiny.txt", table)
    return {mocap.MOTION: archive, mocap.CONNECTIONS: DATA / "mocap_connections.txt"}


def test_mocap_tiny_drops_gap_marker(tmp_path):
    files = mocap_files(tmp_path, (DATA / "mocap_tiny.txt").read_bytes())
    art = mocap.build(files, n_frames=4, n_dropped_markers=1)
    assert_vectors(art, 4, 6)
    assert art.meta["markers"] == ["HEAD", "FOOT"] and art.meta["dropped_markers"] == ["HAND"]
    np.testing.assert_array_equal(art["X"][0], [1, 2, 3, 7, 8, 9])
    assert art["edges"].tolist() == [[0, 1]]  # HEAD-FOOT; HEAD-HAND went with HAND
    np.testing.assert_allclose(art["time"], [0, 0.0083, 0.0167, 0.025])
    with pytest.raises(DatasetError, match="4 frames and 1 markers with gaps"):
        mocap.build(files)  # the real file's counts: 217 frames, 7 gappy markers


def test_mocap_rejects_malformed(tmp_path):
    table = (DATA / "mocap_tiny.txt").read_bytes().replace(b"Lab:FOOT:Z", b"Lab:FOOT:W")
    with pytest.raises(DatasetError, match="triples"):
        mocap.build(mocap_files(tmp_path, table), n_frames=4, n_dropped_markers=1)
    table = (DATA / "mocap_tiny.txt").read_bytes().replace(b"\t8.5\t", b"\tx\t")
    with pytest.raises(DatasetError, match="numeric"):
        mocap.build(mocap_files(tmp_path, table), n_frames=4, n_dropped_markers=1)
    bad = tmp_path / "bad.zip"
    bad.write_bytes(b"PK not really")
    with pytest.raises(DatasetError, match="bad.zip"):
        mocap.build({mocap.MOTION: bad})
    files = mocap_files(tmp_path, (DATA / "mocap_tiny.txt").read_bytes())
    files[mocap.CONNECTIONS] = tmp_path / "conn.txt"
    files[mocap.CONNECTIONS].write_text("HEAD, NOSE\n")
    with pytest.raises(DatasetError, match="NOSE"):
        mocap.build(files, n_frames=4, n_dropped_markers=1)


def test_read_pgm_tiny():
    image = faces.read_pgm((DATA / "face_4x3.pgm").read_bytes(), "face")
    assert image.shape == (4, 3)
    np.testing.assert_array_equal(image.ravel(), np.arange(0, 120, 10))


@pytest.mark.parametrize(
    "data, message",
    [
        (b"P2\n3 4\n255\n" + bytes(12), "magic"),
        (b"P5\n3 x\n255\n" + bytes(12), "header"),
        (b"P5\n3 4\n255\n" + bytes(11), "expected 12"),
        (b"P5\n3 4\n100\n" + bytes([200] * 12), "maxval"),
    ],
)
def test_read_pgm_rejects_malformed(data, message):
    with pytest.raises(DatasetError, match=message):
        faces.read_pgm(data, "bad.pgm")


def test_olivetti_tiny_zip(tmp_path):
    face = (DATA / "face_4x3.pgm").read_bytes()
    archive = tmp_path / "att.zip"
    with zipfile.ZipFile(archive, "w") as z:
        z.writestr("orl_faces/README", "faces")
        for subject in (2, 10, 1):
            for k in (2, 1):
                z.writestr(f"orl_faces/s{subject}/{k}.pgm", face)
    art = faces.build_olivetti({faces.OLIVETTI: archive})
    assert_vectors(art, 6, 12)
    assert art["labels"].tolist() == [0, 0, 1, 1, 9, 9]
    assert art.items["name"].tolist() == ["s1/1", "s1/2", "s2/1", "s2/2", "s10/1", "s10/2"]
    np.testing.assert_allclose(art["X"][0], np.arange(0, 120, 10) / 255.0)
    assert art.meta["image_shape"] == [4, 3]
    with zipfile.ZipFile(archive, "a") as z:
        z.writestr("orl_faces/s3/1.pgm", b"P5\n2 2\n255\n" + bytes(4))
    with pytest.raises(DatasetError, match="another size"):
        faces.build_olivetti({faces.OLIVETTI: archive})


def test_usps_tiny_mat(tmp_path):
    path = tmp_path / "USPS.mat"
    # classes coded digit + 1; code 1 (digit 0) stored last as in the real file
    gnd = np.array([2, 3, 2, 3, 1, 1, 2], dtype=np.uint8)
    fea = np.arange(7, dtype=np.uint8)[:, None].repeat(256, axis=1) * 30
    scipy.io.savemat(path, {"fea": fea, "gnd": gnd[:, None]})
    art = usps.build({usps.DIGITS: path}, digits=[0, 1], per_class=2)
    assert_vectors(art, 4, 256)
    assert art["labels"].tolist() == [0, 0, 1, 1]
    assert art.items["row"].tolist() == [4, 5, 0, 2]
    np.testing.assert_allclose(art["X"][:, 0], np.array([4, 5, 0, 2]) * 30 / 255.0)
    with pytest.raises(DatasetError, match="digit 1 has 3 images, fewer than per_class=4"):
        usps.build({usps.DIGITS: path}, digits=[1], per_class=4)
    scipy.io.savemat(path, {"fea": fea[:, :100], "gnd": gnd[:, None]})
    with pytest.raises(DatasetError, match="'fea' has shape"):
        usps.build({usps.DIGITS: path}, digits=[0], per_class=1)


def test_vowel_tiny_mat(tmp_path):
    path = tmp_path / "vowels.mat"
    rng = np.random.default_rng(0)
    raw = {f"{v}_raw": rng.normal(size=(3, 26)) for v in ("u", "a", "ibar")}
    scipy.io.savemat(path, {**raw, "a": np.zeros((2, 182))})
    art = vowel.build({vowel.VOWELS: path}, drop_columns=[13, 26])
    assert_vectors(art, 9, 24)
    assert art.meta["label_names"] == ["a", "ibar", "u"]
    np.testing.assert_array_equal(art["X"][:3], np.delete(raw["a_raw"], [12, 25], axis=1))
    assert art.items["name"].tolist()[3] == "ibar"
    with pytest.raises(DatasetError, match="drop_columns"):
        vowel.build({vowel.VOWELS: path}, drop_columns=[0])
    scipy.io.savemat(path, {"a_raw": np.zeros((3, 25))})
    with pytest.raises(DatasetError, match="'a_raw' has shape"):
        vowel.build({vowel.VOWELS: path})


def test_frey_and_coil20_tiny_mats(tmp_path):
    frey_path, coil_path = tmp_path / "frey.mat", tmp_path / "coil.mat"
    ff = np.arange(560 * 3).reshape(560, 3) % 256
    scipy.io.savemat(frey_path, {"ff": ff.astype(np.uint8)})
    art = faces.build_frey({faces.FREY: frey_path})
    assert_vectors(art, 3, 560)
    np.testing.assert_allclose(art["X"][1], ff[:, 1] / 255.0)
    klass = np.array([[1], [1], [2]], dtype=np.uint8)
    scipy.io.savemat(coil_path, {"data": np.ones((3, 256), dtype=np.uint8), "class": klass})
    art = faces.build_coil20({faces.COIL20: coil_path})
    assert art["labels"].tolist() == [0, 0, 1] and art.items["pose"].tolist() == [0, 1, 0]
    scipy.io.savemat(coil_path, {"data": np.ones((3, 256)), "klass": klass})
    with pytest.raises(DatasetError, match="coil.mat.*missing variable"):
        faces.build_coil20({faces.COIL20: coil_path})
    scipy.io.savemat(frey_path, {"ff": ff * 2.0})
    with pytest.raises(DatasetError, match="grey levels"):
        faces.build_frey({faces.FREY: frey_path})
    frey_path.write_bytes(b"MATLAB? no")
    with pytest.raises(DatasetError, match="frey.mat"):
        faces.build_frey({faces.FREY: frey_path})


def test_missing_raw_file_is_named():
    with pytest.raises(DatasetError, match="usps/USPS.mat"):
        usps.build({})
