// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * causeway edge plane, net class (docs/model.md §2.1, §2.3): a packet is a
 * node, born where a task hands it to a device and named by its skb,
 * received where the stack takes it in. Since format 1.6 the two ends are
 * joined here, not in the analyzer, and one record is written per packet
 * that woke a context the capture records: a struct cw_net_recv on the
 * `edges` ring.
 *
 *   net_dev_queue      the transmit is remembered (net_sent), not written
 *   netif_receive_skb  the receipt takes it and sets the cause slot
 *   sched_waking       the first recorded wakeup writes CW_REC_NET_RECV
 *
 * Transmit is taken at net_dev_queue, not net_dev_start_xmit: it runs
 * in __dev_queue_xmit() in the sender's context, before any qdisc. Once
 * queued on a qdisc, a packet is handed to the driver by whichever task
 * holds the qdisc at that moment, or by the NET_TX softirq, so
 * net_dev_start_xmit can run in another task's context, which would then
 * be named the sender. On loopback (no qdisc) both run in the sender's
 * context on the same skb.
 *
 * Receipt: at netif_receive_skb skb->data is the network header (the
 * link-layer header is pulled) and network_header not yet reset to it.
 * A receipt continues a transmit only when it is the skb that transmit
 * sent, with the same data buffer (net_sent): skb pointers are reused as
 * soon as a sent packet is freed, so a pointer alone could join a new
 * packet to a dead one. The record is then placed at the transmit (its
 * time, CPU, context and sender, flags CW_NET_RECV_SENT), so that the
 * analyzer makes the packet's birth and its submit edge in their place
 * in time; any other receipt is a packet born at its receipt (from
 * outside the host, or whose transmit was not remembered).
 *
 * Filtering (docs/model.md §2.2): every transmit is remembered, whoever
 * sends it, so that a client outside the traced set whose packet wakes a
 * traced server is named as its sender (§2.3). The record waits in
 * net_cpu while the packet is in the softirq slot and is written by the
 * first wakeup the capture records (system-wide any, with filter_enabled
 * a traced task's), with the packet's birth time, so that it sorts before
 * the wake naming it whichever of this object and the sched class runs
 * first. A packet that wakes nothing recorded costs no record. The slot's
 * emitted says whether the record is in the trace, for what the packet
 * causes after (bpf/follow.bpf.h).
 *
 * Causes: while the stack processes a received packet in softirq, the
 * packet is in the softirq cause slot, so the wakeup of its reader (or of
 * a writer waiting for buffer space the ACK freed) names it. The slot
 * must never name a packet that is not the one being processed:
 *  - One packet at a time (process_backlog(), which loopback, veth and
 *    netif_rx() feed, and netif_receive_skb() from a driver) delivers
 *    each skb to its socket before the next one's netif_receive_skb: the
 *    slot opens there and closes at the next packet, at the end of that
 *    NAPI poll (napi_poll), at netif_receive_skb()'s return
 *    (netif_receive_skb_exit) or at the end of the softirq
 *    (softirq_exit).
 *  - List receive (GRO's batches and netif_receive_skb_list()) runs
 *    netif_receive_skb for every skb of a batch before it delivers any,
 *    so there the slot would name the batch's last packet for the
 *    wakeups of all. A batch member is known at its receipt: GRO puts
 *    its NAPI's id on the skb (napi_id, above the CPU numbers that share
 *    the field on the transmit side), and the skbs entering GRO without
 *    one or netif_receive_skb_list() are marked (net_listed) at their
 *    entry tracepoints. From a batch member's receipt to the end of the
 *    softirq (net_cpu.listed) no slot is set: wakeups there have no
 *    cause, never a wrong one. The end of the softirq, not of the batch:
 *    no tracepoint marks where GRO's delivery ends (fentry on
 *    netif_receive_skb_list_internal() would, but is not everywhere
 *    available). This also gives up packets received one at a time that
 *    carry a NAPI id (drivers that mark it, RPS): a missing cause.
 *  - Outside softirq (busy polling, threaded NAPI) no slot is set: the
 *    task-level slot of the polling thread has no end this object sees.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_tracing.h>
#include "schema/events.h"
#include "bpf/config.h"
#include "causeway.bpf.h"

char LICENSE[] SEC("license") = "Dual MIT/GPL";

