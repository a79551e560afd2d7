// SPDX-License-Identifier: GPL-2.0
/*
 * slowfs - a FUSE storage model for the ksmbd benches and tests.
 *
 *   slowfs [--service-ms MS] [--jitter-pct P] [--parallel N] [--bw-mibps R]
 *          [--hold-file PATH] [--ready-file PATH] [--stats-file PATH]
 *          [--seed S] [--threads T] [--cache] [-o FUSE_OPTS] BACKING MOUNTPOINT
 *
 * A passthrough of the directory BACKING at MOUNTPOINT (the operations
 * ksmbd and fio use: lookup/getattr, readdir, create, open, read, write,
 * truncate, fallocate, unlink, rename, mkdir, rmdir, xattrs, statfs,
 * utimens, fsync, release), in which every READ and WRITE takes the
 * time of a disk:
 *
 * - Service time: drawn uniformly from MS * (1 +- P/100) (default
 *   10 ms +- 50%, the storage model of the benches), plus LENGTH / R when a
 *   per-request transfer rate R (MiB/s) is given (default: none, so a
 *   1 MiB request costs the storage what a 4 KiB one does).
 * - Limited parallelism: at most N requests (default 4) are in service
 *   at once, the others wait in one FIFO in arrival order, like the
 *   queue of a disk.  A request's service time starts when it leaves
 *   the FIFO; the data is copied at once and the reply is sent when the
 *   service time has passed (an absolute CLOCK_MONOTONIC deadline).
 * - Hold: while the file --hold-file exists, every READ blocks before it
 *   enters the FIFO (it holds no storage slot); removing the file
 *   releases them all.  inotify on the file's directory wakes the
 *   readers, a 1 s timed wait re-checks in case the directory was
 *   replaced.  Writes are never held.
 *
 * Files are opened with direct_io unless --cache is given: the kernel
 * then sends every read(2)/write(2) of the file to slowfs as one request
 * of its size (up to the 1 MiB FUSE request limit) and never serves one
 * from the page cache, so a client's read always pays the service time
 * (no readahead, no cached re-read).  This is what the benches need: a
 * page cache in front of the model would hide the storage from the
 * server's scheduling.  --cache lets the kernel cache (FUSE's default).
 *
 * Mounted with allow_other (the ksmbd workers that use the share run
 * with the share user's credentials) and default_permissions (the
 * kernel checks modes as on a local file system); -o adds FUSE options.
 * Runs in the foreground until unmounted (umount, fusermount3 -u) or
 * signalled (SIGINT, SIGTERM, SIGHUP).
 *
 * --ready-file: created (with the pid) once the file system is mounted.
 * --stats-file: "key: value" lines, rewritten atomically (rename) when
 * a read starts or stops being held, on SIGUSR1 and at exit:
 * updates (how many times the file was written: send SIGUSR1, wait for
 * it to grow, and the counters are current), reads, writes, read_bytes, write_bytes, in_service, in_service_max
 * (the most ever in service at once), queued, held (reads blocked by the
 * hold file now), held_total, service_ns, queue_ns (sums), parallel,
 * service_us, jitter_pct.
 *
 * Exit status 0 after an unmount or a stop by signal, 1 on errors, 2 on
 * usage errors.
 */
#define FUSE_USE_VERSION 312
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fuse.h>
#include <fuse_lowlevel.h>
#include <getopt.h>
#include <inttypes.h>
#include <libgen.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#define NSEC_PER_SEC	1000000000ULL
#define NSEC_PER_MSEC	1000000ULL
/* How often a held reader re-checks the hold file without an event. */
#define HOLD_RECHECK_NS	NSEC_PER_SEC

/* The options. */
static struct {
	double service_ms;
	double jitter_pct;
	unsigned int parallel;
	double bw_mibps;
	const char *hold_file;
	const char *ready_file;
	const char *stats_file;
	unsigned long seed;
	unsigned int threads;
	bool cache;
	int backing_fd;
} opt = {
	.service_ms = 10,
	.jitter_pct = 50,
	.parallel = 4,
	.seed = 3,
	.threads = 128,
	.backing_fd = -1,
};

/*
 * The storage queue: a ticket FIFO in front of at most opt.parallel
 * requests in service, and the hold state.  Everything under @lock.
 */
