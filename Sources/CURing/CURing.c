#include "CURing.h"

#include <errno.h>
#include <liburing.h>
#include <stdlib.h>

struct entitled_ring {
    struct io_uring ring;
};

entitled_ring *entitled_ring_create(unsigned entries, int *error) {
    entitled_ring *ring = calloc(1, sizeof *ring);
    if (!ring) {
        *error = ENOMEM;
        return NULL;
    }
    // One thread submits and reaps (the loop's): the kernel may then skip its cross-thread locking, and
    // completion work runs when the loop enters the ring rather than interrupting it.
    struct io_uring_params params = { .flags = IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN };
    int status = io_uring_queue_init_params(entries, &ring->ring, &params);
    if (status == -EINVAL) {
        // Kernels before 6.1 know neither flag.
        struct io_uring_params plain = { 0 };
        status = io_uring_queue_init_params(entries, &ring->ring, &plain);
    }
    if (status < 0) {
        *error = -status;
        free(ring);
        return NULL;
    }
    return ring;
}

void entitled_ring_destroy(entitled_ring *ring) {
    if (!ring) return;
    io_uring_queue_exit(&ring->ring);
    free(ring);
}

int entitled_ring_send(entitled_ring *ring, int descriptor, const void *bytes, size_t length, int flags, uint64_t tag) {
    struct io_uring_sqe *sqe = io_uring_get_sqe(&ring->ring);
    if (!sqe) return -1;
    io_uring_prep_send(sqe, descriptor, bytes, length, flags);
    io_uring_sqe_set_data64(sqe, tag);
    return 0;
}

int entitled_ring_receive(entitled_ring *ring, int descriptor, void *bytes, size_t length, int flags, uint64_t tag) {
    struct io_uring_sqe *sqe = io_uring_get_sqe(&ring->ring);
    if (!sqe) return -1;
    io_uring_prep_recv(sqe, descriptor, bytes, length, flags);
    io_uring_sqe_set_data64(sqe, tag);
    return 0;
}

int entitled_ring_submit_and_wait(entitled_ring *ring, unsigned wait) {
    return io_uring_submit_and_wait(&ring->ring, wait);
}

int entitled_ring_next_completion(entitled_ring *ring, uint64_t *tag, int32_t *result) {
    struct io_uring_cqe *cqe;
    if (io_uring_peek_cqe(&ring->ring, &cqe) != 0) return 0;
    *tag = io_uring_cqe_get_data64(cqe);
    *result = cqe->res;
    io_uring_cqe_seen(&ring->ring, cqe);
    return 1;
}
