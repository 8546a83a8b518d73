// SPDX-License-Identifier: MIT
/*
 * libFuzzer target for the segment reader and the dump: arbitrary bytes as
 * a trace file must never crash, hang or leak, whatever the damage.
 *
 * Checksums would stop almost every mutation at the header, so the first
 * input byte picks a mode: odd means "repair" — before reading, every
 * segment header found in the rest of the input gets a correct payload
 * checksum (when its payload lies inside the input) and a correct header
 * checksum, so mutations reach the length checks, LZ4, the record walk and
 * the dump. Even means the bytes are read as they are.
 *
 * Not part of `make test`. Build and run (clang 14, libclang-rt-dev):
 *
 *   make fuzz     (or by hand: clang -g -O1 -fsanitize=fuzzer,address,undefined
 *                 -D_GNU_SOURCE -I. tests/fuzz_reader.c trace/reader.c trace/format.c
 *                 analyze/dump.c analyze/text.c -llz4 -lz -o build/fuzz_reader)
 *   mkdir -p build/fuzz-corpus && cp fixtures/ *.cwt build/fuzz-corpus/ (prefix each with
 *       a mode byte, or let the fuzzer find one)
 *   build/fuzz_reader -max_total_time=120 -max_len=65536 build/fuzz-corpus
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "schema/events.h"
#include "trace/format.h"
#include "trace/reader.h"
#include "analyze/dump.h"

static void quiet(void *ctx, enum cw_diag_level level, const char *msg)
{
	(void)ctx;
	(void)level;
	(void)msg;
}

static void repair(uint8_t *p, size_t n)
{
	for (size_t i = 0; i + CW_SEG_HDR_LEN <= n; i++) {
		uint64_t hl, sl;

		if (memcmp(p + i, CW_MAGIC, CW_MAGIC_LEN))
			continue;
		hl = cw_get16(p + i + 56);
		sl = cw_get32(p + i + 48);
		if (hl >= CW_SEG_HDR_LEN && i + hl + sl <= n)
			cw_put32(p + i + 52, cw_crc32(p + i + hl, sl));
		cw_seg_hdr__reseal(p + i);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static FILE *devnull;
	static struct cw_text *text;
	struct cw_reader_opts o = { quiet, NULL };
	struct cw_reader_stats st;
	struct cw_segment seg;
	struct cw_reader *r;
	char path[64];
	uint8_t *copy;
	int fd, ret;

	if (!size)
		return 0;
	if (!devnull)
		devnull = fopen("/dev/null", "w");
	if (!text)
		text = cw_text__new();
	if (!devnull || !text)
		abort();
	copy = malloc(size);
	if (!copy)
		return 0;
	memcpy(copy, data + 1, size - 1);
	if (data[0] & 1)
		repair(copy, size - 1);

	fd = memfd_create("fuzz.cwt", MFD_CLOEXEC);
	if (fd < 0 || write(fd, copy, size - 1) != (ssize_t)(size - 1))
		abort();
	free(copy);
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);

	r = cw_reader__open(path, &o);
	if (!r)
		abort();
	while ((ret = cw_reader__next(r, &seg)) > 0) {
		const struct cw_hdr *h;
		size_t pos = 0;
		uint32_t n = 0;

		while ((h = cw_segment__next_record(&seg, &pos)))
			n++;
		/* the reader promised: every record walked, sizes valid */
		if (n != seg.nrec || pos != seg.len)
			abort();
		if (cw_dump_segment(devnull, text, &seg))
			abort();
	}
	/* sticky end */
	if (cw_reader__next(r, &seg) != ret)
		abort();
	cw_reader__stats(r, &st);
	if (st.bytes_skipped > st.file_size)
		abort();
	cw_reader__free(r);
	close(fd);
	return 0;
}
