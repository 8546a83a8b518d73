// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * causeway edge plane, io_uring class (docs/model.md §2.1): the life of rings and
 * requests, each event as one schema/events.h record on the `edges` ring.
 *
 *   io_uring_create            CW_REC_URING_CREATE   a ring is born
 *   io_uring_submit_req        CW_REC_URING_SUBMIT   a request is born
 *   io_uring_queue_async_work  CW_REC_URING_PUNT     handed to io-wq
 *   io_wq_submit_work (fentry) CW_REC_URING_WORK     an io-wq worker runs it
 *   io_uring_poll_arm          CW_REC_URING_POLL_ARM waits for readiness
 *   io_uring_task_add          CW_REC_URING_TASK_ADD readiness came: task work queued
 *   io_uring_link              CW_REC_URING_LINK     linked after another
 *   io_uring_fail_link         CW_REC_URING_FAIL_LINK cancelled by its chain
 *   io_uring_complete          CW_REC_URING_COMPLETE a CQE posted
 *   io_uring_cqe_overflow      CW_REC_URING_OVERFLOW a CQE did not fit
 *   io_ring_exit_work (fexit)  CW_REC_URING_FREE     the ring is freed
 *
 * The fentry/fexit programs are optional (capture/classes.c): kernels that
 * describe those functions may still refuse BPF trampolines, and the
 * class is recorded without them; the metadata key records_missing says
 * so.
 *
 * Filtering (docs/model.md §2.2), with filter_enabled: an event raised in task
 * context by a traced process is recorded. Elsewhere (an interrupt, or a
 * thread of another process, such as a pipe writer whose write fires a
 * poll) only objects the traced set made are: the requests it submitted,
 * remembered from submit until their final completion (a CQE without
 * IORING_CQE_F_MORE), and the rings it created, remembered until freed.
 *
 * Causes: a request whose readiness (task_add) or completion is processed
 * in interrupt context names itself in that level's cause slot, so the
 * wakeup it raises (sched_waking) carries it (format.md, Causes). The end
 * of that processing must be proven, or the slot could name the request
 * for a later, unrelated wakeup: softirq_exit ends a softirq, and
 * irq_handler_exit a device interrupt handler. Other hardirq work (an
 * hrtimer callback firing a timerfd poll, an IPI) has no end this object
 * can see, so there no slot is set: a missing cause, never a wrong one.
 * Task work goes to one thread, the request's task; the slot holds it
 * (cw_slot.tid at an interrupt level) and sched.bpf.c names the cause
 * only on a wakeup of that thread, and once.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>
#include "schema/events.h"
#include "bpf/config.h"
#include "causeway.bpf.h"
#include "irq.bpf.h"

char LICENSE[] SEC("license") = "Dual MIT/GPL";

/* include/uapi/linux/io_uring.h; part of the ABI. */
#define CW_IORING_SETUP_SQPOLL (1U << 1)
#define CW_IORING_SETUP_CQE32 (1U << 11)
#define CW_IORING_CQE_F_32 (1U << 15) /* 6.18+: this CQE is 32 bytes (mixed rings) */

/* A ring in the remembered objects. Object kinds past CW_CAUSE_* are
 * private to a class: (class << 8) | n never equals a cause kind. */
#define CW_OBJ_URING_RING ((CW_CLASS_IO_URING << 8) | 1)

/* Before 6.13 a request named its task directly, not through tctx. */
struct io_kiocb___old {
	struct task_struct *task;
} __attribute__((preserve_access_index));

/*
 * Is an event about request @req (0: none) of ring @ring, raised at
 * context level @lvl, to be recorded? In an unknown context (no way to
 * read the preempt count) the current task may be the one acting or an
 * interrupted one: a traced one keeps the event, which names its context
 * as unknown, rather than losing every submission.
 */
static __always_inline bool uring_traced(__u8 lvl, __u64 ring, __u64 req)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;
	bool task = lvl == CW_CTX_TASK || lvl == CW_CTX_UNKNOWN;

	if (lvl == CW_CTX_TASK && cw_is_self(tgid))
		return false;
	if (!cw_config.filter_enabled)
		return true;
	if (task && cw_tgid_traced(tgid))
		return true;
	if (req)
		return cw_obj_known(CW_CAUSE_IO_REQ, req);
	return ring && cw_obj_known(CW_OBJ_URING_RING, ring);
}

