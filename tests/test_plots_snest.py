"""Figures of the SNEST paper (Figs. 2a, 2b, 3, 4) and the greedy label placer."""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import pytest
from matplotlib.collections import LineCollection
from matplotlib.figure import Figure
from matplotlib.text import Text

from embedlab.plots.common import save_figure
from embedlab.plots.labels import DEFAULT_OFFSETS, place_labels, spread_order
from embedlab.plots.snest import (
    MAX_FONT,
    MIN_FONT,
    authors_figure,
    kernel_contour_figure,
    new_figure,
    school_figure,
    surname,
    words_figure,
)

REPO = Path(__file__).resolve().parents[1]


def _embedding(n: int, seed: int, space_scale: float = 100.0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return np.column_stack([rng.normal(0, space_scale, (n, 2)), rng.normal(0, 0.6, n)])


def _school_inputs():
    """Two classes of 20 students on a ring (links i+-1, i+-2) plus a teacher each."""
    links, classes, roles = [], [], []
    for c in range(2):
        base = 21 * c
        for i in range(20):
            links += [(base + i, base + (i + 1) % 20), (base + i, base + (i + 2) % 20)]
            links.append((base + i, base + 20))
        classes += [c] * 21
        roles += ["student"] * 20 + ["teacher"]
    links.append((20, 41))
    return np.array(links), np.array(classes), np.array(roles)


def _overlapping_pairs(boxes) -> list[tuple[int, int]]:
    return [
        (a, b) for (a, A), (b, B) in itertools.combinations(enumerate(boxes), 2) if A.overlaps(B)
    ]


def _drawn_label_boxes(fig: Figure, texts):
    """Window extents of the placed texts as they are actually drawn (after a full draw)."""
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    return [t.get_window_extent(renderer) for t in texts]


def _colorbar_labels(fig: Figure) -> list[str]:
    return [ax.get_ylabel() for ax in fig.axes]


# ----------------------------------------------------------------------------- label placer


def test_placer_crowded_case_drops_labels_and_never_overlaps():
    fig = new_figure((4, 4))
    ax = fig.add_axes((0.1, 0.1, 0.8, 0.8))
    rng = np.random.default_rng(1)
    x, y = rng.uniform(0, 1, 300), rng.uniform(0, 1, 300)
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1)
    result = place_labels(ax, x, y, [f"word{i}" for i in range(300)], fontsizes=9)
    assert result.n_placed + result.n_dropped == 300
    assert 5 < result.n_placed < 300 and result.n_dropped > 0
    assert sorted(result.placed + result.dropped) == list(range(300))
    assert _overlapping_pairs(_drawn_label_boxes(fig, result.texts)) == []
    placed_texts = [a for a in ax.texts if isinstance(a, Text)]
    assert len(placed_texts) == result.n_placed  # dropped labels leave no artist behind
    inside = ax.get_window_extent()
    for box in result.boxes:
        assert inside.x0 <= box.x0 and box.x1 <= inside.x1
        assert inside.y0 <= box.y0 and box.y1 <= inside.y1


def test_placer_offsets_rescue_a_label_and_priority_wins():
    fig = new_figure((4, 4))
    ax = fig.add_axes((0.1, 0.1, 0.8, 0.8))
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1)
    # two labels on the same point: centred only -> the second is dropped ...
    only_centre = place_labels(
        ax, [0.5, 0.5], [0.5, 0.5], ["first", "second"], order=[1, 0], offsets=((0.0, 0.0),)
    )
    assert only_centre.placed == [1] and only_centre.dropped == [0]
    for t in only_centre.texts:
        t.remove()
    # ... with the default offsets it moves next to its point instead
    shifted = place_labels(ax, [0.5, 0.5], [0.5, 0.5], ["first", "second"])
    assert shifted.placed == [0, 1]
    assert _overlapping_pairs(_drawn_label_boxes(fig, shifted.texts)) == []
    centre = ax.transData.transform((0.5, 0.5))
    second = shifted.boxes[1]
    # moved by at most the largest candidate offset ("up to a tiny radius")
    max_dx = max(abs(dx) for dx, _ in DEFAULT_OFFSETS) * second.width
    max_dy = max(abs(dy) for _, dy in DEFAULT_OFFSETS) * second.height
    assert 0 < abs(second.x0 + second.width / 2 - centre[0]) + abs(
        second.y0 + second.height / 2 - centre[1]
    )
    assert abs(second.x0 + second.width / 2 - centre[0]) <= max_dx + 1e-9
    assert abs(second.y0 + second.height / 2 - centre[1]) <= max_dy + 1e-9


