// Counts heap allocations (and frees) made by the calling thread between
// acapella_alloc_begin() and acapella_alloc_end(); several begin/end spans
// add up until acapella_alloc_reset(). Linked only into the
// allocation-check executable: it interposes malloc and friends for the
// whole process (forwarding to glibc's __libc_* functions), which a library
// must never do.
#pragma once
void acapella_alloc_reset(void);
void acapella_alloc_begin(void);
long acapella_alloc_end(void);
long acapella_alloc_frees(void);
