// SPDX-License-Identifier: Apache-2.0
/*
 * modules/gobject.c - the gobject tracing module (rip run --module=gobject):
 * GLib's GObject instances, reference-counted.  An object is acquired by
 * g_object_new (and g_object_new_valist, g_object_new_with_properties,
 * g_object_newv), gains a reference with g_object_ref (and g_object_ref_sink
 * of an object that is not floating) and loses one with g_object_unref; rip
 * leaks reports the objects whose count never reached 0, with the stack of
 * their creation and of the references still held.
 *
 * Written against <rip/module.h> only: no GLib header, no link to GLib
 * (the real functions come from the symbol tables, RIP_REAL), so the module
 * loads into any program and does nothing where GLib is absent.  What it
 * cannot see: objects GLib makes or references inside libgobject itself
 * (its calls do not go through the PLT), and g_object_new's own variadic
 * frame is replaced by this module's (the real g_object_new_valist is
 * called with the same arguments).
 */
#include <stdarg.h>
#include <stddef.h>

#include <rip/module.h>

RIP_MODULE("gobject", "GLib GObject instances: g_object_new, g_object_ref, g_object_unref");
RIP_KIND(gobject_kind, "gobject", "GObject instance", RIP_KIND_REFCOUNT);

#define EXPORT __attribute__((visibility("default")))

/* What GLib's ABI fixes: gobject/gtype.h (stable since 2.0). */
typedef size_t GType;
typedef struct {
	GType type;
	const char *type_name;
	unsigned int class_size;
	unsigned int instance_size;
} GTypeQuery;
typedef struct {
	GType g_type;
} GTypeClass;
typedef struct {
	GTypeClass *g_class;
} GTypeInstance;
typedef struct GParameter GParameter;

/* The instance size of obj's type (0 when GLib will not say): the bytes rip leaks shows. */
static unsigned long gobj_size(void *obj)
{
	static void (*query)(GType, GTypeQuery *);
	GTypeQuery q = { 0 };
	GTypeInstance *inst = obj;

	if (!obj || !inst->g_class || !RIP_REAL(query, "g_type_query"))
		return 0;
	query(inst->g_class->g_type, &q);
	return q.instance_size;
}

EXPORT void *g_object_new_valist(GType type, const char *first, va_list ap)
{
	static void *(*real)(GType, const char *, va_list);
	void *obj;

	if (!RIP_REAL(real, "g_object_new_valist"))
		return NULL;
	obj = real(type, first, ap);
	if (obj)
		rip_acquire(gobject_kind, obj, gobj_size(obj));
	return obj;
}

EXPORT void *g_object_new(GType type, const char *first, ...)
{
	static void *(*real)(GType, const char *, va_list);
	va_list ap;
	void *obj;

	/* the real g_object_new is variadic: its valist twin takes the same arguments */
	if (!RIP_REAL(real, "g_object_new_valist"))
		return NULL;
	va_start(ap, first);
	obj = real(type, first, ap);
	va_end(ap);
	if (obj)
		rip_acquire(gobject_kind, obj, gobj_size(obj));
	return obj;
}

EXPORT void *g_object_new_with_properties(GType type, unsigned int n, const char *names[],
					  const void *values)
{
	static void *(*real)(GType, unsigned int, const char *[], const void *);
	void *obj;

	if (!RIP_REAL(real, "g_object_new_with_properties"))
		return NULL;
	obj = real(type, n, names, values);
	if (obj)
		rip_acquire(gobject_kind, obj, gobj_size(obj));
	return obj;
}

EXPORT void *g_object_newv(GType type, unsigned int n, GParameter *params)
{
	static void *(*real)(GType, unsigned int, GParameter *);
	void *obj;

	if (!RIP_REAL(real, "g_object_newv"))
		return NULL;
	obj = real(type, n, params);
	if (obj)
		rip_acquire(gobject_kind, obj, gobj_size(obj));
	return obj;
}

EXPORT void *g_object_ref(void *obj)
{
	static void *(*real)(void *);
	void *ret;

	if (!RIP_REAL(real, "g_object_ref"))
		return obj;
	ret = real(obj);
	if (ret)
		rip_ref(gobject_kind, ret);
	return ret;
}

EXPORT void *g_object_ref_sink(void *obj)
{
	static void *(*real)(void *);
	static int (*floating)(void *);
	int was_floating;
	void *ret;

	if (!RIP_REAL(real, "g_object_ref_sink"))
		return obj;
	/* sinking a floating reference takes it over: the count does not change */
	was_floating = obj && RIP_REAL(floating, "g_object_is_floating") && floating(obj);
	ret = real(obj);
	if (ret && !was_floating)
		rip_ref(gobject_kind, ret);
	return ret;
}

EXPORT void g_object_unref(void *obj)
{
	static void (*real)(void *);

	if (!RIP_REAL(real, "g_object_unref"))
		return;
	/* before the real call: the last unref frees it, and another thread may get its address */
	if (obj)
		rip_unref(gobject_kind, obj);
	real(obj);
}
