// Umbrella header for the CRubberBand system library module (Rubber Band:
// takes heard at another tempo or key, notes put in tune). Its C API is the
// same in 3.x (bookworm) and 4.x (trixie).
#include <rubberband/rubberband-c.h>

#include <malloc.h>

// What a stretcher freed, given back to the system (malloc_trim): Rubber
// Band's offline stretcher allocates some 12 MB of mid-sized buffers from
// glibc's heap, which keeps them when they are freed; a mix that stretches
// its takes first and then encodes would hold both (86 MB against 68 for a
// 3-minute duet to .m4a). Returns 1 when memory was given back.
static inline int acapella_release_freed_memory(void) { return malloc_trim(0); }