/* The thread that runs @req's task work, which the task_add wakes. */
static __always_inline __u32 req_task_tid(struct io_kiocb *req)
{
	struct task_struct *t;

	if (bpf_core_field_exists(req->tctx))
		t = BPF_CORE_READ(req, tctx, task);
	else
		t = BPF_CORE_READ((struct io_kiocb___old *)req, task);
	return t ? BPF_CORE_READ(t, pid) : 0;
}

/*
 * Name @req of @ring in the cause slot of level @lvl, where this object
 * can see that level's processing end (see the top of the file); @wakee:
 * the one thread the processing wakes, 0 when unknown.
 */
static __always_inline void set_cause(__u8 lvl, __u64 req, __u64 ring, __u32 wakee)
{
	struct cw_slot *s;

	if (!cw_slot_bounded(lvl))
		return;
	cw_slot_set(lvl, CW_CAUSE_IO_REQ, req, ring);
	s = cw_slot_of(lvl);
	if (s)
		s->tid = wakee;
}

/* The common part of a request record, read through the tracepoint's
 * typed pointer. */
static __always_inline void fill_req(struct cw_uring_req *e, struct io_kiocb *req, __u32 aux,
				     __u32 aux2)
{
	cw_current(&e->task, &e->task_start);
	e->ring = (__u64)req->ctx;
	e->req = (__u64)req;
	e->user_data = req->cqe.user_data;
	e->req_flags = req->flags;
	e->aux = aux;
	e->aux2 = aux2;
	e->opcode = req->opcode;
	e->sq_thread = 0;
	__builtin_memset(e->__pad, 0, sizeof(e->__pad));
}

/* A request event: punt, poll arm, task add, fail link. @return the
 * context level when it was recorded, else -1. */
static __always_inline int emit_req(struct io_kiocb *req, __u16 type, __u32 aux, __u32 aux2)
{
	__u8 lvl = cw_context();
	struct cw_uring_req *e;

	if (!uring_traced(lvl, (__u64)req->ctx, (__u64)req))
		return -1;
	e = cw_reserve(sizeof(*e), type, lvl);
	if (e) {
		fill_req(e, req, aux, aux2);
		cw_submit(e);
	}
	return lvl;
}

SEC("tp_btf/io_uring_create")
int BPF_PROG(handle_create, int fd, void *ring, u32 sq_entries, u32 cq_entries, u32 flags)
{
	struct cw_uring_create *e;

	if (!cw_tgid_traced(bpf_get_current_pid_tgid() >> 32))
		return 0;
	if (cw_config.filter_enabled)
		cw_obj_remember(CW_OBJ_URING_RING, (__u64)ring, bpf_get_current_pid_tgid() >> 32,
				CW_CLASS_IO_URING);
	e = cw_reserve(sizeof(*e), CW_REC_URING_CREATE, CW_CTX_TASK);
	if (!e)
		return 0;
	cw_current(&e->task, &e->task_start);
	e->ring = (__u64)ring;
	e->sq_entries = sq_entries;
	e->cq_entries = cq_entries;
	e->setup_flags = flags;
	e->fd = fd;
	cw_submit(e);
	return 0;
}

SEC("tp_btf/io_uring_submit_req")
int BPF_PROG(handle_submit, struct io_kiocb *req)
{
	__u8 lvl = cw_context();
	struct io_ring_ctx *ring = req->ctx;
	struct cw_uring_req *e;

	if (!uring_traced(lvl, (__u64)ring, (__u64)req))
		return 0;
	/* Its completion may come in an interrupt or another process. */
	if (cw_config.filter_enabled)
		cw_obj_remember(CW_CAUSE_IO_REQ, (__u64)req, bpf_get_current_pid_tgid() >> 32,
				CW_CLASS_IO_URING);
	e = cw_reserve(sizeof(*e), CW_REC_URING_SUBMIT, lvl);
	if (!e)
		return 0;
	fill_req(e, req, 0, 0);
	e->sq_thread = !!(ring->flags & CW_IORING_SETUP_SQPOLL);
	cw_submit(e);
	return 0;
}

