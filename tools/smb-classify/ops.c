// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * ops.c - load, replace, unload and status of smb-classify
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
#include "policyspec.h"
#include "tracefmt.h"
#include "smb_classify.h"
#include "smb_classify.skel.h"

/* Meaning of errors of BPF_LINK_CREATE and BPF_LINK_UPDATE here. */
static const char *link_strerror(int err)
{
	switch (-err) {
	case EBUSY:
		return "EBUSY: another program is already attached in this netns";
	case EBADF:
		return "EBADF: the link or the new struct_ops map is not a valid file descriptor";
	case EINVAL:
		return "EINVAL: the kernel rejected the struct_ops map (not a ready ksmbd_sched_ops map with BPF_F_LINK, or the link's program changed meanwhile)";
	case EOPNOTSUPP:
		return "EOPNOTSUPP: this kernel cannot do that with ksmbd_sched_ops (no link update, or not a link-based struct_ops)";
	case ENOLINK:
		return "ENOLINK: the link is no longer attached (its netns exited or it was detached)";
	case ENOENT:
		return "ENOENT: the kernel does not know this link's attachment";
	case EPERM:
	case EACCES:
		return "permission denied (needs CAP_BPF and CAP_NET_ADMIN or root)";
	case E2BIG:
		return "E2BIG: max_inflight above the kernel's limit";
	default:
		return strerror(-err);
	}
}

/* Open a BPF object from @path, or the built-in one when @path is NULL. */
static struct bpf_object *object_open(const char *path)
{
	LIBBPF_OPTS(bpf_object_open_opts, opts);
	struct bpf_object *obj;
	const void *data;
	size_t size;

	if (path) {
		obj = bpf_object__open_file(path, &opts);
	} else {
		data = smb_classify_bpf__elf_bytes(&size);
		opts.object_name = "smb_classify";
		obj = bpf_object__open_mem(data, size, &opts);
	}
	if (!obj) {
		char why[128];

		libbpf_strerror(-errno, why, sizeof(why));
		p_err("cannot open BPF object %s: %s",
		      path ? path : "(built-in)", why);
	}
	return obj;
}

/* The one struct_ops map of @obj, which must be link-based. */
static struct bpf_map *object_ops_map(struct bpf_object *obj,
				      const char *path)
{
	struct bpf_map *map, *found = NULL;

	bpf_object__for_each_map(map, obj) {
		if (bpf_map__type(map) != BPF_MAP_TYPE_STRUCT_OPS)
			continue;
		if (found) {
			p_err("%s has more than one struct_ops map (%s, %s)",
			      path, bpf_map__name(found), bpf_map__name(map));
			return NULL;
		}
		found = map;
	}
	if (!found) {
		p_err("%s has no struct_ops map", path);
		return NULL;
	}
	if (!(bpf_map__map_flags(found) & BPF_F_LINK)) {
		p_err("%s: struct_ops map %s must be in SEC(\".struct_ops.link\")",
		      path, bpf_map__name(found));
		return NULL;
	}
	return found;
}

/**
 * struct shared_map - a map of the object kept across load and replace
 * @name:  map name in the object, and of its pin in the netns's dir.
 * @type:  map type it must have.
 * @key:   key size.
 * @value: value size.
 * @what:  what it must be, for the error message.
 * @open:  opens the pinned one (prefixes_open(), policy_open()).
 *
 * Each is filled by its own command (prefix add, policy set) before or
 * after load and outlives a replace: a new object's map of that name is
 * replaced by the pinned one, or, if none is pinned yet, pinned.
 */
struct shared_map {
	const char *name;
	enum bpf_map_type type;
	__u32 key;
	__u32 value;
	const char *what;
	int (*open)(struct ns_ctx *ns, bool create, int *map_fd);
};

static const struct shared_map shared_maps[] = {
	{ SMB_PREFIXES_MAP_NAME, BPF_MAP_TYPE_LPM_TRIE,
	  sizeof(struct smb_prefix_key), sizeof(__u32),
	  "an LPM trie of struct smb_prefix_key to __u32", prefixes_open },
	{ SMB_POLICY_MAP_NAME, BPF_MAP_TYPE_HASH,
	  sizeof(__u32), sizeof(struct smb_policy),
	  "a hash of __u32 class id to struct smb_policy", policy_open },
};

#define NSHARED	ARRAY_SIZE(shared_maps)

/*
 * Make the object's shared maps (those it has) the pinned ones where
 * they are pinned, so prefixes and policies survive load, unload-less
 * replace and a killed load.  map_fd[i] is the reused pinned map's fd
 * (owned by the caller), else -1.  Return: 0 or a negative errno,
 * reported.
 */
