"""Figs. 2a, 3 and 4 of the SNEST paper: the best SNEST R^{2,1} run of a dataset (which
dataset each shows is the workflow's choice: SNEST_FIGURES in workflow/rules/snest.smk).
Fig. 2b, the output kernel's contours, needs no run
(:func:`embedlab.plots.snest.kernel_contour_figure`)."""

from __future__ import annotations

from typing import Any

from embedlab import artifacts

#: figure -> colour limit of its time axis (None: the data's), as in the paper's figure
TIME_LIMITS = {"fig2a": None, "fig3": 1.0, "fig4": 0.8}


def run_figure(name: str, saved: dict[str, Any], art: artifacts.Artifact, where: str):
    """Figure ``name`` (fig2a, fig3, fig4) of the best run of ``saved`` (a runs file's
    content, :func:`embedlab.runs.load_runs`, of the cell snest-2-1) on the dataset ``art``;
    its title gives the run's KL. ``where`` names the runs file in an error."""
    from embedlab.plots import snest as plots

    if name not in TIME_LIMITS:
        raise ValueError(f"unknown SNEST figure {name!r}; expected one of {sorted(TIME_LIMITS)}")
    if saved["meta"]["cell"] != "snest-2-1":
        raise ValueError(
            f"{where}: figure {name} shows SNEST R^{{2,1}}, got {saved['meta']['cell']}"
        )
    if saved["best"] is None:
        raise ValueError(f"{where}: every run failed, so figure {name} has no map to draw")
    Y, items, time_limit = saved["best_embedding"], art.items, TIME_LIMITS[name]
    if name == "fig2a":
        drawn = plots.school_figure(
            Y, art.arrays["links"], items["class"].to_numpy(), items["role_in_class"].to_numpy()
        )
    elif name == "fig3":
        drawn = plots.authors_figure(
            Y, items["name"].tolist(), items["n_papers"].to_numpy(), time_limit=time_limit
        )
    else:
        drawn = plots.words_figure(Y, items["name"].tolist(), time_limit=time_limit)
    ax = drawn.axes[0]
    kl_note = f"KL = {saved['best']['cost']:.3f} (best of {len(saved['runs'])} runs)"
    ax.set_title(f"{ax.get_title()}\n{kl_note}", fontsize=ax.title.get_fontsize())
    return drawn