SEC("tp_btf/io_uring_queue_async_work")
int BPF_PROG(handle_punt, struct io_kiocb *req, int rw)
{
	emit_req(req, CW_REC_URING_PUNT, rw, 0);
	return 0;
}

SEC("tp_btf/io_uring_poll_arm")
int BPF_PROG(handle_poll_arm, struct io_kiocb *req, int mask, int events)
{
	emit_req(req, CW_REC_URING_POLL_ARM, mask, events);
	return 0;
}

/* Readiness of a polled request: its task work is queued right after,
 * waking the request's task. */
SEC("tp_btf/io_uring_task_add")
int BPF_PROG(handle_task_add, struct io_kiocb *req, int mask)
{
	int lvl = emit_req(req, CW_REC_URING_TASK_ADD, mask, 0);

	if (lvl == CW_CTX_SOFTIRQ || lvl == CW_CTX_HARDIRQ)
		set_cause(lvl, (__u64)req, (__u64)req->ctx, req_task_tid(req));
	return 0;
}

SEC("tp_btf/io_uring_link")
int BPF_PROG(handle_link, struct io_kiocb *req, struct io_kiocb *target)
{
	__u8 lvl = cw_context();
	struct cw_uring_link *e;

	if (!uring_traced(lvl, (__u64)req->ctx, (__u64)req))
		return 0;
	e = cw_reserve(sizeof(*e), CW_REC_URING_LINK, lvl);
	if (!e)
		return 0;
	cw_current(&e->task, &e->task_start);
	e->ring = (__u64)req->ctx;
	e->req = (__u64)req;
	e->user_data = req->cqe.user_data;
	e->target = (__u64)target;
	e->target_user_data = target->cqe.user_data;
	cw_submit(e);
	return 0;
}

/* @req failed; @link, next in its chain, is cancelled and will complete
 * with -ECANCELED: the record names @link, the request whose life this
 * ends. */
SEC("tp_btf/io_uring_fail_link")
int BPF_PROG(handle_fail_link, struct io_kiocb *req, struct io_kiocb *link)
{
	emit_req(link, CW_REC_URING_FAIL_LINK, 0, 0);
	return 0;
}

/*
 * A CQE. @req is NULL for an auxiliary CQE (it names its request by
 * user_data only). The final CQE of a request (no IORING_CQE_F_MORE) ends
 * its remembering.
 */
static __always_inline void emit_complete(__u8 lvl, __u64 ring, __u64 req, __u64 user_data, __s32 res,
					  __u32 cflags, __u64 extra1, __u64 extra2)
{
	struct cw_uring_complete *e;

	e = cw_reserve(sizeof(*e), CW_REC_URING_COMPLETE, lvl);
	if (e) {
		cw_current(&e->task, &e->task_start);
		e->ring = ring;
		e->req = req;
		e->user_data = user_data;
		e->res = res;
		e->cflags = cflags;
		e->extra1 = extra1;
		e->extra2 = extra2;
		cw_submit(e);
	}
	if (req && (lvl == CW_CTX_SOFTIRQ || lvl == CW_CTX_HARDIRQ))
		set_cause(lvl, req, ring, 0);
	if (cw_config.filter_enabled && req && !(cflags & CW_CQE_F_MORE))
		cw_obj_forget(CW_CAUSE_IO_REQ, req);
}

/* 6.5+: the CQE itself. */
SEC("tp_btf/io_uring_complete")
int BPF_PROG(handle_complete, struct io_ring_ctx *ring, void *req, struct io_uring_cqe *cqe)
{
	__u8 lvl = cw_context();
	__u64 big[2] = { 0, 0 };
	__u32 cflags;

	if (!uring_traced(lvl, (__u64)ring, (__u64)req))
		return 0;
	cflags = cqe->flags;
	/* As the tracepoint does: extra1/2 exist in a 32-byte CQE only. */
	if ((ring->flags & CW_IORING_SETUP_CQE32) || (cflags & CW_IORING_CQE_F_32))
		bpf_probe_read_kernel(big, sizeof(big), &cqe->big_cqe);
	emit_complete(lvl, (__u64)ring, (__u64)req, cqe->user_data, cqe->res, cflags, big[0], big[1]);
	return 0;
}

