#define _GNU_SOURCE
#include "child.h"
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

pid_t acapella_spawn_bounded(const char *path, char *const argv[], char *const envp[], int output_fd, long memory_bytes, long cpu_seconds, int nice_increment) {
    pid_t parent = getpid();
    int null_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (null_fd < 0) return -errno;
    // The child reports a failed exec through this pipe (closed on exec).
    int report[2];
    if (pipe2(report, O_CLOEXEC) != 0) { int e = errno; close(null_fd); return -e; }
    pid_t pid = vfork();
    if (pid == 0) {
        int failure = 0;
        sigset_t none;
        sigemptyset(&none);
        // Only system calls from here to exec (the parent's memory is shared).
        if (syscall(SYS_rt_sigprocmask, SIG_SETMASK, &none, NULL, sizeof(long)) != 0) failure = errno;
        if (!failure && setpgid(0, 0) != 0) failure = errno;
        if (!failure && prctl(PR_SET_PDEATHSIG, SIGKILL) != 0) failure = errno;
        // The box may have died between vfork and prctl: then nobody waits.
        if (!failure && getppid() != parent) _exit(127);
        if (!failure && memory_bytes > 0) {
            struct rlimit limit = { (rlim_t)memory_bytes, (rlim_t)memory_bytes };
            if (setrlimit(RLIMIT_DATA, &limit) != 0) failure = errno;
        }
        if (!failure && cpu_seconds > 0) {
            struct rlimit limit = { (rlim_t)cpu_seconds, (rlim_t)cpu_seconds + 5 };
            if (setrlimit(RLIMIT_CPU, &limit) != 0) failure = errno;
        }
        if (!failure) {
            // Killed before the box when memory runs out: raising one's own score needs no privilege.
            int score = open("/proc/self/oom_score_adj", O_WRONLY | O_CLOEXEC);
            if (score >= 0) {
                (void)!write(score, "500", 3);
                close(score);
            }
        }
        if (!failure && nice_increment > 0) {
            errno = 0;
            if (nice(nice_increment) == -1 && errno != 0) failure = errno;
        }
        if (!failure && (dup2(null_fd, 0) < 0 || dup2(output_fd, 1) < 0 || dup2(output_fd, 2) < 0)) failure = errno;
        if (!failure) {
            execve(path, argv, envp);
            failure = errno;
        }
        (void)!write(report[1], &failure, sizeof failure);
        _exit(127);
    }
    int saved = errno;
    close(null_fd);
    close(report[1]);
    if (pid < 0) { close(report[0]); return -saved; }
    int failure = 0;
    ssize_t got;
    do { got = read(report[0], &failure, sizeof failure); } while (got < 0 && errno == EINTR);
    close(report[0]);
    if (got == (ssize_t)sizeof failure && failure != 0) {
        int status;
        while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
        return -failure;
    }
    return pid;
}

int acapella_pipe_cloexec(int fds[2]) {
    return pipe2(fds, O_CLOEXEC) == 0 ? 0 : -errno;
}

#include <malloc.h>

int acapella_limit_malloc_arenas(int count) { return mallopt(M_ARENA_MAX, count); }

int acapella_release_freed_memory(void) { return malloc_trim(0); }
