/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tools/cmd-calltree.c - `rip calltree`: the call graph that leads to the
 * heap blocks a traced program never freed (with --all: to every block it
 * allocated), as a Graphviz dot file, or SVG through `dot -Tsvg`.
 *
 * The graph itself (functions, their figures, what is kept and what goes
 * into "(others)") is analysis/calltree.c's; this file reads the options,
 * opens the trace and the symbols, and writes the graph.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "analysis/calltree.h"
#include "analysis/roles.h"
#include "analysis/stacks.h"
#include "read/evsource.h"
#include "read/sym.h"
#include "tools/progress.h"
#include "tools/format.h"
#include "tools/opts.h"
#include "tools/tool.h"

static int cmd_calltree(int argc, char **argv);

static const struct rip_cmd cmd_calltree_def = {
	.name = "calltree",
	.run = cmd_calltree,
	.summary = "call graph of the unreleased (or all) allocations, as Graphviz dot",
	.usage = "usage: rip calltree [options] TRACE-OR-TARGET [-o FILE.dot]\n"
		 "\n"
		 "Read the memory events of a trace (rip run --mem) and write the call graph\n"
		 "that leads to the heap blocks never freed: one node per function of the\n"
		 "backtraces (symbolized, merged by function), an edge per caller -> callee,\n"
		 "with the bytes and blocks below each node (inclusive) and through each\n"
		 "edge.  Functions under 1% of the bytes are collapsed into one \"(others)\"\n"
		 "node; every figure stays exact.  TRACE-OR-TARGET is a trace directory, a\n"
		 "pid or a ring file.\n"
		 "\n"
		 "  -o, --output=FILE     write to FILE (default, or -: standard output)\n"
		 "  -a, --all             every allocation made, freed or not\n"
		 "  -k, --kind=NAME       the resources of a tracing module's kind instead of\n"
		 "                        heap memory (rip run --module: gobject, sqlite3-stmt,\n"
		 "                        memtransfer...; with a counter kind, use --all)\n"
		 "  -n, --top=N           keep the N heaviest functions (instead of >= 1%)\n"
		 "  -m, --min-bytes=N     keep the functions with N bytes or more (instead of\n"
		 "                        >= 1%; k, m, g suffixes); with --top, both must hold\n"
		 "      --through=FUNC    only the stacks that pass through FUNC: a function,\n"
		 "                        a glob (parse_*) or FILE:LINE; repeatable (any of\n"
		 "                        them)\n"
		 "      --svg             write SVG: run Graphviz's dot -Tsvg on the graph\n"
		 "      --sysroot=DIR     find the traced host's binaries under DIR\n"
		 "      --debug-dir=DIR   look for separate debug files in DIR first\n"
		 "  -h, --help            this text\n"
		 "\n"
		 "Exit status: 0 the graph was written, 1 failure (no such trace, corrupt\n"
		 "trace, --svg without Graphviz), 2 usage error.\n",
};

RIP_COMMAND(cmd_calltree_def);

#define CT_LABEL_MAX 60 /* longer function names are cut in labels (full in tooltip) */

struct ct_args {
	struct ct_opts an; /* what the graph keeps */
	bool svg;
	const char *out, *sysroot, *debug_dir, *target;
	const char *through[THR_MAX]; /* --through */
	size_t nthrough;
};

/* ---- dot ----------------------------------------------------------------------------- */

/* s as the inside of a dot string, cut to max bytes (0: whole) with "...". */
static void ct_dot_str(FILE *out, const char *s, size_t max)
{
	size_t len = strlen(s);
	bool cut = max && len > max;

	for (size_t i = 0; i < (cut ? max : len); i++) {
		unsigned char c = (unsigned char)s[i];

		if (c == '"' || c == '\\')
			fputc('\\', out);
		if (c < 0x20)
			c = ' ';
		fputc(c, out);
	}
	if (cut)
		fputs("...", out);
}

static double ct_share(const struct ct *ct, uint64_t bytes)
{
	return ct->total_bytes ? (double)bytes / (double)ct->total_bytes : 0.0;
}

