// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * maps.c - the pinned prefixes, policy, users, shares and qos maps of a
 * netns: opened, created and read whole, and their commands, "prefix
 * add|del|list", "policy set|del|show", "user add|del|list", "share
 * add|del|list" and "class set|del|list"
 *
 * The policy map (pinned as "policy" beside "prefixes") gives each class
 * id two thresholds in bytes, read by classify_req() of the reference
 * program: READs of at least splice-min may be sent spliced, READs and
 * WRITEs of at least unbound-min run on the unbound workqueue.  A class
 * without an entry uses the defaults of smb_classify.h.
 *
 * The users and shares maps (pinned as "users" and "shares") give the
 * session of a ksmbd account, and the tree connect of a share, a class
 * word of its own, as "prefixes" gives a connection from an address;
 * classify_session() and classify_tree() of the reference program read
 * them.  An attached program that does not use them (an object older
 * than they are) makes their commands an error: what they wrote would
 * classify nothing.
 *
 * The qos map (pinned as "qos") gives a class id a reservation and a
 * limit (struct smb_qos), which init_class() of the reference program
 * hands the kernel when the class first has a request under it, and
 * again each second while it has requests: a change takes effect within
 * a second.
 * "class set" writes the whole entry, as the conf file's [class ID] does.
 * An attached program without the map makes its commands an error, as
 * for users and shares.
 *
 * Every argument is parsed and checked before the first system call that
 * could change anything, so a bad CIDR, class or threshold never leaves a
 * half-made change (nor a bpffs mount or directory) behind.
 */
#include <assert.h>
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "main.h"
#include "smb_classify.h"

/**
 * shared_open() - open the pinned map shared_maps[@i] of the netns
 * @ns:     from ns_resolve(), locked.
 * @i:      an index into shared_maps[] (SHARED_PREFIXES, ...).
 * @create: create and pin an empty one when none is pinned.
 * @map_fd: output, -1 when there is none and !@create.
 *
 * Checks that the pinned map has the type and sizes of shared_maps[@i].
 *
 * Return: 0 or a negative errno, reported.
 */
int shared_open(struct ns_ctx *ns, unsigned int i, bool create, int *map_fd)
{
	LIBBPF_OPTS(bpf_map_create_opts, opts,
		    .map_flags = BPF_F_NO_PREALLOC);
	const struct shared_map *sm = &shared_maps[i];
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);
	char path[PATH_MAX];
	int fd, err;

	*map_fd = -1;
	ns_pin_path(ns, sm->name, path);
	fd = bpf_obj_get(path);
	if (fd == -ENOENT) {
		if (!create)
			return 0;
		fd = bpf_map_create(sm->type, sm->name, sm->key, sm->value,
				    sm->max_entries, &opts);
		if (fd < 0)
			return p_errno(fd, "cannot create the %s map",
				       sm->name);
		err = bpf_obj_pin(fd, path);
		if (err)
			p_errno(err, "cannot pin the %s map at %s", sm->name,
				path);
		goto out;
	}
	if (fd < 0)
		return p_errno(fd, "cannot open pinned map %s", path);
	err = bpf_map_get_info_by_fd(fd, &info, &len);
	if (err) {
		p_errno(err, "cannot get info of pinned map %s", path);
	} else if (info.type != sm->type || info.key_size != sm->key ||
		   info.value_size != sm->value) {
		p_err("pinned map %s is not a %s map (type %u, key %u, value %u bytes)",
		      path, sm->name, info.type, info.key_size,
		      info.value_size);
		err = -EINVAL;
	}
out:
	if (err)
		close(fd);
	else
		*map_fd = fd;
	return err;
}

/*
 * The record of each shared map's entries as struct conf keeps them:
 * its size, and the offset of its value; its key is first.
 */
static const struct {
	size_t size, value;
} shared_rec[NSHARED] = {
	[SHARED_PREFIXES] = { sizeof(struct conf_prefix),
			      offsetof(struct conf_prefix, word) },
	[SHARED_POLICY] = { sizeof(struct conf_policy),
			    offsetof(struct conf_policy, p) },
	[SHARED_USERS] = { sizeof(struct conf_name),
			   offsetof(struct conf_name, word) },
	[SHARED_SHARES] = { sizeof(struct conf_name),
			    offsetof(struct conf_name, word) },
	[SHARED_QOS] = { sizeof(struct conf_qos),
			 offsetof(struct conf_qos, q) },
};

/*
 * Every entry of the shared map @i as an array of records, its key then
 * its value (struct conf_prefix, conf_policy, conf_name, conf_qos; the
 * bytes between them zero), in @cmp order;
 * NULL when there are none.  Entries deleted while the map is walked are
 * skipped.  Return: 0 or a negative errno, reported.
 */
