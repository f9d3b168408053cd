// SPDX-License-Identifier: Apache-2.0
/*
 * Description: C frames for funcprog-cxx (not a test itself), built with
 * -finstrument-functions and without -fexceptions: an exception unwound
 * through them runs none of their exit hooks, so the shadow stack must
 * drop them by itself.  c_frame_1 calls c_frame_2 ... c_frame_5, which
 * calls back into the C++ code.
 */
#define N __attribute__((noinline))

volatile int fnframes_sink;

void c_frame_1(void (*cb)(void));

/* clang-format off */
N static void c_frame_5(void (*cb)(void)) { cb(); fnframes_sink++; }
N static void c_frame_4(void (*cb)(void)) { c_frame_5(cb); fnframes_sink++; }
N static void c_frame_3(void (*cb)(void)) { c_frame_4(cb); fnframes_sink++; }
N static void c_frame_2(void (*cb)(void)) { c_frame_3(cb); fnframes_sink++; }
N void c_frame_1(void (*cb)(void)) { c_frame_2(cb); fnframes_sink++; }
/* clang-format on */
