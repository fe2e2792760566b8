#include "CCRC32C.h"

#include <string.h>

#if defined(__x86_64__)

int entitled_crc32c_hardware_available(void) {
    return __builtin_cpu_supports("sse4.2");
}

// Compiled for SSE 4.2 alone, so the rest of the program keeps running on CPUs without it; called only
// after `entitled_crc32c_hardware_available()` said yes.
__attribute__((target("sse4.2")))
uint32_t entitled_crc32c_hardware(uint32_t crc, const void *bytes, size_t count) {
    const unsigned char *next = bytes;
    uint64_t wide = crc;
    while (count >= 8) {
        uint64_t word;
        memcpy(&word, next, 8);  // unaligned
        wide = __builtin_ia32_crc32di(wide, word);
        next += 8;
        count -= 8;
    }
    uint32_t narrow = (uint32_t)wide;
    while (count > 0) {
        narrow = __builtin_ia32_crc32qi(narrow, *next);
        next += 1;
        count -= 1;
    }
    return narrow;
}

#else

int entitled_crc32c_hardware_available(void) { return 0; }

uint32_t entitled_crc32c_hardware(uint32_t crc, const void *bytes, size_t count) {
    (void)bytes;
    (void)count;
    return crc;  // never called: no hardware path on this architecture
}

#endif