static void ct_dot(const struct ct *ct, struct evs *s, const struct thr *thr, FILE *out)
{
	const struct rip_file_hdr *h = evs_file_hdr(s);
	const char *what = ct->o.kind ? (ct->o.all ? "made or moved" : "never released")
			   : ct->o.all ? "allocated"
				       : "never freed";
	char comm[sizeof(h->comm) + 1], b[64];

	memcpy(comm, h->comm, sizeof(h->comm));
	comm[sizeof(h->comm)] = 0;
	fputs("digraph calltree {\n", out);
	if (thr) {
		fputs("\t// ", out);
		opts_through_text(out, thr);
	}
	fprintf(out, "\tgraph [label=\"rip calltree: %s in %" PRIu64 " block%s %s, pid %d (",
		fmt_bytes_exact(ct->total_bytes, b, sizeof(b)), ct->total_count,
		ct->total_count == 1 ? "" : "s", what, (int)h->pid);
	ct_dot_str(out, comm, 0);
	fputc(')', out);
	for (size_t i = 0; thr && i < thr_count(thr); i++) {
		fputs(i ? " or " : "\\nthrough ", out);
		ct_dot_str(out, thr_info(thr, i)->pat, 0);
	}
	fprintf(out, "\", labelloc=t, fontname=\"sans-serif\", total_bytes=%" PRIu64
		     ", total_count=%" PRIu64 ", mode=\"%s\"",
		ct->total_bytes, ct->total_count, ct->o.all ? "all" : "unreleased");
	if (thr) {
		fputs(", through=\"", out);
		for (size_t i = 0; i < thr_count(thr); i++) {
			if (i)
				fputc(';', out);
			ct_dot_str(out, thr_info(thr, i)->pat, 0);
		}
		fputc('"', out);
	}
	fputs("];\n", out);
	fputs("\tnode [shape=box, style=\"rounded,filled\", fontname=\"sans-serif\"];\n"
	      "\tedge [fontname=\"sans-serif\", fontsize=10];\n",
	      out);
	for (size_t i = 0; i < ct->nnodes; i++) {
		const struct ct_node *x = &ct->nodes[i];
		double sh = ct_share(ct, x->bytes);

		fprintf(out, "\tn%zu [label=\"", i);
		ct_dot_str(out, x->name, CT_LABEL_MAX);
		fprintf(out, "\\n%s (%.1f%%)\\nin %" PRIu64 " block%s", fmt_bytes_exact(x->bytes, b, sizeof(b)),
			sh * 100, x->count, x->count == 1 ? "" : "s");
		if (x->self_count)
			fprintf(out, "\\nself: %s", fmt_bytes_exact(x->self_bytes, b, sizeof(b)));
		fputs("\", tooltip=\"", out);
		ct_dot_str(out, x->name, 0);
		fputs("\", func=\"", out);
		ct_dot_str(out, x->name, 0);
		fprintf(out,
			"\", bytes=%" PRIu64 ", count=%" PRIu64 ", self_bytes=%" PRIu64
			", self_count=%" PRIu64 ", fillcolor=\"0.000 %.3f 1.000\"%s];\n",
			x->bytes, x->count, x->self_bytes, x->self_count, 0.08 + 0.6 * sh,
			strcmp(x->name, "(others)") || i + 1 != ct->nnodes ? "" : ", style=\"rounded,dashed\"");
	}
	for (size_t i = 0; i < ct->nedges; i++) {
		const struct ct_edge *e = &ct->edges[i];

		fprintf(out,
			"\tn%" PRIu32 " -> n%" PRIu32 " [label=\"%s\\n%" PRIu64 " block%s\", bytes=%" PRIu64
			", count=%" PRIu64 ", penwidth=%.2f];\n",
			e->from, e->to, fmt_bytes_exact(e->bytes, b, sizeof(b)), e->count,
			e->count == 1 ? "" : "s", e->bytes, e->count, 1 + 4 * ct_share(ct, e->bytes));
	}
	if (!ct->nnodes)
		fprintf(out, "\tempty [shape=plaintext, style=\"\", label=\"no %s\"];\n",
			ct->o.all ? "allocations" : "unreleased allocations");
	fputs("}\n", out);
}

/* ---- output -------------------------------------------------------------------------- */

/* Is dot in PATH? */
static bool ct_have_dot(void)
{
	const char *path = getenv("PATH");
	char buf[PATH_MAX];

	if (!path || !*path)
		path = "/usr/local/bin:/usr/bin:/bin";
	while (*path) {
		const char *end = strchr(path, ':');
		size_t len = end ? (size_t)(end - path) : strlen(path);

		if (len && len + 5 < sizeof(buf)) {
			memcpy(buf, path, len);
			memcpy(buf + len, "/dot", 5);
			if (!access(buf, X_OK))
				return true;
		}
		path += len + (end ? 1 : 0);
	}
	return false;
}

