// Umbrella header for the CAvahi system library module (avahi's client
// library, Debian libavahi-client-dev): the box announces itself on the
// practice room's network as <name>.local with its web page as a service.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <avahi-client/client.h>
#include <avahi-client/publish.h>
#include <avahi-common/alternative.h>
#include <avahi-common/error.h>
#include <avahi-common/malloc.h>
#include <avahi-common/thread-watch.h>

// Why a shim: avahi's callbacks carry C state through several levels
// (client, entry group, collisions renaming both) on avahi's own thread;
// kept in C, with one report callback to the program.
// `announced`: the full name (`acapella.local`) when the line says the
// announcement is established, else NULL.
typedef void (*acapella_mdns_report)(void *context, int problem, const char *line, const char *announced);

struct acapella_mdns {
    AvahiThreadedPoll *poll;
    AvahiClient *client;
    AvahiEntryGroup *group;
    char *host;      // "acapella" (".local" added)
    char *service;   // "Acapella box"
    uint16_t port;
    acapella_mdns_report report;
    void *context;
    char addresses[512];
};

static void acapella_mdns_say(struct acapella_mdns *m, int problem, const char *format, const char *a, const char *b) {
    char line[768];
    snprintf(line, sizeof line, format, a, b);
    m->report(m->context, problem, line, NULL);
}

static void acapella_mdns_create(struct acapella_mdns *m, AvahiClient *client);

static void acapella_mdns_group_changed(AvahiEntryGroup *group, AvahiEntryGroupState state, void *userdata) {
    struct acapella_mdns *m = userdata;
    m->group = group;
    if (state == AVAHI_ENTRY_GROUP_ESTABLISHED) {
        char full[300], line[1024];
        snprintf(full, sizeof full, "%s.local", m->host);
        snprintf(line, sizeof line, "mdns: announced as %s (%s) and '%s' (_http._tcp)", full, m->addresses, m->service);
        m->report(m->context, 0, line, full);
    } else if (state == AVAHI_ENTRY_GROUP_COLLISION) {
        // Another box (or host) has the name: the next free one, said.
        char *host = avahi_alternative_host_name(m->host);
        char *service = avahi_alternative_service_name(m->service);
        acapella_mdns_say(m, 1, "mdns: %s.local is taken on this network; trying %s.local", m->host, host);
        avahi_free(m->host);
        avahi_free(m->service);
        m->host = host;
        m->service = service;
        avahi_entry_group_reset(group);
        acapella_mdns_create(m, avahi_entry_group_get_client(group));
    } else if (state == AVAHI_ENTRY_GROUP_FAILURE) {
        acapella_mdns_say(m, 1, "mdns: the announcement failed (%s)%s", avahi_strerror(avahi_client_errno(avahi_entry_group_get_client(group))), "");
    }
}

