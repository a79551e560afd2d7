// SPDX-License-Identifier: GPL-2.0
/*
 * dispcost - time kernel functions per call (progs/disp_cost.bpf.c), for
 * the per-dispatch cost bench (selftests/bench/cost-clients.sh).
 *
 *   dispcost attach DIR FUNC...  attach an fentry/fexit pair to each FUNC
 *                                (at most 4; module functions too: libbpf
 *                                finds them in the module's BTF), pin the
 *                                links (DIR/SLOT-FUNC-fe, -fx: bpffs
 *                                allows no '.' in names) and the
 *                                statistics map (DIR/stats) in DIR, a
 *                                directory in bpffs, and exit; a FUNC that
 *                                cannot be attached is reported and skipped
 *   dispcost reset DIR           zero the statistics
 *   dispcost read DIR            one JSON object: for every FUNC its calls,
 *                                mean, p50 and p99 ns since attach or reset
 *   dispcost detach DIR          remove the pins (the links go with them)
 *
 * Attach while the functions are not running: attaching patches their
 * first instruction (under QEMU's multi-threaded TCG, patching code that
 * another vCPU executes has crashed guests: selftests/vm/README.md), and
 * reset/read between windows.  Exit status 0, 1 on errors, 2 on usage.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/types.h>

#include "progs/disp_cost.bpf.h"
#include "disp_cost.skel.h"

#define STATS_PIN	"stats"

static int print_quiet(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	return level == LIBBPF_WARN ? vfprintf(stderr, fmt, ap) : 0;
}

static int path(char *buf, size_t size, const char *dir, const char *name)
{
	if (snprintf(buf, size, "%s/%s", dir, name) >= (int)size) {
		fprintf(stderr, "dispcost: path too long: %s/%s\n", dir, name);
		return -1;
	}
	return 0;
}

static int do_attach(const char *dir, int n, char **funcs)
{
	struct bpf_program *fe[DC_SLOTS], *fx[DC_SLOTS];
	struct disp_cost_bpf *skel;
	bool ok[DC_SLOTS] = { };
	char p[4096];
	int i, attached = 0, err;

	if (n > DC_SLOTS) {
		fprintf(stderr, "dispcost: at most %d functions\n", DC_SLOTS);
		return 2;
	}
	skel = disp_cost_bpf__open();
	if (!skel)
		return 1;
	fe[0] = skel->progs.fe0; fx[0] = skel->progs.fx0;
	fe[1] = skel->progs.fe1; fx[1] = skel->progs.fx1;
	fe[2] = skel->progs.fe2; fx[2] = skel->progs.fx2;
	fe[3] = skel->progs.fe3; fx[3] = skel->progs.fx3;
	for (i = 0; i < DC_SLOTS; i++) {
		if (i < n && !bpf_program__set_attach_target(fe[i], 0, funcs[i]) &&
		    !bpf_program__set_attach_target(fx[i], 0, funcs[i])) {
			ok[i] = true;
			continue;
		}
		if (i < n)
			fprintf(stderr, "dispcost: %s: no such traceable function, skipped\n", funcs[i]);
		bpf_program__set_autoload(fe[i], false);
		bpf_program__set_autoload(fx[i], false);
	}
	err = disp_cost_bpf__load(skel);
	if (err) {
		fprintf(stderr, "dispcost: load: %s\n", strerror(-err));
		goto out;
	}
	mkdir(dir, 0700);
	for (i = 0; i < n; i++) {
		struct bpf_link *le, *lx;
		char name[300];

		if (!ok[i])
			continue;
		le = bpf_program__attach(fe[i]);
		lx = le ? bpf_program__attach(fx[i]) : NULL;
		if (!le || !lx) {
			fprintf(stderr, "dispcost: attach to %s: %s\n", funcs[i], strerror(errno));
			bpf_link__destroy(le);
			ok[i] = false;
			continue;
		}
		/* the pins' names carry the slot and the function */
		snprintf(name, sizeof(name), "%d-%.200s-fe", i, funcs[i]);
		err = path(p, sizeof(p), dir, name) ?: bpf_link__pin(le, p);
		if (err)
			goto pin_err;
		snprintf(name, sizeof(name), "%d-%.200s-fx", i, funcs[i]);
		err = path(p, sizeof(p), dir, name) ?: bpf_link__pin(lx, p);
		if (err)
			goto pin_err;
		attached++;
	}
	err = path(p, sizeof(p), dir, STATS_PIN) ?: bpf_map__pin(skel->maps.dc_stats, p);
	if (err)
		goto pin_err;
	printf("attached %d of %d\n", attached, n);
	err = attached ? 0 : 1;
	goto out;
pin_err:
	fprintf(stderr, "dispcost: pin %s: %s\n", p, strerror(err < 0 ? -err : EINVAL));
	err = 1;