static int object_reuse_maps(struct ns_ctx *ns, struct bpf_object *obj,
			     const char *path, int map_fd[NSHARED])
{
	const struct shared_map *sm;
	struct bpf_map *map;
	unsigned int i;
	int err;

	for (i = 0; i < NSHARED; i++)
		map_fd[i] = -1;
	for (i = 0; i < NSHARED; i++) {
		sm = &shared_maps[i];
		map = bpf_object__find_map_by_name(obj, sm->name);
		if (!map)
			continue;
		if (bpf_map__type(map) != sm->type ||
		    bpf_map__key_size(map) != sm->key ||
		    bpf_map__value_size(map) != sm->value) {
			p_err("%s: map %s is not %s", path, sm->name,
			      sm->what);
			return -EINVAL;
		}
		err = sm->open(ns, false, &map_fd[i]);
		if (err)
			return err;
		if (map_fd[i] < 0)
			continue;
		err = bpf_map__reuse_fd(map, map_fd[i]);
		if (err) {
			p_err("cannot reuse the pinned %s map: %s", sm->name,
			      strerror(-err));
			return err;
		}
	}
	return 0;
}

/* Pin the object's shared maps that are not the pinned ones already. */
static int object_pin_maps(struct ns_ctx *ns, struct bpf_object *obj,
			   const int map_fd[NSHARED], bool pinned[NSHARED])
{
	struct bpf_map *map;
	char path[PATH_MAX];
	unsigned int i;
	int err;

	for (i = 0; i < NSHARED; i++) {
		pinned[i] = false;
		map = bpf_object__find_map_by_name(obj, shared_maps[i].name);
		if (!map || map_fd[i] >= 0)
			continue;
		ns_pin_path(ns, shared_maps[i].name, path);
		err = bpf_obj_pin(bpf_map__fd(map), path);
		if (err) {
			p_err("cannot pin the %s map at %s: %s",
			      shared_maps[i].name, path, strerror(-err));
			return err;
		}
		pinned[i] = true;
	}
	return 0;
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
	const struct btf_member *m;
	size_t size = 0;
	void *data;
	int i;

	t = btf ? btf__type_by_id(btf, bpf_map__btf_value_type_id(ops)) :
		  NULL;
	data = bpf_map__initial_value(ops, &size);
	if (!t || !btf_is_struct(t) || !data) {
		p_err("%s: no BTF for struct_ops map %s, cannot set %s",
		      label, bpf_map__name(ops), member);
		return -EINVAL;
	}
	for (i = 0, m = btf_members(t); i < btf_vlen(t); i++, m++) {
		__u32 off = btf_member_bit_offset(t, i);

		if (strcmp(btf__name_by_offset(btf, m->name_off), member))
			continue;
		mt = btf__type_by_id(btf, m->type);
		while (mt && (btf_is_mod(mt) || btf_is_typedef(mt)))
			mt = btf__type_by_id(btf, mt->type);
		if (!mt || !(btf_is_int(mt) || btf_is_enum(mt)) ||
		    mt->size != sizeof(__u32) ||
		    btf_member_bitfield_size(t, i) || off % 8 ||
		    off / 8 + sizeof(__u32) > size) {
			p_err("%s: member %s of struct %s is not a 32-bit integer",
			      label, member,
			      btf__name_by_offset(btf, t->name_off));
			return -EINVAL;
		}
		memcpy((char *)data + off / 8, &val, sizeof(val));
		return 0;
	}
	p_err("%s: struct %s of struct_ops map %s has no member %s",
	      label, btf__name_by_offset(btf, t->name_off),
	      bpf_map__name(ops), member);
	return -EINVAL;
}

static void print_result(const char *what, const struct ns_ctx *ns,
			 const struct ksched_state *st, const char *note)
{
	if (json_output) {
		json_start_object(jw);
		json_key(jw, "result");
		json_string(jw, what);
		json_key(jw, "netns_ino");
		json_uint(jw, ns->ino);
		json_key(jw, "name");
		json_string(jw, st->name);
		json_key(jw, "link_id");
		json_uint(jw, st->link_id);
		json_key(jw, "serves");
		json_bool(jw, st->serves);
		if (st->has_disp) {
			json_key(jw, "max_inflight");
			json_uint(jw, st->max_inflight);
		}
		if (note) {
			json_key(jw, "note");
			json_string(jw, note);
		}
		json_end_object(jw);
		json_finish(jw);
		return;
	}
	if (note)
		printf("note: %s\n", note);
	printf("%s %s in netns %lu (%s), link id %u", what, st->name,
	       ns->ino, ns->label, st->link_id);
	if (st->has_disp)
		printf(", max_inflight %u", st->max_inflight);
	putchar('\n');
	if (!st->serves)
		printf("note: ksmbd does not listen in this netns (6.12 ksmbd listens only in the initial netns)\n");
}

