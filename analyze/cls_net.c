// SPDX-License-Identifier: MIT
/*
 * The net class: packets (docs/model.md §5.2, 5.3, 5.6).
 *
 * Identity. A packet is ('packet', 'skb', sk_buff pointer, generation),
 * named by its addresses: "tcp 127.0.0.1:40000 > 127.0.0.1:5555", IPv6
 * addresses in brackets, "eth 0x0806" for what is neither IPv4 nor IPv6.
 * A transmit is a birth; a receive joins the packet of that skb only if
 * it was transmitted, not yet received, and carries the same addresses
 * (sk_buffs are recycled fast: the same pointer with other addresses is
 * another packet). On loopback, and across a veth pair, the transmitted
 * skb is the one received, so a local send joins its receipt; a packet
 * from outside the host, or from a sender outside the traced set, is an
 * orphan of a new generation (start_seen 0, an incoming submit edge with
 * src NULL, reason 'orphan: transmit not in trace'). A received packet
 * is not joinable by a later receive of the same skb: that is a new
 * orphan too.
 *
 * Edges.
 *  - submit: sender -> packet at transmit: the current thread in task
 *    context, else unknown with the context as reason and the
 *    interrupted task in interrupted_tid (the record has no cause, so an
 *    ACK sent while a packet is received cannot name that packet);
 *  - wake: packet -> woken thread. Wakes raised while a packet is
 *    received name it as their cause, and the sched class makes them wake
 *    edges with reason 'packet' through the cause hook below.
 * So on loopback: client thread -submit-> packet -wake-> server thread.
 * A packet stays live after its receipt (end_ns is then the receive):
 * the wakes of its softirq name it, and the next transmit or receive of
 * its skb replaces it.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include "classes.h"
#include "origin.h"

#define SCOPE_SKB "skb"

#define P_RECEIVED 0x1

static const char R_NO_XMIT[] = "orphan: transmit not in trace";
static const char R_XMIT_BREAK[] = "orphan: its transmit could be in a coverage break";

/* "tcp 10.0.0.1:80 > 10.0.0.2:40000"; the longest, two full IPv6
 * addresses with ports, fits well within. */
#define PKT_NAME_LEN 128

static const char *l4_name(uint8_t p, char *buf, size_t len)
{
	switch (p) {
	case 1:
		return "icmp";
	case 6:
		return "tcp";
	case 17:
		return "udp";
	case 58:
		return "icmpv6";
	case 132:
		return "sctp";
	case 136:
		return "udplite";
	}
	snprintf(buf, len, "ip%u", p);
	return buf;
}

/* One end: "1.2.3.4:80", "[::1]:80", or without the port when the
 * protocol has none (both ports 0). */
static void end_name(char *out, size_t len, int family, const uint8_t *addr, uint16_t port,
		     int ports)
{
	char a[INET6_ADDRSTRLEN];

	if (!inet_ntop(family == 6 ? AF_INET6 : AF_INET, addr, a, sizeof(a)))
		snprintf(a, sizeof(a), "?");
	if (family == 6)
		snprintf(out, len, ports ? "[%s]:%u" : "[%s]", a, port);
	else
		snprintf(out, len, ports ? "%s:%u" : "%s", a, port);
}

static void pkt_spell(const struct cw_net_pkt *r, char *out, size_t len)
{
	char l4[16], s[INET6_ADDRSTRLEN + 8], d[INET6_ADDRSTRLEN + 8];
	int ports = r->sport || r->dport;

	if (r->family != 4 && r->family != 6) {
		snprintf(out, len, "eth 0x%04x", r->protocol);
		return;
	}
	end_name(s, sizeof(s), r->family, r->saddr, r->sport, ports);
	end_name(d, sizeof(d), r->family, r->daddr, r->dport, ports);
	snprintf(out, len, "%s %s > %s", l4_name(r->l4proto, l4, sizeof(l4)), s, d);
}

/*
 * The names last spelled, by the fields they are spelled from: the
 * packets of a connection, each way, share one, and spelling it (two
 * inet_ntop() and three snprintf() calls) was a twentieth of the
 * analyzer's time on a system-wide capture of nginx under wrk.
 */
#define NAMES_KEPT 256

