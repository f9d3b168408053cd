/* SPDX-License-Identifier: Apache-2.0 */
/*
 * read/modinfo.h - what a tracing module (rip/module.h) says of itself,
 * read from its file without loading it: the records of its rip_modinfo
 * section, for `rip run --module` (is this a module?) and `rip run
 * --list-modules` (its kinds).
 *
 *	struct mi_module m;
 *	if (mi_read(path, &m, err, sizeof(err)) == 0)
 *		m.name, m.desc, m.kinds[i].name ...
 */
#ifndef RIP_READ_MODINFO_H
#define RIP_READ_MODINFO_H

#include <stddef.h>
#include <stdint.h>

#include <rip/module.h>

struct mi_kind {
	char name[RIP_KIND_NAME_MAX];
	char desc[RIP_KIND_DESC_MAX];
	uint32_t flags; /* RIP_KIND_* */
};

struct mi_module {
	char name[RIP_KIND_NAME_MAX];
	char desc[RIP_KIND_DESC_MAX];
	uint32_t api; /* RIP_MODULE_API it was built with */
	struct mi_kind kinds[RIP_MODULE_KINDS_MAX];
	uint32_t nkinds;
};

/*
 * Read the module at path (an ELF64 shared object of our byte order).  0;
 * -ENOENT (with a message) when it is not a tracing module (no rip_modinfo
 * section, or no module record); -EBADMSG when the file or its records are
 * damaged; -errno when it cannot be read.  The message is in err.
 */
int mi_read(const char *path, struct mi_module *m, char *err, size_t errlen);

#endif /* RIP_READ_MODINFO_H */