static struct {
	pthread_mutex_t lock;
	pthread_cond_t cond;		/* FIFO head or a slot changed */
	pthread_cond_t hold_cond;	/* the hold file may have changed */
	uint64_t next;			/* next ticket handed out */
	uint64_t head;			/* next ticket admitted to service */
	unsigned int busy;		/* requests in service */
	unsigned int busy_max;		/* most ever in service at once */
	unsigned short rand[3];		/* erand48() state, from --seed */
	/* counters (--stats-file) */
	uint64_t reads, writes, read_bytes, write_bytes;
	uint64_t queued, held, held_total;
	uint64_t service_ns, queue_ns;
	uint64_t updates;		/* stats file writes */
} q = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.cond = PTHREAD_COND_INITIALIZER,
	.hold_cond = PTHREAD_COND_INITIALIZER,
};

static struct fuse *slowfs_fuse;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * NSEC_PER_SEC + ts.tv_nsec;
}

static struct timespec ns_to_ts(uint64_t ns)
{
	struct timespec ts = {
		.tv_sec = ns / NSEC_PER_SEC,
		.tv_nsec = ns % NSEC_PER_SEC,
	};

	return ts;
}

/**
 * stats_write_locked() - rewrite --stats-file from the counters.
 *
 * Context: q.lock held.  Written to PATH.tmp and renamed over PATH, so
 * a reader sees the old or the new content, never a mix.  Errors are
 * ignored: the statistics are an aid, not the model.
 */
static void stats_write_locked(void)
{
	char tmp[PATH_MAX];
	FILE *f;

	if (!opt.stats_file ||
	    snprintf(tmp, sizeof(tmp), "%s.tmp", opt.stats_file) >= (int)sizeof(tmp))
		return;
	f = fopen(tmp, "w");
	if (!f)
		return;
	fprintf(f, "updates: %" PRIu64 "\n", ++q.updates);
	fprintf(f, "reads: %" PRIu64 "\nwrites: %" PRIu64 "\n"
		"read_bytes: %" PRIu64 "\nwrite_bytes: %" PRIu64 "\n"
		"in_service: %u\nin_service_max: %u\nqueued: %" PRIu64 "\n"
		"held: %" PRIu64 "\n"
		"held_total: %" PRIu64 "\nservice_ns: %" PRIu64 "\n"
		"queue_ns: %" PRIu64 "\nparallel: %u\nservice_us: %.0f\n"
		"jitter_pct: %.0f\n",
		q.reads, q.writes, q.read_bytes, q.write_bytes, q.busy,
		q.busy_max, q.queued, q.held, q.held_total, q.service_ns, q.queue_ns,
		opt.parallel, opt.service_ms * 1000, opt.jitter_pct);
	if (fclose(f) == 0)
		rename(tmp, opt.stats_file);
	else
		unlink(tmp);
}

static void stats_write(void)
{
	pthread_mutex_lock(&q.lock);
	stats_write_locked();
	pthread_mutex_unlock(&q.lock);
}

static bool hold_file_exists(void)
{
	struct stat st;

	return opt.hold_file && stat(opt.hold_file, &st) == 0;
}

static bool exiting(void)
{
	return slowfs_fuse && fuse_session_exited(fuse_get_session(slowfs_fuse));
}

/**
 * hold_wait() - block a READ while the hold file exists.
 *
 * Context: a FUSE worker thread, before the request enters the storage
 * FIFO (a held read holds no storage slot).  Woken by the watcher
 * thread's inotify events, and every HOLD_RECHECK_NS; returns at once
 * when the file system is being unmounted.
 */
static void hold_wait(void)
{
	struct timespec ts;
	bool counted = false;

	if (!hold_file_exists())
		return;
	pthread_mutex_lock(&q.lock);
	while (hold_file_exists() && !exiting()) {
		if (!counted) {
			counted = true;
			q.held++;
			q.held_total++;
			stats_write_locked();
		}
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_sec += HOLD_RECHECK_NS / NSEC_PER_SEC;
		pthread_cond_timedwait(&q.hold_cond, &q.lock, &ts);
	}
	if (counted) {
		q.held--;
		stats_write_locked();
	}
	pthread_mutex_unlock(&q.lock);
}

/**
 * io_begin() - wait for a storage slot in FIFO order.
 * @len: bytes the request moves (for the transfer-rate term).
 * @deadline: set to the absolute CLOCK_MONOTONIC time (ns) at which the
 *	request's service ends.
 *
 * Context: a FUSE worker thread; sleeps.  Every io_begin() must be
 * followed by io_end().
 */
