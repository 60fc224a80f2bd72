"""The firewall's rules syntax, checked without loading anything (xnf-firewall check-rules)."""

import subprocess

import pytest

from xnf.build import BIN_DIR


def check(path):
    return subprocess.run([str(BIN_DIR / "xnf-firewall"), "check-rules", str(path)], capture_output=True, text=True)


def test_valid_file_with_comments_blanks_and_both_families(tmp_path):
    path = tmp_path / "ok.txt"
    path.write_text("# comment\n\ndrop udp 198.18.0.1 1 198.18.0.2 2  # trailing\n"
                    "allow tcp 2001:2::1 10 2001:2::2 20\ndrop 47 198.18.0.1 198.18.0.2\ndefault drop\n")
    result = check(path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == f"{path}: 4 rules, all valid"


def test_empty_file_is_valid(tmp_path):
    path = tmp_path / "empty.txt"
    path.write_text("# nothing yet\n")
    assert check(path).stdout.strip() == f"{path}: 0 rules, all valid"


@pytest.mark.parametrize("line,reason", [
    ("drop", "incomplete rule"),
    ("drop udp 198.18.0.1 1 198.18.0.2 2 extra", "udp takes"),
    ("drop icmp 198.18.0.1 1 198.18.0.2", "has no ports"),
    ("drop 256 198.18.0.1 198.18.0.2", "unknown protocol '256'"),
    ("drop udp 198.18.0.1 -1 198.18.0.2 2", "not a port number"),
    ("default", "'default' takes one action"),
    ("drop udp a b c d e f g h i", "too many words"),
])
def test_errors_name_file_line_and_syntax(tmp_path, line, reason):
    path = tmp_path / "bad.txt"
    path.write_text("drop udp 198.18.0.1 1 198.18.0.2 2\n" + line + "\n")
    result = check(path)
    assert result.returncode == 1
    assert result.stderr.startswith(f"xnf: error: {path}:2: ")
    assert reason in result.stderr and "(syntax:" in result.stderr


def test_a_file_that_is_not_text_is_refused(tmp_path):
    """A line without end is refused at a bounded length (not read into memory whole), and a NUL byte
    (/dev/zero is nothing else) never cuts a rule short."""
    long_line = tmp_path / "long.txt"
    long_line.write_text("drop " * 100000)
    endless = check(long_line)
    assert endless.returncode == 1 and f"{long_line}:1: line longer than" in endless.stderr
    zeros = check("/dev/zero")
    assert zeros.returncode == 1 and "/dev/zero:1: a NUL byte in the line" in zeros.stderr
    nul = tmp_path / "nul.txt"
    nul.write_bytes(b"drop udp 198.18.0.1 1 198.18.0.2 2\ndrop udp 198.18.0.1 1\x00 198.18.0.2 2\n")
    refused = check(nul)
    assert refused.returncode == 1 and f"{nul}:2: a NUL byte in the line" in refused.stderr


@pytest.mark.parametrize("line,reason", [
    ("route 10.0.0.0/" + "0" * 60 + "8 via 02:00:00:00:00:01 port 0", "is too long for an IPv4 or IPv6 prefix"),
    ("route 10.0.0.0/+8 via 02:00:00:00:00:01 port 0", "is not an IPv4 or IPv6 prefix with a length of 0-32"),
    ("route 10.0.0.0/8 via 1ff:00:00:00:00:01 port 0", "'1ff:00:00:00:00:01' is not a MAC address"),
    ("route 10.0.0.0/8 via -1:00:00:00:00:01 port 0", "'-1:00:00:00:00:01' is not a MAC address"),
    ("route 10.0.0.0/8 via 02:00:00:00:00:01: port 0", "is not a MAC address"),
])
def test_router_refuses_what_it_would_misread(tmp_path, line, reason):
    """A prefix cut short would read as /0 (a default route); scanf's MAC parsing took '1ff' and '-1'."""
    path = tmp_path / "routes.txt"
    path.write_text(line + "\n")
    result = subprocess.run([str(BIN_DIR / "xnf-router"), "check-rules", str(path)], capture_output=True, text=True)
    assert result.returncode == 1 and f"{path}:1: " in result.stderr and reason in result.stderr


@pytest.mark.parametrize("nf,line,reason", [
    ("nat", "inside from 10.1.0.1/16", "10.1.0.1/16 has host bits set beyond /16"),
    ("nat", "inside from 2001:db8::/32", "is not an IPv4 prefix: the NAT translates IPv4"),
    ("nat", "inside from 10.0.0.0/33", "is not an IPv4 or IPv6 prefix with a length of 0-32"),
    ("nat", "inside from", "the inside reads: inside port N, or inside from PREFIX"),
    ("fwd", "container 198.18.0.1/24 port 1 mac 02:00:00:00:00:01", "198.18.0.1/24 has host bits set beyond /24"),
    ("upf", "breakout 10.0.0.5/24 port 1 mac 02:00:00:00:00:01", "10.0.0.5/24 has host bits set beyond /24"),
    ("upf", "breakout 2001:db8::/32 port 1 mac 02:00:00:00:00:01", "is IPv6, and breakout is by IPv4 prefix here"),
    ("upf", "pdr 1 1 downlink ue :: far 1", "UE :: is not a unicast prefix another host can reach (it is in ::/64"),
    ("upf", "pdr 1 1 downlink ue ::1 far 1", "UE ::1 is not a unicast prefix another host can reach (it is in ::/64"),
    ("upf", "pdr 1 1 downlink ue ::ffff:10.0.0.1 far 1", "UE ::ffff:10.0.0.1 is not a unicast prefix another host"),
    ("upf", "pdr 1 1 downlink ue ff02::/64 far 1", "(it is multicast)"),
    ("upf", "pdr 1 1 downlink ue fe80::/64 far 1", "(it is link-local)"),
    ("upf", "pdr 1 1 downlink ue 2001:db8::1/64 far 1", "2001:db8::1/64 has host bits set beyond /64"),
    ("upf", "pdr 1 1 downlink ue 2001:db8::/48 far 1", "UE '2001:db8::/48' is not an IPv6 /64 prefix"),
])
def test_prefixes_are_read_alike_by_every_nf(tmp_path, nf, line, reason):
    """One parser of prefixes for the NAT's inside, fwd's destinations, the router's routes and the upf's UEs and
    breakout: host bits and addresses no host has are refused, never masked."""
    path = tmp_path / "rules.txt"
    path.write_text(line + "\n")
    result = subprocess.run([str(BIN_DIR / f"xnf-{nf}"), "check-rules", str(path)], capture_output=True, text=True)
    assert result.returncode == 1 and f"{path}:1: " in result.stderr and reason in result.stderr


def test_control_bytes_in_a_message_are_escaped(tmp_path):
    path = tmp_path / "escape.txt"
    path.write_bytes(b"drop \x1b[31mred\n")
    result = check(path)
    assert result.returncode == 1 and "'\\x1b[31mred'" in result.stderr and "\x1b" not in result.stderr