out:
	disp_cost_bpf__destroy(skel);
	return err ? 1 : 0;
}

static int stats_fd(const char *dir)
{
	char p[4096];
	int fd;

	if (path(p, sizeof(p), dir, STATS_PIN))
		return -1;
	fd = bpf_obj_get(p);
	if (fd < 0)
		fprintf(stderr, "dispcost: %s: %s (not attached?)\n", p, strerror(errno));
	return fd;
}

/* bucket_mid() - the middle of histogram bucket @b, ns (see dc_bucket()). */
static double bucket_mid(int b)
{
	int m, sub;

	if (b < 8)
		return b;
	m = (b - 8) / 8 + 3;
	sub = (b - 8) % 8;
	return ((8.0 + sub) + 0.5) * (double)(1ULL << (m - 3));
}

static double quantile(const __u64 *hist, __u64 calls, double q)
{
	__u64 want = (__u64)(q * calls), seen = 0;
	int b;

	for (b = 0; b < DC_BUCKETS; b++) {
		seen += hist[b];
		if (seen > want)
			return bucket_mid(b);
	}
	return 0;
}

static int do_read_reset(const char *dir, bool reset)
{
	int ncpu = libbpf_num_possible_cpus(), fd, i, c, b, slot, printed = 0;
	char names[DC_SLOTS][256] = { }, fn[256];
	struct dc_stat *v, sum;
	struct dirent *de;
	DIR *d;

	if (ncpu <= 0)
		return 1;
	fd = stats_fd(dir);
	if (fd < 0)
		return 1;
	v = calloc(ncpu, sizeof(*v));
	if (!v)
		return 1;
	if (reset) {
		for (i = 0; i < DC_SLOTS; i++)
			if (bpf_map_update_elem(fd, &i, v, BPF_ANY)) {
				perror("dispcost: reset");
				return 1;
			}
		return 0;
	}
	/* the attached functions: DIR/SLOT-FUNC-fe */
	d = opendir(dir);
	while (d && (de = readdir(d))) {
		size_t len;

		if (sscanf(de->d_name, "%d-%255s", &slot, fn) != 2 ||
		    slot < 0 || slot >= DC_SLOTS)
			continue;
		len = strlen(fn);
		if (len > 3 && !strcmp(fn + len - 3, "-fe")) {
			fn[len - 3] = '\0';
			snprintf(names[slot], sizeof(names[slot]), "%s", fn);
		}
	}
	if (d)
		closedir(d);
	printf("{");
	for (i = 0; i < DC_SLOTS; i++) {
		if (bpf_map_lookup_elem(fd, &i, v)) {
			perror("dispcost: read");
			return 1;
		}
		memset(&sum, 0, sizeof(sum));
		for (c = 0; c < ncpu; c++) {
			sum.calls += v[c].calls;
			sum.ns += v[c].ns;
			for (b = 0; b < DC_BUCKETS; b++)
				sum.hist[b] += v[c].hist[b];
		}
		if (!names[i][0])
			continue;
		printf("%s\"%s\": {\"calls\": %llu, \"ns\": %llu, \"mean_ns\": %.0f, \"p50_ns\": %.0f, \"p99_ns\": %.0f}",
		       printed++ ? ", " : "", names[i], (unsigned long long)sum.calls,
		       (unsigned long long)sum.ns,
		       sum.calls ? (double)sum.ns / sum.calls : 0,
		       quantile(sum.hist, sum.calls, 0.5), quantile(sum.hist, sum.calls, 0.99));
	}
	printf("}\n");
	free(v);
	return 0;
}

/* do_detach() - remove every pin in DIR and DIR: the links detach. */
static int do_detach(const char *dir)
{
	struct dirent *de;
	char p[4096];
	DIR *d;

	d = opendir(dir);
	if (!d)
		return 0;
	while ((de = readdir(d)))
		if (de->d_name[0] != '.' && !path(p, sizeof(p), dir, de->d_name))
			unlink(p);
	closedir(d);
	return rmdir(dir) ? 1 : 0;
}

int main(int argc, char **argv)
{
	libbpf_set_print(print_quiet);
	if (argc >= 4 && !strcmp(argv[1], "attach"))
		return do_attach(argv[2], argc - 3, argv + 3);
	if (argc == 3 && !strcmp(argv[1], "reset"))
		return do_read_reset(argv[2], true);
	if (argc == 3 && !strcmp(argv[1], "read"))
		return do_read_reset(argv[2], false);
	if (argc == 3 && !strcmp(argv[1], "detach"))
		return do_detach(argv[2]);
	fprintf(stderr, "usage: dispcost attach DIR FUNC... | reset DIR | read DIR | detach DIR\n");
	return 2;
}