/* Pin a freshly attached link: "link" appears with the link or not at all. */
static int pin_new_link(struct ns_ctx *ns, struct bpf_link *link)
{
	char path[PATH_MAX];
	int err;

	/*
	 * bpf_obj_pin() is atomic: the name exists with its reference or
	 * not at all, so pinning straight to "link" (under the flock) is
	 * as safe as a temporary name and rename(2).  A process killed
	 * before this point leaves nothing attached: its link fd, the only
	 * reference, closes with it (case C11).
	 */
	ns_pin_path(ns, "link", path);
	err = bpf_link__pin(link, path);
	if (err)
		p_err("cannot pin the link at %s: %s", path, strerror(-err));
	return err;
}

/**
 * do_load() - "load [OBJ] [max-inflight N]" and "replace ..."
 * @argc:    words after the command.
 * @argv:    [OBJ] [max-inflight N], in either order; a word that
 *           abbreviates "max-inflight" is the keyword (write ./m for a
 *           file named m).
 * @replace: replace the attached program instead of attaching one.
 *
 * Return: 0 or a negative errno, reported.
 */
int do_load(int argc, char **argv, bool replace)
{
	const char *cmd = replace ? "replace" : "load";
	const char *path = NULL, *label;
	bool stale, have_max = false, map_pinned[NSHARED] = { false };
	struct bpf_link *link = NULL;
	struct bpf_object *obj = NULL;
	char note[160] = "", pin[PATH_MAX], msg[POLICYSPEC_ERRLEN];
	int link_fd = -1, map_fd[NSHARED], err, i;
	struct ksched_state st = { 0 };
	uint32_t link_id, max_inflight = 0;
	struct bpf_map *ops;
	struct ns_ctx ns;

	for (i = 0; i < (int)NSHARED; i++)
		map_fd[i] = -1;
	for (i = 0; i < argc; i++) {
		if (word_abbrev(argv[i], "max-inflight")) {
			if (have_max) {
				p_err("%s: max-inflight given twice", cmd);
				return -EINVAL;
			}
			if (parse_max_inflight(i + 1 < argc ? argv[i + 1] :
					       NULL, &max_inflight, msg,
					       sizeof(msg))) {
				p_err("%s", msg);
				return -EINVAL;
			}
			have_max = true;
			i++;
		} else if (!path && argv[i][0]) {
			path = argv[i];
		} else {
			p_err("%s: unexpected argument '%s'", cmd, argv[i]);
			return -EINVAL;
		}
	}
	label = path ? path : "(built-in)";
	if (path && access(path, R_OK)) {
		err = -errno;
		p_err("cannot read %s: %s", path, strerror(errno));
		return err;
	}

	/*
	 * Open the object and set its data before touching the netns or
	 * bpffs: a bad object or a missing member leaves nothing behind.
	 */
	obj = object_open(path);
	if (!obj)
		return -EINVAL;
	ops = object_ops_map(obj, label);
	err = ops ? 0 : -EINVAL;
	if (!err && have_max)
		err = ops_set_u32(obj, ops, label, "max_inflight",
				  max_inflight);
	if (err) {
		bpf_object__close(obj);
		return err;
	}

	ns.lock_fd = -1;
	err = ns_resolve(&ns, true);
	if (err)
		goto out;
	err = ksched_read(&st);
	if (err)
		goto out;
	err = ns_lock(&ns, true);
	if (err)
		goto out;
	err = link_check(&ns, &st, &link_fd, &link_id, &stale);
	if (err)
		goto out;
	if (stale) {
		snprintf(note, sizeof(note),
			 "removed stale pins of netns inode %lu (link id %u is not attached here)",
			 ns.ino, link_id);
		err = ns_remove_pins(&ns);
		if (!err)
			err = ns_make_dir(&ns);
		if (err)
			goto out;
	}
	if (!replace && link_fd >= 0) {
		p_err("already loaded in netns %lu (link id %u); use replace",
		      ns.ino, link_id);
		err = -EEXIST;
		goto out;
	}
	if (replace && link_fd < 0) {
		p_err("nothing loaded by smb-classify in netns %lu; use load",
		      ns.ino);
		err = -ENOENT;
		goto out;
	}

	err = object_reuse_maps(&ns, obj, label, map_fd);
	if (err)
		goto out;
	err = bpf_object__load(obj);
	if (err) {
		p_err("cannot load %s: %s%s", label, strerror(-err),
		      err == -EACCES || err == -EINVAL ?
		      " (verifier log above; -d for more)" : "");
		goto out;
	}

	/*
	 * libbpf writes the struct_ops map's value (the program fds and data
	 * it prepared at load) only in bpf_map__attach_struct_ops() and
	 * bpf_link__update_map(); the latter needs a libbpf struct_ops link
	 * made in this process, which a replace from a fresh process does
	 * not have (bpf_link__open() of the pin gives a plain fd link that
	 * bpf_link__update_map() would misread).  Rebuilding the value by
	 * hand would duplicate libbpf internals.  So: attach the new map.
	 * That writes the value and asks for a second link in this netns,
	 * which the kernel refuses with EBUSY while the pinned one is
	 * attached - for a replace that refusal is the expected result, and
	 * the map is then ready for BPF_LINK_UPDATE of the pinned link.  If
	 * the attach succeeds, nothing was attached any more (the pinned
	 * link was detached meanwhile): the new link is pinned as a load.
	 */
	link = bpf_map__attach_struct_ops(ops);
	if (!link) {
		err = -errno;
		if (!replace || err != -EBUSY) {
			p_err("cannot attach %s in netns %lu: %s", label,
			      ns.ino, link_strerror(err));
			goto out;
		}
		err = bpf_link_update(link_fd, bpf_map__fd(ops), NULL);
		if (err) {
			p_err("cannot replace the program of link %u: %s",
			      link_id, link_strerror(err));
			goto out;
		}
		err = object_pin_maps(&ns, obj, map_fd, map_pinned);
		if (err)
			goto out;
	} else {
		if (replace) {
			snprintf(note, sizeof(note),
				 "link %u was no longer attached; attached a new link",
				 link_id);
			ns_pin_path(&ns, "link", pin);
			unlink(pin);
		}
		err = object_pin_maps(&ns, obj, map_fd, map_pinned);
		if (!err)
			err = pin_new_link(&ns, link);
		if (err)
			goto out;
	}
	err = ns_record_name(&ns);
	if (err)
		goto out;

	ksched_free(&st);
	err = ksched_read(&st);
	if (err)
		goto out;
	print_result(replace ? "replaced" : "loaded", &ns, &st,
		     note[0] ? note : NULL);
out:
	for (i = 0; i < (int)NSHARED; i++) {
		if (err && map_pinned[i]) {
			ns_pin_path(&ns, shared_maps[i].name, pin);
			unlink(pin);
		}
		if (map_fd[i] >= 0)
			close(map_fd[i]);
	}
	ksched_free(&st);
	/* Unpinned (error), this closes the only reference: detached. */
	bpf_link__destroy(link);
	bpf_object__close(obj);
	if (link_fd >= 0)
		close(link_fd);
	ns_unlock(&ns);
	return err;
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
	struct bpf_link_info info = {};
	__u32 len = sizeof(info);
	char path[PATH_MAX], note[160];
	bool had_dir;
	int fd, err;
	struct ns_ctx ns;

	if (argc) {
		p_err("unload: unexpected argument '%s'", argv[0]);
		return -EINVAL;
	}
	err = ns_resolve(&ns, false);
	if (err)
		return err;
	if (!ns.ino) {
		snprintf(note, sizeof(note),
			 "nothing loaded: netns '%s' does not exist", ns.label);
		goto report;
	}
	err = ns_lock(&ns, false);
	if (err == -ENOENT)
		goto nothing;
	if (err)
		return err;
	had_dir = !access(ns.dir, F_OK);
	if (!had_dir) {
		ns_unlock(&ns);
		goto nothing;
	}

	ns_pin_path(&ns, "link", path);
	fd = bpf_obj_get(path);
	if (fd >= 0) {
		if (bpf_link_get_info_by_fd(fd, &info, &len))
			info.id = 0;
		/*
		 * Detach now, even if another process holds the link open;
		 * a link already detached (netns gone) returns 0.
		 */
		err = bpf_link_detach(fd);
		close(fd);
		if (err && err != -EOPNOTSUPP) {
			p_err("cannot detach link %u: %s", info.id,
			      link_strerror(err));
			ns_unlock(&ns);
			return err;
		}
	} else if (fd != -ENOENT) {
		p_err("cannot open pinned link %s: %s", path, strerror(-fd));
		ns_unlock(&ns);
		return fd;
	}
	err = ns_remove_pins(&ns);
	ns_unlock(&ns);
	if (err)
		return err;

	if (!ns.live)
		snprintf(note, sizeof(note),
			 "netns %s (inode %lu) no longer exists; removed its pins",
			 ns.label, ns.ino);
	else if (info.id)
		snprintf(note, sizeof(note),
			 "unloaded link %u from netns %lu (%s)", info.id,
			 ns.ino, ns.label);
	else
		snprintf(note, sizeof(note),
			 "nothing was attached in netns %lu (%s); removed its pins",
			 ns.ino, ns.label);
	goto report;
nothing:
	snprintf(note, sizeof(note), "nothing loaded in netns %lu (%s)",
		 ns.ino, ns.label);
report:
	if (json_output) {
		json_start_object(jw);
		json_key(jw, "result");
		json_string(jw, "unloaded");
		json_key(jw, "netns_ino");
		json_uint(jw, ns.ino);
		json_key(jw, "netns_exists");
		json_bool(jw, ns.live);
		json_key(jw, "link_id");
		json_uint(jw, info.id);
		json_key(jw, "note");
		json_string(jw, note);
		json_end_object(jw);
		json_finish(jw);
	} else {
		printf("%s\n", note);
	}
	return 0;
}

