/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * main.h - shared declarations of the smb-classify loader
 */
#ifndef SMB_CLASSIFY_MAIN_H
#define SMB_CLASSIFY_MAIN_H

#include <limits.h>
#include <stddef.h>
#include <stdbool.h>
#include <stdint.h>

#include "conf.h"
#include "format.h"
#include "json_writer.h"
#include "procnet.h"
#include "words.h"

#ifndef ARRAY_SIZE
#define ARRAY_SIZE(a)		(sizeof(a) / sizeof((a)[0]))
#endif

#define BPFFS_ROOT		"/sys/fs/bpf"
#define PIN_ROOT		BPFFS_ROOT "/smb-classify"
#define PIN_NAMES		PIN_ROOT "/names"
#define PIN_LINK		"link"	/* in PIN_ROOT/<ino>, beside the maps */
#define NETNS_RUN_DIR		"/run/netns"
#define KSCHED_PROC		"/proc/self/net/ksmbd_sched"
#define KSCHED_CLIENTS_PROC	"/proc/self/net/ksmbd_sched_clients"
#define CONF_DEFAULT		"/etc/ksmbd/ksmbd-sched.conf"

/* Said by load, replace and status when ksmbd does not serve the netns. */
#define NOT_SERVED	"ksmbd does not listen in this netns (6.12 ksmbd listens only in the initial netns)"

/* Options of this run (main.c). */
extern bool json_output;
extern json_writer_t *json_wtr;
extern const char *netns_arg;

