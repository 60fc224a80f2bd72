// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#define _LGPL_SOURCE /* liburcu's fast paths inline */
#include <urcu-qsbr.h>

#include <xnf/runtime/rcu.h>

/* call_rcu() needs a registered, online thread. Workers always are; any other
 * thread that writes registers once and stays offline, so grace periods never
 * wait for it, going online only for the call. */
enum rcu_role { ROLE_NONE, ROLE_READER, ROLE_OFFLINE_WRITER };
static __thread enum rcu_role role;

void xnf_rcu_register_reader(void)
{
	if (role == ROLE_OFFLINE_WRITER) {
		rcu_thread_online();
	} else {
		rcu_register_thread();
	}
	role = ROLE_READER;
}

void xnf_rcu_unregister_reader(void)
{
	role = ROLE_NONE;
	rcu_unregister_thread();
}

void xnf_rcu_quiescent(void)
{
	rcu_quiescent_state();
}

void xnf_rcu_offline(void)
{
	rcu_thread_offline();
}

void xnf_rcu_online(void)
{
	rcu_thread_online();
}

void xnf_rcu_retire(struct rcu_head *head, void (*free_fn)(struct rcu_head *head))
{
	if (role == ROLE_READER) {
		call_rcu(head, free_fn);
		return;
	}
	if (role == ROLE_NONE) {
		rcu_register_thread();
		rcu_thread_offline();
		role = ROLE_OFFLINE_WRITER;
	}
	rcu_thread_online();
	call_rcu(head, free_fn);
	rcu_thread_offline();
}

void xnf_rcu_synchronize(void)
{
	synchronize_rcu();
}