/* include/uapi/linux/if_ether.h, in.h; part of the ABI. */
#define CW_ETH_P_IP 0x0800
#define CW_ETH_P_IPV6 0x86DD
#define CW_IPPROTO_TCP 6
#define CW_IPPROTO_UDP 17
#define CW_IPPROTO_SCTP 132
#define CW_IPPROTO_UDPLITE 136
#define CW_IP_OFFSET 0x1fff /* fragment offset field */

/*
 * Transmits not yet received (docs/model.md §2.3): a direct-mapped table
 * indexed by a hash of the data buffer, each entry the skb, its buffer
 * and the sender's evidence (its task and witness, the time, CPU and
 * context of the transmit). Every transmit on a device with no parent
 * (loopback, veth, bridges: the virtual devices whose packets can be
 * received in this host) is remembered, whoever sent it, and nothing is
 * written; the receipt takes its entry and, when it wakes a context the
 * capture records, writes one record naming both ends (handle_waking).
 * A packet that leaves through a physical device never comes back, so it
 * is not remembered: it would only push out those that do.
 *
 * Bounds: 2^NET_SENT_BITS entries of 64 bytes (1 MiB). A transmit that
 * lands on an entry not yet received and younger than CW_NET_SENT_YOUNG_NS
 * evicts it: counted as a map loss of the net class, which the analyzer
 * makes a coverage break, and that packet's receipt is an orphan. An
 * entry is read into the program's stack and believed only when its skb
 * and buffer are the receipt's and its check, a hash over the other
 * fields written last, agrees: two CPUs writing one entry at once, or a
 * receipt reading it while another CPU writes it, then make an orphan,
 * never a join of one packet's skb to another's sender. A table, not a
 * hash map: an LRU map's update and
 * delete cost about 300 ns a packet.
 */
#define NET_SENT_BITS 14

struct sent {
	__u64 skb; /* 0: free */
	__u64 head;
	__u64 ts;
	__u64 task_start;
	struct cw_task task;
	__u16 cpu;
	__u8 ctx;
	__u8 __pad[5];
	__u64 check;
	__u64 __pad2;
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1u << NET_SENT_BITS);
	__type(key, __u32);
	__type(value, struct sent);
} net_sent SEC(".maps");

/* The skb is left out: the verifier lets no program compute with its
 * pointer. Its data buffer, which the entry's place and the receipt's
 * match both depend on, ties the entry to one transmit. */
static __always_inline __u64 sent_check(const struct sent *t)
{
	__u64 h = t->head * 0x9E3779B97F4A7C15ULL;

	h = (h ^ t->ts) * 0xBF58476D1CE4E5B9ULL;
	h = (h ^ t->task_start) * 0x94D049BB133111EBULL;
	h = (h ^ ((__u64)t->task.tid << 32 | t->task.pid)) * 0x9E3779B97F4A7C15ULL;
	h = (h ^ ((__u64)t->cpu << 8 | t->ctx)) * 0xBF58476D1CE4E5B9ULL;
	return h ^ (h >> 31);
}

/* skbs that entered GRO or netif_receive_skb_list() without a NAPI id,
 * until their receipt. LRU: GRO frees the skbs it merges, whose marks
 * then only age out (a stale mark on a reused skb loses a cause, never
 * names a wrong one). net_marked counts the marks not yet taken, so that
 * a receipt looks only when there may be one (GRO's skbs carry their
 * NAPI's id, and loopback and veth mark none). */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, __u64);
	__type(value, __u8);
} net_listed SEC(".maps");

__u64 net_marked = 0;

struct net_cpu {
	/* The record of the packet in the softirq slot, while it waits for
	 * the first wakeup the capture records; for skb rx_skb. */
	struct cw_net_recv rx;
	__u64 rx_skb;
	/* A batch member was received in this softirq. */
	__u32 listed;
	__u32 __pad;
	/* Where a pointer becomes a number (as_number()). */
	__u64 number;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct net_cpu);
} net_cpus SEC(".maps");

extern unsigned int CONFIG_NR_CPUS __kconfig __weak;

static __always_inline struct net_cpu *net_cpu(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&net_cpus, &zero);
}

/*
 * Pointer @p as a number to hash, for a loaded pointer that the verifier
 * types as memory no program may compute with (skb->head): stored in a
 * map value and loaded back, it is a scalar. A load, where
 * bpf_probe_read_kernel() costs some 50 ns a call.
 */
