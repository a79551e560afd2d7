// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * attach.c - the struct_ops object and its link: load, replace, unload,
 * and the attach step of apply
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "main.h"
#include "smb_classify.h"
#include "smb_classify.skel.h"

/* Meaning of errors of BPF_LINK_CREATE and BPF_LINK_UPDATE here. */
static const char *link_strerror(int err)
{
	static const char perm[] =
		"permission denied (needs CAP_BPF and CAP_NET_ADMIN or root)";
	static const char *const why[] = {
		[EBUSY] = "EBUSY: another program is already attached in this netns",
		[EBADF] =
			"EBADF: the link or the new struct_ops map is not a valid file descriptor",
		[EINVAL] =
			"EINVAL: the kernel rejected the struct_ops map (not a ready ksmbd_sched_ops map with BPF_F_LINK, or the link's program changed meanwhile)",
		[EOPNOTSUPP] =
			"EOPNOTSUPP: this kernel cannot do that with ksmbd_sched_ops (no link update, or not a link-based struct_ops)",
		[ENOLINK] =
			"ENOLINK: the link is no longer attached (its netns exited or it was detached)",
		[ENOENT] = "ENOENT: the kernel does not know this link's attachment",
		[EPERM] = perm,
		[EACCES] = perm,
		[E2BIG] = "E2BIG: max_inflight above the kernel's limit",
	};

	return -err < (int)ARRAY_SIZE(why) && why[-err] ? why[-err] :
	       strerror(-err);
}

/**
 * object_open() - open a BPF object, or the built-in one
 * @path: ELF file, or NULL for the built-in smb_prefix.
 *
 * Return: the object, or NULL, reported.
 */
struct bpf_object *object_open(const char *path)
{
	LIBBPF_OPTS(bpf_object_open_opts, opts);
	struct bpf_object *obj;
	const void *data;
	size_t size;
	char why[128];

	if (path) {
		obj = bpf_object__open_file(path, &opts);
	} else {
		data = smb_classify_bpf__elf_bytes(&size);
		opts.object_name = "smb_classify";
		obj = bpf_object__open_mem(data, size, &opts);
	}
	if (!obj) {
		libbpf_strerror(-errno, why, sizeof(why));
		p_err("cannot open BPF object %s: %s",
		      path ? path : "(built-in)", why);
	}
	return obj;
}

/* The object's own BTF type of struct_ops map @ops (its struct), or NULL. */
static const struct btf_type *ops_value_type(struct bpf_object *obj,
					     const struct bpf_map *ops)
{
	const struct btf *btf = bpf_object__btf(obj);

	return btf ? btf__type_by_id(btf, bpf_map__btf_value_type_id(ops)) :
		     NULL;
}

/*
 * The one struct_ops map of @obj, which must be a link-based struct
 * ksmbd_sched_ops: an object of another struct_ops type (a TCP congestion
 * control, say) would otherwise be registered there and pinned as ours.
 */
static struct bpf_map *object_ops_map(struct bpf_object *obj,
				      const char *label)
{
	struct bpf_map *map, *found = NULL;
	const struct btf_type *t = NULL;
	const char *type = "";

	bpf_object__for_each_map(map, obj) {
		if (bpf_map__type(map) != BPF_MAP_TYPE_STRUCT_OPS)
			continue;
		if (found) {
			p_err("%s has more than one struct_ops map (%s, %s)",
			      label, bpf_map__name(found), bpf_map__name(map));
			return NULL;
		}
		found = map;
	}
	if (found)
		t = ops_value_type(obj, found);
	if (t)
		type = btf__name_by_offset(bpf_object__btf(obj), t->name_off);
	if (!found)
		p_err("%s has no struct_ops map", label);
	else if (strcmp(type, "ksmbd_sched_ops"))
		p_err("%s: struct_ops map %s is a struct %s, not ksmbd_sched_ops",
		      label, bpf_map__name(found), *type ? type : "(no BTF)");
	else if (!(bpf_map__map_flags(found) & BPF_F_LINK))
		p_err("%s: struct_ops map %s must be in SEC(\".struct_ops.link\")",
		      label, bpf_map__name(found));
	else
		return found;
	return NULL;
}

