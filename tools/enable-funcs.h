/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tools/enable-funcs.h - rip enable and rip disable of the category func in
 * a program built with -fpatchable-function-entry: the entries of its
 * functions (all, or those --functions=GLOB names) patched or unpatched
 * (read/patchable.h, record/patchreq.h), besides the category's bit.
 */
#ifndef RIP_TOOLS_ENABLE_FUNCS_H
#define RIP_TOOLS_ENABLE_FUNCS_H

#include <stdbool.h>
#include <stddef.h>

#include "read/ringfile.h"

#define ENF_MAX_GLOBS 32

/*
 * Patch (on) or unpatch the functions of the process of f that globs pick
 * (fnmatch on their names; "!GLOB" leaves them out; none: all of them).
 * Prints what happened unless quiet.  0: done or nothing to do (no
 * patchable function); else the exit status, the message printed.
 */
int enf_run(struct rr_file *f, bool on, const char *const *globs, size_t nglobs, bool quiet);

#endif /* RIP_TOOLS_ENABLE_FUNCS_H */
