"""t-STE paper: config validation, targets and input helpers (included by tste.smk)."""

if "tste" in config:
    validate(config["tste"], schema="../schemas/tste.schema.yaml")
    PAPER_TARGETS["tste"] = (
        expand(
            "results/tables/tste_{dataset}.{ext}",
            dataset=config["tste"]["datasets"],
            ext=["csv", "md"],
        )
        + ["results/tables/tste_claims.md", "results/tables/tste_claims.csv"]
        + expand(
            "results/figures/tste_{fig}.{ext}",
            fig=["fig2", "fig3", "fig4"],
            ext=["png", "pdf"],
        )
    )

TSTE = config.get("tste", {})
TSTE_MAPS = TSTE.get("maps", {})


def tste_metrics(dataset):
    return expand(
        "results/metrics/tste/{dataset}/{method}.csv",
        dataset=dataset,
        method=TSTE.get("methods_by_dataset", {}).get(dataset, TSTE.get("methods", [])),
    )


def tste_map_args(wc):
    """Iterations, triplet subset and fixed parameters of one 2-D map."""
    fig3, fig4 = TSTE_MAPS.get("fig3", {}), TSTE_MAPS.get("fig4", {})
    spec = fig3 if wc.dataset == fig3.get("dataset") else fig4
    args = f"--max-iter {spec.get('max_iter', TSTE.get('max_iter', 1000))}"
    if "max_triplets" in spec:
        args += f" --max-triplets {spec['max_triplets']}"
    return args


def tste_figure_inputs(wc):
    if wc.fig == "fig2":
        return [f"results/tables/tste_{d}.csv" for d in TSTE["datasets"]]
    if wc.fig == "fig3":
        spec = TSTE_MAPS["fig3"]
        return [
            f"results/embeddings/tste/{spec['dataset']}/{m}-2d.npz"
            for m in spec["methods"]
        ]
    spec = TSTE_MAPS["fig4"]
    return [f"results/embeddings/tste/{spec['dataset']}/{spec['method']}-2d.npz"]