static void io_begin(size_t len, uint64_t *deadline)
{
	uint64_t t, t0 = now_ns(), start;
	double lo, span, ns;

	pthread_mutex_lock(&q.lock);
	t = q.next++;
	q.queued++;
	while (t != q.head || q.busy >= opt.parallel)
		pthread_cond_wait(&q.cond, &q.lock);
	q.head++;
	if (++q.busy > q.busy_max)
		q.busy_max = q.busy;
	q.queued--;
	/* the next ticket may be admissible too */
	pthread_cond_broadcast(&q.cond);
	lo = opt.service_ms * (1 - opt.jitter_pct / 100) * NSEC_PER_MSEC;
	span = opt.service_ms * (2 * opt.jitter_pct / 100) * NSEC_PER_MSEC;
	ns = lo + span * erand48(q.rand);
	if (opt.bw_mibps > 0)
		ns += (double)len * NSEC_PER_SEC / (opt.bw_mibps * 1048576);
	if (ns < 0)
		ns = 0;
	start = now_ns();
	q.queue_ns += start - t0;
	q.service_ns += (uint64_t)ns;
	pthread_mutex_unlock(&q.lock);
	*deadline = start + (uint64_t)ns;
}

/**
 * io_end() - wait until the request's service time has passed, free its
 * slot.
 * @deadline: from io_begin().
 */
static void io_end(uint64_t deadline)
{
	struct timespec ts = ns_to_ts(deadline);

	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
	pthread_mutex_lock(&q.lock);
	q.busy--;
	pthread_cond_broadcast(&q.cond);
	pthread_mutex_unlock(&q.lock);
}

/* A FUSE path ("/", "/a/b") relative to the backing directory. */
static const char *rel(const char *path)
{
	while (*path == '/')
		path++;
	return *path ? path : ".";
}

#define B opt.backing_fd

static void *sf_init(struct fuse_conn_info *conn, struct fuse_config *cfg)
{
	(void)conn;
	cfg->use_ino = 1;		/* stable inode numbers (SMB file ids) */
	cfg->readdir_ino = 1;
	cfg->hard_remove = 1;		/* unlink at once, ops go by handle */
	cfg->nullpath_ok = 1;
	cfg->direct_io = !opt.cache;
	cfg->kernel_cache = 0;
	cfg->auto_cache = 0;
	cfg->entry_timeout = 1;
	cfg->attr_timeout = 1;
	cfg->negative_timeout = 0;
	return NULL;
}

static int sf_getattr(const char *path, struct stat *st, struct fuse_file_info *fi)
{
	int r = fi ? fstat(fi->fh, st) : fstatat(B, rel(path), st, AT_SYMLINK_NOFOLLOW);

	return r ? -errno : 0;
}

static int sf_access(const char *path, int mask)
{
	return faccessat(B, rel(path), mask, AT_SYMLINK_NOFOLLOW) ? -errno : 0;
}

static int sf_readlink(const char *path, char *buf, size_t size)
{
	ssize_t n = readlinkat(B, rel(path), buf, size - 1);

	if (n < 0)
		return -errno;
	buf[n] = '\0';
	return 0;
}

static int sf_opendir(const char *path, struct fuse_file_info *fi)
{
	int fd = openat(B, rel(path), O_RDONLY | O_DIRECTORY);
	DIR *d;

	if (fd < 0)
		return -errno;
	d = fdopendir(fd);
	if (!d) {
		close(fd);
		return -errno;
	}
	fi->fh = (uintptr_t)d;
	return 0;
}

static int sf_readdir(const char *path, void *buf, fuse_fill_dir_t fill,
		      off_t off, struct fuse_file_info *fi,
		      enum fuse_readdir_flags flags)
{
	DIR *d = (DIR *)(uintptr_t)fi->fh;
	struct dirent *de;
	struct stat st;

	(void)path;
	(void)flags;
	seekdir(d, off);
	while ((de = readdir(d))) {
		memset(&st, 0, sizeof(st));
		st.st_ino = de->d_ino;
		st.st_mode = DTTOIF(de->d_type);
		if (fill(buf, de->d_name, &st, telldir(d), 0))
			break;
	}
	return 0;
}

