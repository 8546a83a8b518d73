// SPDX-License-Identifier: MIT
/*
 * The /proc snapshot of executable mappings at capture start; see
 * mapsnap.h.
 *
 * The build-id is read from /proc/PID/map_files/START-END, the very file
 * mapped there, rather than from the path: the path may have been
 * replaced since (a package upgrade) and its build-id would then name an
 * object the process does not run. Only a regular file is opened (never
 * a device or a FIFO a path could point to), and only its program
 * headers' notes are read, each bounded. Objects are cached by device
 * and inode: every process maps the same libc.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include "schema/events.h"
#include "capture/mapsnap.h"
#include "trace/writer.h"

#define PAD8(n) (((n) + 7u) & ~(size_t)7u)
#define NOTE_MAX (64u << 10) /* a PT_NOTE segment read at most */
#define PATH_MAX_REC 4096u

#ifndef NT_GNU_BUILD_ID
#define NT_GNU_BUILD_ID 3
#endif

struct object {
	unsigned major, minor;
	uint64_t ino;
	uint8_t id[20];
	uint8_t len; /* 0: none found */
};

struct cache {
	struct object *o;
	size_t n, cap;
};

/* The GNU build-id note of the ELF file @fd: its length (0: none). */
static uint8_t elf_build_id(int fd, uint8_t id[20])
{
	Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	size_t nph = 0;
	uint8_t len = 0;

	if (!elf)
		return 0;
	if (elf_kind(elf) != ELF_K_ELF || elf_getphdrnum(elf, &nph))
		nph = 0;
	for (size_t i = 0; i < nph && !len; i++) {
		GElf_Phdr ph;
		Elf_Data *d;
		GElf_Nhdr nh;
		size_t off = 0, noff, doff;

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_NOTE || ph.p_filesz > NOTE_MAX)
			continue;
		d = elf_getdata_rawchunk(elf, (int64_t)ph.p_offset, ph.p_filesz, ELF_T_NHDR);
		while (d && (off = gelf_getnote(d, off, &nh, &noff, &doff)) > 0) {
			if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
			    !memcmp((char *)d->d_buf + noff, "GNU", 4) && nh.n_descsz &&
			    nh.n_descsz <= 20) {
				len = (uint8_t)nh.n_descsz;
				memcpy(id, (char *)d->d_buf + doff, len);
				break;
			}
		}
	}
	elf_end(elf);
	return len;
}

/* The cached build-id of object (@major:@minor, @ino), reading it through
 * @map_file the first time. NULL when out of memory. */
static struct object *object_of(struct cache *c, unsigned major, unsigned minor, uint64_t ino,
				const char *map_file)
{
	struct object *o;
	struct stat st;
	int fd;

	for (size_t i = 0; i < c->n; i++)
		if (c->o[i].ino == ino && c->o[i].major == major && c->o[i].minor == minor)
			return &c->o[i];
	if (c->n == c->cap) {
		size_t cap = c->cap ? 2 * c->cap : 256;
		struct object *n = realloc(c->o, cap * sizeof(*n));

		if (!n)
			return NULL;
		c->o = n;
		c->cap = cap;
	}
	o = &c->o[c->n++];
	*o = (struct object){ .major = major, .minor = minor, .ino = ino };
	fd = open(map_file, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return o;
	if (!fstat(fd, &st) && S_ISREG(st.st_mode))
		o->len = elf_build_id(fd, o->id);
	close(fd);
	return o;
}

static uint32_t prot_of(const char *perms)
{
	return (perms[0] == 'r' ? PROT_READ : 0) | (perms[1] == 'w' ? PROT_WRITE : 0) |
	       (perms[2] == 'x' ? PROT_EXEC : 0);
}

static int write_process(struct cw_writer *w, struct cache *c, pid_t pid, uint64_t ts,
			 uint64_t *count)
{
	uint8_t buf[sizeof(struct cw_mmap) + PATH_MAX_REC + 8];
	struct cw_mmap *m = (struct cw_mmap *)buf;
	char path[64], line[PATH_MAX_REC + 128];
	FILE *f;
	int err = 0;

	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	f = fopen(path, "re");
	if (!f)
		return 0; /* exited meanwhile */
	while (!err && fgets(line, sizeof(line), f)) {
		unsigned long long start, end, pgoff, ino;
		unsigned major, minor;
		char perms[5], *file;
		struct object *o = NULL;
		size_t plen, len;
		int at = 0;

		if (sscanf(line, "%llx-%llx %4s %llx %x:%x %llu %n", &start, &end, perms, &pgoff,
			   &major, &minor, &ino, &at) != 7 || !at || perms[2] != 'x')
			continue;
		file = line + at;
		file[strcspn(file, "\n")] = 0;
		if (file[0] == '/' && ino) {
			char mf[96];

			snprintf(mf, sizeof(mf), "/proc/%d/map_files/%llx-%llx", pid, start, end);
			o = object_of(c, major, minor, ino, mf);
			if (!o) {
				err = -ENOMEM;
				break;
			}
		} else if (strcmp(file, "[vdso]")) {
			continue; /* anonymous code (a JIT): no object to symbolize from */
		}
		plen = strnlen(file, PATH_MAX_REC);
		len = PAD8(sizeof(*m) + plen);
		memset(buf, 0, len);
		m->hdr.type = CW_REC_META_MMAP;
		m->hdr.size = (uint16_t)len;
		m->hdr.cpu = 0xffff;
		m->hdr.flags = CW_MMAP_SNAPSHOT;
		m->hdr.ts = ts;
		m->task.pid = m->task.tid = (uint32_t)pid;
		m->start = start;
		m->len = end - start;
		m->pgoff = pgoff;
		m->prot = prot_of(perms);
		m->mflags = perms[3] == 's' ? MAP_SHARED : MAP_PRIVATE;
		if (o && o->len) {
			m->hdr.flags |= CW_MMAP_BUILD_ID;
			m->build_id_len = o->len;
			memcpy(m->build_id, o->id, o->len);
		}
		m->path_len = (uint16_t)plen;
		memcpy(buf + sizeof(*m), file, plen);
		err = cw_writer__append(w, buf, len);
		*count += !err;
	}
	fclose(f);
	return err;
}

int mapsnap__write(struct cw_writer *w, const pid_t *pids, size_t n, pid_t skip, uint64_t ts,
		   uint64_t *count)
{
	struct cache c = { 0 };
	struct dirent *de;
	DIR *d = NULL;
	int err = 0;

	*count = 0;
	if (elf_version(EV_CURRENT) == EV_NONE)
		return -ENOTSUP;
	if (pids) {
		for (size_t i = 0; i < n && !err; i++)
			if (pids[i] != skip)
				err = write_process(w, &c, pids[i], ts, count);
		goto out;
	}
	d = opendir("/proc");
	if (!d) {
		err = -errno;
		goto out;
	}
	while (!err && (de = readdir(d))) {
		char *end;
		unsigned long pid = strtoul(de->d_name, &end, 10);

		if (pid && !*end && (pid_t)pid != skip)
			err = write_process(w, &c, (pid_t)pid, ts, count);
	}
	closedir(d);
out:
	free(c.o);
	return err;
}