/* pkt_spell()'s input, from protocol to daddr: */
#define FLOW_FIRST offsetof(struct cw_net_pkt, protocol)
#define FLOW_LEN (offsetof(struct cw_net_pkt, daddr) + 16 - FLOW_FIRST)
_Static_assert(offsetof(struct cw_net_pkt, daddr) + 16 == sizeof(struct cw_net_pkt),
	       "a packet's flow fields end the record");

struct kept_name {
	uint8_t flow[FLOW_LEN];
	uint8_t used;
	char name[PKT_NAME_LEN];
};

struct net {
	struct kept_name kept[NAMES_KEPT];
};

/* @r's name, kept until a packet of another flow takes its slot. */
static const char *pkt_name(struct cw_cls *c, const struct cw_net_pkt *r)
{
	struct net *n = c->state;
	const uint8_t *flow = (const uint8_t *)r + FLOW_FIRST;
	struct kept_name *k;
	uint64_t h = 0;

	for (size_t i = 0; i < FLOW_LEN; i++)
		h = (h ^ flow[i]) * 0x100000001b3ull;
	k = &n->kept[(h ^ h >> 32) % NAMES_KEPT];
	if (!k->used || memcmp(k->flow, flow, FLOW_LEN)) {
		pkt_spell(r, k->name, sizeof(k->name));
		memcpy(k->flow, flow, FLOW_LEN);
		k->used = 1;
	}
	return k->name;
}

static const char *full_name(const struct cw_obj *o)
{
	return o->n.long_name ? o->n.long_name : o->n.name;
}

/* A packet born at its transmit @h, by the task @t (witness @start)
 * the record names, with the submit edge from its sender. */
static struct cw_obj *sent_packet(struct cw_cls *c, const struct cw_hdr *h,
				  const struct cw_net_pkt *r, int *err)
{
	const struct cw_scope *s = cw_ident__scope(c->id, SCOPE_SKB);
	struct cw_origin og;
	struct cw_obj *o;

	if (!s) {
		*err = -ENOMEM;
		return NULL;
	}
	if ((*err = cw_origin__of(c, h, &r->task, r->task_start, NULL, &og)))
		return NULL;
	o = cw_ident__new_gen(c->id, CW_NODE_PACKET, s, r->skb, h->ts, 1, err);
	if (!o)
		return NULL;
	cw_obj__set_name(o, pkt_name(c, r), PKT_NAME_LEN);
	o->n.pid = og.pid;
	o->n.tid = og.tid;
	*err = cw_ident__edge_x(c->id, CW_EDGE_SUBMIT, og.src, o, h, CW_SRC_KERNEL, og.conf,
				og.reason, &og.x);
	return *err ? NULL : o;
}

static int on_xmit(struct cw_cls *c, const struct cw_hdr *h)
{
	int err;

	sent_packet(c, h, (const void *)h, &err);
	return err;
}

/* A packet received at @ts. */
static void received(struct cw_cls *c, struct cw_obj *o, uint64_t ts)
{
	o->flags |= P_RECEIVED;
	o->n.end_ns = (int64_t)ts;
	cw_ident__touch(c->id, o);
}

/* An orphan packet of @r's skb, born at @h, named by @r, with reason
 * @why on its incoming submit edge. */
static struct cw_obj *orphan_packet(struct cw_cls *c, const struct cw_hdr *h,
				    const struct cw_net_pkt *r, const char *why, int *err)
{
	const struct cw_scope *s = cw_ident__scope(c->id, SCOPE_SKB);
	struct cw_obj *o;

	if (!s) {
		*err = -ENOMEM;
		return NULL;
	}
	o = cw_ident__orphan(c->id, CW_NODE_PACKET, s, r->skb, h, CW_EDGE_SUBMIT, why, err);
	if (o)
		cw_obj__set_name(o, pkt_name(c, r), PKT_NAME_LEN);
	return o;
}