/**
 * struct prog_ref - one program of the attached ops
 * @member: ksmbd_sched_ops member, e.g. "classify_conn".
 * @id:     program id.
 * @name:   program name.
 */
struct prog_ref {
	char member[32];
	uint32_t id;
	char name[BPF_OBJ_NAME_LEN];
};

#define MAX_PROGS	8

/*
 * Program ids of a struct_ops map: the kernel reports a struct_ops map's
 * value with each function pointer replaced by its program's id; the
 * layout comes from the kernel's BTF (bpf_struct_ops_<type>::data).
 */
static int ops_progs(uint32_t map_id, struct prog_ref *progs, int max)
{
	struct bpf_map_info info = {};
	const struct btf_member *m;
	const struct btf_type *vt, *dt, *t;
	__u32 len = sizeof(info), zero = 0;
	struct btf *btf = NULL, *vmlinux = NULL;
	int fd, n = 0, i;
	unsigned int data_off = 0;
	void *value = NULL;

	fd = bpf_map_get_fd_by_id(map_id);
	if (fd < 0)
		return fd;
	if (bpf_map_get_info_by_fd(fd, &info, &len) ||
	    !info.btf_vmlinux_value_type_id)
		goto out;
	value = calloc(1, info.value_size);
	if (!value || bpf_map_lookup_elem(fd, &zero, value))
		goto out;
	vmlinux = btf__load_vmlinux_btf();
	if (!vmlinux)
		goto out;
	btf = vmlinux;
	if (info.btf_vmlinux_id) {
		struct btf *mod = btf__load_from_kernel_by_id_split(
					info.btf_vmlinux_id, vmlinux);

		if (mod)
			btf = mod;	/* split BTF of a module, or vmlinux */
	}
	vt = btf__type_by_id(btf, info.btf_vmlinux_value_type_id);
	if (!vt || !btf_is_struct(vt))
		goto out;
	dt = NULL;
	for (i = 0, m = btf_members(vt); i < btf_vlen(vt); i++, m++) {
		if (!strcmp(btf__name_by_offset(btf, m->name_off), "data")) {
			dt = btf__type_by_id(btf, m->type);
			data_off = m->offset / 8;
		}
	}
	if (!dt || !btf_is_struct(dt))
		goto out;
	for (i = 0, m = btf_members(dt); i < btf_vlen(dt) && n < max;
	     i++, m++) {
		struct bpf_prog_info pinfo = {};
		__u32 plen = sizeof(pinfo);
		unsigned long long id;
		int pfd;

		t = btf__type_by_id(btf, m->type);
		while (t && (btf_is_mod(t) || btf_is_typedef(t)))
			t = btf__type_by_id(btf, t->type);
		if (!t || !btf_is_ptr(t) ||
		    data_off + m->offset / 8 + 8 > info.value_size)
			continue;
		memcpy(&id, (char *)value + data_off + m->offset / 8,
		       sizeof(id));
		if (!id)
			continue;
		snprintf(progs[n].member, sizeof(progs[n].member), "%s",
			 btf__name_by_offset(btf, m->name_off));
		progs[n].id = id;
		progs[n].name[0] = '\0';
		pfd = bpf_prog_get_fd_by_id(id);
		if (pfd >= 0) {
			if (!bpf_prog_get_info_by_fd(pfd, &pinfo, &plen))
				memcpy(progs[n].name, pinfo.name,
				       sizeof(progs[n].name));
			close(pfd);
		}
		n++;
	}
out:
	if (btf != vmlinux)
		btf__free(btf);
	btf__free(vmlinux);
	free(value);
	close(fd);
	return n;
}

