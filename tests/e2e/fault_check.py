# SPDX-License-Identifier: GPL-2.0-or-later
"""What a set of output files holds, for the live fault tests.

  fault_check.py pcap FILE...   pcap files, oldest first
  fault_check.py text FILE...   kernel-format text files (logline), oldest first

Each file is read strictly: a pcap must start with one file header and
hold only whole records (a torn last record, or a second file header
where a record should be, is reported, not skipped); a text file must
hold only whole lines of the expected shape.  The packet numbers of
bench/gen/seqgen.c are taken from each record (pcap: the payload; text:
SPT= and DPT=) and checked across all files together: no number twice,
and in increasing order (one NFLOG input delivers in order).

Prints one line of key=value figures and exits 1 if anything is wrong:
  records dups disorder torn headers first last holes [nflog_seq_holes]
`holes` counts numbers missing between first and last; with NFLOG
link-type files, `nflog_seq_holes` counts NFULA_SEQ values missing
between 0 and the last one (the events the kernel numbered for this
input that are not in the files), and `nflog_seq_last` is the last.
"""
import re
import struct
import sys

MAGICS = {b"\xd4\xc3\xb2\xa1": ("<", 1000), b"\x4d\x3c\xb2\xa1": ("<", 1),
          b"\xa1\xb2\xc3\xd4": (">", 1000), b"\xa1\xb2\x3c\x4d": (">", 1)}
TAG = re.compile(rb"sluice-seq (\d{10})")
LINE = re.compile(r"^fault IN=\w+ OUT= (?:MAC=[0-9a-f:]+ )?SRC=10\.\d+\.0\.1 DST=10\.\d+\.0\.2 "
                  r"LEN=\d+ TOS=0x[0-9A-F]{2} PREC=0x[0-9A-F]{2} TTL=\d+ ID=\d+ (?:DF )?"
                  r"PROTO=UDP SPT=(\d+) DPT=(\d+) LEN=\d+ $")
problems = []


def seq_of(spt, dpt):
    return (dpt - 20000) * 64000 + (spt - 1024)


def nflog_tlvs(rec):
    p, out = 4, {}
    while p + 4 <= len(rec):
        ln, t = struct.unpack("=HH", rec[p:p + 4])
        if ln < 4:
            break
        out[t & 0x3fff] = rec[p + 4:p + ln]
        p += (ln + 3) & ~3
    return out


def pcap_file(fn, seqs, nfseqs, stats):
    d = open(fn, "rb").read()
    if len(d) < 24 or d[:4] not in MAGICS:
        problems.append("%s: no pcap file header (%d bytes)" % (fn, len(d)))
        return
    e, _ = MAGICS[d[:4]]
    hdr = d[:24]
    snap, lt = struct.unpack(e + "II", d[16:24])
    off, n = 24, 0
    while off < len(d):
        if d[off:off + 24] == hdr:
            stats["headers"] += 1
            problems.append("%s: a second file header at byte %d" % (fn, off))
            off += 24
            continue
        if off + 16 > len(d):
            stats["torn"] += 1
            problems.append("%s: torn record header at byte %d (%d bytes left)" % (fn, off, len(d) - off))
            break
        _, _, incl, orig = struct.unpack(e + "IIII", d[off:off + 16])
        if incl > snap or incl > orig:
            problems.append("%s: record at byte %d claims %d bytes (snaplen %d, orig %d)" %
                            (fn, off, incl, snap, orig))
            break
        if off + 16 + incl > len(d):
            stats["torn"] += 1
            problems.append("%s: torn record at byte %d: %d of %d bytes" % (fn, off, len(d) - off - 16, incl))
            break
        rec = d[off + 16:off + 16 + incl]
        off += 16 + incl
        n += 1
        if lt == 239:
            t = nflog_tlvs(rec)
            if 12 in t:
                nfseqs.append(struct.unpack(">I", t[12])[0])
            rec = t.get(9, b"")
        m = TAG.search(rec)
        if not m:
            problems.append("%s: record %d carries no sequence number" % (fn, n))
            continue
        seqs.append(int(m.group(1)))


def text_file(fn, seqs, stats):
    d = open(fn, "rb").read()
    if d and not d.endswith(b"\n"):
        stats["torn"] += 1
        problems.append("%s: ends inside a line: %r" % (fn, d[-80:]))
    for i, line in enumerate(d.split(b"\n")[:-1] if d else []):
        m = LINE.match(line.decode("utf-8", "replace"))
        if not m:
            problems.append("%s: line %d is not a whole line: %r" % (fn, i + 1, line[:200]))
            continue
        seqs.append(seq_of(int(m.group(1)), int(m.group(2))))


def main():
    kind, files = sys.argv[1], sys.argv[2:]
    seqs, nfseqs = [], []
    stats = {"torn": 0, "headers": 0}
    for fn in files:
        if kind == "pcap":
            pcap_file(fn, seqs, nfseqs, stats)
        else:
            text_file(fn, seqs, stats)
    dups = len(seqs) - len(set(seqs))
    disorder = sum(1 for a, b in zip(seqs, seqs[1:]) if b <= a)
    if dups:
        problems.append("%d numbers appear twice" % dups)
    if disorder:
        problems.append("%d records out of order" % disorder)
    out = {"records": len(seqs), "dups": dups, "disorder": disorder, "torn": stats["torn"],
           "headers": stats["headers"], "first": min(seqs, default=-1), "last": max(seqs, default=-1),
           "holes": (max(seqs) - min(seqs) + 1 - len(set(seqs))) if seqs else 0}
    if nfseqs:
        out["nflog_seq_last"] = max(nfseqs)
        out["nflog_seq_holes"] = max(nfseqs) + 1 - len(set(nfseqs))
    print(" ".join("%s=%d" % kv for kv in out.items()))
    for p in problems[:20]:
        print("  " + p, file=sys.stderr)
    sys.exit(1 if problems else 0)


main()
