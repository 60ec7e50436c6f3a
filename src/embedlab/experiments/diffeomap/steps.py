"""The Diffeomap steps of the workflow (run by :mod:`embedlab.steps`): paths in, files out;
the computations are :mod:`.fits`, :mod:`.gather`, :mod:`.baselines`, :mod:`.gplvm`,
:mod:`.table`, :mod:`.authors` and :mod:`.figures`."""

from __future__ import annotations

from embedlab import artifacts, runs, tables
from embedlab.experiments.diffeomap.authors import author_set_readings
from embedlab.experiments.diffeomap.baselines import baseline_maps
from embedlab.experiments.diffeomap.fits import fit_grid, select
from embedlab.experiments.diffeomap.gather import gather as gather_points
from embedlab.experiments.diffeomap.settings import (
    AuthorSetSettings,
    BaselineSettings,
    BcGplvmSettings,
    FitSettings,
    GplvmSettings,
)
from embedlab.experiments.diffeomap.table import results_table
from embedlab.settings import LeftOutSettings


def fit(settings: FitSettings, *, data, npz, dataset, stage, select_from=None, point=None) -> None:
    """One dataset's Diffeomap fits at ``stage``: every point of ``settings.grid``, or the best
    point of the fit file ``select_from`` (stage 1's); ``point`` k (a full-set job of one
    point): that point only, a point file for :func:`gather`."""
    if (settings.grid is None) == (select_from is None):
        raise ValueError(
            f"diffeomap.fit {dataset} ({stage}): a grid in the settings or a file to select "
            f"from, one of the two (grid {settings.grid}, select_from {select_from})"
        )
    grid = settings.grid if select_from is None else select(select_from)
    index = None if point is None else int(point)
    arrays, info = fit_grid(
        artifacts.folder_of(data), grid, settings, dataset=dataset, stage=stage, point=index
    )
    runs.save_npz(npz, arrays, info)


def gather(*, points, npz, dataset) -> None:
    """The point files of ``dataset``'s full-set grid joined into the whole grid's fit file."""
    arrays, info = gather_points(points)
    if info["meta"]["dataset"] != dataset:
        raise ValueError(f"{points[0]}: a fit of {info['meta']['dataset']!r}, not {dataset!r}")
    runs.save_npz(npz, arrays, info)


def baselines(settings: BaselineSettings, *, data, npz, dataset) -> None:
    """One dataset's baseline maps (PCA, Isomap, t-SNE) with their 1-NN errors."""
    arrays, info = baseline_maps(artifacts.folder_of(data), settings, dataset)
    runs.save_npz(npz, arrays, info)


def gplvm(settings: GplvmSettings, *, data, npz, dataset) -> None:
    """One dataset's GP-LVM map (GPy) with its 1-NN errors, laid out as a baselines file."""
    _gp_lvm_map(settings, data, npz, dataset)


def bc_gplvm(settings: BcGplvmSettings, *, data, npz, dataset) -> None:
    """One dataset's back-constrained GP-LVM map (GPy), laid out as a baselines file."""
    _gp_lvm_map(settings, data, npz, dataset)


def _gp_lvm_map(settings, data, npz, dataset) -> None:
    # GPy is imported by the GP-LVM steps only (its import costs about a second)
    from embedlab.experiments.diffeomap.gplvm import gplvm_file

    arrays, info = gplvm_file(artifacts.folder_of(data), settings, dataset)
    runs.save_npz(npz, arrays, info)


def table(settings: LeftOutSettings, *, results, paper, csv, md, gplvm_maps=()) -> None:
    """The 1-NN table of the fit and baselines files ``results`` and the GP-LVM files
    ``gplvm_maps`` beside the paper's values."""
    tables.write_table(
        results_table([*results, *gplvm_maps], paper),
        csv,
        md,
        measured=["seconds"],
        title="Diffeomap: 1-NN in the 2-D map",
        after=tables.left_out_note(settings.left_out),
    )


def author_sets(settings: AuthorSetSettings, *, data, csv, md) -> None:
    """NIPS text: the 2-D PCA 1-NN accuracy of each reading of the paper's author classes."""
    tables.write_table(
        author_set_readings(artifacts.folder_of(data), settings),
        csv,
        md,
        measured=(),
        title="NIPS text: PCA 1-NN accuracy per reading of the paper's author classes (paper 33 %)",
    )


def figure(*, fits, baseline_file, data, png, pdf, fig, gplvm_maps=()) -> None:
    """Fig. 2, 3 or 4 (``fig``) from the best run of the fit file ``fits``; Fig. 2 with the
    maps of the GP-LVM files ``gplvm_maps`` beside it."""
    from embedlab.experiments.diffeomap.figures import paper_figure
    from embedlab.plots.common import save_figure, stem_of

    drawn = paper_figure(fig, fits, artifacts.folder_of(data), baseline_file, gplvm_maps)
    save_figure(drawn, stem_of(png, pdf), tight=True)