static int ct_write_all(int fd, const char *p, size_t n)
{
	while (n) {
		ssize_t w = write(fd, p, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return -errno;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

/*
 * Pipe the dot text through dot -Tsvg into out (NULL: standard output).
 * The file is ours to create (tool_create), not dot's: dot's -o would
 * follow a link another user put in /tmp and truncate what it leads to.
 */
static int ct_svg(const char *text, size_t len, const char *out)
{
	char *argv[] = { "dot", "-Tsvg", NULL };
	void (*old)(int);
	int fds[2], st, ret, ofd = 1;
	FILE *of = NULL;
	pid_t pid;

	fflush(stdout);
	if (out) {
		of = tool_create(out, true);
		if (!of) {
			ret = -errno;
			tool_err("cannot create %s: %s", out, tool_create_why(errno));
			return ret;
		}
		ofd = fileno(of);
	}
	if (pipe2(fds, O_CLOEXEC)) {
		ret = -errno;
		goto out;
	}
	pid = fork();
	if (pid < 0) {
		ret = -errno;
		close(fds[0]);
		close(fds[1]);
		goto out;
	}
	if (!pid) {
		if (dup2(fds[0], 0) < 0 || (ofd != 1 && dup2(ofd, 1) < 0))
			_exit(127);
		execvp("dot", argv);
		_exit(127);
	}
	close(fds[0]);
	old = signal(SIGPIPE, SIG_IGN);
	ret = ct_write_all(fds[1], text, len);
	close(fds[1]);
	signal(SIGPIPE, old);
	while (waitpid(pid, &st, 0) < 0) {
		if (errno != EINTR) {
			ret = -errno;
			goto out;
		}
	}
	if (!WIFEXITED(st) || WEXITSTATUS(st)) {
		tool_err("dot -Tsvg failed (%s %d)%s", WIFEXITED(st) ? "exit" : "signal",
			 WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st),
			 ret ? ": it did not read the whole graph" : "");
		ret = -EIO;
	}
out:
	if (of && fclose(of) && !ret) {
		ret = -errno;
		tool_err("cannot write %s: %s", out, strerror(errno));
	}
	return ret;
}

static int ct_output(const struct ct_args *a, const char *text, size_t len)
{
	const char *path = a->out && strcmp(a->out, "-") ? a->out : NULL;
	FILE *f;

	if (a->svg)
		return ct_svg(text, len, path);
	if (!path) {
		if (fwrite(text, 1, len, stdout) != len || fflush(stdout)) {
			tool_err("write error: %s", strerror(errno));
			return -EIO;
		}
		return 0;
	}
	f = tool_create(path, true);
	if (!f) {
		tool_err("cannot create %s: %s", path, tool_create_why(errno));
		return -errno;
	}
	if (fwrite(text, 1, len, f) != len || fflush(f) || ferror(f)) {
		tool_err("cannot write %s: %s", path, strerror(errno));
		fclose(f);
		return -EIO;
	}
	if (fclose(f)) {
		tool_err("cannot write %s: %s", path, strerror(errno));
		return -EIO;
	}
	return 0;
}

/* ---- the command --------------------------------------------------------------------- */

enum { CT_OPT_SVG = 0x100, CT_OPT_SYSROOT, CT_OPT_DEBUG_DIR, CT_OPT_THROUGH };

static int ct_parse(int argc, char **argv, struct ct_args *o)
{
	static const struct option longopts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "all", no_argument, NULL, 'a' },
		{ "kind", required_argument, NULL, 'k' },
		{ "top", required_argument, NULL, 'n' },
		{ "min-bytes", required_argument, NULL, 'm' },
		{ "svg", no_argument, NULL, CT_OPT_SVG },
		{ "through", required_argument, NULL, CT_OPT_THROUGH },
		{ "sysroot", required_argument, NULL, CT_OPT_SYSROOT },
		{ "debug-dir", required_argument, NULL, CT_OPT_DEBUG_DIR },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	int c;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "o:ak:n:m:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'o':
			o->out = optarg;
			break;
		case 'a':
			o->an.all = true;
			break;
		case 'k':
			o->an.kind = optarg;
			break;
		case 'n':
			if (tool_parse_size(optarg, &o->an.top) || !o->an.top)
				return tool_usage_error(&cmd_calltree_def,
							"--top wants a number > 0, not '%s'", optarg);
			o->an.top_set = true;
			break;
		case 'm':
			if (tool_parse_size(optarg, &o->an.min_bytes))
				return tool_usage_error(&cmd_calltree_def,
							"--min-bytes wants a size like 4096 or 1m, "
							"not '%s'",
							optarg);
			o->an.min_set = true;
			break;
		case CT_OPT_SVG:
			o->svg = true;
			break;
		case CT_OPT_THROUGH: {
			int ret = opts_through_arg(&cmd_calltree_def, optarg, o->through,
						   &o->nthrough);

			if (ret)
				return ret;
			break;
		}
		case CT_OPT_SYSROOT:
			o->sysroot = optarg;
			break;
		case CT_OPT_DEBUG_DIR:
			o->debug_dir = optarg;
			break;
		case 'h':
			tool_help(&cmd_calltree_def);
			return -1;
		default:
			return tool_bad_option(&cmd_calltree_def, argv, longopts);
		}
	}
	if (optind + 1 != argc)
		return tool_usage_error(&cmd_calltree_def,
					optind == argc ? "which trace? give a trace directory (rip "
							 "run --mem -o DIR), a pid or a ring file"
						       : "one TRACE-OR-TARGET only");
	o->target = argv[optind];
	return 0;
}

