"""t-STE paper (van der Maaten & Weinberger 2012): Fig. 2 as tables, the claims, Figs. 2-4
(included when the config has a `tste` section; workflow/schemas/tste.schema.yaml holds its
defaults).

Three readings of the protocol (tste.protocols): paper_text writes results/*/tste_* (the
section's top-level keys), authors_code results/*/tste_authors_* (section authors_code),
authors_figure results/*/tste_authors_figure_* (the authors_code section's protocol with the
solver settings of tste.authors_figure.settings: only the methods named there are refitted,
under results/metrics/tste_authors_figure/ and results/embeddings/tste_authors_figure/; the
others are the authors_code fits).
"""

validate(config["tste"], schema="../schemas/tste.schema.yaml")
TSTE = config["tste"]
# own triplets datasets run under the paper's text (the authors' readings are MNIST's protocol)
TSTE["datasets"] = with_own_datasets("tste", TSTE["datasets"])
TSTE_PROTOCOLS = TSTE["protocols"]
TSTE_AUTHORS = (
    TSTE["authors_code"]
    if {"authors_code", "authors_figure"} & set(TSTE_PROTOCOLS)
    else None
)
# the authors_figure reading's solver settings of the methods it refits
TSTE_FIGURE = (
    TSTE["authors_figure"]["settings"] if "authors_figure" in TSTE_PROTOCOLS else {}
)
# the file-name prefix of each protocol's metrics, tables and figures
TSTE_PREFIX = {
    "paper_text": "tste",
    "authors_code": "tste_authors",
    "authors_figure": "tste_authors_figure",
}
TSTE_SECTION = {
    TSTE_PREFIX[p]: TSTE if p == "paper_text" else TSTE_AUTHORS for p in TSTE_PROTOCOLS
}
TSTE_DATASETS = sorted({d for s in TSTE_SECTION.values() for d in s["datasets"]})
# the wildcards of a Fig. 2 table's name (rule tste_table, and its page in the report, which
# tells it apart from a claims table by them)
TSTE_TABLE_NAME = dict(
    prefix="|".join(TSTE_PREFIX.values()),
    dataset="|".join(TSTE_DATASETS) or "no-dataset",
)
PAPER_TARGETS["tste"] = []
for _prefix in TSTE_SECTION:
    PAPER_TARGETS["tste"] += (
        expand(
            "results/tables/{prefix}_{dataset}.{ext}",
            prefix=_prefix,
            dataset=TSTE_SECTION[_prefix]["datasets"],
            ext=["csv", "md"],
        )
        + expand(
            "results/tables/{prefix}_claims.{ext}", prefix=_prefix, ext=["md", "csv"]
        )
        + expand(
            "results/figures/{prefix}_{fig}.{ext}",
            prefix=_prefix,
            fig=["fig2", "fig3", "fig4"] if _prefix == "tste" else ["fig2", "fig3"],
            ext=["png", "pdf"],
        )
    )


include: "tste_helpers.smk"


# every folds_used entry checked against n_folds here, whichever jobs a run plans
for _section in TSTE_SECTION.values():
    for _dataset in _section["datasets"]:
        for _method in tste_methods(_section, _dataset):
            tste_folds_used(_section, _dataset, _method)


rule tste_search:
    """The paper text's validation for one (dataset, method), one grid value: its fit on the
    first fold's training triplets less a seeded 10 % and its triplet error on that 10 % per
    dimension (embedlab.experiments.tste.paper_text.validation_errors). One thread per job,
    another job takes the second core: the K forms' eigen-decompositions use one BLAS thread
    (two stall on a shared machine), and a second thread makes the X forms' triplet kernel
    only ~1.3x faster at MNIST's size (benchmarks/README.md); no result depends on the
    thread count.
    """
    input:
        data=lambda wc: artifact(wc.dataset),
    output:
        npz="results/metrics/{reading}/{dataset}/{method}/search/{index}.npz",
    log:
        "logs/{reading}/{dataset}/{method}/search/{index}.log",
    benchmark:
        "logs/benchmarks/tste_search/{reading}/{dataset}/{method}/search/{index}.tsv"
    wildcard_constraints:
        reading="tste",
        dataset=TSTE_DATASET,
        method=TSTE_METHOD,
        index=r"\d+",
    conda:
        "../envs/embedlab.yaml"
    threads: 1
    resources:
        mem_mb=4000,
        runtime=120,
    params:
        **step_params(
            "tste.search",
            settings=lambda wc: step_settings("tste.search", **tste_paper_job(wc)),
        ),
    script:
        STEP_SCRIPT