static int sf_releasedir(const char *path, struct fuse_file_info *fi)
{
	(void)path;
	closedir((DIR *)(uintptr_t)fi->fh);
	return 0;
}

static int sf_mknod(const char *path, mode_t mode, dev_t rdev)
{
	return mknodat(B, rel(path), mode, rdev) ? -errno : 0;
}

static int sf_mkdir(const char *path, mode_t mode)
{
	return mkdirat(B, rel(path), mode) ? -errno : 0;
}

static int sf_unlink(const char *path)
{
	return unlinkat(B, rel(path), 0) ? -errno : 0;
}

static int sf_rmdir(const char *path)
{
	return unlinkat(B, rel(path), AT_REMOVEDIR) ? -errno : 0;
}

static int sf_symlink(const char *target, const char *path)
{
	return symlinkat(target, B, rel(path)) ? -errno : 0;
}

static int sf_rename(const char *from, const char *to, unsigned int flags)
{
	return renameat2(B, rel(from), B, rel(to), flags) ? -errno : 0;
}

static int sf_link(const char *from, const char *to)
{
	return linkat(B, rel(from), B, rel(to), 0) ? -errno : 0;
}

static int sf_chmod(const char *path, mode_t mode, struct fuse_file_info *fi)
{
	int r = fi ? fchmod(fi->fh, mode) : fchmodat(B, rel(path), mode, 0);

	return r ? -errno : 0;
}

static int sf_chown(const char *path, uid_t uid, gid_t gid, struct fuse_file_info *fi)
{
	int r = fi ? fchown(fi->fh, uid, gid) :
		fchownat(B, rel(path), uid, gid, AT_SYMLINK_NOFOLLOW);

	return r ? -errno : 0;
}

static int sf_truncate(const char *path, off_t size, struct fuse_file_info *fi)
{
	int fd, r;

	if (fi)
		return ftruncate(fi->fh, size) ? -errno : 0;
	fd = openat(B, rel(path), O_WRONLY);
	if (fd < 0)
		return -errno;
	r = ftruncate(fd, size) ? -errno : 0;
	close(fd);
	return r;
}

static int sf_utimens(const char *path, const struct timespec tv[2],
		      struct fuse_file_info *fi)
{
	int r = fi ? futimens(fi->fh, tv) :
		utimensat(B, rel(path), tv, AT_SYMLINK_NOFOLLOW);

	return r ? -errno : 0;
}

/*
 * The backing file is opened without O_DIRECT (libfuse's buffers are not
 * aligned for it, and the model is the storage, not the backing file
 * system) and without O_NOFOLLOW (the kernel resolved the path).
 */
#define BACKING_FLAGS(f)	((f) & ~(O_DIRECT | O_NOFOLLOW))

static int sf_create(const char *path, mode_t mode, struct fuse_file_info *fi)
{
	int fd = openat(B, rel(path), BACKING_FLAGS(fi->flags), mode);

	if (fd < 0)
		return -errno;
	fi->fh = fd;
	fi->direct_io = !opt.cache;
	return 0;
}

static int sf_open(const char *path, struct fuse_file_info *fi)
{
	int fd = openat(B, rel(path), BACKING_FLAGS(fi->flags));

	if (fd < 0)
		return -errno;
	fi->fh = fd;
	fi->direct_io = !opt.cache;
	return 0;
}

/* pread/pwrite until done, EOF or an error: bytes moved or -errno. */
static ssize_t full_io(bool wr, int fd, char *buf, size_t size, off_t off)
{
	size_t done = 0;
	ssize_t n;

	while (done < size) {
		n = wr ? pwrite(fd, buf + done, size - done, off + done) :
			 pread(fd, buf + done, size - done, off + done);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return done ? (ssize_t)done : -errno;
		if (n == 0)
			break;
		done += n;
	}
	return done;
}

static int sf_read(const char *path, char *buf, size_t size, off_t off,
		   struct fuse_file_info *fi)
{
	uint64_t deadline;
	ssize_t n;

	(void)path;
	hold_wait();
	io_begin(size, &deadline);
	n = full_io(false, fi->fh, buf, size, off);
	io_end(deadline);
	pthread_mutex_lock(&q.lock);
	q.reads++;
	if (n > 0)
		q.read_bytes += n;
	pthread_mutex_unlock(&q.lock);
	return n;
}

