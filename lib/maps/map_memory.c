// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The native maps' storage is touched, page by page, when a map is made, as the kernel's maps are allocated whole:
 * otherwise the first write to each page lands in the packet path as a page fault (microseconds, in the middle of
 * a batch), and a large map's first million frames pay for it. Found by `xnf cost` on memload over 256 MiB: the
 * faults made its native time ten times what the same NF took in a run that had long touched every page.
 */
#include "map_memory.h"

#include <stdlib.h>
#include <unistd.h>

void *map_memory_zeroed(size_t nmemb, size_t size)
{
	volatile char *area = calloc(nmemb, size);
	size_t page = (size_t)sysconf(_SC_PAGESIZE);

	for (size_t off = 0; area && off < nmemb * size; off += page)
		area[off] = 0;  /* a write: calloc's fresh pages are the shared zero page until written */
	return (void *)area;
}
