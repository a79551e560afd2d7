// SPDX-License-Identifier: GPL-2.0
/*
 * burst - an interactive SMB client for selftests/bench: bursts of DEPTH
 * concurrent O_DIRECT reads of BS bytes at random aligned offsets of FILE,
 * issued from one process with Linux AIO (raw syscalls, no libaio), each
 * burst waited for completely; prints each burst's completion time in ms.
 *
 *   burst FILE BURSTS [DEPTH=32] [BS=4096] [GAP_MS=50] [WARMUP=2] [SEED]
 *
 * The first WARMUP bursts are not printed; GAP_MS is the think time
 * between bursts.  Exit status 1 on any error or short read.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/aio_abi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

int main(int argc, char **argv)
{
	int bursts, depth = 32, gap_ms = 50, warmup = 2, fd, b, i;
	long bs = 4096;
	unsigned int seed;
	aio_context_t ctx = 0;
	struct iocb *cbs, **cbp;
	struct io_event *ev;
	struct stat st;
	uint64_t blocks;
	char *buf;

	if (argc < 3) {
		fprintf(stderr, "usage: burst FILE BURSTS [DEPTH] [BS] [GAP_MS] [WARMUP] [SEED]\n");
		return 2;
	}
	bursts = atoi(argv[2]);
	if (argc > 3)
		depth = atoi(argv[3]);
	if (argc > 4)
		bs = atol(argv[4]);
	if (argc > 5)
		gap_ms = atoi(argv[5]);
	if (argc > 6)
		warmup = atoi(argv[6]);
	seed = argc > 7 ? (unsigned int)atol(argv[7]) : (unsigned int)getpid();
	srandom(seed);

	fd = open(argv[1], O_RDONLY | O_DIRECT);
	if (fd < 0 || fstat(fd, &st) < 0) {
		perror(argv[1]);
		return 1;
	}
	blocks = st.st_size / bs;
	if (!blocks || depth < 1) {
		fprintf(stderr, "burst: %s smaller than one block\n", argv[1]);
		return 1;
	}
	if (posix_memalign((void **)&buf, 4096, (size_t)depth * bs))
		return 1;
	cbs = calloc(depth, sizeof(*cbs));
	cbp = calloc(depth, sizeof(*cbp));
	ev = calloc(depth, sizeof(*ev));
	if (!cbs || !cbp || !ev)
		return 1;
	if (syscall(SYS_io_setup, depth, &ctx) < 0) {
		perror("io_setup");
		return 1;
	}

	for (b = -warmup; b < bursts; b++) {
		double t0;
		int done = 0;

		for (i = 0; i < depth; i++) {
			memset(&cbs[i], 0, sizeof(cbs[i]));
			cbs[i].aio_fildes = fd;
			cbs[i].aio_lio_opcode = IOCB_CMD_PREAD;
			cbs[i].aio_buf = (uintptr_t)(buf + (size_t)i * bs);
			cbs[i].aio_nbytes = bs;
			cbs[i].aio_offset = (int64_t)(random() % blocks) * bs;
			cbp[i] = &cbs[i];
		}
		t0 = now_ms();
		for (i = 0; i < depth; ) {
			long n = syscall(SYS_io_submit, ctx, depth - i, cbp + i);

			if (n <= 0) {
				perror("io_submit");
				return 1;
			}
			i += n;
		}
		while (done < depth) {
			long n = syscall(SYS_io_getevents, ctx, 1, depth - done,
					 ev, NULL);

			if (n < 0) {
				if (errno == EINTR)
					continue;
				perror("io_getevents");
				return 1;
			}
			for (i = 0; i < n; i++)
				if ((long)ev[i].res != bs) {
					fprintf(stderr, "burst: read returned %lld\n",
						(long long)ev[i].res);
					return 1;
				}
			done += n;
		}
		if (b >= 0) {
			printf("%.3f\n", now_ms() - t0);
			fflush(stdout);
		}
		if (gap_ms)
			usleep(gap_ms * 1000);
	}
	syscall(SYS_io_destroy, ctx);
	return 0;
}