static __always_inline __u64 as_number(struct net_cpu *c, const void *p)
{
	volatile __u64 *n = &c->number;

	*n = (__u64)p;
	return *n;
}

/* The index in net_sent of the entry for data buffer @head: by the
 * buffer, not the skb, whose pointer the verifier lets no program hash. */
static __always_inline __u32 sent_index(__u64 head)
{
	return (__u32)((head * 0x9E3779B97F4A7C15ULL) >> (64 - NET_SENT_BITS));
}

static __always_inline struct sent *sent_of(__u32 i)
{
	return bpf_map_lookup_elem(&net_sent, &i);
}

/*
 * A bit per net_sent entry that may hold a transmit not yet received (2
 * KiB, which stays in cache where the 1 MiB table does not): an entry
 * whose bit is clear is free, so a transmit or a receipt that finds its
 * bit clear does not load the entry, whose cache miss was most of what a
 * transmit cost. A bit may be set over a free entry, never clear over a
 * taken one: it is set after its entry is written, and cleared after the
 * entry is freed, then set again if the entry was taken meanwhile
 * (sent_free); the atomics order these on every CPU.
 */
__u64 net_occupied[(1u << NET_SENT_BITS) / 64];

static __always_inline __u64 *occupied_word(__u32 i)
{
	return &net_occupied[(i >> 6) & ((1u << NET_SENT_BITS) / 64 - 1)];
}

static __always_inline bool sent_maybe(__u32 i)
{
	return (*occupied_word(i) >> (i & 63)) & 1;
}

static __always_inline void sent_occupy(__u32 i)
{
	__u64 *w = occupied_word(i);

	if (!((*w >> (i & 63)) & 1))
		__sync_fetch_and_or(w, 1ull << (i & 63));
}

/* Entry @t (index @i) is free now: its bit goes, unless another transmit
 * took the entry meanwhile. */
static __always_inline void sent_free(struct sent *t, __u32 i)
{
	__u64 *w = occupied_word(i);

	t->skb = 0;
	__sync_fetch_and_and(w, ~(1ull << (i & 63)));
	if (*(volatile __u64 *)&t->skb)
		__sync_fetch_and_or(w, 1ull << (i & 63));
}

/* Does @skb carry a NAPI's id? The field holds the sending CPU + 1 on
 * the transmit side (XPS), and NAPI ids start at NR_CPUS + 1
 * (MIN_NAPI_ID). Unknown (no kernel config, no field): no. */
static __always_inline bool napi_marked(const struct sk_buff *skb)
{
	if (!CONFIG_NR_CPUS || !bpf_core_field_exists(skb->napi_id))
		return false;
	return skb->napi_id > CONFIG_NR_CPUS;
}

/* @skb enters a batch: mark it unless its NAPI id says so already. */
static __always_inline int mark_listed(const struct sk_buff *skb)
{
	__u64 key = (__u64)skb;
	__u8 one = 1;

	if (!napi_marked(skb) && !bpf_map_update_elem(&net_listed, &key, &one, BPF_ANY))
		__sync_fetch_and_add(&net_marked, 1);
	return 0;
}

/* Bytes of network header read at once: an IPv4 header without options
 * or an IPv6 header, and the ports after it. */
#define HDR_READ 48

/*
 * Addresses and ports of @e from the network header at @l3, of which
 * @avail bytes are in the skb's linear data; @l4off the transport
 * header's offset from it when the skb says, else 0 (right after the IP
 * header). Family 0 when it is neither IPv4 nor IPv6; ports 0 when they
 * are not in the linear data, for a later fragment or another protocol.
 */
