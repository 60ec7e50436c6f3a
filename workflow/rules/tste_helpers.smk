"""t-STE input functions and the derived settings of its steps (included by tste.smk).

A value the config sets per dataset or per method (max_triplets, grids, nn_training, the
authors_figure reading's solver options) reaches a job resolved for its dataset and method,
as a derived field of its step's settings (embedlab/experiments/tste/settings.py)."""

# wildcard patterns of a metrics job's folder, dataset and method
TSTE_DATASET = r"[^/]+"
TSTE_METHOD = r"(GNMDS|CKL|STE|t-STE)-[XK]"


def tste_methods(section, dataset):
    """The methods of one protocol's section run on `dataset`."""
    by_dataset = section["methods_by_dataset"]
    return by_dataset[dataset] if dataset in by_dataset else section["methods"]


def tste_metrics(prefix, dataset):
    """The metrics files of one protocol's table; the authors_figure reading takes the
    authors_code fits of the methods whose settings it does not change."""
    return [
        f"results/metrics/{tste_reading_of(prefix, method)}/{dataset}/{method}.csv"
        for method in tste_methods(TSTE_SECTION[prefix], dataset)
    ]


def tste_reading_of(prefix, method):
    """Where the metrics of `method` under protocol prefix `prefix` come from."""
    if prefix == "tste_authors_figure" and method not in TSTE_FIGURE:
        return "tste_authors"
    return prefix


def tste_section_of(reading):
    """The config section of a metrics folder's reading: tste = the paper's text, the
    authors' readings = authors_code (whichever protocols the table jobs name)."""
    return TSTE if reading == "tste" else TSTE_AUTHORS


def tste_maps_of(prefix, method):
    """The folder of the 2-D map of `method` under protocol prefix `prefix`: the
    authors_figure reading's refits, every other map under tste/."""
    if prefix == "tste_authors_figure" and method in TSTE_FIGURE:
        return "tste_authors_figure"
    return "tste"


def tste_solver(folder, method):
    """The released solvers' options that the reading of metrics or maps folder `folder`
    sets for `method`: the authors_figure reading's, none otherwise."""
    return TSTE_FIGURE[method] if folder == "tste_authors_figure" else {}


def tste_max_triplets(section, dataset):
    """The seeded subset of `dataset`'s triplets under a protocol's section (None: all)."""
    limits = section["max_triplets"]
    return limits[dataset] if dataset in limits else None


def tste_grid(wc):
    """{parameter: values} that (reading, dataset, method) tunes ({} for an untuned method):
    the paper text's grid per method (validated per dimension; a dataset's grids_by_dataset
    entry for the method replaces it), the authors' per dataset and method (searched).
    """
    if wc.reading == "tste":
        by_dataset = TSTE["grids_by_dataset"]
        grids = {
            **TSTE["grids"],
            **(by_dataset[wc.dataset] if wc.dataset in by_dataset else {}),
        }
    else:
        grids = TSTE_AUTHORS["grids"]
        grids = grids[wc.dataset] if wc.dataset in grids else {}
    return grids[wc.method] if wc.method in grids else {}


def tste_search_files(wc):
    """The search (validation) jobs' files of (reading, dataset, method), in grid order
    (none if untuned)."""
    values = next(iter(tste_grid(wc).values()), [])
    return [
        f"results/metrics/{wc.reading}/{wc.dataset}/{wc.method}/search/{k}.npz"
        for k in range(len(values))
    ]


def tste_paper_job(wc):
    """The derived settings of a paper-text search or part job."""
    return dict(max_triplets=tste_max_triplets(TSTE, wc.dataset), grid=tste_grid(wc))


def tste_authors_job(wc):
    """The derived settings of a search or part job of an authors' reading: the iterations
    (None where authors_code sets none: as coded), the triplet subset, the grid, the 1-NN
    fits' triplets, the reading's solver options."""
    section = TSTE_AUTHORS
    return dict(
        seed=TSTE["seed"],
        max_iter=section["max_iter"] if "max_iter" in section else None,
        max_triplets=tste_max_triplets(section, wc.dataset),
        grid=tste_grid(wc),
        nn_training=tste_authors_nn_training(wc),
        solver=tste_solver(wc.reading, wc.method),
    )


