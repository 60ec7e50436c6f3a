"""Raw files -> verified cache -> dataset artifacts -> dataset summary table."""


rule fetch_raw:
    """Take a raw file from the cache, else the mirrors (EMBEDLAB_MIRRORS, set in the
    environment by common.smk: not a parameter), else its URL; verify its sha256."""
    output:
        raw=f"{RAW_DIR}/{{path}}",
    log:
        "logs/fetch/{path}.log",
    benchmark:
        "logs/benchmarks/fetch_raw/fetch/{path}.tsv"
    wildcard_constraints:
        path="|".join(map(re.escape, REGISTRY["files"])),
    conda:
        "../envs/embedlab.yaml"
    resources:
        mem_mb=500,
        runtime=30,
    params:
        **step_params("datasets.fetch", settings=step_settings("datasets.fetch")),
    script:
        STEP_SCRIPT


rule build_dataset:
    """Parse the raw files of one dataset into a standard artifact (kinds: see artifacts.py).
    Builds go first (priority): every paper's jobs then have their inputs early, and no build
    and the jobs waiting on it are left for the run's tail, with one core idle."""
    input:
        raw=raw_inputs,
    output:
        data="results/datasets/{dataset}/data.npz",
        table="results/datasets/{dataset}/items.tsv",
        meta="results/datasets/{dataset}/meta.json",
    log:
        "logs/datasets/{dataset}.log",
    benchmark:
        "logs/benchmarks/build_dataset/datasets/{dataset}.tsv"
    wildcard_constraints:
        dataset="|".join(REGISTRY["datasets"]),
    priority: 10
    conda:
        "../envs/embedlab.yaml"
    threads: lambda wc: REGISTRY["datasets"][wc.dataset]["resources"]["threads"]
    resources:
        mem_mb=lambda wc: REGISTRY["datasets"][wc.dataset]["resources"]["mem_mb"],
        runtime=lambda wc: REGISTRY["datasets"][wc.dataset]["resources"]["runtime"],
    params:
        **step_params(
            "datasets.build",
            lambda wc: builder_module(wc.dataset),
            settings=lambda wc: step_settings(
                "datasets.build", overrides=dataset_overrides(wc.dataset)
            ),
        ),
    script:
        STEP_SCRIPT


rule fetch_own_dataset:
    """The raw file of an own dataset given by url: cache, else the url; sha256 verified."""
    output:
        raw=f"{RAW_DIR}/own/{{dataset}}/{{file}}",
    log:
        "logs/fetch/own/{dataset}/{file}.log",
    benchmark:
        "logs/benchmarks/fetch_own_dataset/fetch/own/{dataset}/{file}.tsv"
    wildcard_constraints:
        dataset="|".join(OWN_DATASETS) or "(?!)",
    conda:
        "../envs/embedlab.yaml"
    resources:
        mem_mb=500,
        runtime=30,
    params:
        **step_params(
            "datasets.fetch_own",
            settings=lambda wc: step_settings(
                "datasets.fetch_own", entry=OWN_DATASETS[wc.dataset]
            ),
        ),
    script:
        STEP_SCRIPT


rule build_own_dataset:
    """One own_datasets entry read by its format's generic builder into an artifact."""
    input:
        unpack(own_inputs),
    output:
        data="results/datasets/{dataset}/data.npz",
        table="results/datasets/{dataset}/items.tsv",
        meta="results/datasets/{dataset}/meta.json",
    log:
        "logs/datasets/{dataset}.log",
    benchmark:
        "logs/benchmarks/build_own_dataset/datasets/{dataset}.tsv"
    wildcard_constraints:
        dataset="|".join(OWN_DATASETS) or "(?!)",
    conda:
        "../envs/embedlab.yaml"
    resources:
        mem_mb=4000,
        runtime=30,
    params:
        **step_params(
            "datasets.build_own",
            settings=lambda wc: step_settings(
                "datasets.build_own", entry=OWN_DATASETS[wc.dataset]
            ),
        ),
    script:
        STEP_SCRIPT


rule unknown_dataset:
    """The artifact of a name that is no dataset (a mistyped target, e.g.
    results/datasets/nosuch/meta.json): fails while the DAG is built, before any job runs,
    listing the valid names."""
    input:
        lambda wc: check_dataset_names([wc.dataset], "the target"),
    output:
        "results/datasets/{dataset}/meta.json",
    log:
        "logs/datasets/{dataset}.log",
    benchmark:
        "logs/benchmarks/unknown_dataset/datasets/{dataset}.tsv"
    wildcard_constraints:
        # a name that is not one of KINDS (the lookahead sees the "/" that follows the name)
        dataset=f"(?!(?:{'|'.join(map(re.escape, KINDS))})/)[^/]+",
    conda:
        "../envs/embedlab.yaml"
    shell:
        "exit 1"


rule dataset_summary:
    """Counts of every built artifact beside the papers' counts."""
    input:
        meta=dataset_artifacts(),
    output:
        csv=report_table(
            "results/tables/datasets.csv",
            caption="../report/datasets.rst",
            category="Datasets",
            labels={"table": "dataset summary"},
        ),
        md="results/tables/datasets.md",
    log:
        "logs/tables/datasets.log",
    benchmark:
        "logs/benchmarks/dataset_summary/tables/datasets.tsv"
    conda:
        "../envs/embedlab.yaml"
    resources:
        mem_mb=500,
        runtime=5,
    params:
        **step_params(
            "report.datasets",
            settings=lambda wc: step_settings("report.datasets", own=OWN_PLACES),
        ),
    script:
        STEP_SCRIPT