/**
 * prefixes_count() - number of keys in a prefixes map
 * @map_fd: the map.
 * @count:  output.
 *
 * Return: 0 or a negative errno (not reported).
 */
int prefixes_count(int map_fd, unsigned int *count)
{
	struct smb_prefix_key key, next;
	void *prev = NULL;
	int err;

	*count = 0;
	while (!(err = bpf_map_get_next_key(map_fd, prev, &next))) {
		key = next;
		prev = &key;
		(*count)++;
	}
	return err == -ENOENT ? 0 : err;
}

/**
 * map_count() - number of keys in a map
 * @map_fd:   the map.
 * @key_size: its key size, at most 64.
 * @count:    output.
 *
 * Return: 0 or a negative errno (not reported).
 */
int map_count(int map_fd, unsigned int key_size, unsigned int *count)
{
	unsigned char key[64], next[64];
	void *prev = NULL;
	int err;

	*count = 0;
	if (key_size > sizeof(key))
		return -EINVAL;
	while (!(err = bpf_map_get_next_key(map_fd, prev, next))) {
		memcpy(key, next, key_size);
		prev = key;
		(*count)++;
	}
	return err == -ENOENT ? 0 : err;
}

/* p99 of a class's waits as text: "<= 2.0 us", ">= 16.8 s", "-". */
static void p99_text(const struct ksched_class *c, char *buf, size_t len)
{
	char dur[32];
	uint64_t bound;
	bool open;

	if (ksched_hist_percentile(c->hist, c->nhist, 99, &bound, &open) < 0) {
		snprintf(buf, len, "-");
		return;
	}
	trace_format_ns(bound, dur, sizeof(dur));
	snprintf(buf, len, "%s %s", open ? ">=" : "<=", dur);
}

