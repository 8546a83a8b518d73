/* SPDX-License-Identifier: MIT */
/*
 * The one mixer: what every hash table here puts a key through before it
 * takes the low bits as a bucket (lib/htab.h).
 *
 * cw_mix64() is MurmurHash3's 64-bit finalizer (fmix64): every input bit
 * flips each output bit with probability about 1/2, so keys that differ
 * only in their high bits (pointers, tids shifted into a key, a type in
 * bit 56) still spread over the low bits a table of 2^k buckets uses. It
 * is a bijection: distinct keys never collide before the mask. Changing
 * it changes the order of the entries in a bucket, and so which of two
 * equal keys a walk of one meets first (cls_io_uring.c's candidates): the
 * fixtures' databases are the check.
 */
#ifndef CAUSEWAY_HASH_H
#define CAUSEWAY_HASH_H

#include <stdint.h>

static inline uint64_t cw_mix64(uint64_t h)
{
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdull;
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ull;
	return h ^ (h >> 33);
}

/* A NUL-terminated string: FNV-1a over its bytes, then mixed, so that the
 * low bits spread (short names differ in their last bytes). */
static inline uint64_t cw_hash_str(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ull;

	while (*s)
		h = (h ^ (uint8_t)*s++) * 0x100000001b3ull;
	return cw_mix64(h);
}

#endif /* CAUSEWAY_HASH_H */
