#ifndef ACAPELLA_CHILD_H
#define ACAPELLA_CHILD_H
#include <sys/types.h>

// Why C: a child the box starts (the engraver, the take analysis) must die
// with the box and be bounded, and both are set between fork and exec —
// PR_SET_PDEATHSIG and setrlimit apply to the calling process only, and
// posix_spawn has no way to ask for them. vfork (the parent waits until the
// exec, sharing its memory, so nothing is copied: no copy-on-write faults
// on the box's locked pages) and only system calls in the child.
//
// Starts `path` with `argv` and `envp` (NULL-terminated) in a process group of its
// own, stdin on /dev/null, stdout and stderr on `output_fd`; it is killed
// when the starting thread's process dies (SIGKILL), and limited to
// `memory_bytes` of data (RLIMIT_DATA; 0: no limit) and `cpu_seconds` of
// CPU time (RLIMIT_CPU; 0: no limit), at `nice_increment` below the
// caller's priority, its oom_score_adj raised to 500 (the kernel's
// out-of-memory killer takes it before the box). Returns the child's pid, or -errno.
pid_t acapella_spawn_bounded(const char *path, char *const argv[], char *const envp[], int output_fd, long memory_bytes, long cpu_seconds, int nice_increment);

// A pipe whose ends close on exec from the start (pipe2 is a GNU
// extension Swift's Glibc module does not show); 0, or -errno.
int acapella_pipe_cloexec(int fds[2]);

// glibc's malloc arenas limited to `count` (mallopt M_ARENA_MAX, which
// Swift's Glibc module does not show): the box serves each page connection
// on a thread of its own, and each arena keeps what its thread freed.
// Returns 1 when set.
int acapella_limit_malloc_arenas(int count);

// What was freed, given back to the system (malloc_trim, not in Swift's
// Glibc module): glibc's heap keeps freed memory below its top. After
// parsing a long song (18 MB of arrays for 32 parts of 12 minutes, gone
// once its schedule is built) or after Rubber Band's stretcher (12 MB).
// Returns 1 when memory was given back.
int acapella_release_freed_memory(void);

#endif
