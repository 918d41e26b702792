#!/usr/bin/env bash
# Fetches other people's MPTCP captures for the cross-check tests into
# data/thirdparty/ (ignored by git; their licence is their authors', so they are
# never committed). Source: the examples shipped in the sdist of mptcpanalyzer 0.3.2
# on PyPI (Matthieu Coudron's captures of iperf over MPTCP v0 Linux, Linux cooked
# and PPP, plus Wireshark's SampleCaptures iperf-mptcp-0-0.pcap), the only public
# MPTCP captures reachable from a machine that sees only package registries.
#
#   scripts/fetch-thirdparty.sh [PIP]
#
# Idempotent; checks the archive's SHA-256. Offline it warns and exits 0: the tests
# that need the captures then skip, saying why.
set -euo pipefail
cd "$(dirname "$0")/.."
PIP=${1:-pip3}
DEST=data/thirdparty
SDIST=mptcpanalyzer-0.3.2.tar.gz
SHA256=2b6bc46dd4dca14bee1014260169c171b09c4c83f8a9d58df56e759631bba579
if [ -f "$DEST/.complete" ]; then exit 0; fi
mkdir -p "$DEST"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# pip saves the archive before preparing its metadata; only the archive matters here.
"$PIP" download -q --no-deps --no-binary :all: -d "$tmp" mptcpanalyzer==0.3.2 >"$tmp/log" 2>&1 || true
if [ ! -f "$tmp/$SDIST" ]; then
  echo "warning: could not download $SDIST from PyPI (third-party capture tests will skip):" >&2
  tail -3 "$tmp/log" >&2
  exit 0
fi
echo "$SHA256  $tmp/$SDIST" | sha256sum -c --quiet - || { echo "error: $SDIST has an unexpected SHA-256" >&2; exit 1; }
tar -xzf "$tmp/$SDIST" -C "$tmp" --wildcards 'mptcpanalyzer-0.3.2/examples/*.pcap' 'mptcpanalyzer-0.3.2/examples/*.pcapng'
mv "$tmp"/mptcpanalyzer-0.3.2/examples/*.pcap* "$DEST"/
echo "mptcpanalyzer 0.3.2 sdist (PyPI), examples/; sha256 $SHA256" > "$DEST/SOURCE"
touch "$DEST/.complete"
echo "third-party captures in $DEST: $(ls "$DEST"/*.pcap* | wc -l) files"
