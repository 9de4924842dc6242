#if canImport(Glibc)
import Glibc
#endif

/// Runs a program that may leave a daemon behind (tmux starts its server),
/// reaping only the program itself. `Process` would wait for every
/// descriptor the child was given to close — the daemon keeps them, so that
/// would be never. The child starts with no signal blocked (a caller's
/// threads may block some, and a daemon would pass that on). The
/// corresponding C functions are `posix_spawnp` and `waitpid`.
public enum DetachedCommand {
    /// Runs `arguments` (found on `PATH`) with stdin and stderr on
    /// /dev/null and stdout to `output` (nil: /dev/null); its exit status,
    /// or nil when it would not start.
    @discardableResult
    public static func run(_ arguments: [String], output: String? = nil) -> Int32? {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, output ?? "/dev/null", O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var none = sigset_t()
        sigemptyset(&none)
        posix_spawnattr_setsigmask(&attributes, &none)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK))
        let argv = arguments.map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid = pid_t()
        guard let program = arguments.first, posix_spawnp(&pid, program, &actions, &attributes, argv, environ) == 0 else { return nil }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        return (status >> 8) & 0xFF
    }
}
