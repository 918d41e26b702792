#!/usr/bin/env bash
# Checks that cargo can build the crate in $1: cargo and rustc present, and new enough.
#
#   scripts/check-rust.sh capture/linkem
#
# Rust comes from rustup (~/.cargo/bin, put on PATH by the Makefile). Debian 12's own
# cargo (0.66, Rust 1.65) cannot read the version-4 Cargo.lock files cargo writes since
# 1.78, so the set-up does not fall back to it: it stops and says what to install.
set -euo pipefail
crate=${1:?usage: $0 CRATE_DIR}
MIN=1.78  # Cargo.lock version 4
for tool in cargo rustc; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    echo "error: $tool not found (needed to build $crate): install Rust >= $MIN with rustup" >&2
    echo "       (https://rustup.rs; it puts cargo in ~/.cargo/bin, which the Makefile adds to PATH)" >&2
    exit 1
  fi
done
want=$(sed -n 's/^rust-version *= *"\([0-9.]*\)".*/\1/p' "$crate/Cargo.toml" | head -1)
want=${want:-$MIN}
# the larger of the crate's rust-version and the lock-file minimum
want=$(printf '%s\n%s\n' "$want" "$MIN" | sort -V | tail -1)
have=$(rustc --version | awk '{print $2}')
if [ "$(printf '%s\n%s\n' "$want" "$have" | sort -V | head -1)" != "$want" ]; then
  echo "error: rustc $have is older than $want, which $crate needs: run 'rustup update stable'" >&2
  exit 1
fi
