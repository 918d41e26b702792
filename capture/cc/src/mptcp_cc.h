/* Shared between the BPF programs (mptcp_cc.bpf.c) and the loader (loader.c):
 * the per-connection state map's value and the trace events. Plain __u32/__u64
 * so that it compiles against vmlinux.h and against <linux/types.h>. */
#ifndef MPTCP_CC_H
#define MPTCP_CC_H

#define MPL_MAX_SUBFLOWS 8
#define MPL_ONE_SHIFT 32            /* increases are fixed point: 1 packet = 1 << 32 */
#define MPL_BALIA_ALPHA_MAX 16384   /* BALIA's alpha_r is capped here (keeps the Q16 maths in 64 bits) */

enum mpl_alg { MPL_LIA = 1, MPL_OLIA = 2, MPL_BALIA = 3 };
/* counters in the mpl_stats array map (index: what it counts) */
enum mpl_stat {
	MPL_ST_COUPLED = 0,      /* subflows that took a slot in their connection's entry */
	MPL_ST_PLAIN_TCP,        /* plain TCP sockets (Reno) */
	MPL_ST_NO_SLOT,          /* subflows beyond MPL_MAX_SUBFLOWS (Reno) */
	MPL_ST_CONNS,            /* connection entries created */
	MPL_ST_STEPS,            /* coupled congestion-avoidance steps */
	MPL_ST_STEPS_MULTI,      /* ... of which with two or more subflows in the snapshot */
	MPL_ST_DECREASES,        /* BALIA coupled decreases */
	MPL_ST_N
};
#define MPL_STAT_NAMES {"subflows_coupled", "plain_tcp_sockets", "subflows_without_slot", \
	"connections", "coupled_steps", "coupled_steps_multipath", "coupled_decreases"}

enum mpl_event_kind { MPL_EV_INCREASE = 1, MPL_EV_DECREASE = 2 };

/* One subflow's entry in its connection's state. The subflow writes it, every
 * subflow of the connection reads it. */
struct mpl_slot {
	__u64 sk;          /* the subflow socket's kernel address (its id); 0 = free */
	__u32 cwnd;        /* packets */
	__u32 srtt_us;     /* smoothed RTT, microseconds */
	__u32 ell;         /* OLIA: bytes acked between the last two losses, or since the last one if more */
	__u32 mss;
	__u64 bytes_acked; /* tcp_sock.bytes_acked */
	__u64 updated_ns;
};

struct mpl_conn {
	struct mpl_slot slot[MPL_MAX_SUBFLOWS];
};

/* One congestion-avoidance step (or BALIA decrease) of one subflow, with the
 * inputs it used: the reference model is fed the same numbers. */
struct mpl_event {
	__u64 ts_ns;
	__u64 conn;
	__u64 sk;
	__u32 alg;
	__u32 kind;
	__u32 n;                         /* subflows in the snapshot */
	__u32 self;                      /* this subflow's index in the snapshot */
	__u32 cwnd[MPL_MAX_SUBFLOWS];
	__u32 srtt_us[MPL_MAX_SUBFLOWS];
	__u32 ell[MPL_MAX_SUBFLOWS];
	__u32 acked;
	__u32 cwnd_before;
	__u32 cwnd_after;
	__u32 ssthresh;                  /* MPL_EV_DECREASE: the value returned */
	__s64 cnt_before;                /* fixed-point credit (1 packet = 1 << 32) */
	__s64 cnt_after;
	__s64 inc;                       /* increase per acked packet, fixed point */
};

#endif
