// SPDX-License-Identifier: GPL-2.0
/*
 * Coupled congestion control for upstream Linux MPTCP as a BPF tcp_congestion_ops:
 * LIA (RFC 6356), OLIA (Khalili et al., ToN 2013) and BALIA (Peng et al., ToN 2016).
 * Built once per algorithm: -DMPL_ALG_LIA, -DMPL_ALG_OLIA or -DMPL_ALG_BALIA.
 *
 * Upstream MPTCP gives every subflow its own TCP congestion control and nothing
 * couples them. Here each subflow finds its MPTCP connection
 * (through its subflow context's conn)
 * and keeps its window, RTT and loss interval in a slot of that connection's entry
 * in the mpl_conns hash map; on each ACK in congestion avoidance a subflow reads
 * every slot of its connection and applies the coupled increase. Slow start, the
 * loss response (except BALIA's) and undo are Reno's. A plain TCP socket, or a
 * subflow that found no free slot, behaves as Reno.
 *
 * Increases are per acked packet in fixed point (1 packet = 1 << 32) and
 * accumulate in a per-subflow credit; the windows and RTTs are compared exactly
 * (128-bit products), so the reference model (capture/cc/model.py) can be fed the
 * same numbers and must agree (tests/test_cc_bpf.py).
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "mptcp_cc.h"

char _license[] SEC("license") = "GPL";

#if defined(MPL_ALG_LIA)
#define ALG MPL_LIA
#define CC_NAME "lia"
#elif defined(MPL_ALG_OLIA)
#define ALG MPL_OLIA
#define CC_NAME "olia"
#elif defined(MPL_ALG_BALIA)
#define ALG MPL_BALIA
#define CC_NAME "balia"
#else
#error "define one of MPL_ALG_LIA, MPL_ALG_OLIA, MPL_ALG_BALIA"
#endif

#define ONE (1ULL << MPL_ONE_SHIFT)
#define Q16 (1ULL << 16)
#define MAGIC 0x6d706c31U         /* "mpl1": this socket holds a slot */
#define RTT_MAX_US (1U << 26)     /* 67 s: keeps the products below 2^64 */
#define CWND_MAX (1U << 20)
#define TCP_CONG_NON_RESTRICTED 0x1

extern void tcp_reno_cong_avoid(struct sock *sk, __u32 ack, __u32 acked) __ksym;
extern __u32 tcp_reno_ssthresh(struct sock *sk) __ksym;
extern __u32 tcp_reno_undo_cwnd(struct sock *sk) __ksym;
extern __u32 tcp_slow_start(struct tcp_sock *tp, __u32 acked) __ksym;
extern void *bpf_rdonly_cast(const void *obj, __u32 btf_id) __ksym;

/* Per-subflow private state, in inet_csk(sk)->icsk_ca_priv (104 bytes). */
struct priv {
	__u64 conn;
	__s64 cnt;            /* increase credit, fixed point */
	__u32 magic;
	__u32 idx;            /* slot index in the connection's entry */
	__u32 loss1, loss2, loss3;  /* OLIA: snd_una at the last two losses, and now */
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u64);
	__type(value, struct mpl_conn);
} mpl_conns SEC(".maps");

/* [0]: 1 = emit trace events (set by the loader's --trace) */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} mpl_cfg SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 22);
} mpl_events SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, MPL_ST_N);
	__type(key, __u32);
	__type(value, __u64);
} mpl_stats SEC(".maps");

static __always_inline void count(__u32 what)
{
	__u64 *v = bpf_map_lookup_elem(&mpl_stats, &what);

	if (v)
		__sync_fetch_and_add(v, 1);
}

static __always_inline struct tcp_sock *tcp_sk(const struct sock *sk)
{
	return (struct tcp_sock *)sk;
}

static __always_inline struct priv *ca_priv(const struct sock *sk)
{
	return (void *)((struct inet_connection_sock *)sk)->icsk_ca_priv;
}

