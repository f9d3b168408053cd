// SPDX-License-Identifier: Apache-2.0
/*
 * tests/data/module-widget.c - the parts of tests/integ/module-installed.sh,
 * one file built three ways: -DWIDGET_LIB a library of widgets
 * (widget_new, widget_free), -DWIDGET_MODULE a tracing module of them
 * written against the installed <rip/module.h> alone, and otherwise a
 * program that makes 5 widgets in make_widget and frees 2.
 */
#include <stdlib.h>

void *widget_new(size_t size);
void widget_free(void *w);

#if defined(WIDGET_LIB)

void *widget_new(size_t size)
{
	return malloc(size);
}

void widget_free(void *w)
{
	free(w);
}

#elif defined(WIDGET_MODULE)

#include <rip/module.h>

RIP_MODULE("widget", "widgets of the test's library");
RIP_KIND(widget_kind, "widget", "a widget (widget_new, widget_free)", 0);

void *widget_new(size_t size)
{
	static void *(*real)(size_t);
	void *w;

	if (!RIP_REAL(real, "widget_new"))
		return NULL;
	w = real(size);
	if (w)
		rip_acquire(widget_kind, w, size);
	return w;
}

void widget_free(void *w)
{
	static void (*real)(void *);

	if (!RIP_REAL(real, "widget_free"))
		return;
	rip_release(widget_kind, w);
	real(w);
}

#else

static void *w[5];

static __attribute__((noinline)) void *make_widget(size_t size)
{
	return widget_new(size);
}

int main(void)
{
	for (int i = 0; i < 5; i++)
		w[i] = make_widget(100);
	widget_free(w[0]);
	widget_free(w[3]);
	return w[4] ? 0 : 1;
}

#endif
