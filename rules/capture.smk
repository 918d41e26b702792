# Stage 1: capture campaigns on the local testbed (root + upstream MPTCP).
# Campaigns run one after another (they share the testbed), each resumable by
# capture/ itself: a finished run is never redone.  When this machine cannot
# capture, the DAG starts from the committed samples instead (rules/common.smk).

CAMPAIGNS = list(campaign_files())


def previous_campaign(wildcards):
    """Serialise campaigns: each waits for the one before it."""
    i = CAMPAIGNS.index(wildcards.campaign)
    return [f"{RESULTS}/capture/{CAMPAIGNS[i - 1]}.done"] if i else []


checkpoint capture_campaign:
    input:
        yaml=lambda wc: campaign_files()[wc.campaign],
        after=previous_campaign,
    output:
        touch(f"{RESULTS}/capture/{{campaign}}.done"),
    log:
        f"{RESULTS}/logs/capture/{{campaign}}.log",
    params:
        out=config["raw_dir"],
        scale=config["scale"],
    shell:
        "MPTCP_LAB_SCALE={params.scale} {PY} -m capture run {input.yaml} --out {params.out} > {log} 2>&1"


def all_run_dirs(wildcards=None):
    """Every run folder the analysis covers (after capture, when capturing)."""
    if not CAPTURE:
        return run_dirs_under(config["samples_dir"])
    dirs = []
    for name in CAMPAIGNS:
        checkpoints.capture_campaign.get(campaign=name)
        dirs += run_dirs_under(f"{config['raw_dir']}/{name}")
    return dirs


if CAPTURE:

    rule capture_all:
        """Capture every configured campaign at the configured scale."""
        input:
            expand(f"{RESULTS}/capture/{{campaign}}.done", campaign=CAMPAIGNS),

else:

    rule capture_all:
        """Nothing to capture on this machine (see the note printed at start-up)."""
        params:
            why="; ".join(capture_blockers()) or "capture=false",
        shell:
            "echo 'capture_all: not capturing on this machine: {params.why}' >&2"
