"""Reference model of the coupled increase rules, in plain Python (exact fractions).

The BPF programs (src/mptcp_cc.bpf.c) compute the same quantities in fixed point;
tests/test_cc_model.py checks this model on values computed by hand from the
formulas, tests/test_cc_bpf.py feeds it the windows and RTTs the BPF program saw
and compares the increases.

All increases are per acknowledged packet, in packets, for subflow ``i`` of a
connection whose subflows have windows ``w`` (packets) and smoothed RTTs ``rtt``
(any unit, the same for all).

LIA (RFC 6356 §3, in packets)::

    alpha = w_total * max_k(w_k / rtt_k^2) / (sum_k w_k / rtt_k)^2
    increase_i = min(alpha / w_total, 1 / w_i)

OLIA (Khalili et al., "MPTCP is not Pareto-optimal", ToN 2013, eq. (5))::

    increase_r = (w_r / rtt_r^2) / (sum_p w_p / rtt_p)^2 + alpha_r / w_r
    alpha_r = 1 / (n |B\\M|)   if r in B\\M
            = -1 / (n |M|)    if r in M and B\\M is not empty
            = 0               otherwise
    M: paths with the largest window; B: paths with the largest ell_p / rtt_p^2,
    ell_p = bytes acked between the last two losses on p (or since the last one,
    whichever is larger); n: number of paths.

BALIA (Peng, Walid, Hwang, Low, "Multipath TCP: Analysis, Design and
Implementation", ToN 2016, Algorithm 1), with x_k = w_k / rtt_k::

    alpha_r = max_k x_k / x_r
    increase_r = x_r / (rtt_r (sum_k x_k)^2) * (1 + alpha_r)/2 * (4 + alpha_r)/5
    on a loss: w_r -= (w_r / 2) * min(alpha_r, 1.5)

The BPF program caps BALIA's alpha_r at 16384 (MPL_BALIA_ALPHA_MAX) to keep its
fixed-point products in 64 bits; ``balia_alpha`` applies the same cap.
"""
from __future__ import annotations

from fractions import Fraction

BALIA_ALPHA_MAX = 16384


def _f(x) -> Fraction:
    return x if isinstance(x, Fraction) else Fraction(x)


def lia_alpha(w, rtt) -> Fraction:
    """RFC 6356's alpha."""
    w, rtt = [_f(x) for x in w], [_f(r) for r in rtt]
    total = sum(w)
    return total * max(wk / rk ** 2 for wk, rk in zip(w, rtt)) / sum(wk / rk for wk, rk in zip(w, rtt)) ** 2


def lia_increase(w, rtt, i: int) -> Fraction:
    alpha = lia_alpha(w, rtt)
    return min(alpha / sum(_f(x) for x in w), 1 / _f(w[i]))


def _coupled_term(w, rtt, i: int) -> Fraction:
    """(w_i / rtt_i^2) / (sum_k w_k / rtt_k)^2, the first term of OLIA and BALIA."""
    w, rtt = [_f(x) for x in w], [_f(r) for r in rtt]
    return (w[i] / rtt[i] ** 2) / sum(wk / rk for wk, rk in zip(w, rtt)) ** 2


def olia_sets(w, rtt, ell) -> tuple[set[int], set[int]]:
    """(M, B): the paths with the largest window, and the paths with the largest
    ell / rtt^2 (the presumably best paths)."""
    n = len(w)
    maxw = max(w)
    m = {k for k in range(n) if w[k] == maxw}
    q = [_f(ell[k]) / _f(rtt[k]) ** 2 for k in range(n)]
    best = max(q)
    b = {k for k in range(n) if q[k] == best}
    return m, b


def olia_alpha(w, rtt, ell, i: int) -> Fraction:
    n = len(w)
    m, b = olia_sets(w, rtt, ell)
    b_not_m = b - m
    if not b_not_m:
        return Fraction(0)
    if i in b_not_m:
        return Fraction(1, n * len(b_not_m))
    if i in m:
        return Fraction(-1, n * len(m))
    return Fraction(0)


def olia_increase(w, rtt, ell, i: int) -> Fraction:
    return _coupled_term(w, rtt, i) + olia_alpha(w, rtt, ell, i) / _f(w[i])


def balia_alpha(w, rtt, i: int) -> Fraction:
    x = [_f(wk) / _f(rk) for wk, rk in zip(w, rtt)]
    return min(max(x) / x[i], Fraction(BALIA_ALPHA_MAX))


def balia_increase(w, rtt, i: int) -> Fraction:
    a = balia_alpha(w, rtt, i)
    return _coupled_term(w, rtt, i) * (1 + a) / 2 * (4 + a) / 5


def balia_decrease(w, rtt, i: int) -> Fraction:
    """How much BALIA takes off w_i on a loss: (w_i / 2) * min(alpha_i, 1.5)."""
    return _f(w[i]) / 2 * min(balia_alpha(w, rtt, i), Fraction(3, 2))


def balia_ssthresh(w, rtt, i: int) -> Fraction:
    return max(_f(w[i]) - balia_decrease(w, rtt, i), Fraction(2))


def increase(alg: str, w, rtt, i: int, ell=None) -> Fraction:
    """Per-ACK increase of subflow ``i`` under ``alg`` (lia, olia, balia)."""
    if alg == "lia":
        return lia_increase(w, rtt, i)
    if alg == "olia":
        return olia_increase(w, rtt, ell if ell is not None else [0] * len(w), i)
    if alg == "balia":
        return balia_increase(w, rtt, i)
    raise ValueError(f"unknown algorithm {alg!r}")


def reno_increase(w) -> Fraction:
    """One path, Reno: 1/w per ACK (each rule above reduces to this with one subflow)."""
    return 1 / _f(w)


def apply_credit(cwnd: int, credit: Fraction, acked: int, inc: Fraction) -> tuple[int, Fraction]:
    """Add ``acked * inc`` packets of credit; whole packets move into the window
    (down to 1 packet when the credit is negative, as OLIA may be). Returns the
    new window and the remaining credit, a fraction of a packet."""
    credit += acked * inc
    if credit >= 1:
        d = int(credit)
        cwnd += d
        credit -= d
    elif credit <= -1:
        d = int(-credit)
        cwnd = cwnd - d if cwnd > d + 1 else 1
        credit += d
    return cwnd, credit

