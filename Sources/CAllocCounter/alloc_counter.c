// Why C: interposing malloc needs symbols named malloc/free/calloc/realloc in
// the executable, which Swift cannot define.
#include <stddef.h>
#include <stdatomic.h>
#include "alloc_counter.h"

extern void *__libc_malloc(size_t size);
extern void *__libc_calloc(size_t count, size_t size);
extern void *__libc_realloc(void *pointer, size_t size);
extern void *__libc_memalign(size_t alignment, size_t size);
extern void __libc_free(void *pointer);

static _Thread_local int counting;
static atomic_long allocations;
static atomic_long frees;

static inline void note(void) {
    if (counting) atomic_fetch_add_explicit(&allocations, 1, memory_order_relaxed);
}

void *malloc(size_t size) { note(); return __libc_malloc(size); }
void *calloc(size_t count, size_t size) { note(); return __libc_calloc(count, size); }
void *realloc(void *pointer, size_t size) { note(); return __libc_realloc(pointer, size); }
void *aligned_alloc(size_t alignment, size_t size) { note(); return __libc_memalign(alignment, size); }
void *memalign(size_t alignment, size_t size) { note(); return __libc_memalign(alignment, size); }
int posix_memalign(void **out, size_t alignment, size_t size) {
    note();
    void *pointer = __libc_memalign(alignment, size);
    if (!pointer) return 12; /* ENOMEM */
    *out = pointer;
    return 0;
}
void free(void *pointer) {
    if (counting && pointer) atomic_fetch_add_explicit(&frees, 1, memory_order_relaxed);
    __libc_free(pointer);
}

void acapella_alloc_reset(void) {
    atomic_store(&allocations, 0);
    atomic_store(&frees, 0);
}

void acapella_alloc_begin(void) { counting = 1; }

long acapella_alloc_end(void) {
    counting = 0;
    return atomic_load(&allocations);
}

long acapella_alloc_frees(void) { return atomic_load(&frees); }
