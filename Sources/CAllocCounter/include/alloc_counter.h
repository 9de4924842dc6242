// Counts heap allocations made by the calling thread between
// acapella_alloc_begin() and acapella_alloc_end(). Linked only into the
// allocation-check executable: it interposes malloc and friends for the whole
// process (forwarding to glibc's __libc_* functions), which a library must
// never do.
#pragma once
void acapella_alloc_begin(void);
long acapella_alloc_end(void);
