#!/usr/bin/env bash
# Installs the Debian packages the lab needs (only those missing), then proves it:
# every command is looked up again, and the script stops naming what is still
# missing and which package should have provided it. As root it runs apt-get;
# otherwise it names what is missing and stops.
#
#   scripts/setup-system.sh            install what is missing, then verify
#   scripts/setup-system.sh --map      print the command -> package map ("cmd pkg" lines)
#   scripts/setup-system.sh --check    verify only (exit 1 with the list when something is missing)
#
# The map names the package that owns each command's file (`dpkg -S "$(command -v CMD)"`);
# tests/test_setup.py checks it against dpkg on every machine, for every command installed.
set -euo pipefail

# command -> Debian package whose files include it
declare -A PKG=(
  [tshark]=tshark [capinfos]=wireshark-common [mergecap]=wireshark-common [editcap]=wireshark-common
  [tcpdump]=tcpdump [tcptrace]=tcptrace
  [ITGSend]=d-itg [ITGRecv]=d-itg [ITGDec]=d-itg
  [mptcpize]=mptcpize [ethtool]=ethtool [ip]=iproute2 [tc]=iproute2 [ss]=iproute2 [sysctl]=procps
  [nginx]=nginx [wget]=wget [iperf3]=iperf3 [chromium]=chromium
  [clang]=clang [bpftool]=bpftool
  # a live one-node SLURM for tests/test_slurm.py (cluster/testslurm.py starts its own daemons)
  [slurmctld]=slurmctld [slurmd]=slurmd [munged]=munge
  [sbatch]=slurm-client [squeue]=slurm-client [sinfo]=slurm-client [scontrol]=slurm-client [scancel]=slurm-client
)
# file -> Debian package, for what is not a command (headers, libraries, and GNU time,
# whose bare name is the shell keyword: the benchmarks read a child's peak memory from it)
declare -A FILEPKG=(
  [/usr/include/bpf/libbpf.h]=libbpf-dev
  [/usr/bin/time]=time
  # the charts' font (pipeline/runplots.py FONT): Chromium draws the figures' SVGs with the
  # metrics vl-convert measured them with (DejaVu, wider, ran text past the image's edge)
  [/usr/share/fonts/truetype/liberation/LiberationSans-Regular.ttf]=fonts-liberation
)
# Commands not on a non-root PATH live in the sbin directories.
export PATH="$PATH:/usr/sbin:/sbin"

have() { command -v "$1" >/dev/null 2>&1; }

missing_cmds() {  # missing commands and files, one a line
  local cmd f
  for cmd in "${!PKG[@]}"; do
    have "$cmd" || echo "$cmd"
  done | sort
  for f in "${!FILEPKG[@]}"; do
    [ -e "$f" ] || echo "$f"
  done | sort
}

pkg_of() { echo "${PKG[$1]:-${FILEPKG[$1]:-}}"; }

# `python3 -m venv` (the Makefile's next step) needs ensurepip, which Debian ships in
# python3-venv; a python3 of its own (pyenv, conda) brings it along.
venv_missing() {
  have python3 || { echo python3; return; }
  python3 -c 'import ensurepip, venv' >/dev/null 2>&1 || echo python3-venv
}

report_missing() {  # $1: headline; stdin: missing commands
  local cmd any=0
  while read -r cmd; do
    [ -n "$cmd" ] || continue
    [ $any -eq 1 ] || echo "error: $1" >&2
    any=1
    echo "  $cmd (Debian package $(pkg_of "$cmd"))" >&2
  done
  return $any
}

case "${1:-}" in
  --map)
    for cmd in "${!PKG[@]}"; do echo "$cmd ${PKG[$cmd]}"; done | sort
    for f in "${!FILEPKG[@]}"; do echo "$f ${FILEPKG[$f]}"; done | sort
    exit 0 ;;
  --check)
    rc=0
    missing_cmds | report_missing "missing commands:" || rc=1
    if [ -n "$(venv_missing)" ]; then
      echo "error: python3 cannot create a virtual environment (Debian package $(venv_missing))" >&2; rc=1
    fi
    exit $rc ;;
  "") ;;
  *) echo "usage: $0 [--map|--check]" >&2; exit 2 ;;
esac

mapfile -t cmds < <(missing_cmds)
pkgs=()
for cmd in "${cmds[@]}"; do pkgs+=("$(pkg_of "$cmd")"); done
venv_pkg=$(venv_missing)
[ -z "$venv_pkg" ] || pkgs+=("$venv_pkg")
mapfile -t pkgs < <(printf '%s\n' "${pkgs[@]}" | sed '/^$/d' | sort -u)
if [ ${#pkgs[@]} -gt 0 ]; then
  if [ "$(id -u)" -ne 0 ]; then
    echo "error: missing system packages: ${pkgs[*]}" >&2
    echo "       install them with: sudo apt-get install ${pkgs[*]}" >&2
    exit 1
  fi
  echo "installing system packages: ${pkgs[*]}"
  export DEBIAN_FRONTEND=noninteractive
  # Wait for another apt/dpkg (unattended upgrades, a parallel set-up) instead of failing.
  apt-get -o DPkg::Lock::Timeout=600 update -qq
  apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends "${pkgs[@]}" >/dev/null
fi

# Prove it: an install that "succeeded" but left a command missing (a wrong map entry,
# a package that moved the binary) stops here, not three tests later.
rc=0
missing_cmds | report_missing "still missing after installing (is the package map in $0 right?):" || rc=1
venv_pkg=$(venv_missing)
if [ -n "$venv_pkg" ]; then
  echo "error: python3 still cannot create a virtual environment (Debian package $venv_pkg)" >&2
  rc=1
fi
exit $rc
