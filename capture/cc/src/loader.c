/* mptcp-cc: load one of the lab's BPF congestion controls (lia.bpf.o, olia.bpf.o,
 * balia.bpf.o) and keep it registered while this process lives.
 *
 *   mptcp-cc probe OBJ          load and verify, prepare the struct_ops, do not
 *                               register; print one JSON line and exit (0 = works)
 *   mptcp-cc load OBJ [--ready FILE] [--trace FILE]
 *                               register, write FILE (JSON: pid, name, map ids) when
 *                               registered, stay until SIGTERM/SIGINT/SIGHUP or until
 *                               the parent process dies; --trace writes one JSON
 *                               line per congestion-avoidance step (mpl_event)
 *
 * Registration is a BPF link (struct_ops map with BPF_F_LINK): the kernel
 * unregisters the algorithm when the last descriptor of the link closes, so a
 * loader killed with SIGKILL leaves nothing registered. The parent-death signal
 * makes it exit when the run that started it dies. libbpf 1.1 (Debian 12) has no
 * ".struct_ops.link" support, so the link is created with the bpf() syscall.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <linux/bpf.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "mptcp_cc.h"

/* newer than the uapi headers of Debian 12 (Linux 6.1); values from Linux 6.4+ */
#define MPL_BPF_F_LINK (1U << 13)
#define MPL_BPF_STRUCT_OPS 44

static volatile sig_atomic_t stop;
static char logbuf[1 << 16];
static size_t loglen;
static FILE *trace_out;

static int on_libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	char *line = NULL;
	int n;

	if (level == LIBBPF_DEBUG)
		return 0;
	n = vasprintf(&line, fmt, ap);
	if (n < 0)
		return 0;
	const char *src = line;

	if ((size_t)n >= sizeof(logbuf)) {   /* keep the tail: the verifier's verdict is last */
		src = line + n - (sizeof(logbuf) - 1);
		n = sizeof(logbuf) - 1;
	}
	if (loglen + n >= sizeof(logbuf)) {
		size_t drop = loglen + n - sizeof(logbuf) + 1;

		memmove(logbuf, logbuf + drop, loglen - drop);
		loglen -= drop;
	}
	memcpy(logbuf + loglen, src, n);
	loglen += n;
	logbuf[loglen] = 0;
	free(line);
	return 0;
}

static void json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		unsigned char c = *s;

		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c == '\n')
			fputs("\\n", f);
		else if (c == '\t')
			fputs("\\t", f);
		else if (c < 0x20)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

static void fail_json(const char *stage, int err, const char *obj)
{
	char msg[256];

	libbpf_strerror(err, msg, sizeof(msg));
	printf("{\"ok\": false, \"object\": ");
	json_str(stdout, obj);
	printf(", \"stage\": ");
	json_str(stdout, stage);
	printf(", \"error\": ");
	json_str(stdout, msg);
	printf(", \"errno\": %d, \"log\": ", err < 0 ? -err : err);
	json_str(stdout, logbuf);
	printf("}\n");
	fflush(stdout);
}

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static void cc_name_of(const char *obj, char *name, size_t n)
{
	const char *b = strrchr(obj, '/');

	b = b ? b + 1 : obj;
	snprintf(name, n, "%s", b);
	name[strcspn(name, ".")] = 0;
}

static int cc_listed(const char *name)
{
	char buf[4096], *tok, *save;
	FILE *f = fopen("/proc/sys/net/ipv4/tcp_available_congestion_control", "r");
	int found = 0;

	if (!f)
		return -1;
	if (!fgets(buf, sizeof(buf), f))
		buf[0] = 0;
	fclose(f);
	for (tok = strtok_r(buf, " \n", &save); tok; tok = strtok_r(NULL, " \n", &save))
		if (!strcmp(tok, name))
			found = 1;
	return found;
}

static __u32 fd_id(int fd)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);

	if (bpf_obj_get_info_by_fd(fd, &info, &len))
		return 0;
	return info.id;
}

/* open, set BPF_F_LINK on the struct_ops map, load (verifier), prepare the
 * struct_ops value (the kernel validates the ops); nothing registered yet */
