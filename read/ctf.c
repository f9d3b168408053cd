/* SPDX-License-Identifier: Apache-2.0 */
/*
 * read/ctf.c - the TSDL (CTF 1.8) metadata of a recorded trace.
 *
 * The stream files hold the ring's own bytes, so the metadata describes
 * exactly what lib/events.c writes (rip/abi.h):
 *
 *   packet header   u32 magic, u32 stream_id, u64 stream_instance_id
 *   packet context  the rest of struct rip_packet, with the names CTF
 *                   readers give a meaning to (timestamp_begin/end,
 *                   content_size, packet_size, packet_seq_num,
 *                   events_discarded) and ours (tid, coro, events, open)
 *   event header    LTTng's compact form: one little-endian u32 holding a
 *                   5-bit id and the 27 low bits of the clock; id 31
 *                   escapes to u32 id + u64 clock at bytes 1 and 5 (13 bytes)
 *   event fields    byte-aligned little-endian integers of the declared
 *                   widths, and NUL-terminated strings
 *
 * Every integer is byte-aligned ("align = 8" is in bits), i.e. packed, as
 * the writer stores them.  The clock counts the file's ticks at clock_hz;
 * its offset makes babeltrace2 print wall-clock time:
 *
 *   realtime_ns = clock_base_ns + (ticks - clock_base_ticks) * 1e9 / clock_hz
 *                 + realtime_offset
 *
 * Names from the traced program are made safe here: event names are
 * escaped as TSDL strings, field names become identifiers (invalid bytes
 * to '_', keywords and leading underscores or digits behind a '_', which
 * CTF readers strip again), and duplicates get a numeric suffix.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "read/ringfile.h"
#include "read/trace.h"

#ifndef RIP_VERSION_STRING
#define RIP_VERSION_STRING "0.0.0"
#endif

/* TSDL keywords (CTF 1.8 section 7.1 and the babeltrace2 lexer): never field names. */
static const char *const ctf_keywords[] = {
	"align",    "callsite", "const",	 "char",      "clock",	  "double", "enum",
	"env",	    "event",	"floating_point", "float",     "integer", "int",    "long",
	"short",    "signed",	"stream",	 "string",    "struct",	  "trace",  "typealias",
	"typedef",  "unsigned", "variant",	 "void",      "_Bool",	  "_Complex",
	"_Imaginary", "true",	"false",	 "TRUE",      "FALSE",
};

/* ---- identities -------------------------------------------------------------------- */

static uint64_t ctf_hash(uint64_t h, const void *data, size_t len)
{
	const unsigned char *p = data;

	/* FNV-1a, then a final mix (splitmix64) so that close inputs spread */
	for (size_t i = 0; i < len; i++) {
		h ^= p[i];
		h *= 0x100000001b3ull;
	}
	h ^= h >> 30;
	h *= 0xbf58476d1ce4e5b9ull;
	h ^= h >> 27;
	h *= 0x94d049bb133111ebull;
	h ^= h >> 31;
	return h;
}

/* A name-based UUID (RFC 9562 version 8: custom) from two 64-bit hashes. */
static void ctf_uuid(char out[37], uint64_t a, uint64_t b)
{
	unsigned char u[16];

	for (int i = 0; i < 8; i++) {
		u[i] = (unsigned char)(a >> (56 - 8 * i));
		u[8 + i] = (unsigned char)(b >> (56 - 8 * i));
	}
	u[6] = (unsigned char)((u[6] & 0x0f) | 0x80); /* version 8 */
	u[8] = (unsigned char)((u[8] & 0x3f) | 0x80); /* RFC variant */
	snprintf(out, 37,
		 "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", u[0],
		 u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13],
		 u[14], u[15]);
}

/*
 * The trace: the process (pid, start time, boot id: the first half) and
 * what the trace holds (its counts: the second half).  babeltrace2 merges
 * the traces it is given that share a UUID into one, dropping packets it
 * sees twice; that is right for identical copies, but two snapshots of one
 * process taken at different times overlap without being identical (the
 * open packet, the losses before the oldest packet) and must stay apart.
 */