/*
 * Check the object's shared maps and, unless @fresh, make them the pinned
 * ones where those exist, so prefixes, policies, users, shares and the
 * classes' reservations and limits survive load and replace.  map_fd[i]
 * is the reused pinned map's fd (the caller closes it), else -1.
 * Return: 0 or a negative errno, reported.
 */
static int object_reuse_maps(struct ns_ctx *ns, struct bpf_object *obj,
			     const char *label, bool fresh, int map_fd[NSHARED])
{
	const struct shared_map *sm;
	struct bpf_map *map;
	unsigned int i;
	int err;

	for (i = 0; i < NSHARED; i++) {
		sm = &shared_maps[i];
		map = bpf_object__find_map_by_name(obj, sm->name);
		if (!map)
			continue;
		if (bpf_map__type(map) != sm->type ||
		    bpf_map__key_size(map) != sm->key ||
		    bpf_map__value_size(map) != sm->value)
			return p_err("%s: map %s is not %s", label, sm->name,
				     sm->what);
		if (fresh)
			continue;
		err = shared_open(ns, i, false, &map_fd[i]);
		if (err)
			return err;
		if (map_fd[i] < 0)
			continue;
		err = bpf_map__reuse_fd(map, map_fd[i]);
		if (err)
			return p_errno(err, "cannot reuse the pinned %s map",
				       sm->name);
	}
	return 0;
}

/*
 * Pin the object's shared maps that are not the pinned ones already,
 * as NAME@suffix (apply: "_new", renamed over NAME once attached).
 */
static int object_pin_maps(struct ns_ctx *ns, struct bpf_object *obj,
			   const int map_fd[NSHARED], const char *suffix,
			   bool pinned[NSHARED])
{
	char path[PATH_MAX];
	struct bpf_map *map;
	unsigned int i;
	int err;

	for (i = 0; i < NSHARED; i++) {
		map = bpf_object__find_map_by_name(obj, shared_maps[i].name);
		if (!map || map_fd[i] >= 0)
			continue;
		shared_pin_path(ns, i, suffix, path);
		unlink(path);	/* a _new pin of a killed apply */
		err = bpf_obj_pin(bpf_map__fd(map), path);
		if (err)
			return p_errno(err, "cannot pin the %s map at %s",
				       shared_maps[i].name, path);
		pinned[i] = true;
	}
	return 0;
}

/* Rename or remove the NAME@suffix pins of object_pin_maps(). */
static int finish_pins(struct ns_ctx *ns, const char *suffix,
		       const bool pinned[NSHARED], bool keep)
{
	char from[PATH_MAX], to[PATH_MAX];
	unsigned int i;
	int err = 0;

	for (i = 0; i < NSHARED; i++) {
		if (!pinned[i])
			continue;
		shared_pin_path(ns, i, suffix, from);
		shared_pin_path(ns, i, "", to);
		if (!keep)
			unlink(from);
		else if (*suffix && rename(from, to) && !err)
			err = p_errno(-errno, "cannot rename %s to %s", from,
				      to);
	}
	return err;
}

/*
 * Set the u32 data member @member of the object's struct_ops value before
 * load.  The member is found by name in the object's BTF type of the map
 * (the program's own definition of struct ksmbd_sched_ops), so a user
 * object with another layout works, and one without the member is an
 * error.  Return: 0 or -EINVAL, reported.
 */
