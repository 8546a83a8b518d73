/* SPDX-License-Identifier: MIT */
/*
 * The columnar payload's transposes (schema/format.md): a group's records
 * as rows of @rl bytes, and the same bytes as @rl columns of @nrows. The
 * writer goes one way, the reader back; one blocked walk serves both.
 */
#ifndef CAUSEWAY_TRACE_TRANSPOSE_H
#define CAUSEWAY_TRACE_TRANSPOSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#ifdef __SSE2__
/* Rows @row and @row + @rl: the two halves of @x. */
static inline void store_rows2(uint8_t *row, size_t rl, __m128i x)
{
	_mm_storel_epi64((__m128i *)row, x);
	_mm_storel_epi64((__m128i *)(row + rl), _mm_unpackhi_epi64(x, x));
}

/*
 * Rows @r0..@r0 + 15, columns @c0..@c0 + 7 of cw_transpose() back to
 * rows: 8 loads, 24 unpacks and 16 stores for 128 bytes, where byte by
 * byte it took about 300 instructions, and the transpose was 8.6% of the
 * analyzer's on a system-wide capture. Each unpack doubles the run of one
 * row's bytes: 2, then 4, then 8 (the row's 8 columns).
 */
static inline void from_columns_16x8(uint8_t *dst, const uint8_t *src, size_t nrows, size_t rl,
				     size_t r0, size_t c0)
{
	__m128i a[8], b[8], q[8];

#pragma GCC unroll 8
	for (int c = 0; c < 8; c++)
		a[c] = _mm_loadu_si128((const __m128i *)(src + (c0 + (size_t)c) * nrows + r0));
	/* b[2i]: rows 0..7, b[2i + 1]: rows 8..15, of columns 2i and 2i + 1 */
#pragma GCC unroll 4
	for (int i = 0; i < 4; i++) {
		b[2 * i] = _mm_unpacklo_epi8(a[2 * i], a[2 * i + 1]);
		b[2 * i + 1] = _mm_unpackhi_epi8(a[2 * i], a[2 * i + 1]);
	}
	/* q[4h + 2j], q[4h + 2j + 1]: rows 8j..8j + 3 and 8j + 4..8j + 7 of
	 * columns 4h..4h + 3 */
#pragma GCC unroll 2
	for (int h = 0; h < 2; h++) {
#pragma GCC unroll 2
		for (int j = 0; j < 2; j++) {
			__m128i x = b[4 * h + j], y = b[4 * h + 2 + j];

			q[4 * h + 2 * j] = _mm_unpacklo_epi16(x, y);
			q[4 * h + 2 * j + 1] = _mm_unpackhi_epi16(x, y);
		}
	}
#pragma GCC unroll 4
	for (int j = 0; j < 4; j++) {
		uint8_t *row = dst + (r0 + 4 * (size_t)j) * rl + c0;

		store_rows2(row, rl, _mm_unpacklo_epi32(q[j], q[4 + j]));
		store_rows2(row + 2 * rl, rl, _mm_unpackhi_epi32(q[j], q[4 + j]));
	}
}

/*
 * Rows @r0..@r0 + 15, columns @c0..@c0 + 7 of cw_transpose() to columns:
 * 16 loads, 32 unpacks and 8 stores for 128 bytes, where byte by byte it
 * took about 300 instructions, and the transpose was a quarter of the
 * capture's CPU under pgbench. Each round of unpacks interleaves rows
 * that are 8, 4, 2, then 1 apart, so that a column's 16 bytes end in row
 * order.
 */
static inline void to_columns_16x8(uint8_t *dst, const uint8_t *src, size_t nrows, size_t rl,
				   size_t r0, size_t c0)
{
	__m128i x[16], b[8], q[8], e[8];

#pragma GCC unroll 16
	for (int k = 0; k < 16; k++)
		x[k] = _mm_loadl_epi64((const __m128i *)(src + (r0 + (size_t)k) * rl + c0));
	/* b[k]: rows k, k + 8 of the 8 columns */
#pragma GCC unroll 8
	for (int k = 0; k < 8; k++)
		b[k] = _mm_unpacklo_epi8(x[k], x[k + 8]);
	/* q[k], q[4 + k]: rows k, k + 4, k + 8, k + 12 of columns 0..3, 4..7 */
#pragma GCC unroll 4
	for (int k = 0; k < 4; k++) {
		q[k] = _mm_unpacklo_epi8(b[k], b[k + 4]);
		q[4 + k] = _mm_unpackhi_epi8(b[k], b[k + 4]);
	}
	/* e[4h + 2k], e[4h + 2k + 1]: rows k, k + 2, ..., k + 14 of columns
	 * 4h, 4h + 1 and 4h + 2, 4h + 3 */
#pragma GCC unroll 2
	for (int h = 0; h < 2; h++) {
#pragma GCC unroll 2
		for (int k = 0; k < 2; k++) {
			e[4 * h + 2 * k] = _mm_unpacklo_epi8(q[4 * h + k], q[4 * h + k + 2]);
			e[4 * h + 2 * k + 1] = _mm_unpackhi_epi8(q[4 * h + k], q[4 * h + k + 2]);
		}
	}
#pragma GCC unroll 2
	for (int h = 0; h < 2; h++) {
#pragma GCC unroll 2
		for (int j = 0; j < 2; j++) {
			uint8_t *col = dst + (c0 + 4 * (size_t)h + 2 * (size_t)j) * nrows + r0;

			_mm_storeu_si128((__m128i *)col,
					 _mm_unpacklo_epi8(e[4 * h + j], e[4 * h + 2 + j]));
			_mm_storeu_si128((__m128i *)(col + nrows),
					 _mm_unpackhi_epi8(e[4 * h + j], e[4 * h + 2 + j]));
		}
	}
}
#endif

/*
 * Rows to columns (@to_cols) or back: @nrows rows of @rl bytes at one end,
 * @rl columns of @nrows bytes at the other, 64 rows at a time, so that
 * every run of column stores or loads covers a cache line and the block
 * of rows stays in L1. Byte by byte over whole columns, a group of 8192
 * records (a 1 MiB ping-pong segment has three) puts its columns 8 KiB
 * apart, all in one L1 set: the writer ran 9x slower and every load of
 * the reader's missed. Whole blocks of 16 rows by 8 columns go through
 * SSE2 where there is one; the rest byte by byte.
 */
static inline void cw_transpose(uint8_t *dst, const uint8_t *src, size_t nrows, size_t rl,
				bool to_cols)
{
	for (size_t r0 = 0; r0 < nrows; r0 += 64) {
		size_t n = nrows - r0 < 64 ? nrows - r0 : 64, c = 0;

#ifdef __SSE2__
		if (n == 64)
			for (; c + 8 <= rl; c += 8)
				for (size_t k = 0; k < 64; k += 16) {
					if (to_cols)
						to_columns_16x8(dst, src, nrows, rl, r0 + k, c);
					else
						from_columns_16x8(dst, src, nrows, rl, r0 + k, c);
				}
#endif
		for (; c < rl; c++)
			for (size_t k = 0; k < n; k++) {
				size_t row = (r0 + k) * rl + c, col = c * nrows + r0 + k;

				if (to_cols)
					dst[col] = src[row];
				else
					dst[row] = src[col];
			}
	}
}

#endif /* CAUSEWAY_TRACE_TRANSPOSE_H */
