/* SPDX-License-Identifier: Apache-2.0 */
/*
 * internal/grow.h - the one way the readers, the recorder, the passes and
 * the tool grow an array: make room for need elements, doubling the
 * capacity (from first when there is none yet) until it holds them, with
 * the multiplications checked.  libbpf's libbpf_ensure_mem is the model;
 * unlike it, the new elements are left as realloc leaves them (a byte
 * buffer that doubles would otherwise touch pages it may never fill): a
 * caller that needs them zeroed clears them.  rip_room is the other way:
 * a buffer whose contents are done with, replaced when too small, not
 * copied.  Not installed, like internal/clock.h.
 *
 *	if (RIP_GROW(m->v, m->cap, m->n + 1, 64))
 *		return -ENOMEM;
 *	m->v[m->n++] = x;
 */
#ifndef RIP_INTERNAL_GROW_H
#define RIP_INTERNAL_GROW_H

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

/*
 * Make *p (an array of *cap elements of esz bytes) hold need elements: 0,
 * with *p and *cap moved on when it had to grow, or -ENOMEM with both as
 * they were.
 */
static inline int rip_grow(void **p, size_t *cap, size_t esz, size_t need, size_t first)
{
	size_t ncap;
	void *n;

	if (need <= *cap)
		return 0;
	ncap = *cap ? *cap : first;
	while (ncap < need) {
		if (ncap > SIZE_MAX / 2)
			return -ENOMEM;
		ncap *= 2;
	}
	if (ncap > SIZE_MAX / esz)
		return -ENOMEM;
	n = realloc(*p, ncap * esz);
	if (!n)
		return -ENOMEM;
	*p = n;
	*cap = ncap;
	return 0;
}

/*
 * rip_grow for the array arr (any pointer lvalue) of cap elements (a size_t
 * lvalue): 0 or -ENOMEM.
 */
#define RIP_GROW(arr, cap, need, first)                                                            \
	__extension__({                                                                            \
		void *__rip_g = (arr);                                                             \
		int __rip_e = rip_grow(&__rip_g, &(cap), sizeof(*(arr)), (need), (first));         \
		(arr) = __rip_g;                                                                   \
		__rip_e;                                                                           \
	})

/*
 * Make *p (a buffer of *cap bytes whose contents are not needed any more)
 * hold need bytes: a new buffer of need bytes when it is smaller, the old
 * one freed first, nothing copied (realloc would copy what is about to be
 * overwritten, and take fresh pages where it moved).  0, or -ENOMEM with
 * *p NULL and *cap 0.
 */
static inline int rip_room(void **p, size_t *cap, size_t need)
{
	if (need <= *cap)
		return 0;
	free(*p);
	*cap = 0;
	if (!(*p = malloc(need)))
		return -ENOMEM;
	*cap = need;
	return 0;
}

#endif /* RIP_INTERNAL_GROW_H */
