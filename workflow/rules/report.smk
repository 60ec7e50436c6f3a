"""The paper-vs-ours summary over every paper's table, the run's timings, and the page of each
table that the HTML report (`snakemake --report`) shows."""

PAPER_VALUES = "config/paper_values"
# the report's category of the summary: its menu lists the categories in alphabetical order,
# and this one comes first
SUMMARY = "All papers"


rule paper_summary:
    """One line per published number: the paper's value, ours, the difference, a verdict."""
    input:
        tables=[t for t in paper_targets() if re.match(r"results/tables/.*\.csv$", t)],
        values=sorted(str(p) for p in Path(PAPER_VALUES).glob("*.csv")),
        meta=dataset_artifacts(),
    output:
        csv=report_table(
            "results/tables/summary.csv",
            caption="../report/summary.rst",
            category=SUMMARY,
            labels={"table": "paper vs ours"},
        ),
        md="results/tables/summary.md",
    log:
        "logs/tables/summary.log",
    benchmark:
        "logs/benchmarks/paper_summary/tables/summary.tsv"
    conda:
        "../envs/embedlab.yaml"
    resources:
        mem_mb=500,
        runtime=5,
    params:
        **step_params("report.papers"),
    script:
        STEP_SCRIPT


rule timings:
    """Where the run's time went: every job's benchmark file summed per paper and rule (runs
    last: its inputs are every other final output)."""
    input:
        paper_targets(),
        "results/tables/summary.csv",
        "results/tables/datasets.csv",
    output:
        csv=report_table(
            "results/tables/timings.csv",
            caption="../report/timings.rst",
            category=SUMMARY,
            labels={"table": "timings"},
        ),
        md="results/tables/timings.md",
    log:
        "logs/tables/timings.log",
    benchmark:
        "logs/benchmarks/timings/tables/timings.tsv"
    conda:
        "../envs/embedlab.yaml"
    resources:
        mem_mb=500,
        runtime=5,
    params:
        **step_params(
            "report.timings",
            settings=step_settings("report.timings", benchmarks="logs/benchmarks"),
        ),
    script:
        STEP_SCRIPT


for table in REPORT_TABLES:
    name = TABLE_CSV.fullmatch(table["csv"])["name"]
    rule_name = page_rule(table)

    rule:
        """A table as a page that the HTML report shows (embedlab/report/pages.py)."""
        name:
            rule_name
        input:
            csv=table["csv"],
        output:
            html=report(
                PAGE.format(name),
                caption=table["caption"],
                category=table["category"],
                labels=table["labels"],
            ),
        log:
            f"logs/report/{name}.log",
        benchmark:
            f"logs/benchmarks/{rule_name}/report/{name}.tsv"
        wildcard_constraints:
            **table["constraints"],
        conda:
            "../envs/embedlab.yaml"
        resources:
            mem_mb=500,
            runtime=5,
        params:
            **step_params("report.page", settings=page_settings(table)),
        script:
            STEP_SCRIPT