static int map_read_entries(int map_fd, unsigned int i,
			    int (*cmp)(const void *, const void *),
			    void **out, unsigned int *count)
{
	const struct shared_map *sm = &shared_maps[i];
	size_t esz = shared_rec[i].size;
	unsigned char key[SMB_NAME_LEN], next[SMB_NAME_LEN];
	unsigned int n = 0, cap = 0;
	char *e = NULL, *tmp;
	void *prev = NULL;
	int err;

	while (!(err = bpf_map_get_next_key(map_fd, prev, next))) {
		memcpy(key, next, sm->key);
		prev = key;
		if (n == cap) {
			cap = cap ? cap * 2 : 64;
			tmp = realloc(e, cap * esz);
			if (!tmp) {
				free(e);
				p_err("out of memory");
				return -ENOMEM;
			}
			e = tmp;
		}
		memset(e + n * esz, 0, esz);
		memcpy(e + n * esz, key, sm->key);
		err = bpf_map_lookup_elem(map_fd, key,
					  e + n * esz + shared_rec[i].value);
		if (err == -ENOENT)	/* deleted meanwhile */
			continue;
		if (err)
			break;
		n++;
	}
	if (err != -ENOENT) {
		free(e);
		return p_errno(err, "cannot read the %s map", sm->name);
	}
	if (n)
		qsort(e, n, esz, cmp);
	*out = e;
	*count = n;
	return 0;
}

/* map_read_entries()'s key buffers hold every shared map's key. */
static_assert(sizeof(struct smb_prefix_key) <= SMB_NAME_LEN &&
	      sizeof(__u32) <= SMB_NAME_LEN &&
	      sizeof(struct smb_name_key) <= SMB_NAME_LEN, "shared map keys");
/* Records as map_read_entries() writes them: key, then value. */
static_assert(sizeof(struct conf_prefix) ==
	       sizeof(struct smb_prefix_key) + sizeof(__u32), "conf_prefix");
static_assert(sizeof(struct conf_policy) ==
	       sizeof(__u32) + sizeof(struct smb_policy), "conf_policy");
static_assert(sizeof(struct conf_name) ==
	       sizeof(struct smb_name_key) + sizeof(__u32), "conf_name");
static_assert(offsetof(struct conf_qos, q) >= sizeof(__u32) &&
	      sizeof(struct conf_qos) ==
	      offsetof(struct conf_qos, q) + sizeof(struct smb_qos),
	      "conf_qos");

/* The order of each shared map's records, as struct conf keeps them. */
static int (*const shared_cmp[NSHARED])(const void *, const void *) = {
	[SHARED_PREFIXES] = conf_prefix_cmp,
	[SHARED_POLICY] = conf_policy_cmp,
	[SHARED_USERS] = conf_name_cmp,
	[SHARED_SHARES] = conf_name_cmp,
	[SHARED_QOS] = conf_qos_cmp,
};

/**
 * pinned_entries() - every entry of the pinned maps of shared_maps[]
 * @ns:     from ns_open() or ns_lock().
 * @c:      output: its prefixes, policies, users, shares and qos entries
 *          (conf_free() them).
 * @pinned: output: bit i: shared_maps[i] is pinned (bit 0 the prefixes
 *          map, bit 1 the policy map, bit 2 users, bit 3 shares, bit 4
 *          qos).
 *
 * Return: 0 or a negative errno, reported.
 */
int pinned_entries(struct ns_ctx *ns, struct conf *c, unsigned int *pinned)
{
	void **out[NSHARED] = {
		[SHARED_PREFIXES] = (void **)&c->prefixes,
		[SHARED_POLICY] = (void **)&c->policies,
		[SHARED_USERS] = (void **)&c->users,
		[SHARED_SHARES] = (void **)&c->shares,
		[SHARED_QOS] = (void **)&c->qos,
	};
	unsigned int *n[NSHARED] = {
		[SHARED_PREFIXES] = &c->nprefixes,
		[SHARED_POLICY] = &c->npolicies,
		[SHARED_USERS] = &c->nusers,
		[SHARED_SHARES] = &c->nshares,
		[SHARED_QOS] = &c->nqos,
	}, i;
	int fd, err = 0;

	memset(c, 0, sizeof(*c));
	*pinned = 0;
	for (i = 0; !err && i < NSHARED; i++) {
		err = shared_open(ns, i, false, &fd);
		if (err || fd < 0)
			continue;
		*pinned |= 1 << i;
		err = map_read_entries(fd, i, shared_cmp[i], out[i], n[i]);
		close(fd);
	}
	if (err)
		conf_free(c);
	return err;
}