static int ops_set_u32(struct bpf_object *obj, struct bpf_map *ops,
		       const char *label, const char *member, __u32 val)
{
	struct btf *btf = bpf_object__btf(obj);
	const struct btf_type *t, *mt;
	size_t size = 0;
	void *data;
	__u32 off;
	int i;

	t = ops_value_type(obj, ops);
	data = bpf_map__initial_value(ops, &size);
	if (!t || !btf_is_struct(t) || !data)
		return p_err("%s: no BTF for struct_ops map %s, cannot set %s",
			     label, bpf_map__name(ops), member);
	i = ops_member_index(btf, t, member);
	if (i < 0)
		return p_err("%s: struct %s of struct_ops map %s has no member %s",
			     label, btf__name_by_offset(btf, t->name_off),
			     bpf_map__name(ops), member);
	off = btf_member_bit_offset(t, i);
	mt = ops_member_type(btf, t, i);
	if (!mt || !(btf_is_int(mt) || btf_is_enum(mt)) ||
	    mt->size != sizeof(__u32) || btf_member_bitfield_size(t, i) ||
	    off % 8 || off / 8 + sizeof(__u32) > size)
		return p_err("%s: member %s of struct %s is not a 32-bit integer",
			     label, member,
			     btf__name_by_offset(btf, t->name_off));
	memcpy((char *)data + off / 8, &val, sizeof(val));
	return 0;
}

/*
 * Attach the loaded @ops in the netns, or, with @link_fd >= 0, switch
 * that link to it.  libbpf writes the struct_ops map's value (the
 * program fds and data it prepared) only in bpf_map__attach_struct_ops()
 * and bpf_link__update_map(); the latter needs a libbpf link made in
 * this process, which a replace from a fresh process does not have.  So:
 * attach the new map.  That writes the value and asks for a second link
 * in this netns, which the kernel refuses with EBUSY while the pinned
 * one is attached; the map is then ready for BPF_LINK_UPDATE of the
 * pinned link, one atomic switch.  If the attach succeeds, the pinned
 * link was detached meanwhile: the new link is pinned as a load would.
 */
static int attach_or_update(struct ns_ctx *ns, struct bpf_map *ops,
			    const char *label, int link_fd, uint32_t link_id,
			    struct bpf_link **link, char *note, size_t len)
{
	char pin[PATH_MAX];
	int err;

	*link = bpf_map__attach_struct_ops(ops);
	if (!*link) {
		err = -errno;
		if (link_fd < 0 || err != -EBUSY) {
			p_err("cannot attach %s in netns %lu: %s", label,
			      ns->ino, link_strerror(err));
			return err;
		}
		err = bpf_link_update(link_fd, bpf_map__fd(ops), NULL);
		if (err)
			p_err("cannot replace the program of link %u: %s",
			      link_id, link_strerror(err));
		else
			stop_point("attached");
		return err;
	}
	stop_point("attached");
	ns_pin_path(ns, PIN_LINK, pin);
	if (link_fd >= 0) {
		snprintf(note, len,
			 "link %u was no longer attached; attached a new link",
			 link_id);
		unlink(pin);
	}
	/*
	 * bpf_obj_pin() is atomic: "link" appears with its reference or not
	 * at all.  A process killed before this point leaves nothing
	 * attached: its link fd, the only reference, closes with it.
	 */
	err = bpf_link__pin(*link, pin);
	return err ? p_errno(err, "cannot pin the link at %s", pin) : 0;
}

/**
 * ops_attach() - load @req->obj and attach it in the netns
 * @ns:  resolved (live) netns; locked here.
 * @req: what to do; see struct attach_req.
 *
 * Before anything is locked or written, ksmbd's BTF must agree with the
 * constants this tool and its program were built with (abi_check()).
 * On error nothing changed: the old program (or none) is attached, with
 * the old maps and pins.
 *
 * Return: 0 or a negative errno, reported.
 */
