#!/usr/bin/env bash
# The native parts (capture/linkem, pipeline/pcapdecode) are Rust: say how to get
# cargo when it is missing, instead of failing deep inside a build.
set -euo pipefail
if command -v cargo >/dev/null 2>&1; then
  exit 0
fi
if [ -x "$HOME/.cargo/bin/cargo" ]; then
  echo "error: cargo is installed in ~/.cargo/bin but not on PATH: run" >&2
  echo "       . \"\$HOME/.cargo/env\"   (or add ~/.cargo/bin to PATH) and try again" >&2
  exit 1
fi
cat >&2 <<'MSG'
error: cargo (Rust) is needed to build the lab's native parts (the pcap decoder in
       pipeline/pcapdecode, the link emulator in capture/linkem). Install it with rustup:
         curl --proto '=https' --tlsv1.2 -sSf https://sh.rustup.rs | sh -s -- -y
         . "$HOME/.cargo/env"
       then run the make command again. (Debian's own `cargo` package is too old for
       the decoder's crates: they need Rust >= 1.85.)
MSG
exit 1