/*
 * The start of "prefix list" and "policy show": no words, @ns resolved
 * and locked (if anything is pinned), @c and @pinned as pinned_entries().
 * Return: 0 or a negative errno, reported; on error @ns is unlocked.
 */
static int pinned_read(const char *cmd, int argc, char **argv,
		       struct ns_ctx *ns, struct conf *c, unsigned int *pinned)
{
	int err = no_args(cmd, argc, argv);

	if (!err)
		err = ns_open(ns, false);
	if (!err)
		err = pinned_entries(ns, c, pinned);
	if (err)
		ns_unlock(ns);
	return err;
}

/*
 * The start of "prefix add" and "policy set": @ns the netns of -n, locked
 * (ns_done() it), @fd its map @map, created if missing, else -1.
 * Return: 0 or a negative errno, reported.
 */
static int pinned_create(struct ns_ctx *ns, unsigned int map, int *fd)
{
	int err = ns_open(ns, true);

	*fd = -1;
	if (!err)
		err = shared_open(ns, map, true, fd);
	if (!err)
		err = ns_record_name(ns);
	return err;
}

/* The maps an attached program must use for their commands to work. */
static bool map_checked(unsigned int map)
{
	return map == SHARED_USERS || map == SHARED_SHARES ||
	       map == SHARED_QOS;
}

/*
 * The users, shares or qos map @map of @ns (locked) for its commands, as
 * shared_open() (@create: an empty one is created and pinned when none
 * is).  While a program is attached, the map must be one it uses: an
 * object older than the users and shares maps has neither, one older
 * than the qos map has none, and what these commands write would change
 * nothing.  A link no longer attached counts as none.
 * Return: 0 or a negative errno, reported.
 */
static int attached_open(struct ns_ctx *ns, unsigned int map, bool create,
			 int *map_fd)
{
	const char *name = shared_maps[map].name;
	struct bpf_map_info info = {};
	struct bpf_link_info linfo;
	__u32 len = sizeof(info);
	int link_fd, err;

	*map_fd = -1;
	link_fd = link_open(ns, &linfo);
	if (link_fd < 0 && link_fd != -ENOENT)
		return link_fd;
	if (link_fd >= 0)
		close(link_fd);
	if (link_fd < 0 || linfo.type != BPF_LINK_TYPE_STRUCT_OPS ||
	    !linfo.struct_ops.map_id)
		return shared_open(ns, map, create, map_fd);
	err = shared_open(ns, map, false, map_fd);
	if (err)
		return err;
	if (*map_fd >= 0 && !bpf_map_get_info_by_fd(*map_fd, &info, &len) &&
	    ops_uses_map(linfo.struct_ops.map_id, info.id))
		return 0;
	if (*map_fd >= 0)
		close(*map_fd);
	*map_fd = -1;
	return p_err("the program attached in netns %lu (link id %u) has no %s map (an object older than %s): replace it with one that has, such as the built-in one (smb-classify replace)",
		     ns->ino, linfo.id, name, map == SHARED_QOS ?
		     "class reservations and limits" :
		     "user and share classes");
}

/*
 * "prefix del", "policy del", "user del" and "share del": delete the entry
 * @key of map @map and say so: "deleted @done", or JSON with the member
 * @field, @str if not NULL, else @num.  @what names the entry in errors
 * ("prefix 10.0.0.0/8", "user alice").
 * Return: 0 or a negative errno, reported (-ENOENT: no such entry).
 */
static int pinned_del(unsigned int map, const void *key, const char *what,
		      const char *done, const char *field, const char *str,
		      unsigned long num)
{
	struct ns_ctx ns;
	int fd = -1, err = ns_open(&ns, false);

	if (!err && map_checked(map))
		err = attached_open(&ns, map, false, &fd);
	else if (!err)
		err = shared_open(&ns, map, false, &fd);
	if (!err)
		err = fd < 0 ? -ENOENT : bpf_map_delete_elem(fd, key);
	err = ns_done(&ns, fd, err);
	if (err == -ENOENT) {
		p_err("%s not found in netns %lu", what, ns.ino);
	} else if (err) {
		p_errno(err, "cannot delete %s", what);
	} else if (json_output) {
		json_result("deleted");
		if (str)
			json_text_field(json_wtr, field, str);
		else
			jsonw_uint_field(json_wtr, field, num);
		jsonw_end_object(json_wtr);
	} else {
		printf("deleted %s\n", done);
	}
	return err;
}

