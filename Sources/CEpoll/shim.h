// Linux's epoll and eventfd, and accept4, for the server's event loops (Sources/EntitledServer/Reactor).
// Header only: everything here is in the C library.
#ifndef CEPOLL_SHIM_H
#define CEPOLL_SHIM_H

#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <netdb.h>
#include <errno.h>
#include <time.h>

// Declared here because <sys/socket.h> shows it only under _GNU_SOURCE, which Swift's Glibc module
// was not built with.
extern int accept4(int fd, struct sockaddr *address, socklen_t *length, int flags);

/// Accepts a connection as a non-blocking, close-on-exec socket; -1 and errno on failure.
static inline int cepoll_accept(int listener) {
    return accept4(listener, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
}

/// An epoll_event for `fd` (the struct is packed on x86_64, which Swift cannot build field by field).
static inline struct epoll_event cepoll_event(uint32_t events, int fd) {
    struct epoll_event event;
    event.events = events;
    event.data.u64 = 0;
    event.data.fd = fd;
    return event;
}

/// epoll_wait with a timeout in nanoseconds (epoll_pwait2, Linux 5.11): a loop holding a commit for a few
/// hundred microseconds must wake then, not a millisecond later. Where the kernel lacks it (ENOSYS), the
/// timeout is rounded up to whole milliseconds.
static inline int cepoll_wait_nanoseconds(int epoll, struct epoll_event *events, int capacity, long long nanoseconds) {
    struct timespec timeout = { .tv_sec = nanoseconds / 1000000000LL, .tv_nsec = nanoseconds % 1000000000LL };
    int ready = epoll_pwait2(epoll, events, capacity, &timeout, NULL);
    if (ready < 0 && errno == ENOSYS) {
        return epoll_wait(epoll, events, capacity, (int)((nanoseconds + 999999) / 1000000));
    }
    return ready;
}

static inline int cepoll_event_fd(const struct epoll_event *event) { return event->data.fd; }
static inline uint32_t cepoll_event_flags(const struct epoll_event *event) { return event->events; }

#endif
