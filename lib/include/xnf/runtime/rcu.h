/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * RCU for the native maps (liburcu, QSBR flavour). Workers are readers: they
 * register once, report a quiescent state every loop round and go offline
 * while they sleep. Readers take no lock and do no atomic read-modify-write.
 * Memory a writer unlinked is freed only after every reader has passed a
 * quiescent state.
 */
#ifndef XNF_RUNTIME_RCU_H
#define XNF_RUNTIME_RCU_H

struct rcu_head;

void xnf_rcu_register_reader(void);
void xnf_rcu_unregister_reader(void);
void xnf_rcu_quiescent(void);
void xnf_rcu_offline(void);
void xnf_rcu_online(void);
/* Returns once every reader has passed a quiescent state since the call: from a thread that is not a reader. */
void xnf_rcu_synchronize(void);

/*
 * Frees what head is embedded in once no reader can see it, later, on
 * liburcu's call_rcu thread: the caller never waits. Call it with no map
 * lock held.
 */
void xnf_rcu_retire(struct rcu_head *head, void (*free_fn)(struct rcu_head *head));

#endif
