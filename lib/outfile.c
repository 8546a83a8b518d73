// SPDX-License-Identifier: MIT
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/esc.h"
#include "lib/outfile.h"

struct cw_outfile {
	char *path, *tmp;
	struct cw_outfile_opts opts;
	bool committed;
	int fd;
};

static void say(const struct cw_outfile_opts *o, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void say(const struct cw_outfile_opts *o, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	cw_esc_vmsg(stderr, o->prog, fmt, ap);
	va_end(ap);
}

static const char *kind_of(mode_t m)
{
	return S_ISLNK(m) ? "a symbolic link" : S_ISDIR(m) ? "a directory" :
	       S_ISFIFO(m) ? "a FIFO" : S_ISCHR(m) || S_ISBLK(m) ? "a device" :
	       S_ISSOCK(m) ? "a socket" : "of an unknown kind";
}

/* Is @path one of the run's inputs, as itself (a hard link) or through
 * a symbolic link? Inputs are followed through links too: their targets
 * are what must not be written. */
static const char *input_at(const struct cw_outfile_opts *o, const char *path,
			    const struct stat *lst)
{
	struct stat si, st;
	bool followed = !stat(path, &st);

	for (size_t i = 0; i < o->ninputs; i++) {
		if (!o->inputs[i] || stat(o->inputs[i], &si))
			continue;
		if ((si.st_dev == lst->st_dev && si.st_ino == lst->st_ino) ||
		    (followed && si.st_dev == st.st_dev && si.st_ino == st.st_ino))
			return o->inputs[i];
	}
	return NULL;
}

int cw_outfile__check(const char *path, const struct cw_outfile_opts *o)
{
	const char *in;
	struct stat st;

	if (lstat(path, &st)) {
		if (errno == ENOENT)
			return 0;
		say(o, "cannot use %s: %s", path, strerror(errno));
		return -errno;
	}
	if ((in = input_at(o, path, &st))) {
		say(o, "%s is the input %s; refusing to overwrite it", path, in);
		return -EINVAL;
	}
	if (!S_ISREG(st.st_mode)) {
		say(o, "%s is not a regular file (%s); refusing to write through it or replace it",
		    path, kind_of(st.st_mode));
		return -EINVAL;
	}
	if (!o->force) {
		say(o, "%s exists (use --force to replace it)", path);
		return -EEXIST;
	}
	return 0;
}

/*
 * A killed run leaves PATH.tmp.PID behind. Remove those of @path whose
 * process is gone: exactly that name with a decimal pid, a regular file,
 * and no process with that pid. A pid that was reused keeps its file:
 * better a stale file than a live run's output lost.
 */
static void remove_stale(const char *path, const struct cw_outfile_opts *o)
{
	char *dcopy = strdup(path), *bcopy = strdup(path);
	const char *base, *dir;
	size_t blen;
	DIR *d = NULL;
	struct dirent *de;

	if (!dcopy || !bcopy)
		goto cleanup;
	dir = dirname(dcopy);
	if (!(d = opendir(dir)))
		goto cleanup;
	base = basename(bcopy);
	blen = strlen(base);
	while ((de = readdir(d))) {
		const char *p = de->d_name;
		unsigned long long pid = 0;
		struct stat st;
		size_t nd = 0;

		if (strncmp(p, base, blen) || strncmp(p + blen, ".tmp.", 5))
			continue;
		for (p += blen + 5; *p >= '0' && *p <= '9' && nd < 11; p++, nd++)
			pid = pid * 10 + (unsigned)(*p - '0');
		if (*p || !nd || nd > 10 || p[-nd] == '0' || pid > INT_MAX ||
		    (pid_t)pid == getpid())
			continue;
		if (kill((pid_t)pid, 0) == 0 || errno != ESRCH)
			continue; /* alive, perhaps another user's */
		if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) || !S_ISREG(st.st_mode))
			continue;
		/* Said even under -q: a file of the user's went away. */
		if (!unlinkat(dirfd(d), de->d_name, 0))
			say(o, "removed %s/%s, left by a run (pid %llu) that is gone", dir, de->d_name,
			    pid);
	}
cleanup:
	if (d)
		closedir(d);
	free(dcopy);
	free(bcopy);
}

struct cw_outfile *cw_outfile__create(const char *path, const struct cw_outfile_opts *opts)
{
	struct cw_outfile *o;
	int err = cw_outfile__check(path, opts);