static void ctf_trace_uuid(const struct trace_info *info, char out[37])
{
	const struct rip_file_hdr *h = &info->idx.file;
	const struct trace_index_hdr *x = &info->idx;
	uint64_t a = 0xcbf29ce484222325ull, b = 0x84222325cbf29ce4ull;

	a = ctf_hash(a, &h->pid, sizeof(h->pid));
	a = ctf_hash(a, &h->start_ticks, sizeof(h->start_ticks));
	a = ctf_hash(a, h->boot_id, strnlen(h->boot_id, sizeof(h->boot_id)));
	b = ctf_hash(b ^ a, &h->create_realtime, sizeof(h->create_realtime));
	b = ctf_hash(b, &x->events, sizeof(x->events));
	b = ctf_hash(b, &x->discarded, sizeof(x->discarded));
	b = ctf_hash(b, &x->lost_packets, sizeof(x->lost_packets));
	b = ctf_hash(b, &x->nstreams, sizeof(x->nstreams));
	b = ctf_hash(b, &x->flags, sizeof(x->flags));
	b = ctf_hash(b, &h->exit_ts, sizeof(h->exit_ts));
	ctf_uuid(out, a, b);
}

/* The clock: the same counter for every process of a boot (TSC or MONOTONIC_RAW). */
static void ctf_clock_uuid(const struct rip_file_hdr *h, char out[37])
{
	uint64_t a = 0x6c62272e07bb0142ull, b = 0x62b821756295c58dull;

	a = ctf_hash(a, h->boot_id, strnlen(h->boot_id, sizeof(h->boot_id)));
	a = ctf_hash(a, &h->clock_kind, sizeof(h->clock_kind));
	b = ctf_hash(b ^ a, "rip clock", 9);
	ctf_uuid(out, a, b);
}

/* ---- text --------------------------------------------------------------------------- */

/* A TSDL string literal: quotes and backslashes escaped, other odd bytes as octal. */
static void ctf_str(FILE *out, const char *s, size_t max)
{
	fputc('"', out);
	for (size_t i = 0; i < max && s[i]; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c == '"' || c == '\\')
			fprintf(out, "\\%c", c);
		else if (c < 0x20 || c >= 0x7f)
			fprintf(out, "\\%03o", c);
		else
			fputc(c, out);
	}
	fputc('"', out);
}

static bool ctf_is_keyword(const char *s)
{
	for (size_t i = 0; i < sizeof(ctf_keywords) / sizeof(ctf_keywords[0]); i++)
		if (!strcmp(s, ctf_keywords[i]))
			return true;
	return false;
}

/*
 * Turn a field name into a TSDL identifier that reads back as close to
 * the original as CTF allows.  A leading '_' is stripped by CTF readers,
 * which is what lets us escape keywords, digits and underscores.
 */
static void ctf_ident(char *out, size_t len, const char *name, size_t max, uint32_t index)
{
	char tmp[RIP_FIELD_NAME_MAX + 1];
	size_t n = 0;

	for (size_t i = 0; i < max && name[i] && n < sizeof(tmp) - 1; i++) {
		char c = name[i];

		tmp[n++] = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
					   (c >= '0' && c <= '9') || c == '_'
				   ? c
				   : '_';
	}
	tmp[n] = 0;
	if (!n)
		snprintf(out, len, "field%u", index);
	else if (tmp[0] == '_' || (tmp[0] >= '0' && tmp[0] <= '9') || ctf_is_keyword(tmp))
		snprintf(out, len, "_%s", tmp);
	else
		snprintf(out, len, "%s", tmp);
}

static const char *ctf_field_type(uint32_t type)
{
	switch (type) {
	case RIP_FT_U8:
		return "uint8_t";
	case RIP_FT_U16:
		return "uint16_t";
	case RIP_FT_U32:
		return "uint32_t";
	case RIP_FT_U64:
		return "uint64_t";
	case RIP_FT_S8:
		return "int8_t";
	case RIP_FT_S16:
		return "int16_t";
	case RIP_FT_S32:
		return "int32_t";
	case RIP_FT_S64:
		return "int64_t";
	case RIP_FT_HEX64:
		return "uint64_hex_t";
	case RIP_FT_STRING:
		return "string";
	case RIP_FT_HEX64_ARRAY:
		return "uint64_hex_t"; /* a sequence: see ctf_event */
	default:
		return NULL;
	}
}

