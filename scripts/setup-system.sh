#!/usr/bin/env bash
# Installs the Debian packages the lab needs, only those missing.
# As root it runs apt-get; otherwise it names what is missing and stops.
set -euo pipefail

# command -> Debian package that provides it
declare -A PKG=(
  [tshark]=tshark [capinfos]=tshark [tcpdump]=tcpdump [tcptrace]=tcptrace
  [ITGSend]=d-itg [mptcpize]=mptcpize [ethtool]=ethtool [ip]=iproute2
  [tc]=iproute2 [mergecap]=tshark [nginx]=nginx-light [wget]=wget [iperf3]=iperf3
  [chromium]=chromium
  [clang]=clang [bpftool]=bpftool
)
# file -> Debian package, for what is not a command (headers, libraries)
declare -A FILEPKG=(
  [/usr/include/bpf/libbpf.h]=libbpf-dev
)
missing=()
for cmd in "${!PKG[@]}"; do
  if ! command -v "$cmd" >/dev/null 2>&1 && [ ! -x "/usr/sbin/$cmd" ]; then
    missing+=("${PKG[$cmd]}")
  fi
done
for f in "${!FILEPKG[@]}"; do
  [ -e "$f" ] || missing+=("${FILEPKG[$f]}")
done
# de-duplicate
mapfile -t missing < <(printf '%s\n' "${missing[@]}" | sort -u | sed '/^$/d')
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
  echo "error: missing system packages: ${missing[*]}" >&2
  echo "       install them with: sudo apt-get install ${missing[*]}" >&2
  exit 1
fi
echo "installing system packages: ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get -o DPkg::Lock::Timeout=600 update -qq
apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
# verify: every command and file is there now
still=()
for cmd in "${!PKG[@]}"; do
  command -v "$cmd" >/dev/null 2>&1 || [ -x "/usr/sbin/$cmd" ] || still+=("$cmd (${PKG[$cmd]})")
done
for f in "${!FILEPKG[@]}"; do
  [ -e "$f" ] || still+=("$f (${FILEPKG[$f]})")
done
if [ ${#still[@]} -ne 0 ]; then
  echo "error: still missing after apt-get install: ${still[*]}" >&2
  exit 1
fi
