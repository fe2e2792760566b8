#ifndef ENTITLED_CCRC32C_H
#define ENTITLED_CCRC32C_H

#include <stddef.h>
#include <stdint.h>

/// Whether this CPU computes CRC-32C in hardware (x86-64 SSE 4.2's `crc32` instruction), so that
/// `entitled_crc32c_hardware` may be called. Swift has no spelling for the instruction.
int entitled_crc32c_hardware_available(void);

/// Continues the CRC-32C `crc` (already inverted, as the algorithm keeps it between bytes) over `count`
/// bytes at `bytes` with the CPU's instruction. Only when `entitled_crc32c_hardware_available()`.
uint32_t entitled_crc32c_hardware(uint32_t crc, const void *bytes, size_t count);

#endif