static __always_inline void parse(struct cw_net_pkt *e, __u64 l3, __u32 avail, __u32 l4off)
{
	__u8 h[HDR_READ];
	__u32 n = avail < HDR_READ ? avail : HDR_READ, off;
	__u16 ports[2];

	__builtin_memset(e->saddr, 0, sizeof(e->saddr));
	__builtin_memset(e->daddr, 0, sizeof(e->daddr));
	e->family = 0;
	e->l4proto = 0;
	e->sport = e->dport = 0;
	/* The head buffer goes on past the linear data (to skb->end), so a
	 * fixed-size read is safe; bytes past @avail are not looked at. */
	if (n < 20 || bpf_probe_read_kernel(h, sizeof(h), (void *)l3))
		return;
	if (e->protocol == CW_ETH_P_IP && (h[0] >> 4) == 4) {
		e->family = 4;
		e->l4proto = h[9];
		__builtin_memcpy(e->saddr, &h[12], 4);
		__builtin_memcpy(e->daddr, &h[16], 4);
		if (((h[6] << 8) | h[7]) & CW_IP_OFFSET)
			return;
		off = l4off ? l4off : (h[0] & 0xf) * 4;
		if (off < 20)
			return;
	} else if (e->protocol == CW_ETH_P_IPV6 && n >= 40 && (h[0] >> 4) == 6) {
		e->family = 6;
		e->l4proto = h[6]; /* extension headers are not walked */
		__builtin_memcpy(e->saddr, &h[8], 16);
		__builtin_memcpy(e->daddr, &h[24], 16);
		off = l4off ? l4off : 40;
	} else {
		return;
	}
	if (e->l4proto != CW_IPPROTO_TCP && e->l4proto != CW_IPPROTO_UDP &&
	    e->l4proto != CW_IPPROTO_UDPLITE && e->l4proto != CW_IPPROTO_SCTP)
		return;
	if (off == 20 && n >= 24) {
		__builtin_memcpy(ports, &h[20], 4);
	} else if (off == 40 && n >= 44) {
		__builtin_memcpy(ports, &h[40], 4);
	} else if (off + 4 > avail ||
		   bpf_probe_read_kernel(ports, sizeof(ports), (void *)(l3 + off))) {
		return;
	}
	e->sport = bpf_ntohs(ports[0]);
	e->dport = bpf_ntohs(ports[1]);
}

/* ---- transmit --------------------------------------------------------- */

/* include/linux/socket.h; part of the ABI. */
#define CW_AF_INET 2
#define CW_AF_INET6 10

/*
 * With filter_enabled, the traced set's local ports (bpf/causeway.bpf.h
 * `ports`): those its sockets had at start, and those learnt here, the
 * port a traced task sends from and the port of a packet that woke a
 * traced task (handle_waking), or a socket a traced task puts in LISTEN
 * (handle_sock_state). A packet sent to a port not marked can wake no
 * traced task but one whose port is still to be learnt, so its transmit
 * is not remembered (docs/model.md §2.3): a server's replies to its
 * untraced clients cost one check. What this misses is the first packets
 * to a port the traced set got after the start without listening,
 * sending or being woken on it yet (a UDP socket bound and read): orphans
 * that say their transmit is not in the trace, never a wrong sender. Bits
 * are never cleared: a port the traced set used once costs its packets a
 * transmit's work after.
 */
static __always_inline __u64 *port_word(__u16 port)
{
	__u32 i = port >> 6;

	return bpf_map_lookup_elem(&ports, &i);
}

static __always_inline bool port_marked(__u16 port)
{
	__u64 *w = port_word(port);

	return w && (*w >> (port & 63)) & 1;
}

static __always_inline void port_mark(__u16 port)
{
	__u64 *w = port_word(port);

	if (port && w && !((*w >> (port & 63)) & 1))
		__sync_fetch_and_or(w, 1ull << (port & 63));
}

/* Can a packet sent through @dev be received in this host? A device
 * with a parent is a physical one, whose packets leave it. */
static __always_inline bool dev_local(const struct net_device *dev)
{
	return !dev->dev.parent;
}

/*
 * With filter_enabled: might @skb wake a traced task? Not when its socket
 * says where it goes and no traced socket was seen at that port. A
 * socket-less packet, another family, or a socket without a peer port
 * (unconnected UDP) might. The sender's own port is learnt here when a
 * traced task sends from it, in task context: in a softirq the current
 * task is an interrupted one, whose CPU delivers and acknowledges the
 * packets of others (a client's ACK sent while its server runs). The
 * context is read only for a port not marked yet.
 */
static __always_inline bool xmit_wanted(const struct sk_buff *skb)
{
	const struct sock *sk = skb->sk;
	__u16 family, sport, dport;

	if (!sk)
		return true;
	family = sk->__sk_common.skc_family;
	if (family != CW_AF_INET && family != CW_AF_INET6)
		return true;
	sport = sk->__sk_common.skc_num;
	if (!port_marked(sport) && cw_tgid_traced(bpf_get_current_pid_tgid() >> 32) &&
	    cw_context() == CW_CTX_TASK)
		port_mark(sport);
	dport = bpf_ntohs(sk->__sk_common.skc_dport);
	return !dport || port_marked(dport);
}

