// entitled-loadgen: the benchmark's neutral load generator.
//
// One thread, one epoll set, no spinning: it sends request bytes prepared in advance and only counts and
// times the answers, so that on a 2-core machine it takes as little CPU as possible from the server it
// measures (a polling client took most of a core, from whichever server was measured).
// It is built with the package (`swift build -c release` puts it beside entitled-bench, which runs it).
//
// Usage: entitled-loadgen --port P --connections N --pipeline D --warmup S --duration S
//                         --protocol entitled|redis --requests FILE [--first-user N]
// FILE holds the requests one after another, each as a kind byte ('c' check, 'g' grant) followed by the
// request's bytes and a NUL. Connection i starts at request i * (count / N) and goes round the file.
// Each connection sends --pipeline requests in one write and the next batch once all are answered. Every
// answer is one line (both servers answer these requests so), matched to the oldest request in flight on
// its connection (both servers answer in order).
// A request may hold the placeholder "############" (twelve '#'): each time it is sent, the placeholder is
// replaced by the next number of one counter shared by all connections, zero-padded to twelve digits
// (starting at --first-user, default 0). Durable-write runs use it so that every request is a new user:
// Redis writes nothing to its log for an SADD that adds nothing.
//
// Output (stdout, line by line): "measuring" once the warm-up is over (the caller reads the server's CPU
// time then), "done" when the measured window ends, then "window_ns N", "answered N",
// "errors N", "inactive N", optionally "first_error TEXT", "check_latency NS COUNT" (checks only) and
// "latency NS COUNT" (every request) for each non-empty
// latency bucket (from the write that sent a request to the read that got its answer; buckets keep 3
// significant digits). Exit status 0, or 1 with a message on stderr.
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <arpa/inet.h>
#include <time.h>
#include <unistd.h>

enum { ANSWER_SUCCESS, ANSWER_INACTIVE, ANSWER_FAILURE };

typedef struct {
    const char *bytes;
    uint32_t length;
    int32_t placeholder;   // offset of "############" in the request, or -1
    char kind;
} Request;

#define PLACEHOLDER "############"
#define PLACEHOLDER_LENGTH 12
static uint64_t next_user;

typedef struct {
    int fd;
    size_t next;           // index of the next request to send
    uint64_t *sent_at;     // ring of send times of the requests in flight
    char *kinds;           // ring of their kinds
    int head, count;       // ring position of the oldest, and how many are in flight
    char *partial;         // the start of an answer line not complete yet
    size_t partial_length;
    int partial_failed;    // classification of that line (set when its first bytes arrived)
    int partial_known;
} Connection;

static int pipeline_depth;
static int protocol_redis;
static Request *requests;
static size_t request_count;

// Latency histogram: values below 2048 ns exactly, above that 1024 sub-buckets per power of two (about
// three significant digits), up to 2^40 ns (18 minutes).
#define SUB_BUCKETS 1024
#define MAGNITUDES 30
static uint64_t histogram[2048 + MAGNITUDES * SUB_BUCKETS];
// The checks' own latencies, for a mixed load (a read's cost beside the writes).
static uint64_t check_histogram[2048 + MAGNITUDES * SUB_BUCKETS];

static size_t bucket_index(uint64_t ns) {
    if (ns < 2048) return ns;
    int magnitude = 63 - __builtin_clzll(ns);  // 11 and above
    if (magnitude - 11 >= MAGNITUDES) magnitude = MAGNITUDES + 10;
    uint64_t sub = (ns >> (magnitude - 10)) & (SUB_BUCKETS - 1);
    return 2048 + (magnitude - 11) * SUB_BUCKETS + sub;
}

static void record_latency(uint64_t ns, char kind) {
    size_t index = bucket_index(ns);
    histogram[index]++;
    if (kind == 'c') check_histogram[index]++;
}

static uint64_t bucket_value(size_t index) {
    if (index < 2048) return index;
    size_t magnitude = (index - 2048) / SUB_BUCKETS + 11;
    uint64_t sub = (index - 2048) % SUB_BUCKETS;
    return ((uint64_t)1 << magnitude) | (sub << (magnitude - 10));
}

static uint64_t now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static void fail(const char *what) {
    fprintf(stderr, "entitled-loadgen: %s: %s\n", what, errno ? strerror(errno) : "failed");
    exit(1);
}

static int classify(const char *line, size_t length, char kind) {
#define STARTS(text) (length >= sizeof(text) - 1 && memcmp(line, text, sizeof(text) - 1) == 0)
    if (!protocol_redis) {
        if (STARTS("{\"ok\":true,\"active\":false")) return ANSWER_INACTIVE;
        return STARTS("{\"ok\":true") ? ANSWER_SUCCESS : ANSWER_FAILURE;
    }
    if (STARTS(":1")) return ANSWER_SUCCESS;
    if (STARTS(":0")) return kind == 'c' ? ANSWER_INACTIVE : ANSWER_SUCCESS;
    return ANSWER_FAILURE;
#undef STARTS
}