static int prepare(const char *path, struct bpf_object **objp, struct bpf_map **stp, const char **stage)
{
	struct bpf_object *obj;
	struct bpf_map *map, *st = NULL;
	struct bpf_link *prep;
	int err;

	*stage = "open";
	obj = bpf_object__open_file(path, NULL);
	if (!obj)
		return -errno;
	bpf_object__for_each_map(map, obj)
		if (bpf_map__type(map) == BPF_MAP_TYPE_STRUCT_OPS)
			st = map;
	if (!st) {
		bpf_object__close(obj);
		return -ENOENT;
	}
	bpf_map__set_map_flags(st, bpf_map__map_flags(st) | MPL_BPF_F_LINK);
	*stage = "load";
	err = bpf_object__load(obj);
	if (err) {
		bpf_object__close(obj);
		return err;
	}
	*stage = "prepare";
	prep = bpf_map__attach_struct_ops(st);   /* with BPF_F_LINK: map update only */
	if (!prep) {
		err = -errno;
		bpf_object__close(obj);
		return err;
	}
	*objp = obj;
	*stp = st;
	return 0;
}

static int handle_event(void *ctx, void *data, size_t size)
{
	const struct mpl_event *e = data;
	FILE *f = ctx;
	__u32 n = e->n < MPL_MAX_SUBFLOWS ? e->n : MPL_MAX_SUBFLOWS;

	if (size < sizeof(*e))
		return 0;
	fprintf(f, "{\"ts_ns\": %llu, \"conn\": %llu, \"sk\": %llu, \"alg\": %u, \"kind\": %u, "
		"\"n\": %u, \"self\": %u",
		(unsigned long long)e->ts_ns, (unsigned long long)e->conn, (unsigned long long)e->sk,
		e->alg, e->kind, e->n, e->self);
	const char *names[3] = {"cwnd", "srtt_us", "ell"};
	const __u32 *arrs[3] = {e->cwnd, e->srtt_us, e->ell};

	for (int a = 0; a < 3; a++) {
		fprintf(f, ", \"%s\": [", names[a]);
		for (__u32 i = 0; i < n; i++)
			fprintf(f, "%s%u", i ? ", " : "", arrs[a][i]);
		fputc(']', f);
	}
	fprintf(f, ", \"acked\": %u, \"cwnd_before\": %u, \"cwnd_after\": %u, \"ssthresh\": %u, "
		"\"cnt_before\": %lld, \"cnt_after\": %lld, \"inc\": %lld}\n",
		e->acked, e->cwnd_before, e->cwnd_after, e->ssthresh,
		(long long)e->cnt_before, (long long)e->cnt_after, (long long)e->inc);
	return 0;
}

/* one JSON line on stdout: what the program did while registered */
static void print_stats(struct bpf_object *obj)
{
	static const char *names[MPL_ST_N] = MPL_STAT_NAMES;
	struct bpf_map *m = bpf_object__find_map_by_name(obj, "mpl_stats");

	printf("{\"stats\": {");
	for (__u32 i = 0; i < MPL_ST_N; i++) {
		__u64 v = 0;

		if (m)
			bpf_map_lookup_elem(bpf_map__fd(m), &i, &v);
		printf("%s\"%s\": %llu", i ? ", " : "", names[i], (unsigned long long)v);
	}
	printf("}}\n");
	fflush(stdout);
}

static int cmd_probe(const char *path)
{
	struct bpf_object *obj;
	struct bpf_map *st;
	const char *stage;
	char name[32];
	int err = prepare(path, &obj, &st, &stage);

	if (err) {
		fail_json(stage, err, path);
		return 1;
	}
	cc_name_of(path, name, sizeof(name));
	printf("{\"ok\": true, \"object\": ");
	json_str(stdout, path);
	printf(", \"name\": \"%s\", \"verified\": true, \"registered_now\": %s}\n", name,
	       cc_listed(name) == 1 ? "true" : "false");
	bpf_object__close(obj);
	return 0;
}

static int write_ready(const char *ready, const char *name, int st_fd, int conns_fd, int link_fd)
{
	char tmp[4096];
	FILE *f;

	snprintf(tmp, sizeof(tmp), "%s.tmp.%d", ready, getpid());
	f = fopen(tmp, "w");
	if (!f)
		return -errno;
	fprintf(f, "{\"pid\": %d, \"name\": \"%s\", \"struct_ops_map_id\": %u, \"conns_map_id\": %u, "
		"\"link_id\": %u}\n", getpid(), name, fd_id(st_fd), fd_id(conns_fd), fd_id(link_fd));
	if (fclose(f))
		return -errno;
	if (rename(tmp, ready))
		return -errno;
	return 0;
}

