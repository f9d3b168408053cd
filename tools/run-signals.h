/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tools/run-signals.h - the signals sent to `rip run`, passed on to the
 * program once: not again when the sender sent them to the program too (a
 * process group's or a control group's kill), which a witness process in
 * rip's process group tells (tools/run-signals.c).
 */
#ifndef RIP_TOOLS_RUN_SIGNALS_H
#define RIP_TOOLS_RUN_SIGNALS_H

#include <signal.h>
#include <stdbool.h>

/*
 * Note which of the signals rip passes on (and SIGCHLD) it was started with
 * ignored (nohup's SIGHUP, a shell's SIGINT for a background job, SIG_IGN
 * set by the caller): they are ignored by rip, neither passed on nor taken
 * by the witness, and ignored in the program, as exec leaves them.  Before
 * any handler of rip's is installed.
 */
void runsig_inherit(void);
/* Was sig ignored when rip started (runsig_inherit)? */
bool runsig_ignored(int sig);

/*
 * Start the witness: a grandchild of ours in our process group that takes
 * the signals rip passes on and reports each, holding no descriptor but
 * its two pipes; it ends when rip does (or at runsig_stop).  Before the program is forked.  0 or -errno (then runsig_start
 * passes signals on as before: all but a terminal's).
 */
int runsig_witness(void);

/*
 * Pass the signals sent to us on to *child (0: none, it was reaped), from a
 * thread of ours; the calling thread (and threads it starts later) no
 * longer take them.  Signals are passed on after a short wait for the
 * witness, unless it saw the same one and the program is in our process
 * group (the kill reached it).  0 or -errno (nothing changed).
 */
int runsig_start(volatile sig_atomic_t *child);

/*
 * Stop passing signals on, and the witness; signals sent to rip from then on
 * stay blocked (ignored) until it exits.  Harmless when not started.
 */
void runsig_stop(void);

#endif