static void acapella_mdns_create(struct acapella_mdns *m, AvahiClient *client) {
    if (m->group == NULL) {
        m->group = avahi_entry_group_new(client, acapella_mdns_group_changed, m);
        if (m->group == NULL) {
            acapella_mdns_say(m, 1, "mdns: cannot announce (%s)%s", avahi_strerror(avahi_client_errno(client)), "");
            return;
        }
    }
    if (!avahi_entry_group_is_empty(m->group)) return;
    char full[300];
    snprintf(full, sizeof full, "%s.local", m->host);
    // The name's addresses: every address of every interface that is up,
    // loopback aside (no reverse records: the host's own name keeps those).
    m->addresses[0] = 0;
    int published = 0;
    struct ifaddrs *list = NULL, *item;
    if (getifaddrs(&list) == 0) {
        for (item = list; item != NULL; item = item->ifa_next) {
            if (item->ifa_addr == NULL || !(item->ifa_flags & IFF_UP) || (item->ifa_flags & IFF_LOOPBACK)) continue;
            int family = item->ifa_addr->sa_family;
            if (family != AF_INET && family != AF_INET6) continue;
            char text[INET6_ADDRSTRLEN];
            const void *raw = family == AF_INET ? (const void *)&((struct sockaddr_in *)item->ifa_addr)->sin_addr
                                                : (const void *)&((struct sockaddr_in6 *)item->ifa_addr)->sin6_addr;
            if (inet_ntop(family, raw, text, sizeof text) == NULL) continue;
            AvahiAddress address;
            if (avahi_address_parse(text, family == AF_INET ? AVAHI_PROTO_INET : AVAHI_PROTO_INET6, &address) == NULL) continue;
            int index = (int)if_nametoindex(item->ifa_name);
            int added = avahi_entry_group_add_address(m->group, index, family == AF_INET ? AVAHI_PROTO_INET : AVAHI_PROTO_INET6,
                                                      AVAHI_PUBLISH_NO_REVERSE, full, &address);
            if (added == AVAHI_ERR_COLLISION) {
                // Another program on this machine holds the name already.
                freeifaddrs(list);
                acapella_mdns_group_changed(m->group, AVAHI_ENTRY_GROUP_COLLISION, m);
                return;
            }
            if (added < 0) continue;
            published++;
            if (strlen(m->addresses) + strlen(text) + 3 < sizeof m->addresses) {
                if (m->addresses[0]) strcat(m->addresses, ", ");
                strcat(m->addresses, text);
            }
        }
        freeifaddrs(list);
    }
    if (published == 0) {
        acapella_mdns_say(m, 1, "mdns: no network address to announce %s at%s", full, "");
        return;
    }
    int error = avahi_entry_group_add_service_strlst(m->group, AVAHI_IF_UNSPEC, AVAHI_PROTO_UNSPEC, 0, m->service, "_http._tcp", NULL, full, m->port, NULL);
    if (error == AVAHI_ERR_COLLISION) {
        acapella_mdns_group_changed(m->group, AVAHI_ENTRY_GROUP_COLLISION, m);
        return;
    }
    if (error < 0 || avahi_entry_group_commit(m->group) < 0) {
        acapella_mdns_say(m, 1, "mdns: cannot announce the page (%s)%s", avahi_strerror(error < 0 ? error : avahi_client_errno(client)), "");
    }
}

static void acapella_mdns_client_changed(AvahiClient *client, AvahiClientState state, void *userdata) {
    struct acapella_mdns *m = userdata;
    if (state == AVAHI_CLIENT_S_RUNNING) {
        acapella_mdns_create(m, client);
    } else if (state == AVAHI_CLIENT_S_COLLISION || state == AVAHI_CLIENT_S_REGISTERING) {
        if (m->group) avahi_entry_group_reset(m->group);
    } else if (state == AVAHI_CLIENT_FAILURE) {
        acapella_mdns_say(m, 1, "mdns: avahi-daemon went away (%s); %s", avahi_strerror(avahi_client_errno(client)), "the page stays at its address");
    }
}

// Starts announcing on avahi's own thread. NULL when the daemon cannot be
// reached; `why` then says why.
static inline struct acapella_mdns *acapella_mdns_start(const char *host, const char *service, uint16_t port,
                                                        acapella_mdns_report report, void *context, char *why, size_t why_size) {
    struct acapella_mdns *m = calloc(1, sizeof *m);
    if (m == NULL) return NULL;
    m->host = avahi_strdup(host);
    m->service = avahi_strdup(service);
    m->port = port;
    m->report = report;
    m->context = context;
    m->poll = avahi_threaded_poll_new();
    int error = 0;
    if (m->poll != NULL) m->client = avahi_client_new(avahi_threaded_poll_get(m->poll), 0, acapella_mdns_client_changed, m, &error);
    if (m->poll == NULL || m->client == NULL || avahi_threaded_poll_start(m->poll) < 0) {
        snprintf(why, why_size, "%s", m->poll == NULL ? "out of memory" : avahi_strerror(error));
        if (m->client) avahi_client_free(m->client);
        if (m->poll) avahi_threaded_poll_free(m->poll);
        avahi_free(m->host);
        avahi_free(m->service);
        free(m);
        return NULL;
    }
    return m;
}

// Withdraws the announcement and stops avahi's thread.
static inline void acapella_mdns_stop(struct acapella_mdns *m) {
    if (m == NULL) return;
    avahi_threaded_poll_stop(m->poll);
    avahi_client_free(m->client);
    avahi_threaded_poll_free(m->poll);
    avahi_free(m->host);
    avahi_free(m->service);
    free(m);
}