static int sf_write(const char *path, const char *buf, size_t size, off_t off,
		    struct fuse_file_info *fi)
{
	uint64_t deadline;
	ssize_t n;

	(void)path;
	io_begin(size, &deadline);
	n = full_io(true, fi->fh, (char *)buf, size, off);
	io_end(deadline);
	pthread_mutex_lock(&q.lock);
	q.writes++;
	if (n > 0)
		q.write_bytes += n;
	pthread_mutex_unlock(&q.lock);
	return n;
}

static int sf_statfs(const char *path, struct statvfs *st)
{
	int fd = openat(B, rel(path), O_RDONLY | O_PATH), r;

	if (fd < 0)
		return -errno;
	r = fstatvfs(fd, st) ? -errno : 0;
	close(fd);
	return r;
}

static int sf_flush(const char *path, struct fuse_file_info *fi)
{
	(void)path;
	(void)fi;
	return 0;
}

static int sf_release(const char *path, struct fuse_file_info *fi)
{
	(void)path;
	close(fi->fh);
	return 0;
}

static int sf_fsync(const char *path, int datasync, struct fuse_file_info *fi)
{
	int r;

	(void)path;
	r = datasync ? fdatasync(fi->fh) : fsync(fi->fh);
	return r ? -errno : 0;
}

static int sf_fallocate(const char *path, int mode, off_t off, off_t len,
			struct fuse_file_info *fi)
{
	(void)path;
	return fallocate(fi->fh, mode, off, len) ? -errno : 0;
}

/*
 * xattrs by path through /proc/self/fd of the backing directory: the
 * *xattr(2) calls have no *at() form.
 */
static int xpath(char *buf, size_t size, const char *path)
{
	if (snprintf(buf, size, "/proc/self/fd/%d/%s", B, rel(path)) >= (int)size)
		return -ENAMETOOLONG;
	return 0;
}

static int sf_setxattr(const char *path, const char *name, const char *value,
		       size_t size, int flags)
{
	char p[PATH_MAX];
	int r = xpath(p, sizeof(p), path);

	if (r)
		return r;
	return lsetxattr(p, name, value, size, flags) ? -errno : 0;
}

static int sf_getxattr(const char *path, const char *name, char *value, size_t size)
{
	char p[PATH_MAX];
	int r = xpath(p, sizeof(p), path);
	ssize_t n;

	if (r)
		return r;
	n = lgetxattr(p, name, value, size);
	return n < 0 ? -errno : n;
}

static int sf_listxattr(const char *path, char *list, size_t size)
{
	char p[PATH_MAX];
	int r = xpath(p, sizeof(p), path);
	ssize_t n;

	if (r)
		return r;
	n = llistxattr(p, list, size);
	return n < 0 ? -errno : n;
}

static int sf_removexattr(const char *path, const char *name)
{
	char p[PATH_MAX];
	int r = xpath(p, sizeof(p), path);

	if (r)
		return r;
	return lremovexattr(p, name) ? -errno : 0;
}

static off_t sf_lseek(const char *path, off_t off, int whence,
		      struct fuse_file_info *fi)
{
	off_t r;

	(void)path;
	r = lseek(fi->fh, off, whence);
	return r < 0 ? -errno : r;
}

static const struct fuse_operations sf_ops = {
	.init		= sf_init,
	.getattr	= sf_getattr,
	.access		= sf_access,
	.readlink	= sf_readlink,
	.opendir	= sf_opendir,
	.readdir	= sf_readdir,
	.releasedir	= sf_releasedir,
	.mknod		= sf_mknod,
	.mkdir		= sf_mkdir,
	.unlink		= sf_unlink,
	.rmdir		= sf_rmdir,
	.symlink	= sf_symlink,
	.rename		= sf_rename,
	.link		= sf_link,
	.chmod		= sf_chmod,
	.chown		= sf_chown,
	.truncate	= sf_truncate,
	.utimens	= sf_utimens,
	.create		= sf_create,
	.open		= sf_open,
	.read		= sf_read,
	.write		= sf_write,
	.statfs		= sf_statfs,
	.flush		= sf_flush,
	.release	= sf_release,
	.fsync		= sf_fsync,
	.fallocate	= sf_fallocate,
	.setxattr	= sf_setxattr,
	.getxattr	= sf_getxattr,
	.listxattr	= sf_listxattr,
	.removexattr	= sf_removexattr,
	.lseek		= sf_lseek,
};