SEC("tp_btf/net_dev_queue")
int BPF_PROG(handle_xmit, struct sk_buff *skb)
{
	struct net_cpu *c = net_cpu();
	__u64 key = (__u64)skb, head, now;
	struct sent *t;
	bool maybe;
	__u32 i;

	if (!c || !dev_local(skb->dev))
		return 0;
	head = as_number(c, skb->head);
	i = sent_index(head);
	maybe = sent_maybe(i);
	if (cw_config.filter_enabled && !xmit_wanted(skb)) {
		/* Not remembered, but an older transmit of this buffer
		 * (dropped before its receipt) must not stay to be taken
		 * for this one's. */
		if (maybe && (t = sent_of(i)) && t->skb && t->head == head)
			sent_free(t, i);
		return 0;
	}
	if (!(t = sent_of(i)))
		return 0;
	now = bpf_ktime_get_ns();
	if (maybe && t->skb && now - t->ts < CW_NET_SENT_YOUNG_NS &&
	    !(t->skb == key && t->head == head))
		cw_count_lost(CW_RING_MAP, CW_CLASS_NET);
	t->check = 0;
	t->skb = key;
	t->head = head;
	t->ts = now;
	t->ctx = cw_context();
	t->cpu = bpf_get_smp_processor_id();
	cw_current(&t->task, &t->task_start);
	t->check = sent_check(t);
	sent_occupy(i);
	return 0;
}

/* include/net/tcp_states.h; part of the ABI of inet_sock_set_state. */
#define CW_TCP_LISTEN 10

/* A traced task's socket starts listening: its port is the traced set's
 * from now (the connections it accepts have it too). */
SEC("tp_btf/inet_sock_set_state")
int BPF_PROG(handle_sock_state, const struct sock *sk, const int oldstate, const int newstate)
{
	if (cw_config.filter_enabled && newstate == CW_TCP_LISTEN &&
	    cw_tgid_traced(bpf_get_current_pid_tgid() >> 32))
		port_mark(sk->__sk_common.skc_num);
	return 0;
}

/* ---- receipt ---------------------------------------------------------- */

/* The packet window of this CPU's softirq slot is over. */
static __always_inline void close_packet(void)
{
	struct cw_slot *s = cw_slot_of(CW_CTX_SOFTIRQ);

	if (s && s->kind == CW_CAUSE_PACKET)
		s->kind = CW_CAUSE_NONE;
}

/* The remembered transmit of @skb with data buffer @head into @m, and
 * its entry freed: is there one, whole? */
static __always_inline bool take_sent(__u64 skb, __u64 head, struct sent *m)
{
	__u32 i = sent_index(head);
	struct sent *t;

	if (!sent_maybe(i) || !(t = sent_of(i)) || t->skb != skb || t->head != head)
		return false;
	__builtin_memcpy(m, t, sizeof(*m));
	sent_free(t, i);
	return m->skb == skb && m->head == head && m->check == sent_check(m);
}

