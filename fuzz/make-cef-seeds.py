#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
# Seeds for fuzz_cef (the layout is fuzz_cef.c's): a 40-byte head
#   0 flags (1 leef, 2 IPv6, 4 action, 8 rule: table = in, chain = out,
#     comment = action, verdict = signature, handle = byte 39)  1 LEEF delimiter  2 severity
#   3 present (1 prefix, 2 in, 4 out, 8 time, 16 packet, 32 connection,
#     64 proto, 128 ct id)  4-5 room (u16 LE, also the ct id's bytes)
#   6-13 seconds (i64 LE)  14-17 ns  18-33 address  34-37 ports (u16 LE)
#   38 ct event bits  39 proto
# then vendor, signature, name, action, in, out NUL-separated, and the
# prefix.  Run from fuzz/: writes corpus/cef/.
import os
import struct

V4 = bytes(10) + b'\xff\xff' + bytes([192, 0, 2, 1])
V6 = bytes([0x20, 0x01, 0x0d, 0xb8] + [0] * 11 + [1])


def seed(flags, delim, sev, present, room, sec, ns, addr, sport, dport, ev, proto, fields, prefix):
    head = bytes([flags, delim, sev, present]) + struct.pack('<HqI', room, sec, ns)
    head += addr + struct.pack('<HH', sport, dport) + bytes([ev, proto])
    assert len(head) == 40, len(head)
    return head + b'\0'.join(fields) + b'\0' + prefix


F = [b'sluice', b'{prefix}', b'{prefix}', b'drop', b'eth0', b'wg0']
seeds = {
    'cef-packet': seed(4, 0, 5, 0xff & ~32, 300, 1700000000, 123456789, V4, 40000, 22, 0, 6, F,
                       b'ssh-in '),
    'cef-hostile': seed(4, 0, 10, 0x5f, 20, 1700000000, 0, V6, 1, 2, 0, 17,
                        [b'a|b\\c', b'x{prefix}y{prefix}', b'={prefix}=', b'a=b\\c\nd', b'i\tn\xff', b'o\x1bu'],
                        b'a|b\\c=d\ne\rf\tg\x01h\x7fi\xffj\xc2\x9bk\xc3\xa9l\xe2\x82m\xed\xa0\x80n \xf0\x9f\x92\xa9'),
    'cef-connection': seed(2, 0, 3, 0xe9, 1000, 1700000000, 5, V6, 0, 0, 4, 58, F, b'ct'),
    'leef-tab': seed(1 | 4, 9, 7, 0xff & ~32, 65535, 1700000000, 0, V4, 5353, 53, 0, 17, F,
                     b'leef\tprefix ^ = \\ |'),
    'leef-caret': seed(1 | 2, ord('^'), 1, 0x57, 60, -62135596801, 0, V6, 80, 8080, 0, 6,
                       [b'v^', b'{prefix}', b'', b'', b'a^b', b''], b'p^q\\r'),
    'empty-templates': seed(0, 0, 0, 0, 10, 0, 0, bytes(16), 0, 0, 0, 0, [b'', b'', b'', b'', b'', b''], b''),
    'cef-rule': seed(4 | 8, 0, 5, 0xff & ~32, 300, 1700000000, 0, V4, 40000, 22, 0, 12,
                     [b'sluice', b'jump x=y', b'{prefix}', b'ssh "in" a\\b=c]|\n', b'filter', b'input'], b'in '),
    'leef-rule': seed(1 | 8, ord('^'), 5, 0x51, 300, 1700000000, 0, V4, 1, 2, 0, 7,
                      [b'v', b'drop', b'', b'c^m\t', b'f^t', b'ch'], b'p'),
    'time-range': seed(0, 0, 0, 8 | 1, 400, 2**63 - 1, 2**31, bytes(16), 0, 0, 0, 0, F, b'{prefix}'),
}
os.makedirs('corpus/cef', exist_ok=True)
for name, data in seeds.items():
    with open(os.path.join('corpus/cef', name), 'wb') as f:
        f.write(data)