static __always_inline bool in_slow_start(const struct tcp_sock *tp)
{
	return tp->snd_cwnd < tp->snd_ssthresh;
}

/* The kernel's tcp_is_cwnd_limited() (an inline, not callable from BPF). */
static __always_inline bool cwnd_limited(const struct tcp_sock *tp)
{
	if (in_slow_start(tp))
		return tp->snd_cwnd < 2 * tp->max_packets_out;
	return BPF_CORE_READ_BITFIELD(tp, is_cwnd_limited);
}

static __always_inline bool tracing(void)
{
	__u32 k = 0, *v = bpf_map_lookup_elem(&mpl_cfg, &k);

	return v && *v;
}

/* ---- exact 64x64 -> 128-bit products (no 128-bit type in BPF) ---- */
struct u128 { __u64 hi, lo; };

static __always_inline struct u128 mul64(__u64 a, __u64 b)
{
	__u64 al = a & 0xffffffffULL, ah = a >> 32, bl = b & 0xffffffffULL, bh = b >> 32;
	__u64 p0 = al * bl, p1 = al * bh, p2 = ah * bl, p3 = ah * bh;
	__u64 mid = (p0 >> 32) + (p1 & 0xffffffffULL) + (p2 & 0xffffffffULL);
	struct u128 r;

	r.lo = (p0 & 0xffffffffULL) | (mid << 32);
	r.hi = p3 + (p1 >> 32) + (p2 >> 32) + (mid >> 32);
	return r;
}

/* sign of a1*b1 - a2*b2 */
static __always_inline int cmp_products(__u64 a1, __u64 b1, __u64 a2, __u64 b2)
{
	struct u128 x = mul64(a1, b1), y = mul64(a2, b2);

	if (x.hi != y.hi)
		return x.hi < y.hi ? -1 : 1;
	if (x.lo != y.lo)
		return x.lo < y.lo ? -1 : 1;
	return 0;
}

/* a1*b1 == a2*b2, without branches (keeps the verifier's state count down) */
static __always_inline __u32 eq_products(__u64 a1, __u64 b1, __u64 a2, __u64 b2)
{
	struct u128 x = mul64(a1, b1), y = mul64(a2, b2);

	return ((x.hi ^ y.hi) | (x.lo ^ y.lo)) == 0;
}

/* (a*b) >> 16, saturated */
static __always_inline __u64 mul_shr16(__u64 a, __u64 b)
{
	struct u128 p = mul64(a, b);

	if (p.hi >> 16)
		return ~0ULL;
	return (p.hi << 48) | (p.lo >> 16);
}

/* ---- the coupled rules, on a snapshot of the connection's subflows ----
 * Global (non-inlined) functions: the verifier checks each once on its own;
 * inlined into cong_avoid, OLIA's loops made it give up after 10^6 instructions. */

#define NOINLINE __attribute__((noinline))

/* w_j / (sum_k w_k * r_j / r_k)^2, fixed point: in packets, the increase per ACK
 * that LIA (j = argmax w/r^2) and OLIA/BALIA (j = this subflow) start from;
 * equal to (w_j/r_j^2) / (sum_k w_k/r_k)^2. */
NOINLINE __u64 mpl_coupled_term(const struct mpl_event *s, __u32 j)
{
	__u64 t = 0, a, rj;

	if (!s)
		return 0;
	rj = s->srtt_us[j & 7];
	for (int k = 0; k < MPL_MAX_SUBFLOWS; k++) {
		if (k >= s->n)
			break;
		__u64 rk = s->srtt_us[k] ? s->srtt_us[k] : 1;
		__u64 term = (((__u64)s->cwnd[k]) << 16) * rj / rk;

		t = (t + term < t) ? ~0ULL : t + term;
	}
	if (!t)
		return 0;
	a = (((__u64)s->cwnd[j & 7]) << 40) / t;   /* (w_j / sum) << 24 */
	return (a << 24) / t;
}