static uint64_t answered, errors, inactive;
static int measuring;
static char first_error[256];

// Sends `count` more requests on `c` in one write.
static char *send_buffer;
static size_t send_capacity;

static void send_requests(Connection *c, int count) {
    size_t length = 0;
    uint64_t at = now_ns();
    for (int i = 0; i < count; i++) {
        const Request *r = &requests[c->next];
        c->next = (c->next + 1) % request_count;
        if (length + r->length > send_capacity) {
            send_capacity = (length + r->length) * 2;
            send_buffer = realloc(send_buffer, send_capacity);
            if (!send_buffer) fail("out of memory");
        }
        memcpy(send_buffer + length, r->bytes, r->length);
        if (r->placeholder >= 0) {
            char *digits = send_buffer + length + r->placeholder;
            uint64_t user = next_user++;
            for (int d = PLACEHOLDER_LENGTH - 1; d >= 0; d--) {
                digits[d] = (char)('0' + user % 10);
                user /= 10;
            }
        }
        length += r->length;
        int slot = (c->head + c->count) % pipeline_depth;
        c->sent_at[slot] = at;
        c->kinds[slot] = r->kind;
        c->count++;
    }
    size_t written = 0;
    while (written < length) {
        ssize_t n = write(c->fd, send_buffer + written, length - written);
        if (n < 0) {
            if (errno == EINTR) continue;
            if (errno == EAGAIN) {
                // The socket's buffer is full (it is not at these depths): give the server a moment.
                usleep(100);
                continue;
            }
            fail("write");
        }
        written += (size_t)n;
    }
}

static void answer_line(Connection *c, const char *line, size_t length, uint64_t at) {
    if (c->count == 0) {
        errno = 0;
        fail("an answer came that no request asked for");
    }
    char kind = c->kinds[c->head];
    uint64_t sent = c->sent_at[c->head];
    c->head = (c->head + 1) % pipeline_depth;
    c->count--;
    if (!measuring) return;
    answered++;
    record_latency(at - sent, kind);
    switch (classify(line, length, kind)) {
    case ANSWER_INACTIVE: inactive++; break;
    case ANSWER_FAILURE:
        errors++;
        if (!first_error[0]) {
            size_t n = length < sizeof(first_error) - 1 ? length : sizeof(first_error) - 1;
            memcpy(first_error, line, n);
            first_error[n] = 0;
            for (size_t i = 0; i < n; i++) if (first_error[i] == '\r' || first_error[i] == '\n') first_error[i] = ' ';
        }
        break;
    default: break;
    }
}

static char read_buffer[1 << 16];

// Reads what `c` has, answers every complete line, and sends as many new requests as were answered.
static void serve(Connection *c) {
    for (;;) {
        ssize_t n = read(c->fd, read_buffer, sizeof read_buffer);
        if (n < 0) {
            if (errno == EINTR) continue;
            if (errno == EAGAIN) return;
            fail("read");
        }
        if (n == 0) {
            errno = 0;
            fail("the server closed a connection");
        }
        uint64_t at = now_ns();
        int before = c->count;
        const char *start = read_buffer, *end = read_buffer + n;
        while (start < end) {
            const char *newline = memchr(start, '\n', (size_t)(end - start));
            if (!newline) {
                size_t rest = (size_t)(end - start);
                c->partial = realloc(c->partial, c->partial_length + rest);
                memcpy(c->partial + c->partial_length, start, rest);
                c->partial_length += rest;
                break;
            }
            if (c->partial_length) {
                size_t rest = (size_t)(newline - start);
                c->partial = realloc(c->partial, c->partial_length + rest);
                memcpy(c->partial + c->partial_length, start, rest);
                answer_line(c, c->partial, c->partial_length + rest, at);
                c->partial_length = 0;
            } else {
                answer_line(c, start, (size_t)(newline - start), at);
            }
            start = newline + 1;
        }
        // The next batch goes once the whole batch is answered, as redis-benchmark -P does (and the Swift
        // generator): a pipeline of D is D requests in one write, their answers in as few reads.
        if (c->count == 0 && before > 0) send_requests(c, pipeline_depth);
        if ((size_t)n < sizeof read_buffer) return;
    }
}

static void load_requests(const char *path) {
    int fd = open(path, O_RDONLY);
    if (fd < 0) fail(path);
    struct stat st;
    if (fstat(fd, &st) != 0) fail(path);
    char *bytes = malloc((size_t)st.st_size + 1);
    if (!bytes) fail("out of memory");
    size_t have = 0;
    while (have < (size_t)st.st_size) {
        ssize_t n = read(fd, bytes + have, (size_t)st.st_size - have);
        if (n <= 0) fail(path);
        have += (size_t)n;
    }
    close(fd);
    size_t capacity = 1024;
    requests = malloc(capacity * sizeof *requests);
    for (size_t at = 0; at < have;) {
        char *nul = memchr(bytes + at, 0, have - at);
        if (!nul || nul == bytes + at) {
            errno = 0;
            fail("the requests file is malformed (a record is a kind byte, the request, and a NUL)");
        }
        if (request_count == capacity) {
            capacity *= 2;
            requests = realloc(requests, capacity * sizeof *requests);
        }
        requests[request_count].kind = bytes[at];
        requests[request_count].bytes = bytes + at + 1;
        requests[request_count].length = (uint32_t)(nul - (bytes + at + 1));
        const char *mark = memmem(requests[request_count].bytes, requests[request_count].length, PLACEHOLDER, PLACEHOLDER_LENGTH);
        requests[request_count].placeholder = mark ? (int32_t)(mark - requests[request_count].bytes) : -1;
        request_count++;
        at = (size_t)(nul - bytes) + 1;
    }
    if (request_count == 0) {
        errno = 0;
        fail("the requests file holds no request");
    }
}