static void status_disp_json(const struct ksched_state *st)
{
	const struct ksched_class *c;
	unsigned int i, j;
	uint64_t bound;
	bool open;

	json_key(jw, "dispatcher");
	if (!st->has_disp) {
		json_null(jw);
	} else {
		json_start_object(jw);
		json_key(jw, "max_inflight");
		json_uint(jw, st->max_inflight);
		json_key(jw, "inflight");
		json_uint(jw, st->inflight);
		json_key(jw, "queued");
		json_uint(jw, st->queued);
		json_key(jw, "clients");
		json_uint(jw, st->clients);
		json_key(jw, "alloc_fail");
		json_uint(jw, st->alloc_fail);
		json_end_object(jw);
	}
	if (st->has_held) {
		json_key(jw, "held");
		json_start_object(jw);
		json_key(jw, "payloads");
		json_uint(jw, st->payloads);
		json_key(jw, "payload_pages");
		json_uint(jw, st->payload_pages);
		json_end_object(jw);
	}
	json_key(jw, "classes");
	json_start_array(jw);
	for (i = 0; i < st->nclasses; i++) {
		c = &st->classes[i];
		json_start_object(jw);
		json_key(jw, "class");
		json_uint(jw, c->id);
		json_key(jw, "dispatched");
		json_uint(jw, c->dispatched);
		json_key(jw, "bypassed");
		json_uint(jw, c->bypassed);
		json_key(jw, "bytes");
		json_uint(jw, c->bytes);
		json_key(jw, "wait_ns");
		json_uint(jw, c->wait_ns);
		json_key(jw, "mean_wait_ns");
		if (c->dispatched)
			json_uint(jw, ksched_class_mean_ns(c));
		else
			json_null(jw);
		if (ksched_hist_percentile(c->hist, c->nhist, 99, &bound,
					   &open) < 0) {
			json_key(jw, "p99_wait_ns");
			json_null(jw);
			json_key(jw, "p99_wait_bound");
			json_null(jw);
		} else {
			json_key(jw, "p99_wait_ns");
			json_uint(jw, bound);
			json_key(jw, "p99_wait_bound");
			json_string(jw, open ? "ge" : "le");
		}
		json_key(jw, "hist");
		json_start_array(jw);
		for (j = 0; j < c->nhist; j++)
			json_uint(jw, c->hist[j]);
		json_end_array(jw);
		json_end_object(jw);
	}
	json_end_array(jw);
}

