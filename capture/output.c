// SPDX-License-Identifier: MIT
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "capture/log.h"
#include "capture/output.h"

struct output {
	char *path, *tmp;
	bool force, committed;
	int fd;
};

/* Is @path free to be written: absent, or (with @force) a regular file?
 * @return 0, or -EEXIST / -EINVAL / -errno after a message. */
static int check_target(const char *path, bool force)
{
	struct stat st;

	if (lstat(path, &st)) {
		if (errno == ENOENT)
			return 0;
		cw_msg("cannot use %s: %s", path, strerror(errno));
		return -errno;
	}
	if (S_ISLNK(st.st_mode)) {
		cw_msg("%s is a symbolic link; refusing to write through it", path);
		return -EINVAL;
	}
	if (!S_ISREG(st.st_mode)) {
		cw_msg("%s exists and is not a regular file", path);
		return -EINVAL;
	}
	if (!force) {
		cw_msg("%s exists (use --force to replace it)", path);
		return -EEXIST;
	}
	return 0;
}

struct output *output__create(const char *path, bool force)
{
	struct output *o;

	if (check_target(path, force))
		return NULL;
	o = calloc(1, sizeof(*o));
	if (!o || !(o->path = strdup(path)) || asprintf(&o->tmp, "%s.tmp.%d", path, getpid()) < 0) {
		cw_msg("out of memory");
		if (o)
			o->tmp = NULL;
		goto fail;
	}
	o->force = force;
	o->fd = open(o->tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (o->fd < 0) {
		cw_msg("cannot create %s: %s", o->tmp, strerror(errno));
		goto fail;
	}
	return o;
fail:
	if (o) {
		free(o->path);
		free(o->tmp);
	}
	free(o);
	return NULL;
}

int output__fd(const struct output *o)
{
	return o->fd;
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

static void give_to_sudo_user(const struct output *o)
{
	const char *su = getenv("SUDO_UID"), *sg = getenv("SUDO_GID");
	unsigned long uid, gid;

	if (geteuid() != 0 || (!su && !sg))
		return;
	if (parse_id(su, &uid) || parse_id(sg, &gid)) {
		cw_notice("%s stays owned by root: SUDO_UID=%s SUDO_GID=%s is not a user and group id",
			  o->path, su ? su : "(unset)", sg ? sg : "(unset)");
		return;
	}
	if (fchown(o->fd, (uid_t)uid, (gid_t)gid))
		cw_notice("%s stays owned by root: chown to %lu:%lu: %s", o->path, uid, gid,
			  strerror(errno));
}

/* Make the rename itself durable, as the flusher makes the data. */
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

int output__commit(struct output *o)
{
	int err;

	give_to_sudo_user(o);
	/* Whatever appeared at the name since the start is checked again. */
	err = check_target(o->path, o->force);
	if (err)
		return err;
	if (o->force)
		err = rename(o->tmp, o->path) ? -errno : 0;
	else
		/* Never replace what someone created meanwhile. */
		err = renameat2(AT_FDCWD, o->tmp, AT_FDCWD, o->path, RENAME_NOREPLACE) ? -errno : 0;
	if (err == -EINVAL && !o->force) {
		/* A filesystem without RENAME_NOREPLACE: link() also refuses
		 * an existing name. */
		err = link(o->tmp, o->path) ? -errno : 0;
		if (!err)
			unlink(o->tmp);
	}
	if (err) {
		cw_msg("cannot rename %s to %s: %s", o->tmp, o->path, strerror(-err));
		return err;
	}
	o->committed = true;
	sync_dir(o->path);
	return 0;
}

void output__free(struct output *o)
{
	if (!o)
		return;
	if (o->fd >= 0)
		close(o->fd);
	if (!o->committed)
		unlink(o->tmp);
	free(o->path);
	free(o->tmp);
	free(o);
}
