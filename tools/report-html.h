/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tools/report-html.h - the page of `rip report --html` (report-html.c),
 * written around the data cmd-report.c gives it.
 */
#ifndef RIP_TOOLS_REPORT_HTML_H
#define RIP_TOOLS_REPORT_HTML_H

#include <stddef.h>
#include <stdio.h>

/*
 * Write the page to out around json, the report's data as one JSON
 * object (every '<' in it escaped on the way).  0, or -1 on a write error.
 */
int rh_page(FILE *out, const char *json, size_t len);

#endif /* RIP_TOOLS_REPORT_HTML_H */
