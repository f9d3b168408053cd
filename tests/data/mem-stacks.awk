# SPDX-License-Identifier: Apache-2.0
#
# Description: the stack of every mem event in `rip dump`'s output, one
# line each, in the dump's order: THREAD TYPE SIZE FRAMES, threads numbered
# 1, 2... by their first mem event, SIZE "-" when the event has none,
# FRAMES the rip:bt definition's "[0x...,0x...]" or "none" (bt=0).  For
# tests/integ/unwind-*.sh (not a test itself).
$3 == "rip:bt" {
	id = ""; fr = ""
	for (i = 4; i <= NF; i++) {
		if ($i ~ /^id=/) id = substr($i, 4)
		if ($i ~ /^frames=/) fr = substr($i, 8)
	}
	bt[id] = fr
	next
}
$3 ~ /^mem:(alloc|free|realloc)$/ {
	if (!($2 in th)) th[$2] = ++nth
	size = "-"; b = ""
	for (i = 4; i <= NF; i++) {
		if ($i ~ /^size=/) size = substr($i, 6)
		if ($i ~ /^bt=/) b = substr($i, 4)
	}
	print th[$2], $3, size, (b == "0" ? "none" : bt[b])
}