static void status_disp_text(const struct ksched_state *st)
{
	const struct ksched_class *c;
	char mean[32], p99[40];
	unsigned int i;

	if (st->has_held)
		printf("held:              %llu payloads, %llu pages (all netns)\n",
		       (unsigned long long)st->payloads,
		       (unsigned long long)st->payload_pages);
	if (!st->has_disp)
		return;
	printf("max_inflight:      %u\n", st->max_inflight);
	printf("inflight:          %u\n", st->inflight);
	printf("queued:            %u\n", st->queued);
	printf("clients:           %u\n", st->clients);
	printf("alloc_fail:        %llu\n",
	       (unsigned long long)st->alloc_fail);
	if (!st->nclasses) {
		printf("classes:           none dispatched yet\n");
		return;
	}
	printf("classes:\n");
	printf("  %5s  %10s  %10s  %14s  %10s  %12s\n", "CLASS", "DISPATCHED",
	       "BYPASSED", "BYTES", "MEAN-WAIT", "P99-WAIT");
	for (i = 0; i < st->nclasses; i++) {
		c = &st->classes[i];
		if (c->dispatched)
			trace_format_ns(ksched_class_mean_ns(c), mean,
					sizeof(mean));
		else
			snprintf(mean, sizeof(mean), "-");
		p99_text(c, p99, sizeof(p99));
		printf("  %5u  %10llu  %10llu  %14llu  %10s  %12s\n", c->id,
		       (unsigned long long)c->dispatched,
		       (unsigned long long)c->bypassed,
		       (unsigned long long)c->bytes, mean, p99);
	}
}

static void status_dead(struct ns_ctx *ns, bool removed)
{
	if (json_output) {
		json_start_object(jw);
		json_key(jw, "netns_ino");
		json_uint(jw, ns->ino);
		json_key(jw, "netns");
		json_string(jw, ns->label);
		json_key(jw, "netns_exists");
		json_bool(jw, false);
		json_key(jw, "attached");
		json_bool(jw, false);
		json_key(jw, "removed_stale_pins");
		json_bool(jw, removed);
		json_end_object(jw);
		json_finish(jw);
		return;
	}
	if (ns->ino)
		printf("netns:             %lu (%s) no longer exists\n",
		       ns->ino, ns->label);
	else
		printf("netns:             %s does not exist\n", ns->label);
	printf("attached:          no\n");
	if (removed)
		printf("note: removed its stale pins\n");
}

/**
 * do_status() - "status" of the netns
 * @argc: must be 0.
 * @argv: unused.
 *
 * Return: 0 or a negative errno, reported.
 */
