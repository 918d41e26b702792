# MPTCP lab: captures -> per-run tables -> one DuckDB file -> figures, notebooks, report.
#
#   snakemake --cores all reproduce_all          # everything (capture only when the machine can)
#   snakemake --cores all analyze | figures | notebooks | report | capture_all
#   snakemake --cores all reproduce_all --config capture=false scale=paper
#
# Stages live in rules/*.smk, one file each; helpers in rules/common.smk.
from snakemake.utils import min_version, validate

min_version("8.0")


configfile: "config/config.yaml"


# The testbed (root, namespaces, the host's CPU for the link emulators) is a per-host
# resource: profiles/default allows one capture at a time on a host; a cluster
# profile places each capture_run job on a host of its own (profiles/slurm).
resource_scopes:
    testbed="local",


validate(config, "config/config.schema.yaml")


include: "rules/common.smk"
include: "rules/capture.smk"
include: "rules/analyze.smk"
include: "rules/findings.smk"
include: "rules/notebooks.smk"
include: "rules/report.smk"


onstart:
    remember_source()


onsuccess:
    print_summary()


rule reproduce_all:
    """Capture (when possible), analyse every run, render every figure, execute every notebook, write the report
    and the findings table."""
    default_target: True
    input:
        # (when capturing: the captures themselves, so that they run even where the
        # outputs below exist; see check_one_source in rules/common.smk)
        captured_campaigns,
        rules.report.output,
        rules.findings.output,
