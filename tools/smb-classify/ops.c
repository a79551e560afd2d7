// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * ops.c - a struct_ops map as the kernel holds it: its BTF members, its
 * data and programs, the maps those programs use
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>

#include "main.h"

/* The info of program @id, into @info as the caller prepared it. */
static int prog_info(uint32_t id, struct bpf_prog_info *info)
{
	__u32 len = sizeof(*info);
	int fd = bpf_prog_get_fd_by_id(id), err;

	if (fd < 0)
		return fd;
	err = bpf_prog_get_info_by_fd(fd, info, &len);
	close(fd);
	return err;
}

/**
 * ops_uses_map() - a program of struct_ops map @ops_id uses map @map_id
 * @ops_id: a struct_ops map id.
 * @map_id: a map id.
 *
 * Return: true if one of the ops' programs holds @map_id.
 */
bool ops_uses_map(uint32_t ops_id, uint32_t map_id)
{
	struct bpf_prog_info pinfo;
	__u32 ids[64], j;
	struct ops_info oi;
	unsigned int i;
	bool found = false;

	if (ops_data(ops_id, &oi))
		return false;
	for (i = 0; i < oi.nprogs && !found; i++) {
		memset(&pinfo, 0, sizeof(pinfo));
		pinfo.nr_map_ids = ARRAY_SIZE(ids);
		pinfo.map_ids = (__u64)(unsigned long)ids;
		if (prog_info(oi.progs[i].id, &pinfo))
			continue;
		for (j = 0; j < pinfo.nr_map_ids && j < ARRAY_SIZE(ids); j++)
			found |= ids[j] == map_id;
	}
	return found;
}

/* The index of member @name of struct @t, or -1. */
int ops_member_index(const struct btf *btf, const struct btf_type *t,
		     const char *name)
{
	const struct btf_member *m = btf_members(t);
	int i;

	for (i = 0; i < btf_vlen(t); i++, m++)
		if (!strcmp(btf__name_by_offset(btf, m->name_off), name))
			return i;
	return -1;
}

/* The type of member @i of struct @t, past typedefs and modifiers. */
const struct btf_type *ops_member_type(const struct btf *btf,
				       const struct btf_type *t, int i)
{
	int id = btf__resolve_type(btf, btf_members(t)[i].type);

	return id < 0 ? NULL : btf__type_by_id(btf, id);
}

/* The BTF type of a struct_ops map's value: vmlinux's or a module's. */
static struct btf *value_btf(const struct bpf_map_info *info,
			     struct btf **vmlinux)
{
	struct btf *mod;

	*vmlinux = btf__load_vmlinux_btf();
	if (!*vmlinux || !info->btf_vmlinux_id)
		return *vmlinux;
	mod = btf__load_from_kernel_by_id_split(info->btf_vmlinux_id,
						*vmlinux);
	return mod ? mod : *vmlinux;
}

/* The "data" member (struct ksmbd_sched_ops) of bpf_struct_ops_<type>. */
static const struct btf_type *ops_type(const struct btf *btf, __u32 id,
				       unsigned int *off)
{
	const struct btf_type *vt = btf__type_by_id(btf, id);
	int i = vt && btf_is_struct(vt) ? ops_member_index(btf, vt, "data") : -1;

	if (i < 0)
		return NULL;
	*off = btf_member_bit_offset(vt, i) / 8;
	vt = ops_member_type(btf, vt, i);
	return vt && btf_is_struct(vt) ? vt : NULL;
}

/**
 * ops_data() - what the kernel holds of an attached struct_ops map
 * @map_id: the link's struct_ops map.
 * @oi:     output: max_inflight and the programs.  The kernel reports
 *          the map's value with each function pointer replaced by its
 *          program's id; the layout comes from the kernel's BTF.
 *
 * Return: 0 or a negative errno (not reported; @oi is then empty).
 */
int ops_data(uint32_t map_id, struct ops_info *oi)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info), zero = 0;
	struct btf *btf = NULL, *vmlinux = NULL;
	const struct btf_member *m;
	const struct btf_type *dt, *t;
	struct bpf_prog_info pinfo;
	unsigned int off = 0, moff;
	char *value = NULL;
	int fd, err = -ENOENT, i;

	memset(oi, 0, sizeof(*oi));
	fd = bpf_map_get_fd_by_id(map_id);
	if (fd < 0)
		return fd;
	if (bpf_map_get_info_by_fd(fd, &info, &len) ||
	    !info.btf_vmlinux_value_type_id)
		goto out;
	value = calloc(1, info.value_size);
	if (!value || bpf_map_lookup_elem(fd, &zero, value))
		goto out;
	btf = value_btf(&info, &vmlinux);
	dt = btf ? ops_type(btf, info.btf_vmlinux_value_type_id, &off) : NULL;
	if (!dt)
		goto out;
	for (i = 0, m = btf_members(dt); i < btf_vlen(dt); i++, m++) {
		const char *name = btf__name_by_offset(btf, m->name_off);
		unsigned long long id = 0;

		moff = off + btf_member_bit_offset(dt, i) / 8;
		if (!strcmp(name, "max_inflight") && moff + 4 <= info.value_size)
			memcpy(&oi->max_inflight, value + moff, 4);
		t = ops_member_type(btf, dt, i);
		if (!t || !btf_is_ptr(t) || moff + 8 > info.value_size ||
		    oi->nprogs == ARRAY_SIZE(oi->progs))
			continue;
		memcpy(&id, value + moff, sizeof(id));
		if (!id)
			continue;
		snprintf(oi->progs[oi->nprogs].member,
			 sizeof(oi->progs[0].member), "%s", name);
		oi->progs[oi->nprogs].id = id;
		memset(&pinfo, 0, sizeof(pinfo));
		if (!prog_info(id, &pinfo))
			memcpy(oi->progs[oi->nprogs].name, pinfo.name,
			       sizeof(oi->progs[0].name));
		oi->nprogs++;
	}
	err = 0;
out:
	if (btf != vmlinux)
		btf__free(btf);
	btf__free(vmlinux);
	free(value);
	close(fd);
	return err;
}
