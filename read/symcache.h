/* SPDX-License-Identifier: Apache-2.0 */
/*
 * read/symcache.h - libdwfl's find_debuginfo with a cache of separate debug
 * files whose compressed sections are inflated once per build-id (see
 * symcache.c for where it lives and when it is used).
 */
#ifndef RIP_READ_SYMCACHE_H
#define RIP_READ_SYMCACHE_H

#include <elfutils/libdwfl.h>

/*
 * dwfl_standard_find_debuginfo made safe to run on binaries somebody else
 * owns: by build-id under the absolute roots of the search path, then by
 * the module's .gnu_debuglink beside the binary and under the roots, where
 * only a regular file is opened (never a FIFO, a device, nor what a link
 * swapped in points to if it is not one) and its build-id, else its CRC,
 * checked.  A dwz file (.gnu_debugaltlink) is libdwfl's to find, by
 * build-id.  *userdata, when set, is the search path (libdwfl's
 * debuginfo_path form); else ":.debug:/usr/lib/debug".
 */
int symcache_find_safe(Dwfl_Module *mod, void **userdata, const char *modname, GElf_Addr base,
		       const char *file_name, const char *debuglink_file, GElf_Word debuglink_crc,
		       char **debuginfo_file_name);

/* symcache_find_safe, then the inflated copy when it has or makes one. */
int symcache_find_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname,
			    GElf_Addr base, const char *file_name, const char *debuglink_file,
			    GElf_Word debuglink_crc, char **debuginfo_file_name);

#endif /* RIP_READ_SYMCACHE_H */