rule tste_part:
    """The paper text's Fig. 2 protocol for one (dataset, method), one fold (fold<k>): per
    dimension the value the validation files chose (the first with the lowest error), a fit
    on the fold's training triplets, its generalisation and 1-NN errors
    (embedlab.experiments.tste.paper_text.paper_part); threads as in tste_search."""
    input:
        data=lambda wc: artifact(wc.dataset),
        search_files=tste_search_files,
    output:
        csv="results/metrics/{reading}/{dataset}/{method}/{part}.csv",
    log:
        "logs/{reading}/{dataset}/{method}/{part}.log",
    benchmark:
        "logs/benchmarks/tste_part/{reading}/{dataset}/{method}/{part}.tsv"
    wildcard_constraints:
        reading="tste",
        dataset=TSTE_DATASET,
        method=TSTE_METHOD,
        part=r"fold\d+",
    conda:
        "../envs/embedlab.yaml"
    threads: 1
    resources:
        mem_mb=4000,
        runtime=120,
    params:
        **step_params(
            "tste.fold",
            settings=lambda wc: step_settings("tste.fold", **tste_paper_job(wc)),
        ),
    script:
        STEP_SCRIPT


# The authors' regulariser search for one (dataset, method), one grid value: fit on the first
# 10 % of the triplets, violations on the other 90 %
# (embedlab.experiments.tste.authors.authors_search_value); the files of tste_search, under the
# authors' readings' folders.
use rule tste_search as tste_authors_search with:
    log:
        "logs/{reading}/{dataset}/{method}/search/{index}.log",
    benchmark:
        "logs/benchmarks/tste_authors_search/{reading}/{dataset}/{method}/search/{index}.tsv"
    wildcard_constraints:
        reading="tste_authors|tste_authors_figure",
        dataset=TSTE_DATASET,
        method=TSTE_METHOD,
        index=r"\d+",
    resources:
        mem_mb=2000,
        runtime=120,
    params:
        **step_params(
            "tste.authors_search",
            settings=lambda wc: step_settings(
                "tste.authors_search", **tste_authors_job(wc)
            ),
        ),


# The authors' Fig. 2 protocol for one (dataset, method), one part: the 1-NN fits (nn) or one
# fold's generalisation error (fold<k>), with the searched value
# (embedlab.experiments.tste.authors.authors_part); the files of tste_part.
use rule tste_part as tste_authors_part with:
    log:
        "logs/{reading}/{dataset}/{method}/{part}.log",
    benchmark:
        "logs/benchmarks/tste_authors_part/{reading}/{dataset}/{method}/{part}.tsv"
    wildcard_constraints:
        reading="tste_authors|tste_authors_figure",
        dataset=TSTE_DATASET,
        method=TSTE_METHOD,
        part=r"nn|fold\d+",
    resources:
        mem_mb=2000,
        runtime=120,
    params:
        **step_params(
            "tste.authors_part",
            settings=lambda wc: step_settings(
                "tste.authors_part", **tste_authors_job(wc)
            ),
        ),


rule tste_authors_merge:
    """One (dataset, method)'s metrics CSV from its parts, under every reading: the paper
    text's folds (tste_part), the authors' 1-NN fits and folds (tste_authors_part)."""
    input:
        parts=tste_parts,
    output:
        csv="results/metrics/{reading}/{dataset}/{method}.csv",
    log:
        "logs/{reading}/{dataset}/{method}.log",
    benchmark:
        "logs/benchmarks/tste_authors_merge/{reading}/{dataset}/{method}.tsv"
    wildcard_constraints:
        reading="tste|tste_authors|tste_authors_figure",
        dataset=TSTE_DATASET,
        method=TSTE_METHOD,
    conda:
        "../envs/embedlab.yaml"
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        **step_params("tste.merge"),
    script:
        STEP_SCRIPT