/* index of the largest v_k / r_k^p, v = cwnd (of_ell = 0) or ell (1), p = 1 or 2 */
NOINLINE __u32 mpl_argmax(const struct mpl_event *s, __u32 of_ell, __u32 p)
{
	__u32 best = 0;

	if (!s)
		return 0;
	for (int k = 1; k < MPL_MAX_SUBFLOWS; k++) {
		if (k >= s->n)
			break;
		__u64 rb = s->srtt_us[best & 7], rk = s->srtt_us[k];
		__u64 vb = of_ell ? s->ell[best & 7] : s->cwnd[best & 7];
		__u64 vk = of_ell ? s->ell[k] : s->cwnd[k];

		if (p == 2) {
			rb *= rb;
			rk *= rk;
		}
		/* v_k / rk > v_best / rb  <=>  v_k * rb > v_best * rk */
		if (cmp_products(vk, rb, vb, rk) > 0)
			best = k;
	}
	return best;
}

/* OLIA: bit 0 = path k has the largest window (in M), bit 1 = it is among the
 * best paths (in B: the largest ell/r^2, given the best one) */
NOINLINE __u32 mpl_olia_sets(const struct mpl_event *s, __u32 k, __u32 best, __u32 maxw)
{
	__u64 rb, rk;

	if (!s)
		return 0;
	k &= 7;
	best &= 7;
	rb = s->srtt_us[best];
	rk = s->srtt_us[k];
	return (s->cwnd[k] == maxw) | (eq_products(s->ell[k], rb * rb, s->ell[best], rk * rk) << 1);
}

/* OLIA's alpha_r / w_r, fixed point: alpha_r = 1/(n |B\M|) on the best paths that
 * do not have the largest window, -1/(n |M|) on the largest-window paths when
 * B\M is not empty, 0 otherwise (B: largest ell/r^2, M: largest w) */
NOINLINE __s64 mpl_olia_alpha_term(const struct mpl_event *s)
{
	__u32 self, best, maxw = 0, n_m = 0, n_bm = 0, f;

	if (!s)
		return 0;
	self = s->self & 7;
	best = mpl_argmax(s, 1, 2);
	for (int k = 0; k < MPL_MAX_SUBFLOWS; k++) {
		if (k >= s->n)
			break;
		maxw = s->cwnd[k] > maxw ? s->cwnd[k] : maxw;
	}
	for (int k = 0; k < MPL_MAX_SUBFLOWS; k++) {
		if (k >= s->n)
			break;
		f = mpl_olia_sets(s, k, best, maxw);
		n_m += f & 1;
		n_bm += (f >> 1) & ~f & 1;
	}
	f = mpl_olia_sets(s, self, best, maxw);
	if (!n_bm || !s->cwnd[self])
		return 0;
	if (f == 2)   /* in B, not in M */
		return ONE / ((__u64)s->n * n_bm * s->cwnd[self]);
	if (f & 1)
		return -(__s64)(ONE / ((__u64)s->n * n_m * s->cwnd[self]));
	return 0;
}

/* BALIA's alpha_r = max_k x_k / x_r (x = w / r), Q16, capped */
NOINLINE __u64 mpl_balia_alpha(const struct mpl_event *s)
{
	__u32 self, m;
	__u64 den, a;

	if (!s)
		return Q16;
	self = s->self & 7;
	m = mpl_argmax(s, 0, 1) & 7;
	den = (__u64)s->srtt_us[m] * s->cwnd[self];
	if (!den)
		return Q16;
	a = (((__u64)s->cwnd[m] * s->srtt_us[self]) << 16) / den;
	return a < ((__u64)MPL_BALIA_ALPHA_MAX << 16) ? a : ((__u64)MPL_BALIA_ALPHA_MAX << 16);
}

static __always_inline __u64 lia_inc(const struct mpl_event *s)
{
	__u64 inc = mpl_coupled_term(s, mpl_argmax(s, 0, 2));
	__u64 reno = ONE / s->cwnd[s->self & 7];

	return inc < reno ? inc : reno;   /* min(alpha / w_total, 1 / w_i) */
}

