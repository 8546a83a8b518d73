/* SPDX-License-Identifier: MIT */
/*
 * Every file a causeway program writes (trace, database, export, report)
 * is written the same way (docs/reference.md, "Outputs"):
 *
 *  - under a temporary name beside its final one, OUT.tmp.PID, created
 *    with O_EXCL | O_NOFOLLOW and mode 0600: the trace and the database
 *    hold command lines, query texts, process names and kernel
 *    addresses, which are nobody else's business;
 *  - never at a name that is a symbolic link (a root program writing
 *    through one can be made to write any file), that is not a regular
 *    file, or that is one of the run's own inputs (the same inode under
 *    any name);
 *  - renamed into place at the end without replacing anything: a file
 *    that appeared at the name meanwhile (another run's) wins, and this
 *    run fails; only with --force is an existing regular file replaced,
 *    in one atomic rename;
 *  - under sudo, handed to SUDO_UID:SUDO_GID, so that the user who asked
 *    for it can read it;
 *  - a run that ends before the rename removes its temporary; one that is
 *    killed leaves it, and the next run to the same name removes the
 *    temporaries of processes that are gone.
 */
#ifndef CAUSEWAY_LIB_OUTFILE_H
#define CAUSEWAY_LIB_OUTFILE_H

#include <stdbool.h>
#include <stddef.h>

struct cw_outfile;

struct cw_outfile_opts {
	const char *prog;	   /* prefix of every message */
	bool force;		   /* replace an existing regular file */
	bool quiet;		   /* no notices (errors are still said) */
	const char *const *inputs; /* the run's inputs: never written */
	size_t ninputs;
};

/*
 * Check @path against @opts and create its temporary. @return NULL after
 * a message on stderr; errno is EEXIST or EINVAL where the name was
 * refused (the caller's "bad arguments"), another errno where the
 * temporary could not be made.
 */
struct cw_outfile *cw_outfile__create(const char *path, const struct cw_outfile_opts *opts);

/* Only the checks of cw_outfile__create, for a program that must refuse
 * a bad name before it starts any work. @return 0, or -errno after a
 * message. */
int cw_outfile__check(const char *path, const struct cw_outfile_opts *opts);

int cw_outfile__fd(const struct cw_outfile *o);

/* The temporary's path: what a library that opens by name (SQLite) is
 * given. Valid until cw_outfile__free(). */
const char *cw_outfile__tmp(const struct cw_outfile *o);

/*
 * fsync the temporary, hand it to the sudo user, check the name again and
 * rename the temporary into place (without replacing, unless force), then
 * fsync the directory. The caller has closed whatever else writes the
 * file. @return 0, or a negative errno after a message: -EEXIST when
 * another file took the name meanwhile.
 */
int cw_outfile__commit(struct cw_outfile *o);

/* Close; a temporary never committed is removed. NULL ok. */
void cw_outfile__free(struct cw_outfile *o);

#endif /* CAUSEWAY_LIB_OUTFILE_H */
