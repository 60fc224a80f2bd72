"""A segment mix: bulk TCP that a local stack (a container beside the NF) hands the data path in segments of up to
64 KiB, as `xnf advise --mix "--segment BYTES"` states it. At the skb hook (tc) a segment crosses the NF whole, as
one skb; at the XDP hook on a veth it arrives cut into frames of the mix's --size (XDP turns the sender's
segmentation offload off): docs/results.md, "The skb path". The model prices each path per frame or skb it sees
(c_IO per skb at tc, per frame at XDP, both fitted on the lab's floods) and ranks the paths by the TCP payload that
can go through, in Gbit/s.

What it does not price: the per-byte work (the copy a veth makes of a cloned TCP skb to run XDP on it, the sender's
stack cutting segments in software when XDP has turned its offload off); both fall on the XDP paths alone, so the
model's edge for tc on a segment mix is a lower bound. `xnf advise --verify` measures the pick with iperf3.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from xnf.argv_words import option_value
from xnf.errors import XnfError
from xnf.mix import SEGMENT_OPTION as OPTION

# Ethernet, IP and TCP with timestamps (what Linux's TCP sends) and the FCS around the payload of every frame: a
# 1500-byte MTU's frame carries 1,448 bytes, Linux's MSS there.
TCP_HEADERS = {4: 14 + 20 + 32 + 4, 6: 14 + 40 + 32 + 4}
# The most TCP payload one IPv4 packet carries with timestamps: what the GSO limit of 64 KiB leaves (no BIG TCP).
MAX_PAYLOAD = 65535 - 20 - 32
# The frame a segment is cut into on the wire when the mix gives no --size (xnf-gen's sizes count the FCS): a
# 1500-byte MTU's.
DEFAULT_FRAME = 1518
SKB_HOOK = "tc"


@dataclass(frozen=True)
class SegmentMix:
    payload: int                 # TCP payload bytes per segment
    frame: int = DEFAULT_FRAME   # bytes per frame on the wire (with the FCS, as xnf-gen's --size) at XDP
    ip_version: int = 4

    @property
    def payload_per_frame(self) -> int:
        return self.frame - TCP_HEADERS[self.ip_version]

    def frames_per_segment(self, hook: str) -> int:
        """What the path's hook sees of one segment: one skb at tc, the frames it is cut into at XDP."""
        return 1 if hook == SKB_HOOK else math.ceil(self.payload / self.payload_per_frame)

    def payload_per_unit(self, hook: str) -> float:
        """TCP payload bytes per frame (or skb) the hook sees."""
        return self.payload / self.frames_per_segment(hook)

    def describe(self) -> str:
        return (f"bulk TCP from a local stack in segments of {self.payload:,} payload bytes: one skb each at tc, "
                f"{self.frames_per_segment('xdp')} frames of {self.frame} bytes at XDP")


def gbit_s(mpps: float, payload_per_unit: float) -> float:
    """The TCP payload carried at mpps frames (or skbs) per second."""
    return mpps * 1e6 * payload_per_unit * 8 / 1e9


def exact_int(text: str, what: str) -> int:
    """A plain decimal integer, as written: no sign, no leading zero, no other base."""
    if not text.isascii() or not text.isdigit() or (len(text) > 1 and text[0] == "0"):
        raise XnfError(f"{what} must be a plain decimal number of bytes, not {text!r}")
    return int(text)


def of_words(words: list[str]) -> tuple[list[str], SegmentMix | None]:
    """The mix's xnf-gen options without --segment, and the segment mix it states (None if it states none). The
    frames it gives c_task are TCP: a segment mix may not name another protocol, nor classes (one bulk flow kind)."""
    values, rest, i = [], [], 0
    while i < len(words):
        word = words[i]
        if word == OPTION or word.startswith(OPTION + "="):
            if "=" in word:
                values.append(word.split("=", 1)[1])
            elif i + 1 < len(words):
                values.append(words[i + 1])
                i += 1
            else:
                raise XnfError(f"{OPTION} needs a number of bytes: the TCP payload per segment")
        else:
            rest.append(word)
        i += 1
    if not values:
        return words, None
    if len(values) > 1:
        raise XnfError(f"{OPTION} is given {len(values)} times: a segment mix states one segment size")
    return _with_tcp(rest), _segment_mix(values[0], rest)


def _segment_mix(value: str, rest: list[str]) -> SegmentMix:
    if "--class" in rest or any(w.startswith("--class=") for w in rest):
        raise XnfError(f"{OPTION} states one kind of bulk TCP flow: give it with plain options (--flows, --size, "
                       "--ipv6), not classes")
    proto = option_value(rest, "--proto")
    if proto not in (None, "tcp"):
        raise XnfError(f"{OPTION} states TCP segments: the mix's --proto must be tcp or left out, not {proto!r}")
    payload = exact_int(value, OPTION)
    ip_version = 6 if "--ipv6" in rest else 4
    size = option_value(rest, "--size")
    frame = exact_int(size, "--size") if size is not None else DEFAULT_FRAME
    if frame <= TCP_HEADERS[ip_version]:
        raise XnfError(f"--size {frame} leaves no room for TCP payload after the {TCP_HEADERS[ip_version]} bytes of "
                       "headers a segment's frames carry")
    if not 1 <= payload <= MAX_PAYLOAD:
        raise XnfError(f"{OPTION} {payload} is not a segment a local stack hands a veth: 1 to {MAX_PAYLOAD:,} bytes "
                       "of TCP payload (64 KiB less its headers)")
    return SegmentMix(payload, frame, ip_version)


def _with_tcp(words: list[str]) -> list[str]:
    """The frames c_task is measured on are the segments' TCP frames (with the mix's --size, or a full frame)."""
    out = list(words)
    if option_value(out, "--proto") is None:
        out += ["--proto", "tcp"]
    if option_value(out, "--size") is None:
        out += ["--size", str(DEFAULT_FRAME)]
    return out
