#ifndef ENTITLED_CPREFETCH_H
#define ENTITLED_CPREFETCH_H

/// Asks the CPU to start loading the cache line at `address` for reading, without waiting for it. Only
/// a hint: any address may be given, a prefetch never faults. Swift has no spelling for it.
static inline void entitled_prefetch(const void *address) {
    __builtin_prefetch(address, 0, 3);
}

#endif
