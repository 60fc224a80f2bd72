/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* The mode table's groups by name (lib/runtime/modes.c), for messages that say which modes an option suits: read
 * from the table, so that a mode added there is named everywhere. */
#ifndef XNF_RUNTIME_MODES_H
#define XNF_RUNTIME_MODES_H

const char *xnf_user_space_modes(void);  /* the NF runs in AF_XDP workers */
const char *xnf_socket_modes(void);      /* AF_XDP sockets are opened */
const char *xnf_sending_modes(void);     /* the workers send frames */
const char *xnf_state_modes(void);       /* --state keeps the NF's program and tables across restarts */

#endif