SEC("tp_btf/netif_receive_skb")
int BPF_PROG(handle_receive, struct sk_buff *skb)
{
	__u64 key = (__u64)skb, l3 = (__u64)skb->data, head;
	__u32 avail = skb->len - skb->data_len;
	struct net_cpu *c = net_cpu();
	struct cw_net_recv *e;
	struct sent m;
	bool from, listed = false;

	if (!c)
		return 0;
	head = as_number(c, skb->head);
	from = take_sent(key, head, &m);
	if (net_marked && bpf_map_lookup_elem(&net_listed, &key)) {
		if (!bpf_map_delete_elem(&net_listed, &key))
			__sync_fetch_and_add(&net_marked, -1);
		listed = true;
	}
	if (cw_context() != CW_CTX_SOFTIRQ)
		return 0;
	if (listed || napi_marked(skb))
		c->listed = 1;
	if (c->listed) {
		close_packet();
		return 0;
	}
	/* emitted 0: the record is not written yet */
	cw_slot_set(CW_CTX_SOFTIRQ, CW_CAUSE_PACKET, key, 0);
	cw_count_slot(CW_COUNTER_NET_RECEIPTS);
	/* The record as cw_reserve() would fill its header, placed at the
	 * packet's birth. */
	e = &c->rx;
	e->p.hdr.type = CW_REC_NET_RECV;
	e->p.hdr.size = sizeof(*e);
	e->rx_cpu = bpf_get_smp_processor_id();
	if (from) {
		/* Placed at its transmit: the receipt's time is read at the
		 * first recorded wakeup, in this softirq, if one comes
		 * (handle_waking); most packets wake nothing recorded, and a
		 * clock read was a fifth of this program. */
		e->rx_ts = 0;
		e->p.hdr.ts = m.ts;
		e->p.hdr.cpu = m.cpu;
		e->p.hdr.ctx = m.ctx;
		e->p.hdr.flags = CW_NET_RECV_SENT;
		e->p.task = m.task;
		e->p.task_start = m.task_start;
	} else {
		/* Born here: placed at its receipt, before any wake it
		 * raises. */
		e->rx_ts = bpf_ktime_get_ns();
		e->p.hdr.ts = e->rx_ts;
		e->p.hdr.cpu = e->rx_cpu;
		e->p.hdr.ctx = CW_CTX_SOFTIRQ;
		e->p.hdr.flags = 0;
		e->p.task.tid = e->p.task.pid = 0;
		e->p.task_start = 0;
	}
	e->p.skb = key;
	e->p.len = skb->len;
	e->p.ifindex = skb->dev->ifindex;
	e->p.protocol = bpf_ntohs(skb->protocol);
	e->__pad = 0;
	parse(&e->p, l3, avail, 0);
	c->rx_skb = key;
	return 0;
}

/* A wakeup while a packet's record waits: the first one the capture
 * records writes it (see the top of the file). */
SEC("tp_btf/sched_waking")
int BPF_PROG(handle_waking, struct task_struct *p)
{
	struct cw_slot *s = cw_slot_of(CW_CTX_SOFTIRQ);
	struct cw_net_recv *e;
	struct net_cpu *c;

	if (!s || s->kind != CW_CAUSE_PACKET || s->emitted)
		return 0;
	c = net_cpu();
	/* The cheaper test first: a lookup of the traced set, where the
	 * context costs a read of the preempt count. */
	if (!c || c->rx_skb != s->key || !cw_tgid_traced(p->tgid) || cw_context() != CW_CTX_SOFTIRQ)
		return 0;
	e = cw_reserve(sizeof(*e), CW_REC_NET_RECV, CW_CTX_SOFTIRQ);
	if (!e)
		return 0;
	if (!c->rx.rx_ts)
		c->rx.rx_ts = e->p.hdr.ts; /* the clock cw_reserve read */
	__builtin_memcpy(e, &c->rx, sizeof(*e));
	cw_submit(e);
	/* A traced task is woken through this port (docs/model.md §2.3). */
	if (cw_config.filter_enabled)
		port_mark(c->rx.p.dport);
	s->emitted = 1;
	c->rx_skb = 0;
	return 0;
}

/* The end of one NAPI poll: of process_backlog() too. */
SEC("tp_btf/napi_poll")
int BPF_PROG(handle_napi_poll)
{
	close_packet();
	return 0;
}

/* netif_receive_skb() returned: the packet it took is delivered. */
SEC("tp_btf/netif_receive_skb_exit")
int BPF_PROG(handle_receive_exit)
{
	close_packet();
	return 0;
}

SEC("tp_btf/softirq_exit")
int BPF_PROG(handle_softirq_exit)
{
	struct net_cpu *c = net_cpu();

	/* Whatever the slot held, this softirq's processing is over, and
	 * with it any batch's delivery. */
	cw_slot_clear(CW_CTX_SOFTIRQ);
	if (c)
		c->listed = 0;
	return 0;
}

SEC("tp_btf/napi_gro_receive_entry")
int BPF_PROG(handle_gro_receive, const struct sk_buff *skb)
{
	return mark_listed(skb);
}

SEC("tp_btf/napi_gro_frags_entry")
int BPF_PROG(handle_gro_frags, const struct sk_buff *skb)
{
	return mark_listed(skb);
}

SEC("tp_btf/netif_receive_skb_list_entry")
int BPF_PROG(handle_receive_list, const struct sk_buff *skb)
{
	return mark_listed(skb);
}