def test_placer_respects_obstacles_and_max_labels():
    fig = new_figure((4, 4))
    ax = fig.add_axes((0.1, 0.1, 0.8, 0.8))
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1)
    fig.canvas.draw()
    obstacle = ax.get_window_extent()  # the whole axes is taken: nothing fits
    blocked = place_labels(ax, [0.5], [0.5], ["a"], obstacles=[obstacle])
    assert blocked.n_placed == 0 and blocked.dropped == [0]
    x = np.linspace(0.1, 0.9, 5)
    capped = place_labels(ax, x, x, list("abcde"), max_labels=2)
    assert capped.placed == [0, 1] and capped.dropped == [2, 3, 4]


def test_placer_rejects_bad_input():
    fig = new_figure((3, 3))
    ax = fig.add_axes((0.1, 0.1, 0.8, 0.8))
    with pytest.raises(ValueError, match="shape"):
        place_labels(ax, [0.0, 1.0], [0.0], ["a", "b"])
    with pytest.raises(ValueError, match="finite"):
        place_labels(ax, [np.nan], [0.0], ["a"])
    with pytest.raises(ValueError, match="colors"):
        place_labels(ax, [0.0], [0.0], ["a"], colors=["red", "blue"])


def test_spread_order_alternates_between_cells():
    # two clusters: the best item of the weaker cluster comes before the second of the other
    xy = np.array([[0.0, 0.0], [0.01, 0.0], [0.02, 0.0], [1.0, 1.0], [1.01, 1.0]])
    score = np.array([9.0, 8.0, 7.0, 1.0, 0.5])
    order = spread_order(xy, score, n_cells=4)
    assert order.tolist() == [0, 3, 1, 4, 2]
    assert sorted(order.tolist()) == list(range(5))


# ----------------------------------------------------------------------------- figures


def test_school_figure_draws_every_link_and_marks_teachers():
    links, classes, roles = _school_inputs()
    Y = _embedding(42, seed=0)
    fig = school_figure(Y, links, classes, roles)
    assert isinstance(fig, Figure)
    ax = fig.axes[0]
    [lines] = [c for c in ax.collections if isinstance(c, LineCollection)]
    segments = lines.get_segments()
    assert len(segments) == len(links)
    np.testing.assert_allclose(segments[-1], Y[[20, 41], :2])
    # one scatter per class of students + one for teachers, each point coloured by time
    scatters = [c for c in ax.collections if not isinstance(c, LineCollection)]
    assert sorted(len(s.get_offsets()) for s in scatters) == [2, 20, 20]
    assert len({s.get_paths()[0].vertices.shape for s in scatters}) == 3  # 3 marker shapes
    teachers = next(s for s in scatters if len(s.get_offsets()) == 2)
    np.testing.assert_allclose(teachers.get_array(), Y[[20, 41], 2])
    assert "time" in _colorbar_labels(fig)
    norm = teachers.norm
    assert norm.vmin == -norm.vmax == -np.abs(Y[:, 2]).max()  # centred at 0
    assert ax.get_aspect() == 1.0


def test_school_figure_rejects_bad_links_and_shapes():
    links, classes, roles = _school_inputs()
    Y = _embedding(42, seed=0)
    with pytest.raises(ValueError, match="links"):
        school_figure(Y, np.vstack([links, [0, 42]]), classes, roles)
    with pytest.raises(ValueError, match="embedding"):
        school_figure(Y[:, :2], links, classes, roles)
    with pytest.raises(ValueError, match="roles"):
        school_figure(Y, links, classes, roles[:-1])
    bad = Y.copy()
    bad[3, 2] = np.inf
    with pytest.raises(ValueError, match="row 3, column 2"):
        school_figure(bad, links, classes, roles)


