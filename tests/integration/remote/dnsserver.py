#!/usr/bin/env python3
# SPDX-License-Identifier: ISC
"""A tiny authoritative DNS server over UDP for the integration tests.

    dnsserver.py NAME=ADDR[,ADDR...] ...

Answers A and AAAA questions for the NAMEs given with the addresses of that
family (an empty answer when there is none), NXDOMAIN for any other name.
Binds 127.0.0.1 on a free port, prints "listening on PORT" on stdout, then
one line "query NAME TYPE" per question it gets. Python standard library
only; it runs until it is killed."""

import ipaddress
import socket
import struct
import sys

TYPE_A, TYPE_AAAA, CLASS_IN = 1, 28, 1


def parse_name(msg, off):
    labels = []
    while True:
        n = msg[off]
        off += 1
        if n == 0:
            return ".".join(labels).lower(), off
        if n & 0xC0:
            raise ValueError("compressed names are not expected in a question")
        labels.append(msg[off:off + n].decode("ascii", "replace"))
        off += n


def answer(query, zone):
    ident, flags, qdcount = struct.unpack("!HHH", query[:6])
    if qdcount != 1:
        return None
    name, off = parse_name(query, 12)
    qtype, qclass = struct.unpack("!HH", query[off:off + 4])
    question = query[12:off + 4]
    print(f"query {name} {qtype}", flush=True)
    rd = flags & 0x0100
    if name not in zone:
        return struct.pack("!HHHHHH", ident, 0x8400 | rd | 3, 1, 0, 0, 0) + \
            question
    records = []
    for addr in zone[name]:
        if qclass != CLASS_IN:
            continue
        if qtype == TYPE_A and addr.version == 4:
            records.append((TYPE_A, addr.packed))
        elif qtype == TYPE_AAAA and addr.version == 6:
            records.append((TYPE_AAAA, addr.packed))
    out = struct.pack("!HHHHHH", ident, 0x8400 | rd, 1, len(records), 0, 0)
    out += question
    for rtype, data in records:
        # The name is a pointer to the question (offset 12).
        out += struct.pack("!HHHIH", 0xC00C, rtype, CLASS_IN, 5, len(data))
        out += data
    return out


def main(argv):
    zone = {}
    for arg in argv:
        name, _, addrs = arg.partition("=")
        zone[name.lower().rstrip(".")] = [
            ipaddress.ip_address(a) for a in addrs.split(",") if a]
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.bind(("127.0.0.1", 0))
    print(f"listening on {sock.getsockname()[1]}", flush=True)
    while True:
        query, peer = sock.recvfrom(4096)
        try:
            reply = answer(query, zone)
        except (ValueError, IndexError, struct.error):
            continue
        if reply is not None:
            sock.sendto(reply, peer)


if __name__ == "__main__":
    main(sys.argv[1:])
