#!/usr/bin/env bash
# Prepares one cluster node for the lab's capture jobs, from a checkout on the shared file
# system: the node's Debian packages (`make system`), then the checkout's builds (virtual
# environment, linkem, BPF congestion controls: built once, under a lock, by whichever
# node comes first; make skips what is up to date), then the kernel check a capture
# needs. Run it as root on each node, e.g. as a job of its own per node:
#
#   srun --nodes=1 --exclusive -w NODE cluster/prepare-node.sh
#
# Exit status: 0 when the node can capture, 1 when `python -m capture check` finds
# something missing (printed as JSON), else make's.
set -euo pipefail
cd "$(dirname "$0")/.."
make --no-print-directory system
flock .node-build.lock make --no-print-directory venv linkem cc
.venv/bin/python -m capture check > /tmp/mptcp-lab-node-check.json || {
  cat /tmp/mptcp-lab-node-check.json
  echo "error: $(hostname -s) cannot capture (see above)" >&2
  exit 1
}
echo "$(hostname -s): ready (kernel $(uname -r); builds: $(.venv/bin/python -c 'from capture import kernel; print(kernel.builds())'))"