def test_kernel_contour_levels_and_values():
    levels = (0.1, 1.0, 10.0, 50.0, 100.0)
    fig = kernel_contour_figure(ds_max=200, dt_max=2, levels=levels, n_grid=300)
    ax = fig.axes[0]
    [contours] = [c for c in ax.collections if hasattr(c, "levels")]
    np.testing.assert_allclose(contours.levels, levels)
    assert ax.get_xlim() == (0.0, 200.0) and ax.get_ylim() == (0.0, 2.0)
    assert len(ax.texts) >= len(levels)  # every level line is labelled inline
    # the 0.1e-3 line passes through ds = 165 at dt = 1 (the paper's worked example)
    paths = contours.get_paths()[0]
    vertices = paths.vertices
    near = vertices[np.argmin(np.abs(vertices[:, 1] - 1.0))]
    assert abs(near[0] - np.sqrt(np.e / 1e-4 - 1)) < 2.0
    with pytest.raises(ValueError, match="levels"):
        kernel_contour_figure(levels=(0.0, 1.0))


def test_authors_figure_names_major_authors_without_overlap():
    n = 300
    rng = np.random.default_rng(3)
    Y = _embedding(n, seed=3)
    n_papers = rng.integers(2, 14, n)
    names = [f"Author{i}_X" for i in range(n)]
    fig = authors_figure(Y, names, n_papers, min_papers=10, min_abs_time=1.0)
    placement = fig.label_placement
    ax = fig.axes[0]
    candidates = set(np.flatnonzero((n_papers >= 10) | (np.abs(Y[:, 2]) >= 1.0)).tolist())
    assert set(placement.placed) <= candidates and placement.n_placed > 0
    assert set(placement.placed) | set(placement.dropped) == set(range(n))
    assert [t.get_text() for t in placement.texts] == [f"Author{i}" for i in placement.placed]
    sizes = np.array([t.get_fontsize() for t in placement.texts])
    assert sizes.min() >= MIN_FONT and sizes.max() <= MAX_FONT
    abs_time = np.abs(Y[placement.placed, 2])
    assert np.corrcoef(abs_time, sizes)[0, 1] > 0.9  # size grows with |time|
    assert _overlapping_pairs(_drawn_label_boxes(fig, placement.texts)) == []
    dots = next(c for c in ax.collections if len(c.get_offsets()) == n - placement.n_placed)
    assert dots is not None
    assert "time" in _colorbar_labels(fig)
    [inset] = ax.child_axes
    assert "histogram" in inset.get_title()
    assert 0.99 * n <= sum(p.get_height() for p in inset.patches) <= n
    assert "NIPS22" in ax.get_title()


def test_words_figure_caps_labels_and_spreads_them():
    n = 400
    Y = _embedding(n, seed=4)
    words = [f"W{i:03d}" for i in range(n)]
    fig = words_figure(Y, words, max_labels=40)
    placement = fig.label_placement
    assert 10 <= placement.n_placed <= 40
    assert _overlapping_pairs(_drawn_label_boxes(fig, placement.texts)) == []
    # spread: named words occupy more of the plane than the 40 largest-|time| words alone
    named = Y[placement.placed, :2]
    assert np.ptp(named[:, 0]) > 0.5 * np.ptp(Y[:, 0])
    assert "W5000" in fig.axes[0].get_title()


def test_save_figure_writes_png_and_pdf(tmp_path):
    fig = kernel_contour_figure(n_grid=50)
    png, pdf = save_figure(fig, tmp_path / "sub" / "snest_fig2b")
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 1000
    assert pdf.read_bytes()[:5] == b"%PDF-" and pdf.stat().st_size > 1000
    assert sorted(p.name for p in (tmp_path / "sub").iterdir()) == [
        "snest_fig2b.pdf",
        "snest_fig2b.png",
    ]


def test_surname():
    assert surname("Hinton_G") == "Hinton"
    assert surname("Le_Cun_Y") == "Le_Cun"
    assert surname("Plato") == "Plato"


# ----------------------------------------------------------------------------- real artifacts


def test_figures_render_on_real_artifacts(tmp_path, build_from_mirror):
    school = build_from_mirror("school")
    nips = build_from_mirror("nips22")
    Y = _embedding(len(school.items), seed=0)
    fig = school_figure(
        Y, school.arrays["links"], school.items["class"], school.items["role_in_class"]
    )
    save_figure(fig, tmp_path / "school")
    n = len(nips.items)
    fig = authors_figure(
        _embedding(n, seed=1, space_scale=60.0), nips.items["name"], nips.items["n_papers"]
    )
    assert fig.label_placement.n_placed > 20
    save_figure(fig, tmp_path / "nips22")
    assert (tmp_path / "school.png").stat().st_size > 0
    assert (tmp_path / "nips22.pdf").stat().st_size > 0
