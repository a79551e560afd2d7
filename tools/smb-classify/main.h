/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * main.h - shared declarations of the smb-classify loader
 */
#ifndef SMB_CLASSIFY_MAIN_H
#define SMB_CLASSIFY_MAIN_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>

#include "classword.h"
#include "json.h"
#include "kstat.h"

#define SMB_CLASSIFY_VERSION	"0.1"

#ifndef ARRAY_SIZE
#define ARRAY_SIZE(a)		(sizeof(a) / sizeof((a)[0]))
#endif

#define BPFFS_ROOT		"/sys/fs/bpf"
#define PIN_ROOT		BPFFS_ROOT "/smb-classify"
#define PIN_NAMES		PIN_ROOT "/names"
#define NETNS_RUN_DIR		"/run/netns"
#define KSCHED_PROC		"/proc/self/net/ksmbd_sched"

extern bool json_output;
extern struct json_writer *jw;

void p_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void p_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/**
 * struct ns_ctx - the network namespace a command works on
 * @name:    -n NAME, or NULL for a path or the current netns.
 * @label:   how to name it in messages ("t1", a path, or "current").
 * @ino:     its nsfs inode number: the stored identity of its pins.
 * @live:    it still exists and this process has entered it; false when
 *           only a record under PIN_NAMES is left (the netns was deleted).
 * @dir:     PIN_ROOT/<ino>.
 * @lock_fd: PIN_ROOT opened and flock()ed, or -1.
 * @old_ino: inode recorded for @name before, of a netns that no longer
 *           exists (the name now names a new netns); 0 if none.
 */
struct ns_ctx {
	const char *name;
	const char *label;
	unsigned long ino;
	unsigned long old_ino;
	bool live;
	char dir[64];
	int lock_fd;
};

extern const char *netns_arg;

int ns_resolve(struct ns_ctx *ns, bool need_live);
int ns_lock(struct ns_ctx *ns, bool create);
void ns_unlock(struct ns_ctx *ns);
int ns_make_dir(const struct ns_ctx *ns);
void ns_pin_path(const struct ns_ctx *ns, const char *name, char *buf);
int ns_record_name(const struct ns_ctx *ns);
int ns_remove_pins(struct ns_ctx *ns);
int ksched_read(struct ksched_state *st);
int link_check(struct ns_ctx *ns, const struct ksched_state *st,
	       int *link_fd, uint32_t *link_id, bool *stale);
int prefixes_open(struct ns_ctx *ns, bool create, int *map_fd);
int prefixes_count(int map_fd, unsigned int *count);
int policy_open(struct ns_ctx *ns, bool create, int *map_fd);
int map_count(int map_fd, unsigned int key_size, unsigned int *count);
int map_read_entries(int map_fd, const char *what, size_t esz, size_t ksz,
		     size_t voff, int (*cmp)(const void *, const void *),
		     void **out, unsigned int *count);

int do_load(int argc, char **argv, bool replace);
int do_unload(int argc, char **argv);
int do_status(int argc, char **argv);
int do_prefix(int argc, char **argv);
int do_policy(int argc, char **argv);
int do_trace(int argc, char **argv);

extern long trace_count;

#endif /* SMB_CLASSIFY_MAIN_H */
