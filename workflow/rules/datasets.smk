"""Raw files -> verified cache -> dataset artifacts -> dataset summary table."""


rule fetch_raw:
    """Take a raw file from the cache, else the mirrors (EMBEDLAB_MIRRORS, set by the shell
    prefix: not a parameter), else its URL; verify its sha256."""
    output:
        f"{RAW_DIR}/{{path}}",
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
        code=code_of("fetch"),
        registry=REGISTRY_PATH,
        offline="--offline" if config["data"]["offline"] else "",
    shell:
        "python -m embedlab fetch --registry {params.registry} --file {wildcards.path:q}"
        " --dest {output:q} {params.offline} > {log:q} 2>&1"


rule build_dataset:
    """Parse the raw files of one dataset into a standard artifact (kinds: see artifacts.py)."""
    input:
        raw_inputs,
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
    conda:
        "../envs/embedlab.yaml"
    threads: lambda wc: REGISTRY["datasets"][wc.dataset]["resources"]["threads"]
    resources:
        mem_mb=lambda wc: REGISTRY["datasets"][wc.dataset]["resources"]["mem_mb"],
        runtime=lambda wc: REGISTRY["datasets"][wc.dataset]["resources"]["runtime"],
    params:
        code=lambda wc: code_of("build", builder_module(wc.dataset)),
        registry=REGISTRY_PATH,
        raw_dir=RAW_DIR,
        overrides=lambda wc: json.dumps(dataset_overrides(wc.dataset), sort_keys=True),
        out=subpath(output.meta, parent=True),
    shell:
        "python -m embedlab build --registry {params.registry} --dataset {wildcards.dataset}"
        " --raw-dir {params.raw_dir:q} --out {params.out:q} --params {params.overrides:q} > {log:q} 2>&1"


rule fetch_own_dataset:
    """The raw file of an own dataset given by url: cache, else the url; sha256 verified."""
    output:
        f"{RAW_DIR}/own/{{dataset}}/{{file}}",
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
        code=code_of("fetch-own-dataset"),
        entry=lambda wc: json.dumps(OWN_DATASETS[wc.dataset], sort_keys=True),
        offline="--offline" if config["data"]["offline"] else "",
    shell:
        "python -m embedlab fetch-own-dataset --name {wildcards.dataset}"
        " --entry {params.entry:q} --dest {output:q} {params.offline} > {log:q} 2>&1"


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
        code=code_of("build-own-dataset"),
        entry=lambda wc: json.dumps(OWN_DATASETS[wc.dataset], sort_keys=True),
        labels=lambda wc, input: (
            f"--labels-file {input.labels[0]!r}" if input.labels else ""
        ),
        out=subpath(output.meta, parent=True),
    shell:
        "python -m embedlab build-own-dataset --name {wildcards.dataset}"
        " --entry {params.entry:q} --raw {input.raw:q} {params.labels} --out {params.out:q}"
        " > {log:q} 2>&1"


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
        dataset_artifacts(),
    output:
        csv=report(
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
        code=code_of("summarize-datasets"),
        own=lambda wc: json.dumps(OWN_PLACES, sort_keys=True),
    shell:
        "python -m embedlab summarize-datasets --csv {output.csv:q} --md {output.md:q}"
        " --own {params.own:q} {input:q} > {log:q} 2>&1"
