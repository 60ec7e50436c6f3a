"""t-STE input functions (included by tste.smk)."""


def tste_methods(section, dataset):
    """The methods of one protocol's section run on `dataset`."""
    by_dataset = section["methods_by_dataset"]
    return by_dataset[dataset] if dataset in by_dataset else section["methods"]


def tste_metrics(prefix, dataset):
    return expand(
        "results/metrics/{prefix}/{dataset}/{method}.csv",
        prefix=prefix,
        dataset=dataset,
        method=tste_methods(TSTE_SECTION[prefix], dataset),
    )


def tste_map_args(wc):
    """Iterations, triplet subset and fixed parameters of one 2-D map."""
    authors = TSTE_AUTHORS["maps"]["fig3"] if TSTE_AUTHORS else {}
    if authors and wc.dataset == authors["dataset"]:
        # the authors' maps: coded iterations unless configured, CKL-X mu = 0.05
        args = "--protocol authors_code"
        if "max_iter" in authors:
            args += f" --max-iter {authors['max_iter']}"
        if "max_triplets" in authors:
            args += f" --max-triplets {authors['max_triplets']}"
        if wc.method == "CKL-X":
            args += """ --params '{"mu": 0.05}'"""
        return args
    fig3, fig4 = TSTE["maps"]["fig3"], TSTE["maps"]["fig4"]
    spec = fig3 if wc.dataset == fig3["dataset"] else fig4
    max_iter = spec["max_iter"] if "max_iter" in spec else TSTE["max_iter"]
    args = f"--protocol paper_text --max-iter {max_iter}"
    if "max_triplets" in spec:
        args += f" --max-triplets {spec['max_triplets']}"
    return args


def tste_authors_args(wc):
    """Command-line options of one (dataset, method) under the authors' protocol."""
    A = TSTE_AUTHORS
    grids = A["grids"][wc.dataset] if wc.dataset in A["grids"] else {}
    grid = grids[wc.method] if wc.method in grids else {}
    nn = A["nn_training"][wc.dataset] if wc.dataset in A["nn_training"] else {}
    # the 1-NN training triplets: the method's own entry, the dataset's default, else first
    nn_training = (
        nn[wc.method]
        if wc.method in nn
        else nn["default"] if "default" in nn else "first"
    )
    args = f"--grid '{json.dumps(grid)}'"
    args += f" --nn-training {nn_training}"
    if "max_iter" in A:
        args += f" --max-iter {A['max_iter']}"
    if wc.dataset in A["max_triplets"]:
        args += f" --max-triplets {A['max_triplets'][wc.dataset]}"
    folds_used = A["folds_used"][wc.dataset] if wc.dataset in A["folds_used"] else {}
    if wc.method in folds_used:
        args += f" --folds-used {folds_used[wc.method]}"
    return args


def tste_evaluate_options(wc):
    """Triplet subset and fold limit of one (dataset, method) under the paper's text."""
    args = ""
    if wc.dataset in TSTE["max_triplets"]:
        args += f"--max-triplets {TSTE['max_triplets'][wc.dataset]}"
    folds_used = TSTE["folds_used"]
    if wc.dataset in folds_used and wc.method in folds_used[wc.dataset]:
        args += f" --folds-used {folds_used[wc.dataset][wc.method]}"
    return args


def tste_figure_inputs(wc):
    section = TSTE_SECTION[wc.prefix]
    if wc.fig == "fig2":
        return [f"results/tables/{wc.prefix}_{d}.csv" for d in section["datasets"]]
    if wc.fig == "fig3":
        spec = section["maps"]["fig3"]
        return [
            f"results/embeddings/tste/{spec['dataset']}/{m}-2d.npz"
            for m in spec["methods"]
        ]
    spec = TSTE["maps"]["fig4"]
    return [f"results/embeddings/tste/{spec['dataset']}/{spec['method']}-2d.npz"]