	if (err) {
		errno = -err;
		return NULL;
	}
	remove_stale(path, opts);
	o = calloc(1, sizeof(*o));
	if (!o || !(o->path = strdup(path)) || asprintf(&o->tmp, "%s.tmp.%d", path, getpid()) < 0) {
		say(opts, "out of memory");
		if (o)
			o->tmp = NULL;
		err = ENOMEM;
		goto fail;
	}
	o->opts = *opts;
	/* The caller's list may not outlive this call: the commit checks
	 * the inputs again. The names themselves are the caller's (argv). */
	o->opts.inputs = NULL;
	if (opts->ninputs) {
		const char **in = calloc(opts->ninputs, sizeof(*in));

		if (!in) {
			say(opts, "out of memory");
			err = ENOMEM;
			goto fail;
		}
		memcpy(in, opts->inputs, opts->ninputs * sizeof(*in));
		o->opts.inputs = in;
	}
	o->fd = open(o->tmp, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (o->fd < 0) {
		err = errno;
		say(opts, "cannot create %s: %s", o->tmp, strerror(err));
		goto fail;
	}
	return o;
fail:
	if (o) {
		free((void *)o->opts.inputs);
		free(o->path);
		free(o->tmp);
	}
	free(o);
	errno = err;
	return NULL;
}

int cw_outfile__fd(const struct cw_outfile *o)
{
	return o->fd;
}

const char *cw_outfile__tmp(const struct cw_outfile *o)
{
	return o->tmp;
}

/* A decimal id, as sudo writes it. */
static int parse_id(const char *s, unsigned long *id)
{
	char *end;

	if (!s || !*s || *s == '-')
		return -EINVAL;
	errno = 0;
	*id = strtoul(s, &end, 10);
	return errno || *end || *id >= (unsigned long)(uid_t)-1 ? -EINVAL : 0;
}

static void give_to_sudo_user(const struct cw_outfile *o)
{
	const char *su = getenv("SUDO_UID"), *sg = getenv("SUDO_GID");
	unsigned long uid, gid;

	if (geteuid() != 0 || (!su && !sg))
		return;
	if (parse_id(su, &uid) || parse_id(sg, &gid)) {
		if (!o->opts.quiet)
			say(&o->opts, "%s stays owned by root: SUDO_UID=%s SUDO_GID=%s is not a user and group id",
			    o->path, su ? su : "(unset)", sg ? sg : "(unset)");
		return;
	}
	if (fchown(o->fd, (uid_t)uid, (gid_t)gid) && !o->opts.quiet)
		say(&o->opts, "%s stays owned by root: chown to %lu:%lu: %s", o->path, uid, gid,
		    strerror(errno));
}

/* Make the rename itself durable, as the data is. */
static void sync_dir(const char *path)
{
	char *copy = strdup(path);
	int fd = copy ? open(dirname(copy), O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;

	if (fd >= 0) {
		fsync(fd);
		close(fd);
	}
	free(copy);
}

int cw_outfile__commit(struct cw_outfile *o)
{
	struct stat st;
	int err;

	/* The data reaches the disk before the name does: a crash leaves
	 * the old file or the whole new one, never a renamed empty one. */
	if (fsync(o->fd)) {
		err = -errno;
		say(&o->opts, "cannot sync %s: %s", o->tmp, strerror(-err));
		return err;
	}
	give_to_sudo_user(o);
	/* Whatever appeared at the name since the start is checked again. */
	if (!o->opts.force && !lstat(o->path, &st)) {
		say(&o->opts, "%s was created by another run while this one wrote it; left as it is "
			      "(use --force to replace it)", o->path);
		return -EEXIST;
	}
	err = cw_outfile__check(o->path, &o->opts);
	if (err)
		return err;
	if (o->opts.force)
		err = rename(o->tmp, o->path) ? -errno : 0;
	else
		/* Never replace what another run created meanwhile. */
		err = renameat2(AT_FDCWD, o->tmp, AT_FDCWD, o->path, RENAME_NOREPLACE) ? -errno : 0;
	if (err == -EINVAL && !o->opts.force) {
		/* A filesystem without RENAME_NOREPLACE: link() also refuses
		 * an existing name. */
		err = link(o->tmp, o->path) ? -errno : 0;
		if (!err)
			unlink(o->tmp);
	}
	if (err == -EEXIST) {
		say(&o->opts, "%s was created by another run while this one wrote it; left as it is "
			      "(use --force to replace it)", o->path);
		return err;
	}
	if (err) {
		say(&o->opts, "cannot rename %s to %s: %s", o->tmp, o->path, strerror(-err));
		return err;
	}
	o->committed = true;
	sync_dir(o->path);
	return 0;
}

void cw_outfile__free(struct cw_outfile *o)
{
	if (!o)
		return;
	if (o->fd >= 0)
		close(o->fd);
	if (!o->committed)
		unlink(o->tmp);
	free((void *)o->opts.inputs);
	free(o->path);
	free(o->tmp);
	free(o);
}