static int cmd_load(const char *path, const char *ready, const char *trace)
{
	struct bpf_object *obj;
	struct bpf_map *st, *cfg, *events, *conns;
	struct ring_buffer *rb = NULL;
	union bpf_attr attr;
	const char *stage;
	char name[32];
	pid_t parent = getppid();
	int err, link_fd;

	cc_name_of(path, name, sizeof(name));
	prctl(PR_SET_PDEATHSIG, SIGTERM);
	if (getppid() != parent)
		return 1;
	err = prepare(path, &obj, &st, &stage);
	if (err) {
		fail_json(stage, err, path);
		return 1;
	}
	cfg = bpf_object__find_map_by_name(obj, "mpl_cfg");
	events = bpf_object__find_map_by_name(obj, "mpl_events");
	conns = bpf_object__find_map_by_name(obj, "mpl_conns");
	if (!cfg || !events || !conns) {
		fail_json("maps", -ENOENT, path);
		return 1;
	}
	if (trace) {
		__u32 k = 0, on = 1;

		trace_out = fopen(trace, "w");
		if (!trace_out) {
			fail_json("trace", -errno, trace);
			return 1;
		}
		rb = ring_buffer__new(bpf_map__fd(events), handle_event, trace_out, NULL);
		if (!rb || bpf_map_update_elem(bpf_map__fd(cfg), &k, &on, 0)) {
			fail_json("trace", -errno, path);
			return 1;
		}
	}
	memset(&attr, 0, sizeof(attr));
	attr.link_create.prog_fd = bpf_map__fd(st);   /* map_fd for BPF_STRUCT_OPS */
	attr.link_create.attach_type = MPL_BPF_STRUCT_OPS;
	link_fd = syscall(__NR_bpf, BPF_LINK_CREATE, &attr, sizeof(attr));
	if (link_fd < 0) {
		err = -errno;
		if (err == -EEXIST)
			snprintf(logbuf, sizeof(logbuf), "a congestion control named %s is already registered "
				 "(another loader? see bpftool struct_ops show)", name);
		fail_json("register", err, path);
		return 1;
	}
	signal(SIGTERM, on_signal);
	signal(SIGINT, on_signal);
	signal(SIGHUP, on_signal);
	if (ready && (err = write_ready(ready, name, bpf_map__fd(st), bpf_map__fd(conns), link_fd))) {
		close(link_fd);
		fail_json("ready-file", err, ready);
		return 1;
	}
	fprintf(stderr, "mptcp-cc: %s registered (pid %d)\n", name, getpid());
	while (!stop && getppid() == parent) {
		if (rb) {
			err = ring_buffer__poll(rb, 200);
			if (err < 0 && err != -EINTR)
				break;
		} else {
			struct timespec ts = {0, 200 * 1000 * 1000};

			nanosleep(&ts, NULL);
		}
	}
	if (rb) {
		ring_buffer__consume(rb);
		ring_buffer__free(rb);
		fclose(trace_out);
	}
	print_stats(obj);
	close(link_fd);   /* unregisters: sockets using it keep it until they close */
	for (int i = 0; i < 50 && cc_listed(name) == 1; i++)
		usleep(20000);
	if (cc_listed(name) == 1) {
		fprintf(stderr, "mptcp-cc: %s still listed after unregistering\n", name);
		return 3;
	}
	fprintf(stderr, "mptcp-cc: %s unregistered\n", name);
	return 0;
}

static int usage(void)
{
	fprintf(stderr, "usage: mptcp-cc probe OBJ\n"
			"       mptcp-cc load OBJ [--ready FILE] [--trace FILE]\n");
	return 2;
}

int main(int argc, char **argv)
{
	const char *ready = NULL, *trace = NULL;

	libbpf_set_print(on_libbpf_print);
	if (argc < 3)
		return usage();
	if (!strcmp(argv[1], "probe") && argc == 3)
		return cmd_probe(argv[2]);
	if (strcmp(argv[1], "load"))
		return usage();
	for (int i = 3; i < argc; i++) {
		if (!strcmp(argv[i], "--ready") && i + 1 < argc)
			ready = argv[++i];
		else if (!strcmp(argv[i], "--trace") && i + 1 < argc)
			trace = argv[++i];
		else
			return usage();
	}
	return cmd_load(argv[2], ready, trace);
}
