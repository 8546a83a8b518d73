// SPDX-License-Identifier: MIT
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include "capture/flusher.h"

struct flusher {
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t wake;
	int fd;
	bool stop;
	int err;
};

static void *flusher_main(void *arg)
{
	struct flusher *f = arg;
	struct timespec until;

	pthread_mutex_lock(&f->lock);
	while (!f->stop) {
		clock_gettime(CLOCK_MONOTONIC, &until);
		until.tv_sec += 1;
		while (!f->stop && pthread_cond_timedwait(&f->wake, &f->lock, &until) != ETIMEDOUT)
			;
		if (f->stop)
			break;
		pthread_mutex_unlock(&f->lock);
		if (fdatasync(f->fd)) {
			int err = -errno;

			pthread_mutex_lock(&f->lock);
			if (!f->err)
				f->err = err;
		} else {
			pthread_mutex_lock(&f->lock);
		}
	}
	pthread_mutex_unlock(&f->lock);
	return NULL;
}

struct flusher *flusher__start(int fd)
{
	struct flusher *f = calloc(1, sizeof(*f));
	pthread_condattr_t attr;
	sigset_t all, old;
	int err;

	if (!f)
		return NULL;
	f->fd = fd;
	pthread_mutex_init(&f->lock, NULL);
	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	pthread_cond_init(&f->wake, &attr);
	pthread_condattr_destroy(&attr);
	/* Signals go to the drain loop's thread, whose poll they cut short;
	 * taken by this thread they would wait for the poll's timeout. The
	 * thread inherits the mask it is created with. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	err = pthread_create(&f->thread, NULL, flusher_main, f);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err) {
		pthread_cond_destroy(&f->wake);
		pthread_mutex_destroy(&f->lock);
		free(f);
		errno = err;
		return NULL;
	}
	return f;
}

int flusher__error(struct flusher *f)
{
	int err;

	pthread_mutex_lock(&f->lock);
	err = f->err;
	pthread_mutex_unlock(&f->lock);
	return err;
}

void flusher__stop(struct flusher *f)
{
	if (!f)
		return;
	pthread_mutex_lock(&f->lock);
	f->stop = true;
	pthread_cond_signal(&f->wake);
	pthread_mutex_unlock(&f->lock);
	pthread_join(f->thread, NULL);
	pthread_cond_destroy(&f->wake);
	pthread_mutex_destroy(&f->lock);
	free(f);
}
