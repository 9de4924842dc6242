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
// timeout, a memory cap per connection, and a callback when a request ends.
static inline struct MHD_Daemon *acapella_mhd_start(uint16_t port, const struct sockaddr *bind_address,
                                                    MHD_AccessHandlerCallback handler, void *context,
                                                    MHD_RequestCompletedCallback completed,
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
        { bind_address != NULL ? MHD_OPTION_SOCK_ADDR : MHD_OPTION_END, 0, (void *)bind_address },
        { MHD_OPTION_END, 0, NULL },
    };
    return MHD_start_daemon(flags, port, NULL, NULL, handler, context, MHD_OPTION_ARRAY, options, MHD_OPTION_END);
}

#include <arpa/inet.h>
#include <string.h>

// Why a shim: MHD_get_connection_info is variadic. Writes the client's
// address as text (IPv4 or IPv6) into buffer; empty when unknown.
static inline void acapella_mhd_client_address(struct MHD_Connection *connection, char *buffer, socklen_t size) {
    buffer[0] = 0;
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    if (info == NULL || info->client_addr == NULL) return;
    const struct sockaddr *address = info->client_addr;
    if (address->sa_family == AF_INET) {
        inet_ntop(AF_INET, &((const struct sockaddr_in *)address)->sin_addr, buffer, size);
    } else if (address->sa_family == AF_INET6) {
        inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)address)->sin6_addr, buffer, size);
    }
}