static __always_inline __s64 olia_inc(const struct mpl_event *s)
{
	/* (w_r/r_r^2) / (sum_p w_p/r_p)^2 + alpha_r / w_r */
	return (__s64)mpl_coupled_term(s, s->self) + mpl_olia_alpha_term(s);
}

static __always_inline __u64 balia_inc(const struct mpl_event *s)
{
	/* x_r / (r_r (sum x_k)^2) * (1 + alpha)/2 * (4 + alpha)/5 */
	__u64 a = mpl_balia_alpha(s);
	__u64 f = (Q16 + a) * (4 * Q16 + a) / (10 * Q16);   /* Q16 */

	return mul_shr16(mpl_coupled_term(s, s->self), f);
}

/* ---- per-connection state ---- */

/* The subflow's MPTCP connection (its msk), 0 for plain TCP. The helper
 * bpf_skc_to_mptcp_sock() would do, but struct_ops programs may not call it
 * ("program of this type cannot use helper bpf_skc_to_mptcp_sock#196" on 6.18),
 * so read the subflow context's conn through an untrusted, read-only cast. */
static __always_inline __u64 conn_of(struct sock *sk)
{
	struct mptcp_subflow_context *sf;

	if (!tcp_sk(sk)->is_mptcp)
		return 0;
	sf = bpf_rdonly_cast(((struct inet_connection_sock *)sk)->icsk_ulp_data,
			     bpf_core_type_id_kernel(struct mptcp_subflow_context));
	if (!sf)
		return 0;
	return (__u64)sf->conn;
}

static __always_inline struct mpl_slot *my_slot(struct sock *sk, struct priv *p, struct mpl_conn **c)
{
	__u64 key = p->conn;   /* map keys must be on the stack */

	if (p->magic != MAGIC)
		return 0;
	*c = bpf_map_lookup_elem(&mpl_conns, &key);
	if (!*c)
		return 0;
	struct mpl_slot *s = &(*c)->slot[p->idx & 7];

	if (s->sk != (__u64)sk)
		return 0;
	return s;
}

static __always_inline __u32 ell_of(const struct priv *p)
{
	__u32 a = p->loss3 - p->loss2, b = p->loss2 - p->loss1;

	return a > b ? a : b;
}

static __always_inline void refresh(struct sock *sk, struct priv *p, struct mpl_slot *s)
{
	struct tcp_sock *tp = tcp_sk(sk);
	__u32 rtt = tp->srtt_us >> 3;

	p->loss3 = tp->snd_una;
	s->cwnd = tp->snd_cwnd < CWND_MAX ? tp->snd_cwnd : CWND_MAX;
	s->srtt_us = rtt < 1 ? 1 : (rtt > RTT_MAX_US ? RTT_MAX_US : rtt);
	s->ell = ell_of(p);
	s->mss = tp->mss_cache;
	s->bytes_acked = tp->bytes_acked;
	s->updated_ns = bpf_ktime_get_ns();
}

/* the connection's subflows with a window and an RTT; false if this one is not among them */
static __always_inline bool snapshot(struct mpl_conn *c, struct priv *p, struct mpl_event *ev)
{
	bool found = false;

	ev->n = 0;
	for (int k = 0; k < MPL_MAX_SUBFLOWS; k++) {
		struct mpl_slot *s = &c->slot[k];
		__u32 n = ev->n;

		if (!s->sk || !s->cwnd || !s->srtt_us || n >= MPL_MAX_SUBFLOWS)
			continue;
		if (k == (p->idx & 7)) {
			ev->self = n;
			found = true;
		}
		ev->cwnd[n & 7] = s->cwnd;
		ev->srtt_us[n & 7] = s->srtt_us;
		ev->ell[n & 7] = s->ell;
		ev->n = n + 1;
	}
	return found;
}