static int on_rx(struct cw_cls *c, const struct cw_hdr *h)
{
	const struct cw_net_pkt *r = (const void *)h;
	const struct cw_scope *s = cw_ident__scope_find(c->id, SCOPE_SKB);
	struct cw_obj *o = s ? cw_ident__live(c->id, CW_NODE_PACKET, s, r->skb) : NULL;
	const char *why = R_NO_XMIT;
	int err;

	/* Sent before a coverage break: the skb could have been received,
	 * freed and sent again in it. */
	if ((err = cw_ident__stale(c->id, o, h->ts)) < 0)
		return err;
	if (err) {
		o = NULL;
		why = R_XMIT_BREAK;
	}
	err = 0;
	/* The capture flags the receipt of an skb, with its data buffer, that
	 * a recorded transmit sent and nothing received since: the pointer
	 * alone is recycled too fast to be evidence. The addresses must agree
	 * as well. */
	if (!o || !(h->flags & CW_NET_RX_SENT) || (o->flags & P_RECEIVED) ||
	    strcmp(full_name(o), pkt_name(c, r))) {
		o = orphan_packet(c, h, r, why, &err);
		if (!o)
			return err;
	}
	received(c, o, h->ts);
	return 0;
}

/*
 * Format 1.6: a packet that woke a recorded context, placed at its
 * birth (schema/events.h). The capture joined its receipt to its
 * transmit (bpf/net.bpf.c: the same skb and data buffer, not received
 * since, the entry whole), so the sender it names is observed evidence,
 * whatever the ring lost between the two; without one the packet is an
 * orphan born at its receipt, as on_rx makes it.
 */
static int on_recv(struct cw_cls *c, const struct cw_hdr *h)
{
	const struct cw_net_recv *r = (const void *)h;
	uint64_t young = r->rx_ts > CW_NET_SENT_YOUNG_NS ? r->rx_ts - CW_NET_SENT_YOUNG_NS : 0;
	struct cw_obj *o;
	int err = 0;

	if (h->flags & CW_NET_RECV_SENT)
		o = sent_packet(c, h, &r->p, &err);
	else /* its transmit perhaps pushed out of the capture's table, counted */
		o = orphan_packet(c, h, &r->p,
				  cw_ident__break_in(c->id, young, r->rx_ts) ? R_XMIT_BREAK : R_NO_XMIT,
				  &err);
	if (!o)
		return err;
	received(c, o, r->rx_ts);
	return 0;
}

/*
 * A packet named as a cause: the BPF side sets the cause from
 * netif_receive_skb to the end of its softirq, so it is the live
 * generation of that skb, the one being received. None (its receive was
 * lost, or evicted): an orphan, unnamed, with no receive record to name
 * it by.
 */
static struct cw_obj *net_cause(struct cw_cls *c, const struct cw_cause *k, const struct cw_hdr *h,
				int flags, uint8_t *conf, const char **reason, int *err)
{
	const struct cw_scope *s = cw_ident__scope_find(c->id, SCOPE_SKB);
	struct cw_obj *o = s ? cw_ident__live(c->id, CW_NODE_PACKET, s, k->key) : NULL;
	const char *why = R_NO_XMIT;

	*reason = NULL;
	/* Asked of the past: the live generation, which the caller holds
	 * to having been known then. */
	if (flags & CW_CAUSE_PAST) {
		*err = 0;
		return o ? cw_cls__named_at(c, o, h, conf, reason) : NULL;
	}
	/* Received before a coverage break: which receipt this is, is
	 * unknown. */
	if ((*err = cw_ident__stale(c->id, o, h->ts)) < 0)
		return NULL;
	if (*err) {
		o = NULL;
		why = R_XMIT_BREAK;
	}
	*err = 0;
	if (o) {
		cw_ident__touch(c->id, o);
		*conf = CW_CONF_OBSERVED;
		return o;
	}
	if (!(s = cw_ident__scope(c->id, SCOPE_SKB))) {
		*err = -ENOMEM;
		return NULL;
	}
	o = cw_ident__orphan(c->id, CW_NODE_PACKET, s, k->key, h, CW_EDGE_SUBMIT, why, err);
	if (!o)
		return NULL;
	o->flags |= P_RECEIVED;
	*conf = CW_CONF_OBSERVED;
	return o;
}

static const struct cw_handler handlers[] = {
	{ CW_REC_NET_XMIT, on_xmit },
	{ CW_REC_NET_RX, on_rx },
	{ CW_REC_NET_RECV, on_recv },
	{ 0 },
};

const struct cw_aclass cw_aclass_net = {
	.name = "net",
	.state_size = sizeof(struct net),
	.handlers = handlers,
	.cause_kinds = 1u << CW_CAUSE_PACKET,
	.cause = net_cause,
};