static int parse_cidr_arg(const char *s, struct smb_prefix_key *key)
{
	char err[WORDS_ERRLEN];

	if (cidr_parse(s, key, err, sizeof(err)))
		return p_err("%s", err);
	return 0;
}

/* The members of class word @word: class, weight, per_peer, ... */
static void json_class_word(uint32_t word)
{
	struct class_spec spec;

	class_word_decode(word, &spec);
	jsonw_uint_field(json_wtr, "class", spec.id);
	jsonw_uint_field(json_wtr, "weight", spec.weight);
	jsonw_bool_field(json_wtr, "per_peer", spec.per_peer);
	if (spec.prefix6)
		jsonw_uint_field(json_wtr, "prefix6", spec.prefix6);
	jsonw_uint_field(json_wtr, "class_word", word);
}

/* One prefix entry as JSON members. */
static void json_prefix(const struct conf_prefix *e, const char *cidr)
{
	jsonw_string_field(json_wtr, "prefix", cidr);
	json_class_word(e->word);
}

/*
 * The line of an entry that "add" put in a map: "added WHAT -> class N
 * weight W [per-peer [prefix6 LEN]]", or "updated ..." if it was there.
 */
static void print_added(bool exists, const char *what,
			const struct class_spec *spec)
{
	printf("%s %s -> class %u weight %u%s", exists ? "updated" : "added",
	       what, spec->id, spec->weight, spec->per_peer ? " per-peer" : "");
	if (spec->prefix6)
		printf(" prefix6 %u", spec->prefix6);
	putchar('\n');
}

/*
 * Put @word at @key in @map_fd: "added" if it was not there, "updated"
 * (*@exists) if it was.  A lookup in an LPM trie finds the longest match,
 * not this exact prefix: tell one from the other by the update flags
 * instead.  @what names the entry in errors.  Return: 0 or a negative
 * errno, reported.
 */
static int entry_put(int map_fd, const void *key, uint32_t word,
		     const char *what, bool *exists)
{
	int err = bpf_map_update_elem(map_fd, key, &word, BPF_NOEXIST);

	*exists = err == -EEXIST;
	if (*exists)
		err = bpf_map_update_elem(map_fd, key, &word, BPF_EXIST);
	if (err)
		p_err("cannot add %s: %s%s", what, strerror(-err),
		      err == -ENOSPC ? " (the map is full)" : "");
	return err;
}

/** prefix_add() - "prefix add ...", see smb-classify(8) */
int prefix_add(int argc, char **argv)
{
	char msg[WORDS_ERRLEN], cidr[CIDR_STRLEN];
	struct conf_prefix e;
	struct class_spec spec;
	int map_fd = -1, err;
	bool exists = false;
	struct ns_ctx ns;

	if (argc < 1)
		return p_err("prefix add: missing CIDR and CLASS");
	err = parse_cidr_arg(argv[0], &e.key);
	if (err)
		return err;
	if (argc < 2)
		return p_err("prefix add: missing CLASS");
	if (class_spec_parse(argc - 1, argv + 1, &spec, msg, sizeof(msg)))
		return p_err("%s", msg);
	e.word = class_word_encode(&spec);
	cidr_format(&e.key, cidr, sizeof(cidr));

	err = pinned_create(&ns, SHARED_PREFIXES, &map_fd);
	if (!err)
		err = entry_put(map_fd, &e.key, e.word, cidr, &exists);
	if (!err && json_output) {
		json_result(exists ? "updated" : "added");
		json_prefix(&e, cidr);
		jsonw_end_object(json_wtr);
	} else if (!err) {
		print_added(exists, cidr, &spec);
	}
	return ns_done(&ns, map_fd, err);
}

/** prefix_del() - "prefix del ...", see smb-classify(8) */
int prefix_del(int argc, char **argv)
{
	char cidr[CIDR_STRLEN], what[CIDR_STRLEN + 8];
	struct smb_prefix_key key;
	int err;

	err = one_arg("prefix del", "CIDR", argc, argv);
	if (!err)
		err = parse_cidr_arg(argv[0], &key);
	if (err)
		return err;
	cidr_format(&key, cidr, sizeof(cidr));
	snprintf(what, sizeof(what), "prefix %s", cidr);
	return pinned_del(SHARED_PREFIXES, &key, what, cidr, "prefix", cidr, 0);
}