rule tste_table:
    """Fig. 2 as a table: mean errors over folds, rows = dimension, columns = methods
    (prefix tste: the paper's text; tste_authors: the authors' released code;
    tste_authors_figure: that code with the settings that reproduce the paper's Fig. 2).
    """
    input:
        metrics=lambda wc: tste_metrics(wc.prefix, wc.dataset),
    output:
        csv=report_table(
            "results/tables/{prefix}_{dataset}.csv",
            caption="../report/tste_table.rst",
            category="t-STE",
            labels={"table": "Fig. 2: {prefix} {dataset}"},
            **TSTE_TABLE_NAME,
        ),
        md="results/tables/{prefix}_{dataset}.md",
    log:
        "logs/{prefix}/table_{dataset}.log",
    benchmark:
        "logs/benchmarks/tste_table/{prefix}/table_{dataset}.tsv"
    wildcard_constraints:
        **TSTE_TABLE_NAME,
    conda:
        "../envs/embedlab.yaml"
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        **step_params("tste.table"),
    script:
        STEP_SCRIPT


rule tste_claims:
    """The paper's textual claims about Fig. 2, checked on one protocol's tables."""
    input:
        fig2_tables=lambda wc: expand(
            "results/tables/{prefix}_{dataset}.csv",
            prefix=wc.prefix,
            dataset=TSTE_SECTION[wc.prefix]["datasets"],
        ),
        paper="config/paper_values/tste_claims.csv",
    output:
        md="results/tables/{prefix}_claims.md",
        csv=report_table(
            "results/tables/{prefix}_claims.csv",
            caption="../report/tste_claims.rst",
            category="t-STE",
            labels={"table": "claims: {prefix}"},
        ),
    log:
        "logs/{prefix}/claims.log",
    benchmark:
        "logs/benchmarks/tste_claims/{prefix}/claims.tsv"
    wildcard_constraints:
        prefix="tste|tste_authors|tste_authors_figure",
    conda:
        "../envs/embedlab.yaml"
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        **step_params(
            "tste.claims",
            settings=step_settings("tste.claims", left_out=left_out_reasons("tste")),
        ),
    script:
        STEP_SCRIPT


rule tste_map:
    """A 2-D embedding of all triplets of one dataset (Figs. 3 and 4); maps under
    tste_authors_figure/ are the authors_figure reading's refits."""
    input:
        data=lambda wc: artifact(wc.dataset),
    output:
        npz="results/embeddings/{maps}/{dataset}/{method}-2d.npz",
    log:
        "logs/{maps}/{dataset}/{method}-2d.log",
    benchmark:
        "logs/benchmarks/tste_map/{maps}/{dataset}/{method}-2d.tsv"
    wildcard_constraints:
        maps="tste|tste_authors_figure",
        method=TSTE_METHOD,
    conda:
        "../envs/embedlab.yaml"
    threads: 2
    resources:
        mem_mb=4000,
        runtime=120,
    params:
        **step_params(
            "tste.embedding",
            settings=lambda wc: step_settings("tste.embedding", **tste_map_job(wc)),
        ),
    script:
        STEP_SCRIPT


rule tste_figure:
    """Fig. 2 (errors vs dimension), Fig. 3 (MNIST maps), Fig. 4 (music map); prefix tste:
    the paper's text, tste_authors: the authors' released code, tste_authors_figure: that
    code with the settings that reproduce the paper's Fig. 2."""
    input:
        sources=tste_figure_inputs,
        data=tste_figure_data,
    output:
        png=report(
            "results/figures/{prefix}_{fig}.png",
            caption="../report/tste_figure.rst",
            category="t-STE",
            labels={"figure": "{prefix} {fig}"},
        ),
        pdf="results/figures/{prefix}_{fig}.pdf",
    log:
        "logs/{prefix}/{fig}.log",
    benchmark:
        "logs/benchmarks/tste_figure/{prefix}/{fig}.tsv"
    wildcard_constraints:
        prefix="tste|tste_authors|tste_authors_figure",
        fig="fig2|fig3|fig4",
    conda:
        "../envs/embedlab.yaml"
    resources:
        mem_mb=2000,
        runtime=10,
    params:
        **step_params("tste.figure"),
    script:
        STEP_SCRIPT