int main(int argc, char **argv) {
    int port = 0, connections = 1;
    double warmup = 1, duration = 5;
    const char *path = NULL;
    pipeline_depth = 1;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--port")) port = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--connections")) connections = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--pipeline")) pipeline_depth = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--warmup")) warmup = atof(argv[i + 1]);
        else if (!strcmp(argv[i], "--duration")) duration = atof(argv[i + 1]);
        else if (!strcmp(argv[i], "--protocol")) protocol_redis = !strcmp(argv[i + 1], "redis");
        else if (!strcmp(argv[i], "--requests")) path = argv[i + 1];
        else if (!strcmp(argv[i], "--first-user")) next_user = strtoull(argv[i + 1], NULL, 10);
        else {
            fprintf(stderr, "entitled-loadgen: unknown option %s\n", argv[i]);
            return 1;
        }
    }
    if (port <= 0 || connections <= 0 || pipeline_depth <= 0 || !path || duration <= 0 || warmup < 0) {
        fprintf(stderr, "usage: entitled-loadgen --port P --connections N --pipeline D --warmup S --duration S --protocol entitled|redis --requests FILE [--first-user N]\n");
        return 1;
    }
    load_requests(path);

    int epoll = epoll_create1(0);
    if (epoll < 0) fail("epoll_create1");
    Connection *all = calloc((size_t)connections, sizeof *all);
    struct sockaddr_in address = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
    inet_pton(AF_INET, "127.0.0.1", &address.sin_addr);
    for (int i = 0; i < connections; i++) {
        Connection *c = &all[i];
        c->fd = socket(AF_INET, SOCK_STREAM, 0);
        if (c->fd < 0) fail("socket");
        if (connect(c->fd, (struct sockaddr *)&address, sizeof address) != 0) fail("connect");
        int one = 1;
        setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        fcntl(c->fd, F_SETFL, fcntl(c->fd, F_GETFL) | O_NONBLOCK);
        c->sent_at = calloc((size_t)pipeline_depth, sizeof *c->sent_at);
        c->kinds = calloc((size_t)pipeline_depth, 1);
        c->next = (size_t)i * (request_count / (size_t)connections) % request_count;
        struct epoll_event event = { .events = EPOLLIN, .data.ptr = c };
        if (epoll_ctl(epoll, EPOLL_CTL_ADD, c->fd, &event) != 0) fail("epoll_ctl");
    }
    for (int i = 0; i < connections; i++) send_requests(&all[i], pipeline_depth);

    uint64_t started = now_ns();
    uint64_t measure_from = started + (uint64_t)(warmup * 1e9);
    uint64_t measure_until = measure_from + (uint64_t)(duration * 1e9);
    uint64_t window_started = 0;
    struct epoll_event events[256];
    for (;;) {
        uint64_t now = now_ns();
        if (!measuring && now >= measure_from) {
            measuring = 1;
            window_started = now;
            measure_until = now + (uint64_t)(duration * 1e9);  // the whole duration, however late it began
            printf("measuring\n");
            fflush(stdout);
        }
        if (measuring && now >= measure_until) break;
        uint64_t next = measuring ? measure_until : measure_from;
        int timeout = (int)((next - now) / 1000000) + 1;
        int ready = epoll_wait(epoll, events, 256, timeout);
        if (ready < 0) {
            if (errno == EINTR) continue;
            fail("epoll_wait");
        }
        for (int i = 0; i < ready; i++) serve(events[i].data.ptr);
    }
    uint64_t window = now_ns() - window_started;
    printf("done\n");
    fflush(stdout);
    printf("window_ns %llu\nanswered %llu\nerrors %llu\ninactive %llu\n", (unsigned long long)window,
        (unsigned long long)answered, (unsigned long long)errors, (unsigned long long)inactive);
    if (first_error[0]) printf("first_error %s\n", first_error);
    for (size_t i = 0; i < sizeof histogram / sizeof histogram[0]; i++) {
        if (histogram[i]) printf("latency %llu %llu\n", (unsigned long long)bucket_value(i), (unsigned long long)histogram[i]);
        if (check_histogram[i]) printf("check_latency %llu %llu\n", (unsigned long long)bucket_value(i), (unsigned long long)check_histogram[i]);
    }
    fflush(stdout);
    return 0;
}
