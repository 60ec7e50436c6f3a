"""t-STE paper: config validation, targets and input helpers (included by tste.smk).

Two readings of the protocol (tste.protocols): paper_text writes results/*/tste_* (the
section's top-level keys), authors_code results/*/tste_authors_* (section authors_code).
"""

if "tste" in config:
    validate(config["tste"], schema="../schemas/tste.schema.yaml")

TSTE = config.get("tste", {})
TSTE_MAPS = TSTE.get("maps", {})
TSTE_PROTOCOLS = TSTE.get("protocols", [])
TSTE_AUTHORS = TSTE.get("authors_code", {})
TSTE_AUTHORS_MAPS = TSTE_AUTHORS.get("maps", {})
# the file-name prefix of each protocol's metrics, tables and figures
TSTE_PREFIX = {"paper_text": "tste", "authors_code": "tste_authors"}
TSTE_SECTION = {"tste": TSTE, "tste_authors": TSTE_AUTHORS}
TSTE_DATASETS = sorted(
    set(TSTE.get("datasets", [])) | set(TSTE_AUTHORS.get("datasets", []))
)

if "tste" in config:
    PAPER_TARGETS["tste"] = []
    for _protocol in TSTE_PROTOCOLS:
        _prefix = TSTE_PREFIX[_protocol]
        _figs = (
            ["fig2", "fig3", "fig4"] if _protocol == "paper_text" else ["fig2", "fig3"]
        )
        PAPER_TARGETS["tste"] += (
            expand(
                "results/tables/{prefix}_{dataset}.{ext}",
                prefix=_prefix,
                dataset=TSTE_SECTION[_prefix]["datasets"],
                ext=["csv", "md"],
            )
            + expand(
                "results/tables/{prefix}_claims.{ext}",
                prefix=_prefix,
                ext=["md", "csv"],
            )
            + expand(
                "results/figures/{prefix}_{fig}.{ext}",
                prefix=_prefix,
                fig=_figs,
                ext=["png", "pdf"],
            )
        )


def tste_methods(section, dataset):
    return section.get("methods_by_dataset", {}).get(
        dataset, section.get("methods", [])
    )


def tste_metrics(prefix, dataset):
    return expand(
        "results/metrics/{prefix}/{dataset}/{method}.csv",
        prefix=prefix,
        dataset=dataset,
        method=tste_methods(TSTE_SECTION[prefix], dataset),
    )


def tste_map_args(wc):
    """Iterations, triplet subset and fixed parameters of one 2-D map."""
    fig3, fig4 = TSTE_MAPS.get("fig3", {}), TSTE_MAPS.get("fig4", {})
    authors = TSTE_AUTHORS_MAPS.get("fig3", {})
    if "authors_code" in TSTE_PROTOCOLS and wc.dataset == authors.get("dataset"):
        # the authors' maps: coded iterations unless configured, CKL-X mu = 0.05
        args = "--protocol authors_code"
        if "max_iter" in authors:
            args += f" --max-iter {authors['max_iter']}"
        if "max_triplets" in authors:
            args += f" --max-triplets {authors['max_triplets']}"
        if wc.method == "CKL-X":
            args += """ --params '{"mu": 0.05}'"""
        return args
    spec = fig3 if wc.dataset == fig3.get("dataset") else fig4
    args = f"--max-iter {spec.get('max_iter', TSTE.get('max_iter', 1000))}"
    if "max_triplets" in spec:
        args += f" --max-triplets {spec['max_triplets']}"
    return args


def tste_authors_args(wc):
    """Command-line options of one (dataset, method) under the authors' protocol."""
    A = TSTE_AUTHORS
    grid = A.get("grids", {}).get(wc.dataset, {}).get(wc.method, {})
    nn = A.get("nn_training", {}).get(wc.dataset, {})
    args = f"--grid '{json.dumps(grid)}'"
    args += f" --nn-training {nn.get(wc.method, nn.get('default', 'first'))}"
    if "max_iter" in A:
        args += f" --max-iter {A['max_iter']}"
    if wc.dataset in A.get("max_triplets", {}):
        args += f" --max-triplets {A['max_triplets'][wc.dataset]}"
    folds_used = A.get("folds_used", {}).get(wc.dataset, {})
    if wc.method in folds_used:
        args += f" --folds-used {folds_used[wc.method]}"
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
    spec = TSTE_MAPS["fig4"]
    return [f"results/embeddings/tste/{spec['dataset']}/{spec['method']}-2d.npz"]
