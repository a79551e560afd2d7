/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * smb_classes.bpf.h - classes by user and by share, and the reservation
 * and limit of each class: the "users", "shares" and "qos" hash maps and
 * the classify_session(), classify_tree() and init_class() programs that
 * read them
 *
 * Included once by bpf/smb_classify.bpf.c and by the test programs that
 * share its maps (selftests/vm/progs/prefix_inflight.bpf.h), after
 * ksmbd_sched_ops.bpf.h and smb_classify.h; each names the three
 * programs in its struct ksmbd_sched_ops.
 *
 * classify_session() gives a session the class word of its user in
 * "users", classify_tree() a tree connect that of its share in "shares";
 * a name without an entry inherits (the session its connection's class,
 * the tree its session's).  The kernel hands both names NUL-padded with
 * ASCII letters in lower case, the form of the keys (struct
 * smb_name_key), so a lookup is a copy of the context's array.  Filled
 * by "smb-classify user add" and "smb-classify share add".
 *
 * init_class() copies a class's entry of "qos" (struct smb_qos, filled by
 * "smb-classify class set") into the parameters the kernel asks for; a
 * class without one keeps them zero: its weight alone.
 */
#ifndef SMB_CLASSES_BPF_H
#define SMB_CLASSES_BPF_H

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, SMB_NAMES_MAX);
	__type(key, struct smb_name_key);
	__type(value, __u32);
} users SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, SMB_NAMES_MAX);
	__type(key, struct smb_name_key);
	__type(value, __u32);
} shares SEC(".maps");

SEC("struct_ops/classify_session")
__u32 BPF_PROG(classify_session, const struct ksmbd_sched_session *s)
{
	struct smb_name_key key;
	__u32 *class_word;

	__builtin_memcpy(key.name, s->user, sizeof(key.name));
	class_word = bpf_map_lookup_elem(&users, &key);
	return class_word ? *class_word : KSMBD_SCHED_CLASS_INHERIT;
}

SEC("struct_ops/classify_tree")
__u32 BPF_PROG(classify_tree, const struct ksmbd_sched_tree *t)
{
	struct smb_name_key key;
	__u32 *class_word;

	__builtin_memcpy(key.name, t->share, sizeof(key.name));
	class_word = bpf_map_lookup_elem(&shares, &key);
	return class_word ? *class_word : KSMBD_SCHED_CLASS_INHERIT;
}

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, SMB_QOS_MAX);
	__type(key, __u32);
	__type(value, struct smb_qos);
} qos SEC(".maps");

SEC("struct_ops/init_class")
void BPF_PROG(init_class, struct ksmbd_sched_class_params *p)
{
	__u32 id = p->class_id;
	struct smb_qos *q = bpf_map_lookup_elem(&qos, &id);

	if (!q)
		return;
	p->flags = q->flags;
	p->reservation_iops = q->reservation_iops;
	p->limit_iops = q->limit_iops;
	p->burst_ms = q->burst_ms;
	p->reservation_bps = q->reservation_bps;
	p->limit_bps = q->limit_bps;
}

#endif /* SMB_CLASSES_BPF_H */
