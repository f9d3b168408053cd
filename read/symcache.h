/* SPDX-License-Identifier: Apache-2.0 */
/*
 * read/symcache.h - libdwfl's find_debuginfo with a cache of separate debug
 * files whose compressed sections are inflated once per build-id (see
 * symcache.c for where it lives and when it is used).
 */
#ifndef RIP_READ_SYMCACHE_H
#define RIP_READ_SYMCACHE_H

#include <elfutils/libdwfl.h>

/* dwfl_standard_find_debuginfo, then the inflated copy when it has or makes one. */
int symcache_find_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname,
			    GElf_Addr base, const char *file_name, const char *debuglink_file,
			    GElf_Word debuglink_crc, char **debuginfo_file_name);

#endif /* RIP_READ_SYMCACHE_H */