/**
 * watcher() - wake held readers on changes of the hold file's directory;
 * rewrite the statistics on SIGUSR1.
 * @arg: the signalfd of SIGUSR1 (blocked in every thread).
 *
 * Context: its own thread, for the life of the process.
 */
static void *watcher(void *arg)
{
	struct pollfd pfd[2] = {
		{ .fd = (int)(intptr_t)arg, .events = POLLIN },
		{ .fd = -1, .events = POLLIN },
	};
	char buf[4096], dir[PATH_MAX];
	struct signalfd_siginfo si;

	if (opt.hold_file) {
		snprintf(dir, sizeof(dir), "%s", opt.hold_file);
		pfd[1].fd = inotify_init1(IN_CLOEXEC);
		if (pfd[1].fd >= 0 &&
		    inotify_add_watch(pfd[1].fd, dirname(dir),
				      IN_CREATE | IN_DELETE | IN_MOVED_FROM |
				      IN_MOVED_TO | IN_DELETE_SELF | IN_MOVE_SELF) < 0)
			fprintf(stderr, "slowfs: inotify on %s: %s (held reads re-check every second)\n",
				dir, strerror(errno));
	}
	for (;;) {
		if (poll(pfd, 2, -1) < 0)
			continue;
		if (pfd[0].revents & POLLIN &&
		    read(pfd[0].fd, &si, sizeof(si)) == sizeof(si))
			stats_write();
		if (pfd[1].revents & POLLIN && read(pfd[1].fd, buf, sizeof(buf)) > 0) {
			pthread_mutex_lock(&q.lock);
			pthread_cond_broadcast(&q.hold_cond);
			pthread_mutex_unlock(&q.lock);
		}
	}
	return NULL;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: slowfs [--service-ms MS] [--jitter-pct P] [--parallel N] [--bw-mibps R]\n"
		"              [--hold-file PATH] [--ready-file PATH] [--stats-file PATH]\n"
		"              [--seed S] [--threads T] [--cache] [-o FUSE_OPTS] BACKING MOUNTPOINT\n"
		"  --service-ms MS   mean service time of a READ/WRITE (default 10)\n"
		"  --jitter-pct P    uniform within MS * (1 +- P/100) (default 50)\n"
		"  --parallel N      requests in service at once, the rest wait in FIFO order (4)\n"
		"  --bw-mibps R      add LENGTH / R MiB/s per request (default: no transfer term)\n"
		"  --hold-file PATH  while PATH exists, every READ blocks\n"
		"  --ready-file PATH created once mounted\n"
		"  --stats-file PATH counters, rewritten on hold changes, SIGUSR1 and exit\n"
		"  --seed S          seed of the service-time draws (default 3)\n"
		"  --threads T       FUSE worker threads (default 128)\n"
		"  --cache           no direct_io: let the page cache serve reads\n"
		"  -o OPTS           more FUSE mount options (allow_other and\n"
		"                    default_permissions are always set)\n");
}

static bool parse_num(const char *s, double lo, double hi, double *v)
{
	char *end;

	errno = 0;
	*v = strtod(s, &end);
	return !errno && end != s && !*end && *v >= lo && *v <= hi;
}

