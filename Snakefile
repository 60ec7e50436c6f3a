"""embedlab: regenerate the tables and figures of five papers on embeddings.

snakemake --cores 2                              # full reproduction (config/config.yaml)
snakemake --cores 2 --configfile config/quick.yaml   # a few-minute smoke run
snakemake --cores 2 diffeomap                    # one paper's tables and figures
"""

from snakemake.utils import min_version

min_version("9.0")


configfile: "config/config.yaml"


report: "workflow/report/workflow.rst"


include: "workflow/rules/common.smk"
include: "workflow/rules/datasets.smk"


# each paper's rules, schema and targets come with its section of the config (and so do
# those of the experiment beyond the papers, `scale`)
for paper in ["snest", "tste", "dcode", "diffeomap", "ee", "scale"]:
    if paper in config:

        include: f"workflow/rules/{paper}.smk"


include: "workflow/rules/report.smk"


# one target per paper (`snakemake diffeomap`): its tables and figures, without the others
# (a long reproduction run paper by paper; `make docs SECTION=<paper>` publishes one)
for paper, targets in PAPER_TARGETS.items():

    rule:
        name:
            paper
        input:
            targets,


# every dataset built, and their counts beside the papers' (`make docs SECTION=datasets`)
rule datasets:
    input:
        dataset_artifacts(),
        "results/tables/datasets.csv",
        "results/tables/datasets.md",


# the default run's files: every dataset, every paper's tables and figures, the summary and
# the timings
ALL = [
    *dataset_artifacts(),
    "results/tables/datasets.csv",
    "results/tables/datasets.md",
    *paper_targets(),
    "results/tables/summary.csv",
    "results/tables/summary.md",
    "results/tables/timings.csv",
    "results/tables/timings.md",
]


rule all:
    default_target: True
    input:
        ALL,
        # the page of each table, which the HTML report shows (report.smk)
        report_pages(ALL),