/* ---- the blocks --------------------------------------------------------------------- */

static void ctf_counts(FILE *out, const struct trace_info *info)
{
	fprintf(out, "\tevents_recorded = %" PRIu64 ";\n", info->idx.events & INT64_MAX);
	fprintf(out, "\tevents_discarded = %" PRIu64 ";\n", info->idx.discarded & INT64_MAX);
	fprintf(out, "\tpackets_lost = %" PRIu64 ";\n", info->idx.lost_packets & INT64_MAX);
}

static void ctf_env(FILE *out, const struct trace_info *info, bool live)
{
	const struct rip_file_hdr *h = &info->idx.file;
	unsigned major = 0, minor = 0;
	char host[256] = "";

	/* the traced host, as the ring file recorded it; this one's for older files */
	if (h->host[0])
		snprintf(host, sizeof(host), "%s", h->host);
	else if (gethostname(host, sizeof(host) - 1))
		host[0] = 0;
	host[sizeof(host) - 1] = 0;
	sscanf(RIP_VERSION_STRING, "%u.%u", &major, &minor);
	fputs("env {\n", out);
	fputs("\thostname = ", out);
	ctf_str(out, host, sizeof(host));
	fputs(";\n\ttracer_name = \"librip\";\n", out);
	fprintf(out, "\ttracer_major = %u;\n\ttracer_minor = %u;\n", major, minor);
	fprintf(out, "\trip_format_version = %u;\n", h->version);
	fprintf(out, "\tpid = %" PRId32 ";\n", h->pid > 0 ? h->pid : 0);
	fprintf(out, "\tppid = %" PRId32 ";\n", h->ppid > 0 ? h->ppid : 0);
	fputs("\tprocname = ", out);
	ctf_str(out, h->comm, sizeof(h->comm));
	fputs(";\n\texe = ", out);
	ctf_str(out, h->exe, sizeof(h->exe));
	fputs(";\n\tboot_id = ", out);
	ctf_str(out, h->boot_id, sizeof(h->boot_id));
	fprintf(out, ";\n\tclock_kind = \"%s\";\n",
		h->clock_kind == RIP_CLOCK_TSC ? "tsc" : "monotonic_raw");
	fprintf(out, "\ttrace_type = \"%s\";\n",
		info->idx.flags & TRACE_F_SNAPSHOT ? "snapshot" : "stream");
	fprintf(out, "\tprocess_dead = %d;\n", info->idx.flags & TRACE_F_DEAD ? 1 : 0);
	fprintf(out, "\tmode = \"%s\";\n",
		h->ev_mode == RIP_MODE_DISCARD ? "discard"
		: h->ev_mode == RIP_MODE_BLOCK ? "block"
					       : "overwrite");
	/* streamed: the counts are known at the end only (ctf_write_index_env) */
	if (!live)
		ctf_counts(out, info);
	fputs("};\n\n", out);
}

/*
 * The clock.  CTF: ns from origin = offset_s * 1e9 + (offset + ticks) * 1e9 / freq,
 * so offset_s * freq + offset = realtime_at_base * freq / 1e9 - clock_base_ticks
 * (in cycles), split into whole seconds and a remainder in [0, freq).
 */
static int ctf_clock(FILE *out, const struct trace_info *info, const char *name)
{
	const struct rip_file_hdr *h = &info->idx.file;
	uint64_t hz, base_ticks, base_ns;
	__int128 base_rt, cycles;
	int64_t offset_s, offset;
	char uuid[37];

	/*
	 * The line through the file's calibration pairs when they fit one
	 * (rr_clock_line: a rate measured over the whole run); CTF has no way
	 * to say more.  Our readers follow each segment when the rate changed.
	 */
	rr_clock_line(h, &hz, &base_ticks, &base_ns);
	if (!hz || hz > (uint64_t)INT64_MAX || base_ns > (uint64_t)INT64_MAX)
		return -EINVAL;
	base_rt = (__int128)base_ns + h->realtime_offset;
	cycles = base_rt * (__int128)hz / 1000000000 - (__int128)base_ticks;
	offset_s = (int64_t)(cycles / (__int128)hz);
	offset = (int64_t)(cycles % (__int128)hz);
	if (offset < 0) {
		offset += (int64_t)hz;
		offset_s--;
	}
	ctf_clock_uuid(h, uuid);
	fprintf(out,
		"clock {\n"
		"\tname = %s;\n"
		"\tuuid = \"%s\";\n"
		"\tdescription = \"%s\";\n"
		"\tfreq = %" PRIu64 ";\n"
		"\tprecision = 1;\n"
		"\toffset_s = %" PRId64 ";\n"
		"\toffset = %" PRId64 ";\n"
		"\tabsolute = false;\n"
		"};\n\n",
		name, uuid,
		h->clock_kind == RIP_CLOCK_TSC ? "x86 invariant TSC (rdtsc)"
					       : "CLOCK_MONOTONIC_RAW nanoseconds",
		hz, offset_s, offset);
	return 0;
}

