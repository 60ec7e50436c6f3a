"""Beyond the papers: t-SNE, SNEST, EE and openTSNE on one sparse P of all
70,000 MNIST digits (included when the config has a `scale` section;
workflow/schemas/scale.schema.yaml holds its defaults)."""

validate(config["scale"], schema="../schemas/scale.schema.yaml")
SCALE = config["scale"]
SCALE_MAPS = expand("results/embeddings/scale/{method}.npz", method=SCALE["methods"])
# the figure shows SNEST beside t-SNE: only when both run
SCALE_FIGURE = {"tsne", "snest"} <= set(SCALE["methods"])

PAPER_TARGETS["scale"] = ["results/tables/scale.csv", "results/tables/scale.md"] + (
    ["results/figures/scale_maps.png", "results/figures/scale_maps.pdf"]
    if SCALE_FIGURE
    else []
)

if "opentsne" in SCALE["methods"]:
    check_job_python(extra="scale")


rule scale_affinities:
    """PCA, k = 3 x perplexity nearest neighbours (pynndescent at scale), calibrated P."""
    input:
        data=artifact(SCALE["dataset"]),
    output:
        sparse_p="results/embeddings/scale/affinities.npz",
    log:
        "logs/scale/affinities.log",
    benchmark:
        "logs/benchmarks/scale_affinities/scale/affinities.tsv"
    conda:
        "../envs/embedlab.yaml"
    threads: 2
    resources:
        mem_mb=4000,
        runtime=60,
    params:
        **step_params("scale.affinities", settings=step_settings("scale.affinities")),
    script:
        STEP_SCRIPT


rule scale_embed:
    """One method's map of the shared P (all cores: the wall times are compared)."""
    input:
        sparse_p="results/embeddings/scale/affinities.npz",
    output:
        map_file="results/embeddings/scale/{method}.npz",
    log:
        "logs/scale/{method}.log",
    benchmark:
        "logs/benchmarks/scale_embed/scale/{method}.tsv"
    wildcard_constraints:
        method="|".join(SCALE["methods"]),
    conda:
        "../envs/embedlab.yaml"
    threads: 2
    resources:
        mem_mb=4000,
        runtime=600,
    params:
        **step_params(
            "scale.embed",
            settings=lambda wc: step_settings(
                "scale.embed", repulsion=SCALE["repulsion"][wc.method]
            ),
        ),
    script:
        STEP_SCRIPT


rule scale_table:
    """Every map measured alike: exact KL, 10-NN preservation, 1-NN error; wall time."""
    input:
        sparse_p="results/embeddings/scale/affinities.npz",
        maps=SCALE_MAPS,
    output:
        csv=report_table(
            "results/tables/scale.csv",
            caption="../report/scale.rst",
            category="Scale (beyond the papers)",
            labels={"table": "MNIST 70,000: four methods, one P"},
        ),
        md="results/tables/scale.md",
    log:
        "logs/scale/table.log",
    benchmark:
        "logs/benchmarks/scale_table/scale/table.tsv"
    conda:
        "../envs/embedlab.yaml"
    threads: 2
    resources:
        mem_mb=4000,
        runtime=60,
    params:
        **step_params("scale.table"),
    script:
        STEP_SCRIPT


rule scale_figure:
    """SNEST R^{2,1} by digit and by time beside t-SNE R^2."""
    input:
        sparse_p="results/embeddings/scale/affinities.npz",
        tsne="results/embeddings/scale/tsne.npz",
        snest="results/embeddings/scale/snest.npz",
        table_csv="results/tables/scale.csv",
    output:
        png=report(
            "results/figures/scale_maps.png",
            caption="../report/scale.rst",
            category="Scale (beyond the papers)",
            labels={"figure": "SNEST and t-SNE maps"},
        ),
        pdf="results/figures/scale_maps.pdf",
    log:
        "logs/scale/figure.log",
    benchmark:
        "logs/benchmarks/scale_figure/scale/figure.tsv"
    conda:
        "../envs/embedlab.yaml"
    resources:
        mem_mb=3000,
        runtime=10,
    params:
        **step_params("scale.figure"),
    script:
        STEP_SCRIPT
