// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * prefix.c - "prefix add|del|list" of smb-classify
 *
 * Every argument is parsed and checked before the first system call that
 * could change anything, so a bad CIDR or class never leaves a half-made
 * change (nor a bpffs mount or directory) behind.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "main.h"

static int parse_cidr_arg(const char *s, struct smb_prefix_key *key)
{
	char err[WORDS_ERRLEN];

	if (cidr_parse(s, key, err, sizeof(err))) {
		p_err("%s", err);
		return -EINVAL;
	}
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

	if (argc < 1) {
		p_err("prefix add: missing CIDR and CLASS");
		return -EINVAL;
	}
	err = parse_cidr_arg(argv[0], &e.key);
	if (err)
		return err;
	if (argc < 2) {
		p_err("prefix add: missing CLASS");
		return -EINVAL;
	}
	if (class_spec_parse(argc - 1, argv + 1, &spec, msg, sizeof(msg))) {
		p_err("%s", msg);
		return -EINVAL;
	}
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
		printf("%s %s -> class %u weight %u%s\n",
		       exists ? "updated" : "added", cidr, spec.id,
		       spec.weight, spec.per_peer ? " per-peer" : "");
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
		class_word_decode(e[i].word, &spec);
		if (json_output) {
			jsonw_start_object(json_wtr);
			json_prefix(&e[i], cidr);
			jsonw_end_object(json_wtr);
		} else {
			printf("%-*s  %5u  %6u  %s\n", width, cidr, spec.id,
			       spec.weight, spec.per_peer ? "yes" : "no");
		}
	}
	if (json_output)
		jsonw_end_array(json_wtr);
	conf_free(&c);
	return ns_done(&ns, -1, 0);
}