static void ctf_typealiases(FILE *out, const char *clock)
{
	fputs("typealias integer { size = 5; align = 1; signed = false; } := uint5_t;\n"
	      "typealias integer { size = 8; align = 8; signed = false; } := uint8_t;\n"
	      "typealias integer { size = 16; align = 8; signed = false; } := uint16_t;\n"
	      "typealias integer { size = 32; align = 8; signed = false; } := uint32_t;\n"
	      "typealias integer { size = 64; align = 8; signed = false; } := uint64_t;\n"
	      "typealias integer { size = 64; align = 8; signed = false; base = 16; } "
	      ":= uint64_hex_t;\n"
	      "typealias integer { size = 8; align = 8; signed = true; } := int8_t;\n"
	      "typealias integer { size = 16; align = 8; signed = true; } := int16_t;\n"
	      "typealias integer { size = 32; align = 8; signed = true; } := int32_t;\n"
	      "typealias integer { size = 64; align = 8; signed = true; } := int64_t;\n",
	      out);
	fprintf(out,
		"typealias integer { size = 27; align = 1; signed = false; "
		"map = clock.%s.value; } := uint27_clock_t;\n"
		"typealias integer { size = 64; align = 8; signed = false; "
		"map = clock.%s.value; } := uint64_clock_t;\n\n",
		clock, clock);
}

static void ctf_stream(FILE *out)
{
	fputs("stream {\n"
	      "\tid = 0;\n"
	      "\t/* struct rip_packet after the header; sizes in bits */\n"
	      "\tpacket.context := struct {\n"
	      "\t\tuint64_clock_t timestamp_begin;\n"
	      "\t\tuint64_clock_t timestamp_end;\n"
	      "\t\tuint64_t content_size;\n"
	      "\t\tuint64_t packet_size;\n"
	      "\t\tuint64_t packet_seq_num;\n"
	      "\t\tuint64_t events_discarded;\n"
	      "\t\tint32_t tid;\n"
	      "\t\tuint32_t coro;\n"
	      "\t\tuint32_t events;\n"
	      "\t\tuint32_t open;\n"
	      "\t};\n"
	      "\t/* u32 = id | ts27 << 5, or byte 31, u32 id, u64 ts (13 bytes) */\n"
	      "\tevent.header := struct {\n"
	      "\t\tenum : uint5_t { compact = 0 ... 30, extended = 31 } id;\n"
	      "\t\tvariant <id> {\n"
	      "\t\t\tstruct { uint27_clock_t timestamp; } compact;\n"
	      "\t\t\tstruct { uint32_t id; uint64_clock_t timestamp; } extended;\n"
	      "\t\t} v;\n"
	      "\t} align(8);\n"
	      "};\n\n",
	      out);
}