/** prefix_list() - "prefix list ...", see smb-classify(8) */
int prefix_list(int argc, char **argv)
{
	unsigned int n, i, pinned;
	int err, width = 6;
	char cidr[CIDR_STRLEN];
	struct class_spec spec;
	struct conf_prefix *e;
	struct ns_ctx ns;
	struct conf c;

	err = pinned_read("prefix list", argc, argv, &ns, &c, &pinned);
	if (err)
		return err;
	e = c.prefixes;
	n = c.nprefixes;

	for (i = 0; i < n; i++) {
		cidr_format(&e[i].key, cidr, sizeof(cidr));
		if ((int)strlen(cidr) > width)
			width = strlen(cidr);
	}
	if (json_output)
		jsonw_start_array(json_wtr);
	else if (n)
		printf("%-*s  %5s  %6s  %s\n", width, "PREFIX", "CLASS",
		       "WEIGHT", "PER-PEER");
	else
		printf("no prefixes in netns %lu\n", ns.ino);
	for (i = 0; i < n; i++) {
		cidr_format(&e[i].key, cidr, sizeof(cidr));
		if (json_output) {
			jsonw_start_object(json_wtr);
			json_prefix(&e[i], cidr);
			jsonw_end_object(json_wtr);
		} else {
			class_word_decode(e[i].word, &spec);
			printf("%-*s  %5u  %6u  %s", width, cidr, spec.id,
			       spec.weight, spec.per_peer ? "yes" : "no");
			if (spec.prefix6)
				printf(" (IPv6 /%u)", spec.prefix6);
			putchar('\n');
		}
	}
	if (json_output)
		jsonw_end_array(json_wtr);
	conf_free(&c);
	return ns_done(&ns, -1, 0);
}

/* "user" or "share": the command of the users or shares map @map. */
static const char *names_cmd(unsigned int map)
{
	return map == SHARED_USERS ? "user" : "share";
}

/*
 * The NAME argument of "user add|del" and "share add|del" into @key, and
 * its folded form as text made safe to print into @shown (NAME_STRLEN).
 * Return: 0 or -EINVAL, reported.
 */
static int parse_name_arg(unsigned int map, const char *s,
			  struct smb_name_key *key, char *shown)
{
	char msg[WORDS_ERRLEN];

	if (name_parse(map == SHARED_USERS ? NAME_USER : NAME_SHARE, s, key,
		       msg, sizeof(msg)))
		return p_err("%s", msg);
	name_text(key, shown);
	text_sanitize(shown);
	return 0;
}

/* "user add ..." and "share add ...": as prefix_add(). */
static int names_add(unsigned int map, int argc, char **argv)
{
	const char *kind = names_cmd(map);
	char msg[WORDS_ERRLEN], cmd[16], shown[NAME_STRLEN];
	char what[NAME_STRLEN + 8];
	struct conf_name e;
	struct class_spec spec;
	int map_fd = -1, err;
	bool exists = false;
	struct ns_ctx ns;

	snprintf(cmd, sizeof(cmd), "%s add", kind);
	if (argc < 1)
		return p_err("%s: missing NAME and CLASS", cmd);
	err = parse_name_arg(map, argv[0], &e.key, shown);
	if (err)
		return err;
	if (argc < 2)
		return p_err("%s: missing CLASS", cmd);
	if (class_spec_parse(argc - 1, argv + 1, &spec, msg, sizeof(msg)))
		return p_err("%s", msg);
	e.word = class_word_encode(&spec);
	snprintf(what, sizeof(what), "%s %s", kind, shown);

	err = ns_open(&ns, true);
	if (!err)
		err = attached_open(&ns, map, true, &map_fd);
	if (!err)
		err = ns_record_name(&ns);
	if (!err)
		err = entry_put(map_fd, &e.key, e.word, what, &exists);
	if (!err && json_output) {
		json_result(exists ? "updated" : "added");
		json_text_field(json_wtr, kind, shown);
		json_class_word(e.word);
		jsonw_end_object(json_wtr);
	} else if (!err) {
		print_added(exists, what, &spec);
	}
	return ns_done(&ns, map_fd, err);
}

/* "user del NAME" and "share del NAME". */
static int names_del(unsigned int map, int argc, char **argv)
{
	const char *kind = names_cmd(map);
	char cmd[16], shown[NAME_STRLEN], what[NAME_STRLEN + 8];
	struct smb_name_key key;
	int err;

	snprintf(cmd, sizeof(cmd), "%s del", kind);
	err = one_arg(cmd, "NAME", argc, argv);
	if (!err)
		err = parse_name_arg(map, argv[0], &key, shown);
	if (err)
		return err;
	snprintf(what, sizeof(what), "%s %s", kind, shown);
	return pinned_del(map, &key, what, what, kind, shown, 0);
}

