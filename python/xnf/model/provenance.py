"""Whether a profile describes this machine: the environment its fit stored (python/xnf/lab/environment.py)
against this one's, and its age. A profile of another CPU, core count, kernel or set of the CPU's mitigations is
foreign: its times were never this machine's (retpolines and return thunks tax the kernel's paths unequally, so
they move one path's time against another's: docs/methodology.md). One older than STALE_DAYS is stale: the host under a VM moves between sessions (up to 2.6x here).
Either way the advice says so, lowers its confidence and offers the per-path calibration or a quick fit."""

from __future__ import annotations

import calendar
import time

from xnf.model.profile import Profile

STALE_DAYS = 7
# What a profile's environment must share with this machine for its times to be this machine's.
SAME_MACHINE = {"cpu_model": "CPU", "cores": "cores", "kernel": "kernel"}
MITIGATIONS = "cpu_mitigations"   # and these, compared one vulnerability at a time


def _age_days(profile: Profile, now: float) -> float | None:
    started = profile.environment.get("started_utc")
    try:
        then = calendar.timegm(time.strptime(started, "%Y-%m-%dT%H:%M:%SZ"))
    except (TypeError, ValueError):
        return None
    return max(0.0, (now - then) / 86400)


def _mitigation_differences(fitted: dict, here: dict) -> list[str]:
    """One line per vulnerability whose mitigation differs ("none" where the kernel says it does not apply)."""
    return [f"the CPU's mitigation of {name}: {fitted.get(name, 'none')} at the fit, {here.get(name, 'none')} here"
            for name in sorted(set(fitted) | set(here)) if fitted.get(name) != here.get(name)]


def judge(profile: Profile, here: dict, now: float | None = None) -> dict:
    """{"differences": ["CPU: AMD EPYC at the fit, Intel Xeon here", ...], "foreign": bool, "age_days", "stale"}.
    A published profile, or one whose fit stored no environment, is foreign by nature. A fit from before the
    environment kept the mitigations (397e47d) is judged without them."""
    env = profile.environment
    differences = [f"{what}: {env[key]} at the fit, {here.get(key)} here" for key, what in SAME_MACHINE.items()
                   if key in env and env[key] != here.get(key)]
    if MITIGATIONS in env and MITIGATIONS in here:
        differences += _mitigation_differences(env[MITIGATIONS], here[MITIGATIONS])
    if profile.source != "measured" or not env:
        differences.append("not fitted on this machine (" + ("published figures" if profile.source != "measured"
                                                              else "its fit stored no environment") + ")")
    age = _age_days(profile, now if now is not None else time.time())
    return {"differences": differences, "foreign": bool(differences),
            "age_days": round(age, 1) if age is not None else None,
            "stale": age is not None and age > STALE_DAYS}


def advice_note(judged: dict) -> str | None:
    """What the advice says of a profile that is foreign or stale; None when it is neither."""
    if judged["foreign"]:
        what = "fitted on another machine (" + "; ".join(judged["differences"]) + ")"
    elif judged["stale"]:
        what = f"{judged['age_days']:.0f} days old (the host moves between sessions)"
    else:
        return None
    return (f"the profile was {what}: its times may not be this machine's now. --calibrate reads each path again "
            "(a minute or two), or fit this machine's: xnf bench run model-fit --quick")