/* Does the trace declare a module kind of that name (rip run --module)? */
static bool ct_has_kind(const struct ev_types *types, const char *name)
{
	for (uint32_t k = 0; k < EV_MAX_TYPES; k++) {
		const char *n = role_kind_name(types, k);

		if (n && !strcmp(n, name))
			return true;
	}
	return false;
}

static int cmd_calltree(int argc, char **argv)
{
	char err[RR_ERR_MAX + PATH_MAX];
	struct ct_args a = { 0 };
	struct evs_totals tot;
	struct rip_sym *sym = NULL;
	struct evs *s = NULL;
	struct ct *ct = NULL;
	struct thr *thr = NULL;
	char *text = NULL;
	size_t tlen = 0;
	FILE *mem = NULL;
	int ret, status = EXIT_FAIL;

	ret = ct_parse(argc, argv, &a);
	if (ret)
		return ret < 0 ? EXIT_OK : ret;
	if (a.svg && !ct_have_dot()) {
		tool_err("--svg needs Graphviz's dot, which is not in PATH: install it (apt-get "
			 "install graphviz), or write the .dot file and render it elsewhere");
		return EXIT_FAIL;
	}
	tool_heap_big();
	ret = tool_evs_open(a.target, &s, err, sizeof(err));
	if (ret) {
		tool_err("%s", err);
		return EXIT_FAIL;
	}
	ct = ct_new(&a.an);
	if (!ct)
		goto nomem;
	progress_bar(s, "rip calltree");
	ret = ct_run(ct, s, err, sizeof(err));
	if (ret == -ENOMEM)
		goto nomem;
	if (ret) {
		tool_err("%s", err);
		goto out;
	}
	if (a.an.kind && !ct_has_kind(evs_types(s), a.an.kind)) {
		/* a mistyped kind would draw an empty graph that reads as "nothing leaked" */
		status = tool_usage_error(&cmd_calltree_def,
					  "--kind is a kind %s names (rip run --module), not '%s'",
					  evs_source(s), a.an.kind);
		goto out;
	}
	evs_totals(s, &tot);
	if (tot.discarded || tot.lost_packets || tot.torn)
		tool_err("warning: this trace is incomplete (%" PRIu64 " events discarded, %" PRIu64
			 " packets lost): the graph may miss allocations%s",
			 tot.discarded, tot.lost_packets + tot.torn,
			 a.an.all ? "" : " or show freed ones");
	if ((ct->nstacks || a.nthrough) &&
	    stk_sym_open(s, a.sysroot, a.debug_dir, &sym, err, sizeof(err))) {
		tool_err("%s", err);
		goto out;
	}
	if (a.nthrough) {
		/* only the stacks through the functions asked for; one named on none is an error */
		if (opts_through_new(a.through, a.nthrough, &thr))
			goto out;
		if (ct_through(ct, thr, sym, err, sizeof(err)))
			goto nomem;
		if (opts_through_check(thr, sym, ct_bts(ct), evs_source(s)))
			goto out;
	}
	if (ct_graph(ct, sym, err, sizeof(err)))
		goto nomem;
	mem = open_memstream(&text, &tlen);
	if (!mem)
		goto nomem;
	ct_dot(ct, s, thr, mem);
	if (fclose(mem))
		goto nomem;
	if (ct_output(&a, text, tlen))
		goto out;
	status = EXIT_OK;
	tool_exit_unfreed(status);
	goto out;
nomem:
	tool_err("out of memory");
out:
	free(text);
	if (sym)
		rip_sym_free(sym);
	thr_free(thr);
	ct_free(ct);
	tool_evs_close(s);
	return status;
}