int ctf_write_event(FILE *out, const struct ev_type *t)
{
	char names[RIP_EVENT_MAX_FIELDS][RIP_FIELD_NAME_MAX + 16];

	fprintf(out, "event {\n\tname = ");
	ctf_str(out, t->name, sizeof(t->name));
	fprintf(out, ";\n\tid = %u;\n\tstream_id = 0;\n\tfields := struct {\n", t->id);
	for (uint32_t i = 0; i < t->nfields && i < RIP_EVENT_MAX_FIELDS; i++) {
		const char *type = ctf_field_type(t->fields[i].type);
		char base[RIP_FIELD_NAME_MAX + 8];
		unsigned dup = 1;

		if (!type)
			return -EINVAL;
		ctf_ident(base, sizeof(base), t->fields[i].name, sizeof(t->fields[i].name), i);
		snprintf(names[i], sizeof(names[i]), "%s", base);
		/* unique within the event, sanitizing may have merged two names */
		for (uint32_t j = 0; j < i; j++) {
			if (strcmp(names[i], names[j]))
				continue;
			snprintf(names[i], sizeof(names[i]), "%s_%u", base, ++dup);
			j = UINT32_MAX; /* start over: the new name may clash too */
		}
		if (t->fields[i].type == RIP_FT_HEX64_ARRAY)
			/* the count, then the sequence it sizes */
			fprintf(out, "\t\tuint32_t _%s_length;\n\t\t%s %s[_%s_length];\n", names[i],
				type, names[i], names[i]);
		else
			fprintf(out, "\t\t%s %s;\n", type, names[i]);
	}
	fputs("\t};\n};\n\n", out);
	return 0;
}

int ctf_write_head(FILE *out, const struct trace_info *info, bool live)
{
	const struct rip_file_hdr *h = &info->idx.file;
	const char *clock = h->clock_kind == RIP_CLOCK_TSC ? "tsc" : "monotonic_raw";
	char uuid[37];

	ctf_trace_uuid(info, uuid);
	fputs("/* CTF 1.8 */\n\n", out);
	fprintf(out,
		"/*\n"
		" * librip %s of pid %" PRId32 ", written by rip " RIP_VERSION_STRING ".\n"
		" * The stream files are the packets of the process's event rings;\n"
		" * see rip/abi.h and doc/format.md for their layout.\n"
		" */\n\n",
		info->idx.flags & TRACE_F_SNAPSHOT ? "snapshot" : "recorded trace", h->pid);
	ctf_typealiases(out, clock);
	fprintf(out,
		"trace {\n"
		"\tmajor = 1;\n"
		"\tminor = 8;\n"
		"\tuuid = \"%s\";\n"
		"\tbyte_order = le;\n"
		"\tpacket.header := struct {\n"
		"\t\tuint32_t magic;\n"
		"\t\tuint32_t stream_id;\n"
		"\t\tuint64_t stream_instance_id;\n"
		"\t};\n"
		"};\n\n",
		uuid);
	ctf_env(out, info, live);
	if (ctf_clock(out, info, clock))
		return -EINVAL;
	ctf_stream(out);
	return 0;
}

int ctf_write_metadata(FILE *out, const struct trace_info *info)
{
	int ret = ctf_write_head(out, info, false);

	if (ret)
		return ret;
	for (uint32_t id = 0; id < EV_MAX_TYPES; id++) {
		if (!info->types.t[id].valid)
			continue;
		ret = ctf_write_event(out, &info->types.t[id]);
		if (ret)
			return ret;
	}
	if (fflush(out) || ferror(out))
		return errno ? -errno : -EIO;
	return 0;
}

/* ---- the index in the metadata ----------------------------------------------------------- */

static const char ctf_b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

int ctf_write_index_env(FILE *out, const struct trace_info *info, const void *index, size_t len)
{
	const unsigned char *p = index;
	size_t chunks = (len + CTF_INDEX_CHUNK - 1) / CTF_INDEX_CHUNK;

	fputs("/* What the trace's .rip-index holds (rip/trace.h), base64 in chunks. */\n", out);
	fputs("env {\n", out);
	ctf_counts(out, info);
	fprintf(out, "\trip_index_bytes = %zu;\n\trip_index_chunks = %zu;\n", len, chunks);
	for (size_t c = 0; c < chunks; c++) {
		size_t end = (c + 1) * CTF_INDEX_CHUNK < len ? (c + 1) * CTF_INDEX_CHUNK : len;

		fprintf(out, "\trip_index_%zu = \"", c);
		for (size_t i = c * CTF_INDEX_CHUNK; i < end; i += 3) {
			uint32_t v = (uint32_t)p[i] << 16;
			size_t n = end - i < 3 ? end - i : 3;

			if (n > 1)
				v |= (uint32_t)p[i + 1] << 8;
			if (n > 2)
				v |= p[i + 2];
			fputc(ctf_b64[v >> 18], out);
			fputc(ctf_b64[(v >> 12) & 63], out);
			fputc(n > 1 ? ctf_b64[(v >> 6) & 63] : '=', out);
			fputc(n > 2 ? ctf_b64[v & 63] : '=', out);
		}
		fputs("\";\n", out);
	}
	fputs("};\n\n", out);
	if (fflush(out) || ferror(out))
		return errno ? -errno : -EIO;
	return 0;
}

