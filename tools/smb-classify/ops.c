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
	if (!obj)
		p_err("cannot open BPF object %s: %s",
		      path ? path : "(built-in)", strerror(errno));
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

/*
 * Make the object's prefixes map (if it has one) the pinned one when there
 * is one, so prefixes survive load, unload-less replace and a killed load.
 * Return: whether the map was reused through *@map_fd (then owned by the
 * caller), or a negative errno, reported.
 */
static int object_reuse_prefixes(struct ns_ctx *ns, struct bpf_object *obj,
				 const char *path, int *map_fd)
{
	struct bpf_map *map;
	int err;

	*map_fd = -1;
	map = bpf_object__find_map_by_name(obj, SMB_PREFIXES_MAP_NAME);
	if (!map)
		return 0;
	if (bpf_map__type(map) != BPF_MAP_TYPE_LPM_TRIE ||
	    bpf_map__key_size(map) != sizeof(struct smb_prefix_key) ||
	    bpf_map__value_size(map) != sizeof(__u32)) {
		p_err("%s: map %s is not an LPM trie of struct smb_prefix_key to __u32",
		      path, SMB_PREFIXES_MAP_NAME);
		return -EINVAL;
	}
	err = prefixes_open(ns, false, map_fd);
	if (err || *map_fd < 0)
		return err;
	err = bpf_map__reuse_fd(map, *map_fd);
	if (err) {
		p_err("cannot reuse the pinned prefixes map: %s",
		      strerror(-err));
		close(*map_fd);
		*map_fd = -1;
		return err;
	}
	return 1;
}

/* Pin the object's prefixes map unless it is the pinned one already. */
static int object_pin_prefixes(struct ns_ctx *ns, struct bpf_object *obj,
			       bool reused, bool *pinned)
{
	struct bpf_map *map;
	char path[PATH_MAX];
	int err;

	*pinned = false;
	map = bpf_object__find_map_by_name(obj, SMB_PREFIXES_MAP_NAME);
	if (!map || reused)
		return 0;
	ns_pin_path(ns, SMB_PREFIXES_MAP_NAME, path);
	err = bpf_obj_pin(bpf_map__fd(map), path);
	if (err) {
		p_err("cannot pin the prefixes map at %s: %s", path,
		      strerror(-err));
		return err;
	}
	*pinned = true;
	return 0;
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
	printf("%s %s in netns %lu (%s), link id %u\n", what, st->name,
	       ns->ino, ns->label, st->link_id);
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
 * do_load() - "load [OBJ]" and "replace [OBJ]"
 * @argc:    words after the command.
 * @argv:    [OBJ].
 * @replace: replace the attached program instead of attaching one.
 *
 * Return: 0 or a negative errno, reported.
 */
int do_load(int argc, char **argv, bool replace)
{
	const char *cmd = replace ? "replace" : "load";
	const char *path = argc ? argv[0] : NULL;
	const char *label = path ? path : "(built-in)";
	bool stale, reused, map_pinned = false;
	struct bpf_link *link = NULL;
	struct bpf_object *obj = NULL;
	char note[160] = "", pin[PATH_MAX];
	int link_fd = -1, map_fd = -1, err;
	struct ksched_state st;
	struct bpf_map *ops;
	uint32_t link_id;
	struct ns_ctx ns;

	if (argc > 1) {
		p_err("%s: unexpected argument '%s'", cmd, argv[1]);
		return -EINVAL;
	}
	if (path && access(path, R_OK)) {
		err = -errno;
		p_err("cannot read %s: %s", path, strerror(errno));
		return err;
	}

	err = ns_resolve(&ns, true);
	if (err)
		return err;
	err = ksched_read(&st);
	if (err)
		return err;
	err = ns_lock(&ns, true);
	if (err)
		return err;
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

	obj = object_open(path);
	if (!obj) {
		err = -EINVAL;
		goto out;
	}
	ops = object_ops_map(obj, label);
	if (!ops) {
		err = -EINVAL;
		goto out;
	}
	err = object_reuse_prefixes(&ns, obj, label, &map_fd);
	if (err < 0)
		goto out;
	reused = err > 0;
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
		err = object_pin_prefixes(&ns, obj, reused, &map_pinned);
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
		err = object_pin_prefixes(&ns, obj, reused, &map_pinned);
		if (!err)
			err = pin_new_link(&ns, link);
		if (err)
			goto out;
	}
	err = ns_record_name(&ns);
	if (err)
		goto out;

	err = ksched_read(&st);
	if (err)
		goto out;
	print_result(replace ? "replaced" : "loaded", &ns, &st,
		     note[0] ? note : NULL);
out:
	if (err && map_pinned) {
		ns_pin_path(&ns, SMB_PREFIXES_MAP_NAME, pin);
		unlink(pin);
	}
	/* Unpinned (error), this closes the only reference: detached. */
	bpf_link__destroy(link);
	bpf_object__close(obj);
	if (map_fd >= 0)
		close(map_fd);
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
	unsigned int nprefixes = 0;
	int link_fd = -1, map_fd = -1, nprogs = 0, i, err;
	bool stale = false, locked, have_map = false;
	struct ksched_state st;
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
		return err;
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
	printf("conns_classified:  %llu\n",
	       (unsigned long long)st.conns_classified);
	printf("reqs_classified:   %llu\n",
	       (unsigned long long)st.reqs_classified);
	printf("class_clamped:     %llu\n",
	       (unsigned long long)st.class_clamped);
	printf("verdict_clamped:   %llu\n",
	       (unsigned long long)st.verdict_clamped);
out:
	if (map_fd >= 0)
		close(map_fd);
	if (link_fd >= 0)
		close(link_fd);
	ns_unlock(&ns);
	return err;
}