int main(int argc, char **argv)
{
	static const struct option lopts[] = {
		{ "service-ms", required_argument, NULL, 's' },
		{ "jitter-pct", required_argument, NULL, 'j' },
		{ "parallel", required_argument, NULL, 'p' },
		{ "bw-mibps", required_argument, NULL, 'b' },
		{ "hold-file", required_argument, NULL, 'H' },
		{ "ready-file", required_argument, NULL, 'r' },
		{ "stats-file", required_argument, NULL, 'S' },
		{ "seed", required_argument, NULL, 'e' },
		{ "threads", required_argument, NULL, 't' },
		{ "cache", no_argument, NULL, 'c' },
		{ "help", no_argument, NULL, 'h' },
		{ }
	};
	char fsname[PATH_MAX + 32], *mountpoint;
	struct fuse_args args = FUSE_ARGS_INIT(0, NULL);
	struct fuse_loop_config *cfg;
	sigset_t usr1;
	pthread_t th;
	int c, li = 0, sfd, rc = 1;
	double v;

	while ((c = getopt_long(argc, argv, "o:h", lopts, &li)) != -1) {
		switch (c) {
		case 's':
			if (!parse_num(optarg, 0, 600000, &opt.service_ms))
				goto bad;
			break;
		case 'j':
			if (!parse_num(optarg, 0, 100, &opt.jitter_pct))
				goto bad;
			break;
		case 'p':
			if (!parse_num(optarg, 1, 4096, &v) || v != (unsigned int)v)
				goto bad;
			opt.parallel = v;
			break;
		case 'b':
			if (!parse_num(optarg, 0, 1e9, &opt.bw_mibps))
				goto bad;
			break;
		case 'H':
			opt.hold_file = optarg;
			break;
		case 'r':
			opt.ready_file = optarg;
			break;
		case 'S':
			opt.stats_file = optarg;
			break;
		case 'e':
			if (!parse_num(optarg, 0, 4294967295.0, &v) || v != (unsigned long)v)
				goto bad;
			opt.seed = v;
			break;
		case 't':
			if (!parse_num(optarg, 2, 4096, &v) || v != (unsigned int)v)
				goto bad;
			opt.threads = v;
			break;
		case 'c':
			opt.cache = true;
			break;
		case 'o':
			if (fuse_opt_add_arg(&args, "-o") || fuse_opt_add_arg(&args, optarg))
				return 1;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			goto usage;
		}
	}
	if (argc - optind != 2)
		goto usage;
	if (opt.hold_file && opt.hold_file[0] != '/') {
		fprintf(stderr, "slowfs: --hold-file must be an absolute path\n");
		return 2;
	}
	opt.backing_fd = open(argv[optind], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (opt.backing_fd < 0) {
		fprintf(stderr, "slowfs: %s: %s\n", argv[optind], strerror(errno));
		return 1;
	}
	mountpoint = argv[optind + 1];
	q.rand[0] = 0x330e;
	q.rand[1] = opt.seed & 0xffff;
	q.rand[2] = opt.seed >> 16;

	snprintf(fsname, sizeof(fsname), "allow_other,default_permissions,fsname=slowfs:%s,subtype=slowfs",
		 argv[optind]);
	/* argv[0] first, then our options, then the user's -o (later wins) */
	if (fuse_opt_insert_arg(&args, 0, argv[0]) ||
	    fuse_opt_insert_arg(&args, 1, "-o") ||
	    fuse_opt_insert_arg(&args, 2, fsname))
		return 1;

	/* SIGUSR1 through a signalfd, blocked in every thread made later */
	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	pthread_sigmask(SIG_BLOCK, &usr1, NULL);
	sfd = signalfd(-1, &usr1, SFD_CLOEXEC);
	if (sfd < 0 || pthread_create(&th, NULL, watcher, (void *)(intptr_t)sfd)) {
		perror("slowfs: watcher");
		return 1;
	}

	slowfs_fuse = fuse_new(&args, &sf_ops, sizeof(sf_ops), NULL);
	if (!slowfs_fuse)
		return 1;
	if (fuse_mount(slowfs_fuse, mountpoint))
		goto out_destroy;
	if (fuse_set_signal_handlers(fuse_get_session(slowfs_fuse)))
		goto out_unmount;
	if (opt.ready_file) {
		FILE *f = fopen(opt.ready_file, "w");

		if (!f || fprintf(f, "%d\n", getpid()) < 0 || fclose(f)) {
			fprintf(stderr, "slowfs: %s: %s\n", opt.ready_file, strerror(errno));
			goto out_signals;
		}
	}
	stats_write();
	cfg = fuse_loop_cfg_create();
	if (!cfg)
		goto out_signals;
	fuse_loop_cfg_set_max_threads(cfg, opt.threads);
	fuse_loop_cfg_set_idle_threads(cfg, opt.threads);
	/* < 0: an error; > 0: the signal that stopped it, a normal end */
	rc = fuse_loop_mt(slowfs_fuse, cfg) < 0;
	fuse_loop_cfg_destroy(cfg);
	stats_write();
out_signals:
	fuse_remove_signal_handlers(fuse_get_session(slowfs_fuse));
out_unmount:
	fuse_unmount(slowfs_fuse);
out_destroy:
	fuse_destroy(slowfs_fuse);
	fuse_opt_free_args(&args);
	return rc;
bad:
	fprintf(stderr, "slowfs: bad value for --%s: %s\n", lopts[li].name, optarg);
usage:
	usage(stderr);
	return 2;
}
