"""benchmarks/coupled_cc.py's bottleneck reaches linkem as intended: rate and drop-tail
queue downstream only, delay and jitter both ways (the jitter breaks drop-tail phase
effects, which otherwise decide which flow loses at an overflow). Pure Python."""
import argparse
import importlib.util

from capture.emulator import linkem_config
from capture.util import REPO

_spec = importlib.util.spec_from_file_location("coupled_cc", REPO / "benchmarks" / "coupled_cc.py")
coupled_cc = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(coupled_cc)


def _args(jitter_ms):
    return argparse.Namespace(rate=20.0, delay_ms=20.0, jitter_ms=jitter_ms, queue_bytes=100_000)


def test_jitter_both_ways_queue_downstream():
    cfg = linkem_config(coupled_cc.link_profile(_args(1.0)), seed=3)
    assert cfg["down"]["jitter_ms"] == cfg["up"]["jitter_ms"] == 1.0
    assert cfg["down"]["delay_ms"] == cfg["up"]["delay_ms"] == 20.0
    assert (cfg["down"]["rate_mbit"], cfg["down"]["queue_bytes"]) == (20.0, 100_000)
    assert "rate_mbit" not in cfg["up"] and "queue_bytes" not in cfg["up"]


def test_zero_jitter_is_the_deterministic_link():
    cfg = linkem_config(coupled_cc.link_profile(_args(0.0)), seed=3)
    assert cfg["down"]["jitter_ms"] == cfg["up"]["jitter_ms"] == 0.0