int p_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
int p_errno(int err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void json_result(const char *result);
void stop_point(const char *name);

/**
 * struct cmd_opt - an option of one command (status -o, trace -c)
 * @name:   long name ("output").
 * @letter: short name ('o'), or 0.
 * @arg:    it takes a value.
 * @value:  set by cmd_options(): the value, "" for a flag, NULL if absent.
 */
struct cmd_opt {
	const char *name;
	int letter;
	bool arg;
	const char *value;
};

int cmd_options(const char *cmd, int *argc, char ***argv,
		struct cmd_opt *own, unsigned int n);
int no_args(const char *cmd, int argc, char **argv);
int one_arg(const char *cmd, const char *what, int argc, char **argv);

/**
 * struct ns_ctx - the network namespace a command works on
 * @name:    -n NAME, or NULL for a path or the current netns.
 * @label:   how to name it in messages ("t1", a path, or "current").
 * @ino:     its nsfs inode number: the stored identity of its pins.
 * @old_ino: inode recorded for @name before, of a netns that no longer
 *           exists (the name now names a new netns); 0 if none.
 * @live:    it still exists and this process has entered it; false when
 *           only a record under PIN_NAMES is left (the netns was deleted).
 * @dir:     PIN_ROOT/<ino>.
 * @lock_fd: PIN_ROOT opened and flock()ed, or -1.
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

/* netns.c: the netns of the command, found and entered; its names. */
int ns_resolve(struct ns_ctx *ns, bool need_live);
int ns_cmd(const char *cmd, int argc, char **argv, struct ns_ctx *ns,
	   bool need_live);
void ns_set_dir(struct ns_ctx *ns);
void ns_name_path(const char *name, char *buf);
int ns_name_ino(const char *name, unsigned long *ino);

/* pins.c: bpffs, the lock, the pin directory, the link, name records. */
int ns_lock(struct ns_ctx *ns, bool create);
void ns_unlock(struct ns_ctx *ns);
int ns_make_dir(const struct ns_ctx *ns);
void ns_pin_path(const struct ns_ctx *ns, const char *name, char *buf);
int ns_record_name(const struct ns_ctx *ns);
int ns_remove_pins(struct ns_ctx *ns);
int ns_open(struct ns_ctx *ns, bool create);
int ns_done(struct ns_ctx *ns, int map_fd, int err);
struct bpf_link_info;
int link_open(struct ns_ctx *ns, struct bpf_link_info *info);
void shared_pin_path(const struct ns_ctx *ns, unsigned int i,
		     const char *suffix, char *buf);
int pins_recover(struct ns_ctx *ns);

/* state.c: the kernel's view of the netns. */
int ksched_read(struct ksched_state *st);
int link_check(struct ns_ctx *ns, const struct ksched_state *st,
	       int *link_fd, struct bpf_link_info *info, bool *stale);

/**
 * struct shared_map - a pinned map of the netns that outlives the program
 * @name:        map name in the object, and of its pin in the netns's dir.
 * @type:        map type (enum bpf_map_type) it must have.
 * @key:         key size.
 * @value:       value size.
 * @max_entries: of one created empty (prefix add, policy set, user add,
 *               share add, class set).
 * @what:        what it must be, for the error message.
 *
 * Each is filled by its own command (prefix add, policy set, user add,
 * share add, class set) before or after load and outlives a replace: a
 * new object's
 * map of that name is replaced by the pinned one, or, if none is pinned
 * yet, pinned.  apply instead fills fresh maps and pins them in place of
 * the old ones.
 */
struct shared_map {
	const char *name;
	uint32_t type, key, value, max_entries;
	const char *what;
};

enum {
	SHARED_PREFIXES, SHARED_POLICY, SHARED_USERS, SHARED_SHARES,
	SHARED_QOS, NSHARED
};
extern const struct shared_map shared_maps[NSHARED];

/* pins.c: the list; maps.c: the pinned maps of shared_maps[]. */
int shared_open(struct ns_ctx *ns, unsigned int i, bool create, int *map_fd);
int pinned_entries(struct ns_ctx *ns, struct conf *c, unsigned int *pinned);

/**
 * struct ops_info - what the kernel holds of an attached ksmbd_sched_ops
 * @max_inflight: its data member max_inflight (0: the kernel default).
 * @nprogs:       programs in @progs.
 * @progs:        per ops member with a program: member, prog id, name.
 */
struct ops_info {
	uint32_t max_inflight;
	unsigned int nprogs;
	struct {
		char member[32];
		uint32_t id;
		char name[16];
	} progs[8];
};

/* ops.c: a struct_ops map as the kernel holds it. */
struct btf;
struct btf_type;

/**
 * struct abi_const - a constant of ksmbd_sched_abi.h, as ksmbd's BTF
 * names it (abi.c)
 * @enum_name: the enum's name ("ksmbd_sched_class_word").
 * @name:      the member's name ("KSMBD_SCHED_CLASS_PER_PEER").
 * @value:     its value here.
 * @rule:      what the kernel's value must be: ABI_EQ equal, ABI_MAX at
 *             least @value, ABI_MASK every bit of @value set (abi.c).
 */
struct abi_const {
	const char *enum_name;
	const char *name;
	uint32_t value;
	enum abi_rule { ABI_EQ, ABI_MAX, ABI_MASK } rule;
};

const struct abi_const *abi_table(unsigned int *n);
int abi_compare(const struct btf *btf, const struct abi_const *c,
		unsigned int n, char *msg, size_t len);
int abi_check(void);
int ops_data(uint32_t map_id, struct ops_info *oi);
bool ops_uses_map(uint32_t ops_id, uint32_t map_id);
int ops_member_index(const struct btf *btf, const struct btf_type *t,
		     const char *name);
const struct btf_type *ops_member_type(const struct btf *btf,
				       const struct btf_type *t, int i);

/**
 * struct ns_state - what is in force in a netns, gathered in one place
 *                   for status, dump and apply
 * @st:      its /proc/net/ksmbd_sched.
 * @c:       the entries of the pinned maps, and the attached ops'
 *           max_inflight (has_max_inflight: the link is ours and its ops
 *           were read).
 * @maps:    bit i: the map shared_maps[i] is pinned (bit 0 the prefixes
 *           map, bit 1 the policy map, bit 2 users, bit 3 shares, bit 4
 *           qos).
 * @stale:   the pinned link was stale (see link_check()).
 * @link_id: id of the pinned link, also of a stale one.
 * @map_id:  its struct_ops map; 0 unless the link is ours and attached.
 * @oi:      the attached ops, when @map_id.
 */
struct ns_state {
	struct ksched_state st;
	struct conf c;
	unsigned int maps;
	bool stale;
	uint32_t link_id, map_id;
	struct ops_info oi;
};

/* state.c */
int ns_gather(struct ns_ctx *ns, struct ns_state *g, bool remove_stale);
void ns_state_free(struct ns_state *g);

/* What ops_attach() may find: nothing attached, or our pinned link. */
enum attach_mode {
	ATTACH_LOAD,	/* error if attached */
	ATTACH_REPLACE,	/* error if not attached */
	ATTACH_ANY,	/* apply: either */
};

struct bpf_object;

/**
 * struct attach_req - one attach of a struct_ops object
 * @obj:          opened, not loaded; closed by the caller.
 * @label:        its file name or "(built-in)", for messages.
 * @mode:         see enum attach_mode.
 * @has_max:      set the ops' max_inflight to @max_inflight.
 * @max_inflight: 0..KSMBD_SCHED_MAX_INFLIGHT_LIMIT.
 * @fill:         NULL: reuse the pinned maps of shared_maps[].  Else
 *                the object's own fresh maps are filled by @fill after
 *                load and pinned in place of the old ones once the new
 *                program is attached (apply).
 * @ctx:          for @fill.
 * @note:         output: a note for the user, "" if none.
 * @notelen:      size of @note.
 */
struct attach_req {
	struct bpf_object *obj;
	const char *label;
	enum attach_mode mode;
	bool has_max;
	uint32_t max_inflight;
	int (*fill)(struct bpf_object *obj, void *ctx);
	void *ctx;
	char *note;
	size_t notelen;
};

/* attach.c: the struct_ops object and its link. */
struct bpf_object *object_open(const char *path);
int ops_attach(struct ns_ctx *ns, const struct attach_req *req);

/* The commands. */
int do_load(int argc, char **argv);
int do_replace(int argc, char **argv);
int do_unload(int argc, char **argv);
int do_status(int argc, char **argv);
int do_clients(int argc, char **argv);
int prefix_add(int argc, char **argv);
int prefix_del(int argc, char **argv);
int prefix_list(int argc, char **argv);
int policy_set(int argc, char **argv);
int policy_del(int argc, char **argv);
int policy_show(int argc, char **argv);
int user_add(int argc, char **argv);
int user_del(int argc, char **argv);
int user_list(int argc, char **argv);
int share_add(int argc, char **argv);
int share_del(int argc, char **argv);
int share_list(int argc, char **argv);
int class_set(int argc, char **argv);
int class_del(int argc, char **argv);
int class_list(int argc, char **argv);
int do_trace(int argc, char **argv);
int do_apply(int argc, char **argv);
int do_dump(int argc, char **argv);

#endif /* SMB_CLASSIFY_MAIN_H */