int ops_attach(struct ns_ctx *ns, const struct attach_req *req)
{
	const char *suffix = req->fill ? "_new" : "";
	bool pinned[NSHARED] = { false }, stale;
	int link_fd = -1, map_fd[NSHARED] = { [0 ... NSHARED - 1] = -1 }, err;
	struct ksched_state st = { 0 };
	struct bpf_link *link = NULL;
	struct bpf_link_info info;
	struct bpf_map *ops;
	unsigned int i;

	ops = object_ops_map(req->obj, req->label);
	if (!ops)
		return -EINVAL;
	if (req->has_max) {
		err = ops_set_u32(req->obj, ops, req->label, "max_inflight",
				  req->max_inflight);
		if (err)
			return err;
	}
	err = ksched_read(&st);
	if (!err)
		err = abi_check();
	if (!err)
		err = ns_lock(ns, true);
	if (!err)
		err = link_check(ns, &st, &link_fd, &info, &stale);
	if (err)
		goto out;
	if (stale) {
		snprintf(req->note, req->notelen,
			 "removed stale pins of netns inode %lu (link id %u is not attached here)",
			 ns->ino, info.id);
		err = ns_remove_pins(ns);
		if (!err)
			err = ns_make_dir(ns);
		if (err)
			goto out;
	}
	if (req->mode == ATTACH_LOAD && link_fd >= 0) {
		p_err("already loaded in netns %lu (link id %u); use replace",
		      ns->ino, info.id);
		err = -EEXIST;
		goto out;
	}
	if (req->mode == ATTACH_REPLACE && link_fd < 0) {
		p_err("nothing loaded by smb-classify in netns %lu; use load",
		      ns->ino);
		err = -ENOENT;
		goto out;
	}
	stop_point("locked");
	err = object_reuse_maps(ns, req->obj, req->label, req->fill,
				map_fd);
	if (err)
		goto out;
	err = bpf_object__load(req->obj);
	if (err) {
		p_err("cannot load %s: %s%s", req->label, strerror(-err),
		      err == -EACCES || err == -EINVAL ?
		      " (verifier log above; -d for more)" : "");
		goto out;
	}
	if (req->fill)
		err = req->fill(req->obj, req->ctx);
	if (!err)
		stop_point("loaded");
	if (!err)
		err = object_pin_maps(ns, req->obj, map_fd, suffix, pinned);
	if (!err)
		stop_point("maps-pinned");
	if (!err)
		err = attach_or_update(ns, ops, req->label, link_fd, info.id,
				       &link, req->note, req->notelen);
	if (!err)
		stop_point("pinned");
	if (!err)
		err = finish_pins(ns, suffix, pinned, true);
	if (!err)
		stop_point("renamed");
	if (!err)
		err = ns_record_name(ns);
out:
	if (err)
		finish_pins(ns, suffix, pinned, false);
	for (i = 0; i < NSHARED; i++)
		if (map_fd[i] >= 0)
			close(map_fd[i]);
	ksched_free(&st);
	/* Unpinned (error), this closes the only reference: detached. */
	bpf_link__destroy(link);
	if (link_fd >= 0)
		close(link_fd);
	ns_unlock(ns);
	return err;
}

static void print_result(const char *what, const struct ns_ctx *ns,
			 const char *note)
{
	struct ksched_state st;

	if (ksched_read(&st))
		return;
	if (json_output) {
		json_result(what);
		jsonw_uint_field(json_wtr, "netns_ino", ns->ino);
		json_text_field(json_wtr, "name", st.name);
		jsonw_uint_field(json_wtr, "link_id", st.link_id);
		jsonw_bool_field(json_wtr, "serves", st.serves);
		if (st.has_disp)
			jsonw_uint_field(json_wtr, "max_inflight",
					 st.max_inflight);
		if (note && *note)
			jsonw_string_field(json_wtr, "note", note);
		jsonw_end_object(json_wtr);
	} else {
		if (note && *note)
			printf("note: %s\n", note);
		printf("%s %s in netns %lu (%s), link id %u", what, st.name,
		       ns->ino, ns->label, st.link_id);
		if (st.has_disp)
			printf(", max_inflight %u", st.max_inflight);
		putchar('\n');
		if (!st.serves)
			printf("note: " NOT_SERVED "\n");
	}
	ksched_free(&st);
}