static int ctf_b64_val(char c)
{
	const char *p = c ? strchr(ctf_b64, c) : NULL;

	return p ? (int)(p - ctf_b64) : -1;
}

/* Find `\tKEY = ` at a line start in text; the value after it, or NULL. */
static const char *ctf_find_key(const char *text, size_t len, const char *key)
{
	size_t kl = strlen(key);
	const char *p = text, *end = text + len;

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *line_end = nl ? nl : end;

		if ((size_t)(line_end - p) > kl + 4 && p[0] == '\t' && !memcmp(p + 1, key, kl) &&
		    !memcmp(p + 1 + kl, " = ", 3))
			return p + 1 + kl + 3;
		if (!nl)
			break;
		p = nl + 1;
	}
	return NULL;
}

int ctf_read_index(const char *text, size_t len, uint8_t **out, size_t *outlen, char *err,
		   size_t errlen)
{
	const char *v = ctf_find_key(text, len, "rip_index_bytes"), *end = text + len;
	unsigned long long bytes, chunks;
	uint8_t *buf;
	size_t got = 0;
	char key[32], *e;

	*out = NULL;
	*outlen = 0;
	if (!v)
		return rr_fail(err, errlen, -ENOENT, "no rip index in the metadata");
	bytes = strtoull(v, &e, 10);
	if (e == v || *e != ';' || !bytes || bytes > CTF_INDEX_MAX)
		return rr_fail(err, errlen, -EBADMSG, "bad rip_index_bytes in the metadata");
	v = ctf_find_key(text, len, "rip_index_chunks");
	chunks = v ? strtoull(v, &e, 10) : 0;
	if (!v || e == v || *e != ';' || chunks != (bytes + CTF_INDEX_CHUNK - 1) / CTF_INDEX_CHUNK)
		return rr_fail(err, errlen, -EBADMSG, "bad rip_index_chunks in the metadata");
	buf = malloc(bytes);
	if (!buf)
		return rr_fail(err, errlen, -ENOMEM, "out of memory");
	for (unsigned long long c = 0; c < chunks; c++) {
		size_t want = bytes - got < CTF_INDEX_CHUNK ? bytes - got : CTF_INDEX_CHUNK;
		size_t n = 0;

		snprintf(key, sizeof(key), "rip_index_%llu", c);
		v = ctf_find_key(text, len, key);
		if (!v || *v++ != '"')
			goto bad;
		while (v < end && *v != '"') {
			int a, b, cc, d;

			if (end - v < 4)
				goto bad;
			a = ctf_b64_val(v[0]);
			b = ctf_b64_val(v[1]);
			cc = v[2] == '=' ? 0 : ctf_b64_val(v[2]);
			d = v[3] == '=' ? 0 : ctf_b64_val(v[3]);
			if (a < 0 || b < 0 || cc < 0 || d < 0 || (v[2] == '=' && v[3] != '='))
				goto bad;
			uint32_t x = (uint32_t)a << 18 | (uint32_t)b << 12 | (uint32_t)cc << 6 |
				     (uint32_t)d;
			size_t k = v[2] == '=' ? 1 : v[3] == '=' ? 2 : 3;

			if (n + k > want)
				goto bad;
			buf[got + n] = (uint8_t)(x >> 16);
			if (k > 1)
				buf[got + n + 1] = (uint8_t)(x >> 8);
			if (k > 2)
				buf[got + n + 2] = (uint8_t)x;
			n += k;
			v += 4;
			if (k < 3)
				break;
		}
		if (v >= end || *v != '"' || n != want)
			goto bad;
		got += n;
	}
	*out = buf;
	*outlen = got;
	return 0;
bad:
	free(buf);
	return rr_fail(err, errlen, -EBADMSG, "corrupt rip index in the metadata");
}