/* "user list" and "share list": as prefix_list(). */
static int names_list(unsigned int map, int argc, char **argv)
{
	const char *kind = names_cmd(map);
	char cmd[16], name[NAME_STRLEN], head[8];
	struct conf_name *e = NULL;
	unsigned int n = 0, i;
	int err, fd = -1, width;
	struct class_spec spec;
	struct ns_ctx ns;

	snprintf(cmd, sizeof(cmd), "%s list", kind);
	snprintf(head, sizeof(head), "%s", map == SHARED_USERS ? "USER" :
		 "SHARE");
	width = strlen(head);
	err = no_args(cmd, argc, argv);
	if (!err)
		err = ns_open(&ns, false);
	if (err)
		return err;
	err = attached_open(&ns, map, false, &fd);
	if (!err && fd >= 0)
		err = map_read_entries(fd, map, conf_name_cmp, (void **)&e, &n);
	if (err)
		return ns_done(&ns, fd, err);

	for (i = 0; i < n; i++) {
		name_text(&e[i].key, name);
		if ((int)strlen(name) > width)
			width = strlen(name);
	}
	if (json_output)
		jsonw_start_array(json_wtr);
	else if (n)
		printf("%-*s  %5s  %6s  %s\n", width, head, "CLASS", "WEIGHT",
		       "PER-PEER");
	else
		printf("no %ss in netns %lu\n", kind, ns.ino);
	for (i = 0; i < n; i++) {
		name_text(&e[i].key, name);
		text_sanitize(name);
		if (json_output) {
			jsonw_start_object(json_wtr);
			jsonw_string_field(json_wtr, kind, name);
			json_class_word(e[i].word);
			jsonw_end_object(json_wtr);
		} else {
			class_word_decode(e[i].word, &spec);
			printf("%-*s  %5u  %6u  %s", width, name, spec.id,
			       spec.weight, spec.per_peer ? "yes" : "no");
			if (spec.prefix6)
				printf(" (IPv6 /%u)", spec.prefix6);
			putchar('\n');
		}
	}
	if (json_output)
		jsonw_end_array(json_wtr);
	free(e);
	return ns_done(&ns, fd, 0);
}

/** user_add() - "user add ...", see smb-classify(8) */
int user_add(int argc, char **argv)
{
	return names_add(SHARED_USERS, argc, argv);
}

/** user_del() - "user del ...", see smb-classify(8) */
int user_del(int argc, char **argv)
{
	return names_del(SHARED_USERS, argc, argv);
}

/** user_list() - "user list", see smb-classify(8) */
int user_list(int argc, char **argv)
{
	return names_list(SHARED_USERS, argc, argv);
}

/** share_add() - "share add ...", see smb-classify(8) */
int share_add(int argc, char **argv)
{
	return names_add(SHARED_SHARES, argc, argv);
}

/** share_del() - "share del ...", see smb-classify(8) */
int share_del(int argc, char **argv)
{
	return names_del(SHARED_SHARES, argc, argv);
}

/** share_list() - "share list", see smb-classify(8) */
int share_list(int argc, char **argv)
{
	return names_list(SHARED_SHARES, argc, argv);
}

/* The thresholds of a policy; "off" is null. */
static void json_policy(const struct smb_policy *p)
{
	json_uint_or_null(json_wtr, "splice_min",
			  p->splice_min != SMB_POLICY_OFF, p->splice_min);
	json_uint_or_null(json_wtr, "unbound_min",
			  p->unbound_min != SMB_POLICY_OFF, p->unbound_min);
}

/** policy_set() - "policy set ...", see smb-classify(8) */
int policy_set(int argc, char **argv)
{
	char msg[WORDS_ERRLEN], words[48];
	struct smb_policy p = policy_defaults;
	struct policy_args pa;
	int map_fd = -1, err;
	bool exists;
	__u32 key;
	struct ns_ctx ns;

	if (policy_args_parse(argc, argv, &pa, msg, sizeof(msg)))
		return p_err("policy set: %s", msg);
	key = pa.id;

	err = pinned_create(&ns, SHARED_POLICY, &map_fd);
	if (err)
		goto out;
	err = bpf_map_lookup_elem(map_fd, &key, &p);
	exists = !err;
	if (err && err != -ENOENT) {
		p_errno(err, "cannot read the policy of class %u", pa.id);
		goto out;
	}
	policy_apply(&pa, &p);
	err = bpf_map_update_elem(map_fd, &key, &p, BPF_ANY);
	if (err) {
		p_errno(err, "cannot set the policy of class %u", pa.id);
		goto out;
	}
	if (json_output) {
		json_result(exists ? "updated" : "added");
		jsonw_uint_field(json_wtr, "class", pa.id);
		json_policy(&p);
		jsonw_end_object(json_wtr);
	} else {
		format_policy_words(&p, words, sizeof(words));
		printf("%s class %u: %s\n", exists ? "updated" : "added",
		       pa.id, words);
	}
out:
	return ns_done(&ns, map_fd, err);
}

