// Umbrella header for the CMicroHTTPD system library module.
#include <stdint.h>
#include <stdarg.h>
#include <sys/types.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <microhttpd.h>

// Why a shim: MHD_start_daemon takes its options as C varargs, which Swift
// cannot pass. This starts a daemon with the limits the box always sets:
// a thread per connection (an event stream may block its own thread,
// never another's), a connection cap overall and per address, an idle
// timeout, a memory cap per connection, a callback when a request ends,
// an accept policy (who may connect at all, asked before anything is read)
// and a callback as each connection starts and closes.
static inline struct MHD_Daemon *acapella_mhd_start(uint16_t port, const struct sockaddr *bind_address,
                                                    MHD_AccessHandlerCallback handler, void *context,
                                                    MHD_RequestCompletedCallback completed,
                                                    MHD_AcceptPolicyCallback accept_policy,
                                                    MHD_NotifyConnectionCallback notify_connection,
                                                    unsigned int connection_limit, unsigned int per_address_limit,
                                                    unsigned int timeout_seconds, size_t memory_limit) {
    unsigned int flags = MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ERROR_LOG;
    if (bind_address == NULL || bind_address->sa_family == AF_INET6) flags |= MHD_USE_DUAL_STACK;
    // The options as an array, the address only when one is given.
    struct MHD_OptionItem options[] = {
        { MHD_OPTION_CONNECTION_LIMIT, connection_limit, NULL },
        { MHD_OPTION_PER_IP_CONNECTION_LIMIT, per_address_limit, NULL },
        { MHD_OPTION_CONNECTION_TIMEOUT, timeout_seconds, NULL },
        { MHD_OPTION_CONNECTION_MEMORY_LIMIT, (intptr_t)memory_limit, NULL },
        { MHD_OPTION_NOTIFY_COMPLETED, (intptr_t)completed, context },
        { MHD_OPTION_NOTIFY_CONNECTION, (intptr_t)notify_connection, context },
        { bind_address != NULL ? MHD_OPTION_SOCK_ADDR : MHD_OPTION_END, 0, (void *)bind_address },
        { MHD_OPTION_END, 0, NULL },
    };
    return MHD_start_daemon(flags, port, accept_policy, context, handler, context, MHD_OPTION_ARRAY, options, MHD_OPTION_END);
}

#include <arpa/inet.h>
#include <string.h>

// An address as text (IPv4 or IPv6).
static inline void acapella_sockaddr_text(const struct sockaddr *address, char *buffer, socklen_t size) {
    buffer[0] = 0;
    if (address == NULL) return;
    if (address->sa_family == AF_INET) {
        inet_ntop(AF_INET, &((const struct sockaddr_in *)address)->sin_addr, buffer, size);
    } else if (address->sa_family == AF_INET6) {
        inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)address)->sin6_addr, buffer, size);
    }
}

// Why a shim: MHD_get_connection_info is variadic. Writes the client's
// address as text (IPv4 or IPv6) into buffer; empty when unknown.
static inline void acapella_mhd_client_address(struct MHD_Connection *connection, char *buffer, socklen_t size) {
    buffer[0] = 0;
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    if (info == NULL || info->client_addr == NULL) return;
    acapella_sockaddr_text(info->client_addr, buffer, size);
}

// Why a shim: MHD_get_connection_info is variadic. The connection's socket
// (the box's watchdog shuts down a connection that is too slow sending its
// request), or -1.
static inline int acapella_mhd_connection_fd(struct MHD_Connection *connection) {
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CONNECTION_FD);
    return info == NULL ? -1 : info->connect_fd;
}