SEC("struct_ops/mpl_init")
void BPF_PROG(mpl_init, struct sock *sk)
{
	struct priv *p = ca_priv(sk);
	struct tcp_sock *tp = tcp_sk(sk);
	struct mpl_conn zero = {}, *c;
	__u64 conn = conn_of(sk), id = (__u64)sk;

	p->magic = 0;
	p->cnt = 0;
	p->loss1 = p->loss2 = p->loss3 = tp->snd_una;
	if (!conn) {
		count(MPL_ST_PLAIN_TCP);
		return;   /* plain TCP: Reno */
	}
	c = bpf_map_lookup_elem(&mpl_conns, &conn);
	if (!c) {
		if (!bpf_map_update_elem(&mpl_conns, &conn, &zero, BPF_NOEXIST))
			count(MPL_ST_CONNS);
		c = bpf_map_lookup_elem(&mpl_conns, &conn);
		if (!c) {
			count(MPL_ST_NO_SLOT);
			return;
		}
	}
	for (int k = 0; k < MPL_MAX_SUBFLOWS; k++) {
		if (__sync_val_compare_and_swap(&c->slot[k].sk, 0, id) == 0) {
			p->conn = conn;
			p->idx = k;
			p->magic = MAGIC;
			refresh(sk, p, &c->slot[k]);
			count(MPL_ST_COUPLED);
			return;
		}
	}
	/* more subflows than slots: this one runs Reno */
	count(MPL_ST_NO_SLOT);
}

SEC("struct_ops/mpl_release")
void BPF_PROG(mpl_release, struct sock *sk)
{
	struct priv *p = ca_priv(sk);
	struct mpl_conn *c;
	struct mpl_slot *s = my_slot(sk, p, &c);
	__u64 key;

	p->magic = 0;
	if (!s)
		return;
	s->cwnd = 0;
	s->srtt_us = 0;
	__sync_val_compare_and_swap(&s->sk, (__u64)sk, 0);
	for (int k = 0; k < MPL_MAX_SUBFLOWS; k++)
		if (c->slot[k].sk)
			return;
	key = p->conn;
	bpf_map_delete_elem(&mpl_conns, &key);
}

SEC("struct_ops/mpl_pkts_acked")
void BPF_PROG(mpl_pkts_acked, struct sock *sk, const struct ack_sample *sample)
{
	struct priv *p = ca_priv(sk);
	struct mpl_conn *c;
	struct mpl_slot *s = my_slot(sk, p, &c);

	if (s)
		refresh(sk, p, s);
}

SEC("struct_ops/mpl_set_state")
void BPF_PROG(mpl_set_state, struct sock *sk, __u8 new_state)
{
	struct priv *p = ca_priv(sk);
	struct tcp_sock *tp = tcp_sk(sk);

	if (new_state != TCP_CA_Loss && new_state != TCP_CA_Recovery && new_state != TCP_CA_CWR)
		return;
	p->cnt = 0;
	/* OLIA: a new loss interval starts (not again while still retransmitting) */
	p->loss3 = tp->snd_una;
	if (p->loss3 != p->loss2 && !((struct inet_connection_sock *)sk)->icsk_retransmits) {
		p->loss1 = p->loss2;
		p->loss2 = p->loss3;
	}
}

static __always_inline void emit(struct sock *sk, struct priv *p, struct mpl_event *ev, __u32 kind)
{
	ev->ts_ns = bpf_ktime_get_ns();
	ev->conn = p->conn;
	ev->sk = (__u64)sk;
	ev->alg = ALG;
	ev->kind = kind;
	bpf_ringbuf_output(&mpl_events, ev, sizeof(*ev), 0);
}

