"""`xnf stop [--name NAME] [--drop-state]`: a running instance stopped as Ctrl-C stops it. Without `--state` its
program comes off and its ports are put back; with `--state DIR` its program (or, for AF_XDP workers, the kernel
build they hand their tables to) forwards on with the kept tables, for the next start to take over, unless
`--drop-state` removes what xnf keeps in DIR (state_folder.py), which takes the program off. An instance the service runs is stopped through its file.
"""

from __future__ import annotations

from xnf import control
from xnf.argv_words import option_value
from xnf.service import apply as applying
from xnf.service import state_folder
from xnf.service.running import outside_the_file


def stop(name: str, drop_state: bool = False) -> str:
    _, argv = outside_the_file(name, "take it out of the file and run xnf apply (or systemctl reload xnf), which "
                                     "stops it and removes its kept state")
    state = option_value(argv or [], "--state")
    gone = control.state(name) == control.DEAD
    applying.stop(name)
    control.remove_records(name)
    stopped = f"{name} had stopped already (its process is gone): removed its records" if gone else f"stopped {name}"
    if state and drop_state:
        left = state_folder.remove(state)
        return f"{stopped} and removed its kept state {state}: its program is off{left}"
    if state:
        return (f"{stopped}: its program forwards on with the tables kept in {state} (the next start with "
                f"--state {state} takes them over; xnf stop --drop-state, or rm -r {state}, takes it off)")
    return stopped
