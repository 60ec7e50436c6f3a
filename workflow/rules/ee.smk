"""Elastic Embedding (notes from the smallvis docs): lambda sweeps and the homotopy method
(included when the config has an `ee` section; workflow/schemas/ee.schema.yaml holds its
defaults)."""

validate(config["ee"], schema="../schemas/ee.schema.yaml")
EE = config["ee"]
EE["datasets"] = with_own_datasets(
    "ee", EE["datasets"], perplexity=lambda name: per_dataset(EE["perplexity"], name)
)
EE_HOMOTOPY = EE["homotopy"]


PAPER_TARGETS["ee"] = (
    ["results/tables/ee_sweep.csv", "results/tables/ee_sweep.md"]
    + expand(
        "results/figures/ee_sweep_{dataset}.{ext}",
        dataset=EE["datasets"],
        ext=["png", "pdf"],
    )
    + [
        "results/tables/ee_homotopy.csv",
        "results/tables/ee_homotopy.md",
        "results/figures/ee_homotopy.png",
        "results/figures/ee_homotopy.pdf",
    ]
)


rule ee_sweep:
    """Every (negative weights, lambda) map of one dataset, learning rate 100 then 10."""
    input:
        data=lambda wc: artifact(wc.dataset),
    output:
        maps="results/embeddings/ee/{dataset}.npz",
        csv="results/embeddings/ee/{dataset}.csv",
    log:
        "logs/ee/sweep_{dataset}.log",
    benchmark:
        "logs/benchmarks/ee_sweep/ee/sweep_{dataset}.tsv"
    conda:
        "../envs/embedlab.yaml"
    threads: 2
    resources:
        mem_mb=6000,
        runtime=120,
    params:
        **step_params(
            "ee.sweep", settings=lambda wc: step_settings("ee.sweep", wc.dataset)
        ),
    script:
        STEP_SCRIPT


rule ee_table:
    """All datasets' sweep metrics in one table."""
    input:
        sweeps=expand("results/embeddings/ee/{dataset}.csv", dataset=EE["datasets"]),
    output:
        csv=report_table(
            "results/tables/ee_sweep.csv",
            caption="../report/ee_sweep_table.rst",
            category="Elastic Embedding",
            labels={"table": "lambda sweep"},
        ),
        md="results/tables/ee_sweep.md",
    log:
        "logs/ee/table.log",
    benchmark:
        "logs/benchmarks/ee_table/ee/table.tsv"
    conda:
        "../envs/embedlab.yaml"
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        **step_params(
            "ee.table",
            settings=step_settings("ee.table", left_out=left_out_reasons("ee")),
        ),
    script:
        STEP_SCRIPT


rule ee_figure:
    """The lambda grid of one dataset."""
    input:
        data=lambda wc: artifact(wc.dataset),
        maps="results/embeddings/ee/{dataset}.npz",
        csv="results/embeddings/ee/{dataset}.csv",
    output:
        png=report(
            "results/figures/ee_sweep_{dataset}.png",
            caption="../report/ee_sweep_figure.rst",
            category="Elastic Embedding",
            labels={"figure": "sweep {dataset}"},
        ),
        pdf="results/figures/ee_sweep_{dataset}.pdf",
    log:
        "logs/ee/figure_{dataset}.log",
    benchmark:
        "logs/benchmarks/ee_figure/ee/figure_{dataset}.tsv"
    conda:
        "../envs/embedlab.yaml"
    resources:
        mem_mb=2000,
        runtime=5,
    params:
        **step_params("ee.figure"),
    script:
        STEP_SCRIPT


rule ee_homotopy:
    """Swiss roll: fixed lambda vs polytope / log-spaced homotopy at the same budget."""
    input:
        data=artifact(EE_HOMOTOPY["dataset"]),
    output:
        csv=report_table(
            "results/tables/ee_homotopy.csv",
            caption="../report/ee_homotopy.rst",
            category="Elastic Embedding",
            labels={"table": "homotopy"},
        ),
        md="results/tables/ee_homotopy.md",
        maps="results/embeddings/ee/homotopy.npz",
    log:
        "logs/ee/homotopy.log",
    benchmark:
        "logs/benchmarks/ee_homotopy/ee/homotopy.tsv"
    conda:
        "../envs/embedlab.yaml"
    threads: 2
    resources:
        mem_mb=2000,
        runtime=60,
    params:
        **step_params("ee.homotopy", settings=step_settings("ee.homotopy")),
    script:
        STEP_SCRIPT


rule ee_homotopy_figure:
    """The homotopy comparison's maps, one panel per schedule."""
    input:
        data=artifact(EE_HOMOTOPY["dataset"]),
        csv="results/tables/ee_homotopy.csv",
        maps="results/embeddings/ee/homotopy.npz",
    output:
        png=report(
            "results/figures/ee_homotopy.png",
            caption="../report/ee_homotopy.rst",
            category="Elastic Embedding",
            labels={"figure": "homotopy"},
        ),
        pdf="results/figures/ee_homotopy.pdf",
    log:
        "logs/ee/homotopy_figure.log",
    benchmark:
        "logs/benchmarks/ee_homotopy_figure/ee/homotopy_figure.tsv"
    conda:
        "../envs/embedlab.yaml"
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        **step_params("ee.homotopy_figure"),
    script:
        STEP_SCRIPT
