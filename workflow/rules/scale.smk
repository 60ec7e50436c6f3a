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
        artifact(SCALE["dataset"]),
    output:
        "results/embeddings/scale/affinities.npz",
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
        code=code_of("scale-affinities"),
        folder=lambda wc, input: str(Path(input[0]).parent),
        perplexity=SCALE["perplexity"],
        pca_dims=SCALE["pca_dims"],
        seed=SCALE["seed"],
    shell:
        "NUMBA_NUM_THREADS={threads} OPENBLAS_NUM_THREADS={threads} python -m embedlab"
        " scale-affinities --artifact {params.folder:q} --perplexity {params.perplexity}"
        " --pca-dims {params.pca_dims} --seed {params.seed} --out {output:q} > {log:q} 2>&1"


rule scale_embed:
    """One method's map of the shared P (all cores: the wall times are compared)."""
    input:
        "results/embeddings/scale/affinities.npz",
    output:
        "results/embeddings/scale/{method}.npz",
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
        code=code_of("scale-embed"),
        max_iter=SCALE["max_iter"],
        rate=SCALE["learning_rate"],
        exaggeration=SCALE["exaggeration"],
        exaggeration_epochs=SCALE["exaggeration_epochs"],
        momentum=SCALE["momentum"],
        momentum_epochs=SCALE["momentum_epochs"],
        snest=SCALE["snest"],
        lam_n=SCALE["ee"]["lam_n"],
        repulsion=lambda wc: SCALE["repulsion"][wc.method],
        seed=SCALE["seed"],
        log_every=SCALE["log_every"],
        cost_every=SCALE["cost_every"],
    shell:
        "NUMBA_NUM_THREADS={threads} OPENBLAS_NUM_THREADS={threads} python -m embedlab"
        " scale-embed --affinities {input:q} --method {wildcards.method}"
        " --max-iter {params.max_iter} --learning-rate {params.rate}"
        " --exaggeration {params.exaggeration}"
        " --exaggeration-epochs {params.exaggeration_epochs} --momentum {params.momentum}"
        " --momentum-epochs {params.momentum_epochs}"
        " --time-ratio {params.snest[time_ratio]}"
        " --snest-exaggeration {params.snest[exaggeration]}"
        " --snest-exaggeration-epochs {params.snest[exaggeration_epochs]}"
        " --ee-lam-n {params.lam_n} --repulsion {params.repulsion} --seed {params.seed}"
        " --threads {threads} --log-every {params.log_every} --cost-every {params.cost_every}"
        " --out {output:q} > {log:q} 2>&1"


rule scale_table:
    """Every map measured alike: exact KL, 10-NN preservation, 1-NN error; wall time."""
    input:
        affinities="results/embeddings/scale/affinities.npz",
        maps=SCALE_MAPS,
    output:
        csv=report(
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
        code=code_of("scale-table"),
    shell:
        "NUMBA_NUM_THREADS={threads} OPENBLAS_NUM_THREADS={threads} python -m embedlab"
        " scale-table --affinities {input.affinities:q} --csv {output.csv:q}"
        " --md {output.md:q} {input.maps:q} > {log:q} 2>&1"


rule scale_figure:
    """SNEST R^{2,1} by digit and by time beside t-SNE R^2."""
    input:
        affinities="results/embeddings/scale/affinities.npz",
        tsne="results/embeddings/scale/tsne.npz",
        snest="results/embeddings/scale/snest.npz",
        table="results/tables/scale.csv",
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
        code=code_of("scale-figure"),
        stem=subpath(output.pdf, strip_suffix=".pdf"),
    shell:
        "python -m embedlab scale-figure --affinities {input.affinities:q}"
        " --tsne {input.tsne:q} --snest {input.snest:q} --table {input.table:q}"
        " --out {params.stem:q} > {log:q} 2>&1"