def tste_authors_nn_training(wc):
    """The 1-NN fits' triplets: the method's own entry, the dataset's default, else first."""
    nn = TSTE_AUTHORS["nn_training"]
    nn = nn[wc.dataset] if wc.dataset in nn else {}
    return (
        nn[wc.method]
        if wc.method in nn
        else nn["default"] if "default" in nn else "first"
    )


def tste_map_job(wc):
    """The derived settings of one 2-D map: the authors' Fig. 3 rule (their maps section's
    iterations, None = as coded, and triplets) for the authors_figure refits and for the
    authors' Fig. 3 dataset, else the paper text's Fig. 3 or Fig. 4 (its iterations, else
    the section's)."""
    authors = TSTE_AUTHORS["maps"]["fig3"] if TSTE_AUTHORS else {}
    if wc.maps == "tste_authors_figure" or (
        authors and wc.dataset == authors["dataset"]
    ):
        spec = authors
        protocol = (
            "authors_figure" if wc.maps == "tste_authors_figure" else "authors_code"
        )
        max_iter = spec["max_iter"] if "max_iter" in spec else None
    else:
        fig3, fig4 = TSTE["maps"]["fig3"], TSTE["maps"]["fig4"]
        spec = fig3 if wc.dataset == fig3["dataset"] else fig4
        protocol = "paper_text"
        max_iter = spec["max_iter"] if "max_iter" in spec else TSTE["max_iter"]
    return dict(
        protocol=protocol,
        max_iter=max_iter,
        max_triplets=spec["max_triplets"] if "max_triplets" in spec else None,
        solver=tste_solver(wc.maps, wc.method),
    )


def tste_folds_used(section, dataset, method):
    """The folds_used entry of (dataset, method) in a protocol's section: the dataset's
    number for every method, or its method's entry; None = every fold."""
    folds = section["folds_used"]
    limit = folds[dataset] if dataset in folds else None
    if isinstance(limit, dict):
        limit = limit[method] if method in limit else None
    if limit is not None and limit > section["n_folds"]:
        raise ValueError(
            f"tste folds_used of {dataset} / {method} is {limit}, more than n_folds = "
            f"{section['n_folds']}"
        )
    return limit


def tste_parts(wc):
    """The part files of (reading, dataset, method): every fold used, after the 1-NN fits
    under the authors' readings (the paper's text measures 1-NN on each fold's fit)."""
    section = tste_section_of(wc.reading)
    n = tste_folds_used(section, wc.dataset, wc.method) or section["n_folds"]
    first = [] if wc.reading == "tste" else ["nn"]
    return [
        f"results/metrics/{wc.reading}/{wc.dataset}/{wc.method}/{part}.csv"
        for part in first + [f"fold{k}" for k in range(n)]
    ]


def tste_figure_inputs(wc):
    """A figure's tables or maps; the authors_figure reading's Fig. 3 takes its refitted
    maps and the authors_code maps of the other methods."""
    section = TSTE_SECTION[wc.prefix]
    if wc.fig == "fig2":
        return [f"results/tables/{wc.prefix}_{d}.csv" for d in section["datasets"]]
    if wc.fig == "fig3":
        spec = section["maps"]["fig3"]
        return [
            f"results/embeddings/{tste_maps_of(wc.prefix, m)}/{spec['dataset']}/{m}-2d.npz"
            for m in spec["methods"]
        ]
    spec = TSTE["maps"]["fig4"]
    return [f"results/embeddings/tste/{spec['dataset']}/{spec['method']}-2d.npz"]


def tste_figure_data(wc):
    """The artifact whose items name the genres of Fig. 4 (none for Figs. 2 and 3)."""
    return artifact(TSTE["maps"]["fig4"]["dataset"]) if wc.fig == "fig4" else []
