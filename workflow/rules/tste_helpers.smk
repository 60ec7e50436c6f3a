"""t-STE input functions (included by tste.smk)."""


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


def tste_authors_settings(wc):
    """The solver settings (JSON) of (reading, method): the authors_figure reading's for the
    methods it refits, none under authors_code."""
    if wc.reading == "tste_authors_figure":
        return json.dumps(TSTE_FIGURE[wc.method])
    return "{}"


def tste_map_args(wc):
    """Iterations, triplet subset, fixed parameters and solver settings of one 2-D map."""
    authors = TSTE_AUTHORS["maps"]["fig3"] if TSTE_AUTHORS else {}
    if wc.maps == "tste_authors_figure":
        settings = json.dumps(TSTE_FIGURE[wc.method])
        rest = tste_authors_map_args(authors, wc)
        return f"--protocol authors_figure --settings '{settings}'{rest}"
    if authors and wc.dataset == authors["dataset"]:
        rest = tste_authors_map_args(authors, wc)
        return f"--protocol authors_code --settings '{{}}'{rest}"
    fig3, fig4 = TSTE["maps"]["fig3"], TSTE["maps"]["fig4"]
    spec = fig3 if wc.dataset == fig3["dataset"] else fig4
    max_iter = spec["max_iter"] if "max_iter" in spec else TSTE["max_iter"]
    args = f"--protocol paper_text --settings '{{}}' --max-iter {max_iter}"
    if "max_triplets" in spec:
        args += f" --max-triplets {spec['max_triplets']}"
    return args


def tste_authors_map_args(authors, wc):
    """The authors' maps: coded iterations unless configured, CKL-X mu = 0.05."""
    args = ""
    if "max_iter" in authors:
        args += f" --max-iter {authors['max_iter']}"
    if "max_triplets" in authors:
        args += f" --max-triplets {authors['max_triplets']}"
    if wc.method == "CKL-X":
        args += """ --params '{"mu": 0.05}'"""
    return args


def tste_grid(wc):
    """(name, values) of the one parameter (reading, dataset, method) tunes, or None for an
    untuned method: the paper text's grid per method (validated per dimension), the authors'
    per dataset and method (searched)."""
    if wc.reading == "tste":
        grids = TSTE["grids"]
    else:
        grids = TSTE_AUTHORS["grids"]
        grids = grids[wc.dataset] if wc.dataset in grids else {}
    grid = grids[wc.method] if wc.method in grids else {}
    return next(iter(grid.items())) if grid else None


def tste_search_files(wc):
    """The search (validation) jobs' files of (reading, dataset, method), in grid order
    (none if untuned)."""
    grid = tste_grid(wc)
    return [
        f"results/metrics/{wc.reading}/{wc.dataset}/{wc.method}/search/{k}.npz"
        for k in range(len(grid[1]) if grid else 0)
    ]


def tste_search_option(wc, input):
    """--search and the search files of a part job (nothing if untuned)."""
    return f"--search {input.search}" if input.search else ""


def tste_search_value(wc):
    """--name and --value of one search job (the index-th value of the grid)."""
    name, values = tste_grid(wc)
    return f"--name {name} --value {json.dumps(values[int(wc.index)])}"


def tste_common(wc):
    """Iteration limit and triplet subset of (dataset, method) under the reading's section
    (the authors' readings: the coded iterations unless configured)."""
    section = tste_section_of(wc.reading)
    args = f"--max-iter {section['max_iter']}" if "max_iter" in section else ""
    if wc.dataset in section["max_triplets"]:
        args += f" --max-triplets {section['max_triplets'][wc.dataset]}"
    return args


def tste_authors_nn_training(wc):
    """The 1-NN fits' triplets: the method's own entry, the dataset's default, else first."""
    nn = TSTE_AUTHORS["nn_training"]
    nn = nn[wc.dataset] if wc.dataset in nn else {}
    return (
        nn[wc.method]
        if wc.method in nn
        else nn["default"] if "default" in nn else "first"
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
