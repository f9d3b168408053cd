// SPDX-License-Identifier: Apache-2.0
/*
 * tests/data/module-gobject.c - the program of tests/integ/module-gobject.sh:
 * GObjects made and referenced across function calls, some balanced, some
 * leaked.  Built by the test (it needs GLib's headers).
 *
 *   3 objects: new, a balanced ref/unref in use(), unref: released
 *   2 objects: new in make_kept(), use(), an extra ref in keep_ref(), one
 *              unref: leaked, with one reference still held (keep_ref's)
 *   1 object:  new in make_lost(), never unreffed: leaked, no reference held
 *   1 object:  new, ref_sink (not floating: one more), two unrefs: released
 */
#include <glib-object.h>

#define NOINLINE __attribute__((noinline))

static GObject *kept[2];
static GObject *lost;

static NOINLINE void use(GObject *o)
{
	g_object_ref(o);
	g_object_unref(o);
}

static NOINLINE void keep_ref(GObject *o)
{
	g_object_ref(o);
}

static NOINLINE GObject *make_kept(void)
{
	return g_object_new(G_TYPE_OBJECT, NULL);
}

static NOINLINE GObject *make_lost(void)
{
	return g_object_new(G_TYPE_OBJECT, NULL);
}

int main(void)
{
	GObject *o;

	for (int i = 0; i < 3; i++) {
		o = g_object_new(G_TYPE_OBJECT, NULL);
		use(o);
		g_object_unref(o);
	}
	for (int i = 0; i < 2; i++) {
		kept[i] = make_kept();
		use(kept[i]);
		keep_ref(kept[i]);
		g_object_unref(kept[i]);
	}
	lost = make_lost();
	o = g_object_new(G_TYPE_OBJECT, NULL);
	g_object_ref_sink(o);
	g_object_unref(o);
	g_object_unref(o);
	return kept[0] && lost ? 0 : 1;
}