int do_status(int argc, char **argv)
{
	struct prog_ref progs[MAX_PROGS];
	struct bpf_link_info info = {};
	__u32 len = sizeof(info);
	unsigned int nprefixes = 0, npolicies = 0;
	int link_fd = -1, map_fd = -1, pol_fd = -1, nprogs = 0, i, err;
	bool stale = false, locked, have_map = false;
	struct ksched_state st = { 0 };
	uint32_t link_id = 0;
	struct ns_ctx ns;

	if (argc) {
		p_err("status: unexpected argument '%s'", argv[0]);
		return -EINVAL;
	}
	err = ns_resolve(&ns, false);
	if (err)
		return err;
	if (!ns.live) {
		err = ns_lock(&ns, false);
		if (err && err != -ENOENT)
			return err;
		locked = !err;
		err = 0;
		if (locked && !access(ns.dir, F_OK))
			err = ns_remove_pins(&ns);
		else
			locked = false;
		ns_unlock(&ns);
		if (!err)
			status_dead(&ns, locked);
		return err;
	}

	err = ksched_read(&st);
	if (err)
		return err;
	err = ns_lock(&ns, false);
	if (err && err != -ENOENT)
		goto out;
	locked = !err;
	err = 0;
	if (locked) {
		err = link_check(&ns, &st, &link_fd, &link_id, &stale);
		if (!err && stale)
			err = ns_remove_pins(&ns);
		if (!err)
			err = prefixes_open(&ns, false, &map_fd);
		if (!err && map_fd >= 0) {
			have_map = true;
			err = prefixes_count(map_fd, &nprefixes);
			if (err)
				p_err("cannot count prefixes: %s",
				      strerror(-err));
		}
		if (!err)
			err = policy_open(&ns, false, &pol_fd);
		if (!err && pol_fd >= 0) {
			err = map_count(pol_fd, sizeof(__u32), &npolicies);
			if (err)
				p_err("cannot count policies: %s",
				      strerror(-err));
		}
	}
	if (err)
		goto out;
	if (link_fd >= 0 && !bpf_link_get_info_by_fd(link_fd, &info, &len))
		nprogs = ops_progs(info.struct_ops.map_id, progs, MAX_PROGS);
	if (nprogs < 0)
		nprogs = 0;

	if (json_output) {
		json_start_object(jw);
		json_key(jw, "netns_ino");
		json_uint(jw, ns.ino);
		json_key(jw, "netns");
		json_string(jw, ns.label);
		json_key(jw, "netns_exists");
		json_bool(jw, true);
		json_key(jw, "serves");
		json_bool(jw, st.serves);
		json_key(jw, "attached");
		json_bool(jw, st.attached);
		json_key(jw, "pinned");
		json_bool(jw, link_fd >= 0);
		json_key(jw, "name");
		json_string(jw, st.name);
		json_key(jw, "link_id");
		json_uint(jw, st.link_id);
		json_key(jw, "struct_ops_map_id");
		json_uint(jw, info.struct_ops.map_id);
		json_key(jw, "progs");
		json_start_array(jw);
		for (i = 0; i < nprogs; i++) {
			json_start_object(jw);
			json_key(jw, "member");
			json_string(jw, progs[i].member);
			json_key(jw, "id");
			json_uint(jw, progs[i].id);
			json_key(jw, "name");
			json_string(jw, progs[i].name);
			json_end_object(jw);
		}
		json_end_array(jw);
		json_key(jw, "prefixes");
		if (have_map)
			json_uint(jw, nprefixes);
		else
			json_null(jw);
		json_key(jw, "policies");
		if (pol_fd >= 0)
			json_uint(jw, npolicies);
		else
			json_null(jw);
		json_key(jw, "conns_classified");
		json_uint(jw, st.conns_classified);
		json_key(jw, "reqs_classified");
		json_uint(jw, st.reqs_classified);
		json_key(jw, "class_clamped");
		json_uint(jw, st.class_clamped);
		json_key(jw, "verdict_clamped");
		json_uint(jw, st.verdict_clamped);
		json_key(jw, "removed_stale_pins");
		json_bool(jw, stale);
		status_disp_json(&st);
		json_end_object(jw);
		json_finish(jw);
		goto out;
	}

	if (stale)
		printf("note: removed stale pins (link id %u was not attached in this netns)\n",
		       link_id);
	printf("netns:             %lu (%s)\n", ns.ino, ns.label);
	if (st.serves)
		printf("ksmbd serves:      yes\n");
	else
		printf("ksmbd serves:      no: ksmbd does not listen in this netns (6.12 ksmbd listens only in the initial netns)\n");
	if (!st.attached)
		printf("attached:          no\n");
	else if (link_fd < 0)
		printf("attached:          yes, but not by smb-classify (no pin; see bpftool link)\n");
	else
		printf("attached:          yes\n");
	if (st.attached) {
		printf("name:              %s\n", st.name);
		printf("link id:           %u\n", st.link_id);
	}
	if (link_fd >= 0) {
		printf("struct_ops map id: %u\n", info.struct_ops.map_id);
		for (i = 0; i < nprogs; i++)
			printf("prog:              %s id %u (%s)\n",
			       progs[i].member, progs[i].id, progs[i].name);
	}
	if (have_map)
		printf("prefixes:          %u\n", nprefixes);
	else
		printf("prefixes:          none pinned\n");
	if (pol_fd >= 0)
		printf("policies:          %u (other classes: defaults, see policy show)\n",
		       npolicies);
	else
		printf("policies:          none pinned (all classes: defaults, see policy show)\n");
	printf("conns_classified:  %llu\n",
	       (unsigned long long)st.conns_classified);
	printf("reqs_classified:   %llu\n",
	       (unsigned long long)st.reqs_classified);
	printf("class_clamped:     %llu\n",
	       (unsigned long long)st.class_clamped);
	printf("verdict_clamped:   %llu\n",
	       (unsigned long long)st.verdict_clamped);
	status_disp_text(&st);
out:
	ksched_free(&st);
	if (pol_fd >= 0)
		close(pol_fd);
	if (map_fd >= 0)
		close(map_fd);
	if (link_fd >= 0)
		close(link_fd);
	ns_unlock(&ns);
	return err;
}