SEC("struct_ops/mpl_cong_avoid")
void BPF_PROG(mpl_cong_avoid, struct sock *sk, __u32 ack, __u32 acked)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct priv *p = ca_priv(sk);
	struct mpl_event ev = {};
	struct mpl_conn *c;
	struct mpl_slot *s = my_slot(sk, p, &c);
	__s64 inc, cnt;
	__u32 cwnd;

	if (!s) {
		tcp_reno_cong_avoid(sk, ack, acked);
		return;
	}
	refresh(sk, p, s);
	if (!cwnd_limited(tp))
		return;
	if (in_slow_start(tp)) {
		acked = tcp_slow_start(tp, acked);
		s->cwnd = tp->snd_cwnd;
		if (!acked)
			return;
	}
	if (!snapshot(c, p, &ev))
		return;
	if (ALG == MPL_LIA)
		inc = lia_inc(&ev);
	else if (ALG == MPL_OLIA)
		inc = olia_inc(&ev);
	else
		inc = balia_inc(&ev);

	cwnd = tp->snd_cwnd;
	ev.cwnd_before = cwnd;
	ev.cnt_before = p->cnt;
	ev.acked = acked;
	ev.inc = inc;
	cnt = p->cnt + (__s64)acked * inc;
	if (cnt >= (__s64)ONE) {
		__u64 d = (__u64)cnt >> MPL_ONE_SHIFT;

		cwnd += d;
		cnt -= (__s64)(d << MPL_ONE_SHIFT);
	} else if (cnt <= -(__s64)ONE) {
		__u64 d = (__u64)(-cnt) >> MPL_ONE_SHIFT;

		cwnd = cwnd > d + 1 ? cwnd - d : 1;
		cnt += (__s64)(d << MPL_ONE_SHIFT);
	}
	if (cwnd > tp->snd_cwnd_clamp)
		cwnd = tp->snd_cwnd_clamp;
	tp->snd_cwnd = cwnd;
	p->cnt = cnt;
	s->cwnd = cwnd < CWND_MAX ? cwnd : CWND_MAX;
	count(MPL_ST_STEPS);
	if (ev.n > 1)
		count(MPL_ST_STEPS_MULTI);
	if (tracing()) {
		ev.cwnd_after = cwnd;
		ev.cnt_after = cnt;
		emit(sk, p, &ev, MPL_EV_INCREASE);
	}
}

SEC("struct_ops/mpl_ssthresh")
__u32 BPF_PROG(mpl_ssthresh, struct sock *sk)
{
	if (ALG == MPL_BALIA) {
		/* BALIA: decrease w_r by (w_r / 2) * min(alpha_r, 1.5) */
		struct tcp_sock *tp = tcp_sk(sk);
		struct priv *p = ca_priv(sk);
		struct mpl_event ev = {};
		struct mpl_conn *c;
		struct mpl_slot *s = my_slot(sk, p, &c);

		if (s) {
			refresh(sk, p, s);
			if (snapshot(c, p, &ev)) {
				__u64 a = mpl_balia_alpha(&ev), w = tp->snd_cwnd;
				__u64 dec, th;

				if (a > 3 * Q16 / 2)
					a = 3 * Q16 / 2;
				dec = (w * a) >> 17;
				th = w > dec + 2 ? w - dec : 2;
				count(MPL_ST_DECREASES);
				if (tracing()) {
					ev.cwnd_before = w;
					ev.ssthresh = th;
					ev.inc = a;
					emit(sk, p, &ev, MPL_EV_DECREASE);
				}
				return th;
			}
		}
	}
	return tcp_reno_ssthresh(sk);
}

SEC("struct_ops/mpl_undo_cwnd")
__u32 BPF_PROG(mpl_undo_cwnd, struct sock *sk)
{
	return tcp_reno_undo_cwnd(sk);
}

SEC(".struct_ops")
struct tcp_congestion_ops mpl_ops = {
	.init = (void *)mpl_init,
	.release = (void *)mpl_release,
	.ssthresh = (void *)mpl_ssthresh,
	.cong_avoid = (void *)mpl_cong_avoid,
	.set_state = (void *)mpl_set_state,
	.undo_cwnd = (void *)mpl_undo_cwnd,
	.pkts_acked = (void *)mpl_pkts_acked,
	.flags = TCP_CONG_NON_RESTRICTED,
	.name = CC_NAME,
};