/** policy_del() - "policy del ...", see smb-classify(8) */
int policy_del(int argc, char **argv)
{
	char msg[WORDS_ERRLEN], what[40], done[80];
	__u32 key;
	int err;

	err = one_arg("policy del", "CLASS", argc, argv);
	if (err)
		return err;
	if (parse_class_id(argv[0], &key, msg, sizeof(msg)))
		return p_err("policy del: %s", msg);
	snprintf(what, sizeof(what), "the policy of class %u", key);
	snprintf(done, sizeof(done), "%s (it uses the defaults now)", what);
	return pinned_del(SHARED_POLICY, &key, what, done, "class", NULL, key);
}

static void show_row(const char *cls, const struct smb_policy *p,
		     const char *note)
{
	char sp[POLICY_BYTES_STRLEN], ub[POLICY_BYTES_STRLEN];

	format_policy_bytes(p->splice_min, sp, sizeof(sp));
	format_policy_bytes(p->unbound_min, ub, sizeof(ub));
	printf("%-7s  %10s  %11s%s\n", cls, sp, ub, note);
}

/** policy_show() - "policy show ...", see smb-classify(8) */
int policy_show(int argc, char **argv)
{
	unsigned int n, i, pinned;
	struct conf_policy *e;
	char cls[16];
	struct ns_ctx ns;
	struct conf c;
	int err;

	err = pinned_read("policy show", argc, argv, &ns, &c, &pinned);
	if (err)
		return err;
	e = c.policies;
	n = c.npolicies;

	if (json_output) {
		jsonw_start_object(json_wtr);
		jsonw_uint_field(json_wtr, "netns_ino", ns.ino);
		jsonw_bool_field(json_wtr, "pinned", pinned & 2);
		jsonw_name(json_wtr, "default");
		jsonw_start_object(json_wtr);
		json_policy(&policy_defaults);
		jsonw_end_object(json_wtr);
		jsonw_name(json_wtr, "classes");
		jsonw_start_array(json_wtr);
		for (i = 0; i < n; i++) {
			jsonw_start_object(json_wtr);
			jsonw_uint_field(json_wtr, "class", e[i].id);
			json_policy(&e[i].p);
			jsonw_end_object(json_wtr);
		}
		jsonw_end_array(json_wtr);
		jsonw_end_object(json_wtr);
		goto out;
	}
	printf("%-7s  %10s  %11s\n", "CLASS", "SPLICE-MIN", "UNBOUND-MIN");
	for (i = 0; i < n; i++) {
		snprintf(cls, sizeof(cls), "%u", e[i].id);
		show_row(cls, &e[i].p, "");
	}
	show_row("default", &policy_defaults,
		 n ? "  (every other class)" : "  (every class)");
out:
	conf_free(&c);
	return ns_done(&ns, -1, 0);
}

/* An entry of the qos map as JSON members; a rate or burst of 0 is null. */
static void json_qos(const struct smb_qos *q)
{
	json_uint_or_null(json_wtr, "reservation_iops", q->reservation_iops,
			  q->reservation_iops);
	json_uint_or_null(json_wtr, "reservation_bytes", q->reservation_bps,
			  q->reservation_bps);
	json_uint_or_null(json_wtr, "limit_iops", q->limit_iops,
			  q->limit_iops);
	json_uint_or_null(json_wtr, "limit_bytes", q->limit_bps,
			  q->limit_bps);
	json_uint_or_null(json_wtr, "burst_ms", q->burst_ms, q->burst_ms);
	jsonw_string_field(json_wtr, "scope",
			   q->flags & KSMBD_SCHED_CLASS_AGGREGATED ?
			   "aggregated" : "dedicated");
}

