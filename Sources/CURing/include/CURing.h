// A few io_uring calls for the event loops, as plain functions: liburing's API is static inline functions
// and macros over memory shared with the kernel, which are simplest to call from C.
#ifndef ENTITLED_CURING_H
#define ENTITLED_CURING_H

#include <stddef.h>
#include <stdint.h>

/// An io_uring instance (opaque to Swift).
typedef struct entitled_ring entitled_ring;

/// A ring of `entries` submission slots for the calling thread only, or NULL with `*error` set to the
/// errno the kernel refused it with (ENOSYS: no io_uring; EPERM: disabled by sysctl or a seccomp filter).
entitled_ring *entitled_ring_create(unsigned entries, int *error);
void entitled_ring_destroy(entitled_ring *ring);

/// Queues a send of `length` bytes at `bytes` on `descriptor` (flags: MSG_* as for send(2)); returns 0, or
/// -1 when the submission queue is full (submit first).
int entitled_ring_send(entitled_ring *ring, int descriptor, const void *bytes, size_t length, int flags, uint64_t tag);

/// Queues a receive of at most `length` bytes into `bytes`; as `entitled_ring_send`.
int entitled_ring_receive(entitled_ring *ring, int descriptor, void *bytes, size_t length, int flags, uint64_t tag);

/// Submits what is queued and waits until `wait` completions are there: one system call. Returns the
/// number submitted, or -errno.
int entitled_ring_submit_and_wait(entitled_ring *ring, unsigned wait);

/// Takes the next completion, if there is one: its tag and result (bytes, or -errno). Returns 1 or 0.
int entitled_ring_next_completion(entitled_ring *ring, uint64_t *tag, int32_t *result);

#endif
