// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * maps.c - the pinned prefixes and policy maps of a netns: opened,
 * created and read whole, and their commands, "prefix add|del|list" and
 * "policy set|del|show"
 *
 * The policy map (pinned as "policy" beside "prefixes") gives each class
 * id two thresholds in bytes, read by classify_req() of the reference
 * program: READs of at least splice-min may be sent spliced, READs and
 * WRITEs of at least unbound-min run on the unbound workqueue.  A class
 * without an entry uses the defaults of smb_classify.h.
 *
 * Every argument is parsed and checked before the first system call that
 * could change anything, so a bad CIDR, class or threshold never leaves a
 * half-made change (nor a bpffs mount or directory) behind.
 */
#include <assert.h>
#include <errno.h>
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
 * @i:      SHARED_PREFIXES or SHARED_POLICY.
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
 * Every entry of the shared map @i as an array of records, its key then
 * its value (struct conf_prefix, struct conf_policy), in @cmp order;
 * NULL when there are none.  Entries deleted while the map is walked are
 * skipped.  Return: 0 or a negative errno, reported.
 */
static int map_read_entries(int map_fd, unsigned int i,
			    int (*cmp)(const void *, const void *),
			    void **out, unsigned int *count)
{
	const struct shared_map *sm = &shared_maps[i];
	size_t esz = sm->key + sm->value;
	unsigned char key[32], next[32];
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
		memcpy(e + n * esz, key, sm->key);
		err = bpf_map_lookup_elem(map_fd, key, e + n * esz + sm->key);
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
static_assert(sizeof(struct smb_prefix_key) <= 32 && sizeof(__u32) <= 32,
	      "shared map keys");
/* Records as map_read_entries() writes them: key, then value. */
static_assert(sizeof(struct conf_prefix) ==
	       sizeof(struct smb_prefix_key) + sizeof(__u32), "conf_prefix");
static_assert(sizeof(struct conf_policy) ==
	       sizeof(__u32) + sizeof(struct smb_policy), "conf_policy");

/**
 * pinned_entries() - every entry of the pinned prefixes and policy maps
 * @ns:     from ns_open() or ns_lock().
 * @c:      output: its prefixes and policies (conf_free() them).
 * @pinned: output: bit 0 the prefixes map is pinned, bit 1 the policy map.
 *
 * Return: 0 or a negative errno, reported.
 */
int pinned_entries(struct ns_ctx *ns, struct conf *c, unsigned int *pinned)
{
	int (*const cmp[NSHARED])(const void *, const void *) = {
		conf_prefix_cmp, conf_policy_cmp,
	};
	void **out[NSHARED] = { (void **)&c->prefixes, (void **)&c->policies };
	unsigned int *n[NSHARED] = { &c->nprefixes, &c->npolicies }, i;
	int fd, err = 0;

	memset(c, 0, sizeof(*c));
	*pinned = 0;
	for (i = 0; !err && i < NSHARED; i++) {
		err = shared_open(ns, i, false, &fd);
		if (err || fd < 0)
			continue;
		*pinned |= 1 << i;
		err = map_read_entries(fd, i, cmp[i], out[i], n[i]);
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

/*
 * "prefix del" and "policy del": delete the entry @key of map @map and
 * say so: "deleted @done", or JSON with the member @field, @str if not
 * NULL, else @num.  @what names the entry in errors ("prefix 10.0.0.0/8").
 * Return: 0 or a negative errno, reported (-ENOENT: no such entry).
 */
static int pinned_del(unsigned int map, const void *key, const char *what,
		      const char *done, const char *field, const char *str,
		      unsigned long num)
{
	struct ns_ctx ns;
	int fd = -1, err = ns_open(&ns, false);

	if (!err)
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
			jsonw_string_field(json_wtr, field, str);
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

/* One prefix entry as JSON members. */
static void json_prefix(const struct conf_prefix *e, const char *cidr)
{
	struct class_spec spec;

	class_word_decode(e->word, &spec);
	jsonw_string_field(json_wtr, "prefix", cidr);
	jsonw_uint_field(json_wtr, "class", spec.id);
	jsonw_uint_field(json_wtr, "weight", spec.weight);
	jsonw_bool_field(json_wtr, "per_peer", spec.per_peer);
	if (spec.prefix6)
		jsonw_uint_field(json_wtr, "prefix6", spec.prefix6);
	jsonw_uint_field(json_wtr, "class_word", e->word);
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
	/*
	 * A lookup in an LPM trie finds the longest match, not this exact
	 * prefix: tell "added" from "updated" by the update flags instead.
	 */
	if (!err) {
		err = bpf_map_update_elem(map_fd, &e.key, &e.word, BPF_NOEXIST);
		if (err == -EEXIST) {
			exists = true;
			err = bpf_map_update_elem(map_fd, &e.key, &e.word,
						  BPF_EXIST);
		}
		if (err)
			p_err("cannot add %s: %s%s", cidr, strerror(-err),
			      err == -ENOSPC ? " (the map is full)" : "");
	}
	if (!err && json_output) {
		json_result(exists ? "updated" : "added");
		json_prefix(&e, cidr);
		jsonw_end_object(json_wtr);
	} else if (!err) {
		printf("%s %s -> class %u weight %u%s", exists ? "updated" :
		       "added", cidr, spec.id, spec.weight,
		       spec.per_peer ? " per-peer" : "");
		if (spec.prefix6)
			printf(" prefix6 %u", spec.prefix6);
		putchar('\n');
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