/** class_set() - "class set ...", see smb-classify(8) */
int class_set(int argc, char **argv)
{
	char msg[WORDS_ERRLEN], words[QOS_WORDS_STRLEN], was[QOS_WORDS_STRLEN];
	struct smb_qos old;
	struct qos_args qa;
	int map_fd = -1, err;
	bool exists = false;
	struct ns_ctx ns;
	__u32 key;

	if (qos_args_parse(argc, argv, &qa, msg, sizeof(msg)))
		return p_err("class set: %s", msg);
	key = qa.id;

	err = ns_open(&ns, true);
	if (!err)
		err = attached_open(&ns, SHARED_QOS, true, &map_fd);
	if (!err)
		err = ns_record_name(&ns);
	if (!err) {
		err = bpf_map_lookup_elem(map_fd, &key, &old);
		exists = !err;
		if (err == -ENOENT)
			err = 0;
		else if (err)
			p_errno(err, "cannot read the reservation and limit of class %u",
				key);
	}
	/* The whole entry: a word not given now is none, whatever it was. */
	if (!err) {
		err = bpf_map_update_elem(map_fd, &key, &qa.q, BPF_ANY);
		if (err)
			p_err("cannot set the reservation and limit of class %u: %s%s",
			      key, strerror(-err),
			      err == -ENOSPC ? " (the map is full)" : "");
	}
	err = ns_done(&ns, map_fd, err);
	if (err)
		return err;
	if (json_output) {
		json_result(exists ? "updated" : "added");
		jsonw_uint_field(json_wtr, "class", key);
		json_qos(&qa.q);
		if (exists) {
			jsonw_name(json_wtr, "previous");
			jsonw_start_object(json_wtr);
			json_qos(&old);
			jsonw_end_object(json_wtr);
		}
		jsonw_end_object(json_wtr);
		return 0;
	}
	format_qos_words(&qa.q, words, sizeof(words));
	if (exists) {
		format_qos_words(&old, was, sizeof(was));
		printf("updated class %u: %s (replaces %s)\n", key, words, was);
	} else {
		printf("added class %u: %s\n", key, words);
	}
	return 0;
}

/** class_del() - "class del ...", see smb-classify(8) */
int class_del(int argc, char **argv)
{
	char msg[WORDS_ERRLEN], what[64], done[120];
	unsigned int id;
	__u32 key;
	int err;

	err = one_arg("class del", "CLASS", argc, argv);
	if (err)
		return err;
	if (parse_class_id(argv[0], &id, msg, sizeof(msg)))
		return p_err("class del: %s", msg);
	key = id;
	snprintf(what, sizeof(what), "the reservation and limit of class %u",
		 id);
	snprintf(done, sizeof(done), "%s (it has its weight alone now)",
		 what);
	return pinned_del(SHARED_QOS, &key, what, done, "class", NULL, id);
}

/* A rate or burst of "class list", "-" for 0; @size: with K, M or G. */
static void list_value(uint64_t v, bool size, char *buf, size_t len)
{
	if (!v)
		snprintf(buf, len, "-");
	else if (size)
		format_size(v, buf, len);
	else
		snprintf(buf, len, "%llu", (unsigned long long)v);
}

/** class_list() - "class list", see smb-classify(8) */
int class_list(int argc, char **argv)
{
	char v[4][SIZE_STRLEN], burst[16];
	struct conf_qos *e = NULL;
	const struct smb_qos *q;
	unsigned int n = 0, i;
	int err, fd = -1;
	struct ns_ctx ns;

	err = no_args("class list", argc, argv);
	if (!err)
		err = ns_open(&ns, false);
	if (err)
		return err;
	err = attached_open(&ns, SHARED_QOS, false, &fd);
	if (!err && fd >= 0)
		err = map_read_entries(fd, SHARED_QOS, conf_qos_cmp,
				       (void **)&e, &n);
	if (err)
		return ns_done(&ns, fd, err);

	if (json_output)
		jsonw_start_array(json_wtr);
	else if (n)
		printf("%5s  %10s  %10s  %10s  %10s  %8s  %s\n", "CLASS",
		       "RES-IOPS", "RES-BYTES", "LIM-IOPS", "LIM-BYTES",
		       "BURST-MS", "SCOPE");
	else
		printf("no reservations or limits in netns %lu (every class has its weight alone)\n",
		       ns.ino);
	for (i = 0; i < n; i++) {
		q = &e[i].q;
		if (json_output) {
			jsonw_start_object(json_wtr);
			jsonw_uint_field(json_wtr, "class", e[i].id);
			json_qos(q);
			jsonw_end_object(json_wtr);
			continue;
		}
		list_value(q->reservation_iops, false, v[0], sizeof(v[0]));
		list_value(q->reservation_bps, true, v[1], sizeof(v[1]));
		list_value(q->limit_iops, false, v[2], sizeof(v[2]));
		list_value(q->limit_bps, true, v[3], sizeof(v[3]));
		list_value(q->burst_ms, false, burst, sizeof(burst));
		printf("%5u  %10s  %10s  %10s  %10s  %8s  %s\n", e[i].id, v[0],
		       v[1], v[2], v[3], burst,
		       q->flags & KSMBD_SCHED_CLASS_AGGREGATED ? "aggregated" :
		       "dedicated");
	}
	if (json_output)
		jsonw_end_array(json_wtr);
	free(e);
	return ns_done(&ns, fd, 0);
}