/* "load|replace [OBJ] [max-inflight N]": OBJ and the keyword in any order. */
static int load_cmd(int argc, char **argv, enum attach_mode mode)
{
	const char *cmd = mode == ATTACH_REPLACE ? "replace" : "load";
	char note[160] = "", msg[WORDS_ERRLEN];
	struct attach_req req = { .mode = mode, .note = note,
				  .notelen = sizeof(note) };
	const char *path = NULL;
	struct ns_ctx ns;
	int err, i;

	for (i = 0; i < argc; i++) {
		if (word_abbrev(argv[i], "max-inflight")) {
			if (req.has_max)
				return p_err("%s: max-inflight given twice",
					     cmd);
			if (parse_max_inflight(i + 1 < argc ? argv[i + 1] :
					       NULL, &req.max_inflight, msg,
					       sizeof(msg)))
				return p_err("%s", msg);
			req.has_max = true;
			i++;
		} else if (!path && argv[i][0]) {
			path = argv[i];
		} else {
			return p_err("%s: unexpected argument '%s'", cmd,
				     argv[i]);
		}
	}
	req.label = path ? path : "(built-in)";
	if (path && access(path, R_OK))
		return p_errno(-errno, "cannot read %s", path);
	/* A bad object leaves nothing behind: opened before the netns. */
	req.obj = object_open(path);
	if (!req.obj)
		return -EINVAL;
	err = ns_resolve(&ns, true);
	if (!err)
		err = ops_attach(&ns, &req);
	if (!err)
		print_result(mode == ATTACH_REPLACE ? "replaced" : "loaded",
			     &ns, note);
	bpf_object__close(req.obj);
	return err;
}

/** do_load() - "load [OBJ] [max-inflight N]" */
int do_load(int argc, char **argv)
{
	return load_cmd(argc, argv, ATTACH_LOAD);
}

/** do_replace() - "replace [OBJ] [max-inflight N]" */
int do_replace(int argc, char **argv)
{
	return load_cmd(argc, argv, ATTACH_REPLACE);
}

/* Detach the pinned link, if any.  Return: its id (0: none) or -errno. */
static long detach_pinned(struct ns_ctx *ns)
{
	struct bpf_link_info info;
	int fd = link_open(ns, &info), err;

	if (fd < 0)
		return fd == -ENOENT ? 0 : fd;
	/*
	 * Detach now, even if another process holds the link open; a link
	 * already detached (netns gone) returns 0.
	 */
	err = bpf_link_detach(fd);
	close(fd);
	if (!err)
		stop_point("detached");
	if (err && err != -EOPNOTSUPP) {
		p_err("cannot detach link %u: %s", info.id,
		      link_strerror(err));
		return err;
	}
	return info.id;
}

/**
 * do_unload() - "unload": detach and remove the pins of the netns
 * @argc: must be 0.
 * @argv: unused.
 *
 * Return: 0 (also when nothing was loaded) or a negative errno, reported.
 */
int do_unload(int argc, char **argv)
{
	char note[160];
	long id = 0;
	struct ns_ctx ns;
	int err;

	err = ns_cmd("unload", argc, argv, &ns, false);
	if (err)
		return err;
	if (!ns.ino) {
		snprintf(note, sizeof(note),
			 "nothing loaded: netns '%s' does not exist", ns.label);
		goto report;
	}
	err = ns_lock(&ns, false);
	if (err && err != -ENOENT)
		return err;
	if (err || access(ns.dir, F_OK)) {
		ns_unlock(&ns);
		snprintf(note, sizeof(note), "nothing loaded in netns %lu (%s)",
			 ns.ino, ns.label);
		goto report;
	}
	id = detach_pinned(&ns);
	err = id < 0 ? id : ns_remove_pins(&ns);
	ns_unlock(&ns);
	if (err)
		return err;
	if (!ns.live)
		snprintf(note, sizeof(note),
			 "netns %s (inode %lu) no longer exists; removed its pins",
			 ns.label, ns.ino);
	else if (id)
		snprintf(note, sizeof(note),
			 "unloaded link %ld from netns %lu (%s)", id, ns.ino,
			 ns.label);
	else
		snprintf(note, sizeof(note),
			 "nothing was attached in netns %lu (%s); removed its pins",
			 ns.ino, ns.label);
report:
	if (!json_output) {
		printf("%s\n", note);
		return 0;
	}
	json_result("unloaded");
	jsonw_uint_field(json_wtr, "netns_ino", ns.ino);
	jsonw_bool_field(json_wtr, "netns_exists", ns.live);
	jsonw_uint_field(json_wtr, "link_id", id);
	json_text_field(json_wtr, "note", note);
	jsonw_end_object(json_wtr);
	return 0;
}

