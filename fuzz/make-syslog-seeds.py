#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
# Seeds for fuzz_syslog (the layout is fuzz_syslog.c's): a 56-byte head
#   0 flags (1 rfc5424, 2 local, 4 hostname, 8 sd_id, 16 text vouched for, 32 IPv6,
#     64 a rule: family = procid, table = in, chain = out, comment = msgid,
#     verdict = hostname, handle = byte 50)
#   1 which SD fields are present (src dst proto spt dpt in out)
#   2 facility  3 severity  4-5 room (u16 LE)  6-13 seconds (i64 LE)  14-17 ns
#   18-33 src  34-49 dst  50-55 proto, spt, dpt (u16 LE)
# then hostname, app-name, procid, msgid, SD-ID, in, out NUL-separated, and
# the text.  Run from fuzz/: writes corpus/syslog/.
import os
import struct

V4 = lambda a: bytes(10) + b'\xff\xff' + bytes(a)
V6 = bytes([0x20, 0x01, 0x0d, 0xb8] + [0] * 11 + [1])


def seed(flags, present, fac, sev, room, sec, ns, src, dst, nums, fields, text):
    head = bytes([flags, present, fac, sev]) + struct.pack('<HqI', room, sec, ns)
    head += src + dst + struct.pack('<HHH', *nums)
    assert len(head) == 56, len(head)
    return head + b'\0'.join(fields) + b'\0' + text


F = [b'fw.example.com', b'sluice', b'4242', b'-', b'sluice@32473', b'eth0', b'wg0']
seeds = {
    'rfc5424-sd': seed(1 | 4 | 8, 0x7f, 20, 5, 8192, 1061727255, 3000, V4([192, 0, 2, 1]),
                       V4([198, 51, 100, 7]), (6, 40000, 22), F, b'IN=eth0 OUT=wg0 PROTO=TCP'),
    'rfc5424-no-sd': seed(1 | 4, 0, 4, 2, 8192, 1065910455, 3000000, bytes(16), bytes(16), (0, 0, 0),
                          [b'mymachine.example.com', b'su', b'', b'ID47', b'', b'', b''],
                          b"\xef\xbb\xbf'su root' failed for lonvick on /dev/pts/8"),
    'sd-escapes': seed(1 | 4 | 8, 0x60, 16, 6, 8192, 1700000000, 0, bytes(16), bytes(16), (0, 0, 0),
                       F[:5] + [b'a]b"c\\d', b'x\ny\xff\x1b]'], b'text'),
    'rfc3164': seed(4, 0, 16, 4, 8192, 1064977445, 999999999, bytes(16), bytes(16), (0, 0, 0), F,
                    b'line one\nforged <13>line\ttab \x1b[31m'),
    'rfc3164-local': seed(2, 0, 1, 6, 8192, 1700000000, 0, bytes(16), bytes(16), (0, 0, 0),
                          [b'', b'a[b]', b'1]x', b'', b'', b'', b''], b'unix socket'),
    'header-too-long': seed(1 | 4, 0, 0, 0, 20, 1700000000, 0, bytes(16), bytes(16), (0, 0, 0), F, b'x\n'),
    'cut-utf8': seed(4, 0, 23, 7, 45, 1700000000, 0, bytes(16), bytes(16), (0, 0, 0), F,
                     'caf\u00e9 na\u00efve \u2603\u2603\u2603'.encode()),
    'time-range': seed(1, 0, 0, 0, 8192, 2**63 - 1, 2**31, bytes(16), bytes(16), (0, 0, 0),
                       [b'', b'', b'', b'', b'', b'', b''], b''),
    'bad-names': seed(1 | 4 | 8, 0x01, 3, 3, 8192, -62135596801, 5, V4([10, 0, 0, 1]), bytes(16),
                      (0, 0, 0), [b'my host\x7f\xc3\xa9', b'a' * 60, b'p i d', b'm' * 40,
                                  b'id=x]"y z' * 5, b'', b''], b'x'),
    'rule-sd': seed(1 | 4 | 8 | 64, 0x10, 20, 5, 8192, 1700000000, 0, bytes(16), bytes(16), (12, 0, 22),
                    [b'jump x', b'sluice', b'inet', b'ssh "in"] a\\b\n\xff', b'sluice@32473', b'fi]l"ter', b'in\tput'],
                    b'pIN=lo'),
    'rule-only': seed(1 | 8 | 64, 0, 20, 5, 8192, 1700000000, 0, bytes(16), bytes(16), (255, 0, 0),
                      [b'', b'sluice', b'', b'', b'i@1', b'', b''], b''),
    'ipv6-safe': seed(1 | 8 | 16 | 32, 0x1f, 10, 1, 8192, 1700000000, 123456789, V6, V6,
                      (58, 0, 0), F, b'clean text vouched for'),
}
os.makedirs('corpus/syslog', exist_ok=True)
for name, data in seeds.items():
    with open(os.path.join('corpus/syslog', name), 'wb') as f:
        f.write(data)