/* 6.0 .. 6.4: the CQE's fields. */
SEC("tp_btf/io_uring_complete")
int BPF_PROG(handle_complete_v0, void *ring, void *req, u64 user_data, int res, unsigned cflags,
	     u64 extra1, u64 extra2)
{
	__u8 lvl = cw_context();

	if (!uring_traced(lvl, (__u64)ring, (__u64)req))
		return 0;
	emit_complete(lvl, (__u64)ring, (__u64)req, user_data, res, cflags, extra1, extra2);
	return 0;
}

SEC("tp_btf/io_uring_cqe_overflow")
int BPF_PROG(handle_overflow, void *ring, unsigned long long user_data, s32 res, u32 cflags,
	     void *ocqe)
{
	__u8 lvl = cw_context();
	struct cw_uring_overflow *e;

	if (!uring_traced(lvl, (__u64)ring, 0))
		return 0;
	e = cw_reserve(sizeof(*e), CW_REC_URING_OVERFLOW, lvl);
	if (!e)
		return 0;
	cw_current(&e->task, &e->task_start);
	e->ring = (__u64)ring;
	e->user_data = user_data;
	e->res = res;
	e->cflags = cflags;
	e->ocqe = (__u64)ocqe;
	cw_submit(e);
	return 0;
}

/* ---- the ends of interrupt processing ------------------------------- */

/* Whatever the hardirq slot held, the handler's processing is over. */
CW_IRQ_HANDLER_PROGS(cw_slot_clear)

/* Softirqs do not nest within themselves: one vector's end is the end of
 * whatever its softirq slot held. */
SEC("tp_btf/softirq_exit")
int BPF_PROG(handle_softirq_exit, unsigned int vec_nr)
{
	cw_slot_clear(CW_CTX_SOFTIRQ);
	return 0;
}

/* ---- optional: trampolines ------------------------------------------ */

/*
 * The ring is freed at the end of io_ring_exit_work() (a kworker), after
 * the cancellations it waits for have posted their CQEs: at its return
 * every event of the ring has been seen. Only the pointer is used; the
 * ring is gone.
 */
SEC("fexit/io_ring_exit_work")
int BPF_PROG(handle_ring_free, struct work_struct *work)
{
	__u64 ring = (__u64)work - bpf_core_field_offset(struct io_ring_ctx, exit_work);
	struct cw_uring_free *e;

	if (cw_config.filter_enabled) {
		if (!cw_obj_known(CW_OBJ_URING_RING, ring))
			return 0;
		cw_obj_forget(CW_OBJ_URING_RING, ring);
	}
	e = cw_reserve(sizeof(*e), CW_REC_URING_FREE, cw_context());
	if (!e)
		return 0;
	cw_current(&e->task, &e->task_start);
	e->ring = ring;
	cw_submit(e);
	return 0;
}

/* An io-wq worker starts running a punted request. The request is found
 * from its io_wq_work by address, so its fields are read, not
 * dereferenced. */
SEC("fentry/io_wq_submit_work")
int BPF_PROG(handle_wq_work, struct io_wq_work *work)
{
	struct io_kiocb *req = (void *)work - bpf_core_field_offset(struct io_kiocb, work);
	__u64 ring = (__u64)BPF_CORE_READ(req, ctx);
	__u8 lvl = cw_context();
	struct cw_uring_req *e;

	if (!uring_traced(lvl, ring, (__u64)req))
		return 0;
	e = cw_reserve(sizeof(*e), CW_REC_URING_WORK, lvl);
	if (!e)
		return 0;
	cw_current(&e->task, &e->task_start);
	e->ring = ring;
	e->req = (__u64)req;
	e->user_data = BPF_CORE_READ(req, cqe.user_data);
	/* io_req_flags_t: 64 bits since 6.10, 32 before */
	e->req_flags = 0;
	bpf_probe_read_kernel(&e->req_flags, bpf_core_field_size(req->flags),
			      (void *)req + bpf_core_field_offset(req->flags));
	e->aux = 0;
	e->aux2 = 0;
	e->opcode = BPF_CORE_READ(req, opcode);
	e->sq_thread = 0;
	__builtin_memset(e->__pad, 0, sizeof(e->__pad));
	cw_submit(e);
	return 0;
}
