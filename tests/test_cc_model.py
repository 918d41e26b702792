"""The reference model of the coupled increase rules (capture/cc/model.py) on values
computed by hand from RFC 6356 (LIA), Khalili et al. ToN 2013 (OLIA) and Peng et al.
ToN 2016 (BALIA). Pure Python: runs everywhere."""
from fractions import Fraction as F

import pytest

from capture.cc import model

# Two paths: w1 = 10 packets, rtt1 = 100 ms; w2 = 20 packets, rtt2 = 50 ms.
# sum w/rtt = 10/0.1 + 20/0.05 = 100 + 400 = 500 packets/s
# max w/rtt^2 = max(10/0.01, 20/0.0025) = max(1000, 8000) = 8000
W, RTT = [10, 20], [F(1, 10), F(1, 20)]


def test_lia_alpha_by_hand():
    # alpha = w_total * max(w/rtt^2) / (sum w/rtt)^2 = 30 * 8000 / 500^2 = 0.96
    assert model.lia_alpha(W, RTT) == F(96, 100)


def test_lia_increase_by_hand():
    # min(alpha / w_total, 1 / w_i): alpha / 30 = 0.032 < 1/10 and < 1/20
    assert model.lia_increase(W, RTT, 0) == F(32, 1000)
    assert model.lia_increase(W, RTT, 1) == F(32, 1000)


def test_lia_caps_at_reno():
    # w = (100, 2), rtt = (1 s, 10 ms): max w/rtt^2 = 2/0.0001 = 20000, sum w/rtt = 100 + 200 = 300
    # alpha / w_total = 20000 / 300^2 = 2/9: more than 1/100 on path 1 (capped there), less than 1/2 on path 2
    w, rtt = [100, 2], [1, F(1, 100)]
    assert model.lia_alpha(w, rtt) == 102 * F(20000, 90000)
    assert model.lia_increase(w, rtt, 0) == F(1, 100)
    assert model.lia_increase(w, rtt, 1) == F(2, 9)


def test_lia_equal_paths_sum_to_half_a_packet_per_rtt():
    # RFC 6356 §3: with equal RTTs and windows, alpha = 1/n; each ACK adds 1/(n^2 w)
    w, rtt = [20, 20], [F(3, 100)] * 2
    assert model.lia_alpha(w, rtt) == F(1, 2)
    assert model.lia_increase(w, rtt, 0) == F(1, 80)   # 0.5 / 40


def test_olia_no_better_path_is_the_coupled_term():
    # ell/rtt^2: path 1 100 kB / 0.01 = 1e7, path 2 50 kB / 0.0025 = 2e7 -> B = {2} = M
    ell = [100_000, 50_000]
    m, b = model.olia_sets(W, RTT, ell)
    assert m == {1} and b == {1}
    # (w_r/rtt_r^2) / (sum w/rtt)^2: 1000/250000 = 0.004 and 8000/250000 = 0.032
    assert model.olia_increase(W, RTT, ell, 0) == F(4, 1000)
    assert model.olia_increase(W, RTT, ell, 1) == F(32, 1000)


def test_olia_moves_window_to_the_best_path():
    # ell1 = 300 kB: 3e7 > 2e7, so B = {path 1}, M = {path 2}, B\M = {path 1}
    ell = [300_000, 50_000]
    assert model.olia_alpha(W, RTT, ell, 0) == F(1, 2)      # 1 / (n |B\M|) = 1/2
    assert model.olia_alpha(W, RTT, ell, 1) == F(-1, 2)     # -1 / (n |M|)
    assert model.olia_increase(W, RTT, ell, 0) == F(4, 1000) + F(1, 2) / 10    # 0.054
    assert model.olia_increase(W, RTT, ell, 1) == F(32, 1000) - F(1, 2) / 20   # 0.007


def test_olia_three_paths_one_neither_best_nor_largest():
    w, rtt, ell = [10, 20, 5], [1, 1, 1], [900, 100, 100]
    # M = {1} (w 20), B = {0} (ell 900): alpha = +1/3 on 0, -1/3 on 1, 0 on 2
    assert [model.olia_alpha(w, rtt, ell, i) for i in range(3)] == [F(1, 3), F(-1, 3), 0]
    # coupled term path 2: 5 / 35^2
    assert model.olia_increase(w, rtt, ell, 2) == F(5, 35**2)


def test_balia_by_hand():
    # x = (100, 400); alpha_1 = 4, alpha_2 = 1
    assert model.balia_alpha(W, RTT, 0) == 4 and model.balia_alpha(W, RTT, 1) == 1
    # path 1: 100 / (0.1 * 500^2) * (1+4)/2 * (4+4)/5 = 0.004 * 2.5 * 1.6 = 0.016
    assert model.balia_increase(W, RTT, 0) == F(16, 1000)
    # path 2: 400 / (0.05 * 500^2) * 1 * 1 = 0.032
    assert model.balia_increase(W, RTT, 1) == F(32, 1000)
    # decrease: w/2 * min(alpha, 1.5): 5 * 1.5 = 7.5 (ssthresh 2.5); 10 * 1 = 10 (ssthresh 10)
    assert model.balia_decrease(W, RTT, 0) == F(15, 2)
    assert model.balia_ssthresh(W, RTT, 0) == F(5, 2)
    assert model.balia_ssthresh(W, RTT, 1) == 10


@pytest.mark.parametrize("alg", ["lia", "olia", "balia"])
@pytest.mark.parametrize("w,rtt", [(7, F(2, 100)), (40, 1), (1, F(1, 1000))])
def test_one_subflow_is_reno(alg, w, rtt):
    assert model.increase(alg, [w], [rtt], 0, ell=[1234]) == model.reno_increase(w) == F(1, w)


@pytest.mark.parametrize("alg", ["lia", "olia", "balia"])
def test_two_equal_paths_take_no_more_than_one_tcp(alg):
    """RFC 6356 goal 2 at equal windows and RTTs: the two subflows together increase
    by at most one packet per RTT (each gets w ACKs per RTT)."""
    w, rtt = [15, 15], [F(1, 25)] * 2
    per_rtt = sum(15 * model.increase(alg, w, rtt, i, ell=[1000, 1000]) for i in range(2))
    assert per_rtt <= 1


def test_apply_credit():
    assert model.apply_credit(10, F(0), 3, F(1, 4)) == (10, F(3, 4))
    assert model.apply_credit(10, F(3, 4), 1, F(1, 2)) == (11, F(1, 4))
    assert model.apply_credit(10, F(0), 5, F(1, 2)) == (12, F(1, 2))
    assert model.apply_credit(10, F(-1, 2), 2, F(-1, 4)) == (9, F(0))
    assert model.apply_credit(2, F(0), 8, F(-1, 2)) == (1, F(0))
