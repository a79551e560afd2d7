// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * mapread.c - read a whole hash or LPM map into a sorted array
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/bpf.h>

#include "main.h"

/**
 * map_read_entries() - every entry of a map, as an array of records
 * @map_fd: the map
 * @what:   its name, for the error message
 * @esz:    size of a record; the key is at offset 0, the value at @voff
 * @ksz:    size of a key
 * @voff:   offset of the value in a record
 * @cmp:    qsort() order of the records
 * @out:    the records (malloc'ed, or NULL when there are none)
 * @count:  how many
 *
 * Entries deleted while the map is walked are skipped.  Errors are
 * reported with p_err().
 *
 * Return: 0, or a negative errno.
 */
int map_read_entries(int map_fd, const char *what, size_t esz, size_t ksz,
		     size_t voff, int (*cmp)(const void *, const void *),
		     void **out, unsigned int *count)
{
	unsigned char key[64], next[64];
	unsigned int n = 0, cap = 0;
	char *e = NULL, *tmp;
	void *prev = NULL;
	int err;

	if (ksz > sizeof(key))
		return -EINVAL;
	while (!(err = bpf_map_get_next_key(map_fd, prev, next))) {
		memcpy(key, next, ksz);
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
		memcpy(e + n * esz, key, ksz);
		err = bpf_map_lookup_elem(map_fd, key, e + n * esz + voff);
		if (err == -ENOENT)	/* deleted meanwhile */
			continue;
		if (err)
			break;
		n++;
	}
	if (err != -ENOENT) {
		p_err("cannot read the %s map: %s", what, strerror(-err));
		free(e);
		return err;
	}
	if (n)
		qsort(e, n, esz, cmp);
	*out = e;
	*count = n;
	return 0;
}
