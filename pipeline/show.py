"""tshark's dissection of single frames, through pyshark: the drill-down from one of our
numbers (a table row names its trace and frame) to Wireshark's reading of that packet.

Every field is printed as Wireshark shows it (its ``showname``, e.g. ``Multipath TCP
subtype: Data Sequence Signal (2)``) followed by its display-filter name in brackets
(``[tcp.options.mptcp.subtype]``), indented as in Wireshark's packet tree, with
tshark's analysis (``tcp.analysis.*`` flags such as retransmissions, ``mptcp.analysis``
and expert infos). tshark runs with the pipeline's own preferences
(``schema.TSHARK_PREFS``: MPTCP analysis on, absolute sequence numbers), so its numbers
are the ones our tables were made from.

pyshark gives the tree (JSON output) and the shownames (PDML) in two reads; both read
the capture up to the last frame asked for, since tshark's analysis needs the frames
before it.
"""
from __future__ import annotations

import asyncio
import subprocess
import sys
import tempfile
from collections import defaultdict, deque
from pathlib import Path

from . import capfile, schema
from .inputs import not_regular


class ShowError(Exception):
    """A missing or unreadable capture, or a frame it does not have."""


def frame_count(path: Path) -> int | None:
    s = capfile.scan(path)
    if s.kind == "pcap":
        return s.records
    try:  # pcapng: capinfos (wireshark-common) counts it
        r = subprocess.run(["capinfos", "-c", "-M", "-T", "-r", str(path)], capture_output=True, text=True,
                           timeout=120)
        return int(r.stdout.strip().split("\t")[-1]) if r.returncode == 0 else None
    except (OSError, ValueError, subprocess.TimeoutExpired):
        return None


def _check(pcap: str | Path, frames: list[int]) -> Path:
    p = Path(pcap)
    if not p.exists():
        raise ShowError(f"{p}: no such file")
    if p.is_dir():
        raise ShowError(f"{p}: is a folder, not a capture (give its client.pcap or server.pcap)")
    what = not_regular(p)
    if what:  # reading a FIFO would wait for a writer forever
        raise ShowError(f"{p}: is {what}, not a capture file")
    if capfile.scan(p).kind == "unknown":
        raise ShowError(f"{p}: not a pcap or pcapng file")
    bad = [f for f in frames if f < 1]
    if bad:
        raise ShowError(f"{p}: frame numbers start at 1 (got {bad[0]})")
    bad = [f for f in frames if f > 0xFFFFFFFF]
    if bad:  # (tshark's frame filter crashed on one)
        raise ShowError(f"{p}: frame numbers are at most 4294967295 (got {bad[0]})")
    return p


def _captures(p: Path, frames: list[int]) -> tuple[dict, dict]:
    """Per frame number: pyshark's JSON packet (the tree) and PDML packet (the shownames)."""
    import pyshark

    flt = " || ".join(f"frame.number == {f}" for f in sorted(set(frames)))
    prefs = dict(x.split(":", 1) for x in schema.TSHARK_PREFS)
    out = []
    for use_json in (True, False):
        cap = pyshark.FileCapture(str(p), display_filter=flt, override_prefs=prefs, use_json=use_json,
                                  keep_packets=False)
        try:
            out.append({int(pkt.number): pkt for pkt in cap})
        finally:
            cap.close()
    return out[0], out[1]


def _loop_running() -> bool:
    try:
        asyncio.get_running_loop()
        return True
    except RuntimeError:
        return False


def dissect(pcap: str | Path, frames: list[int]) -> list[str]:
    """The dissection of each frame, as text, in the order asked."""
    p = _check(pcap, frames)
    if _loop_running():
        # pyshark drives tshark with asyncio and cannot run inside a running event loop
        # (a notebook's); in a thread its child-process watcher loses tshark now and then.
        # The command line is this same function in a process of its own.
        r = subprocess.run([sys.executable, "-m", "pipeline", "show", str(p), *map(str, frames)],
                           capture_output=True, text=True)
        if r.returncode:
            raise ShowError(r.stderr.strip().removeprefix("error: "))
        return [r.stdout]
    try:
        try:
            tree, pdml = _captures(p, frames)
        except Exception as e:
            if "cut short" not in str(e) and "damaged" not in str(e):
                raise
            # a capture cut short (which `analyze` reads up to the cut): tshark refuses it
            # whole; editcap copies the packets before the cut, numbered as in the file
            with tempfile.TemporaryDirectory(prefix="mptcp-lab-show-") as d:
                whole = Path(d) / f"readable{p.suffix}"
                subprocess.run(["editcap", str(p), str(whole)], capture_output=True, timeout=300)
                if not whole.exists():
                    raise
                tree, pdml = _captures(whole, frames)
    except Exception as e:  # tshark missing or refusing the file: say which file, in one line
        last = next((ln for ln in reversed(str(e).splitlines()) if "tshark:" in ln), str(e).splitlines()[0] if str(e)
                    else type(e).__name__)
        raise ShowError(f"{p}: tshark could not dissect it ({last.strip()[:200]})") from e
    missing = [f for f in frames if f not in tree]
    if missing:
        n = frame_count(p)
        has = f"it has {n} frame{'s' if n != 1 else ''}" if n is not None else "it has fewer"
        raise ShowError(f"{p}: no frame {', '.join(map(str, missing))} ({has})")
    return [_render(f, tree[f], pdml[f]) for f in frames]


def _shownames(pkt) -> dict[str, dict[str, deque]]:
    """Per layer and field name, the fields' shownames in document order."""
    out: dict[str, dict[str, deque]] = {}
    for layer in pkt.layers:
        names: dict[str, deque] = defaultdict(deque)
        for name, container in layer._all_fields.items():
            for f in container.all_fields:
                names[name].append(f.showname or f.show or "")
        out[layer.layer_name] = names
    return out


def _render(number: int, pkt, pdml) -> str:
    shown = _shownames(pdml)
    lines = [f"Frame {number}: {pkt.length} bytes, {pkt.sniff_time.isoformat()} "
             f"(epoch {pkt.sniff_timestamp}), layers: {' / '.join(layer.layer_name.upper() for layer in pkt.layers)}"]
    for layer in pkt.layers:
        lines.append(f"{layer.layer_name.upper()}")
        _walk(layer._all_fields, shown.get(layer.layer_name, {}), 1, lines)
    return "\n".join(lines)


# protocol sections nested in a layer that PDML names only by protocol
SECTIONS = {"mptcp": "TCP Option - Multipath TCP"}


def _walk(d: dict, shown: dict[str, deque], depth: int, lines: list[str]) -> None:
    pad = "    " * depth
    for key, value in d.items():
        if key.endswith("_tree"):
            continue  # printed under its field
        values = value if isinstance(value, list) else [value]
        subtree = d.get(f"{key}_tree")
        subtrees = subtree if isinstance(subtree, list) else [subtree] * len(values)
        for i, v in enumerate(values):
            names = shown.get(key)
            label = names.popleft() if names else ""
            if isinstance(v, dict):  # a text item or protocol section: its children follow
                lines.append(f"{pad}{label or SECTIONS.get(key, key)}")
                _walk(v, shown, depth + 1, lines)
                continue
            text = label or f"{key}: {v}"
            lines.append(f"{pad}{text}  [{key}]" if not key.startswith("_ws.expert.") else f"{pad}{text}")
            sub = subtrees[i] if i < len(subtrees) else None
            if isinstance(sub, dict):
                _walk(sub, shown, depth + 1, lines)
