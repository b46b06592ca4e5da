# SPDX-License-Identifier: GPL-2.0-or-later
"""What a set of output files holds, for the live fault tests.

  fault_check.py pcap [--crashed] [--since S] FILE...   pcap files, oldest first
  fault_check.py text [--crashed] [--since S] FILE...   text files (logline), oldest first

Each file is read strictly: a pcap must start with one file header and
hold only whole records (a torn last record, or a second file header
where a record should be, is reported, not skipped); a text file must
hold only whole lines of the expected shape.  The packet numbers of
bench/gen/seqgen.c are taken from each record (pcap: the payload; text:
SPT= and DPT=) and checked across all files together: no number twice,
and in increasing order (one NFLOG input delivers in order).

--crashed: the writer was just killed with SIGKILL, which can stop a
write() part-way: a torn record (or line) at the very end of the last file
is then counted in `torn` but not an error.  Anywhere else it is.

Prints one line of key=value figures and exits 1 if anything is wrong:
  records dups disorder torn headers first last holes segments [since]
  [nflog_seq_last nflog_seq_holes]
`holes` counts numbers missing between first and last, `segments` the
runs of consecutive numbers, `since` the records numbered S or more; with NFLOG
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
crashed = False


def torn_tail(fn, what, last):
    """A record cut at the end of a file: allowed only in the last file
    of a writer that was just killed."""
    if not (crashed and last):
        problems.append("%s: %s" % (fn, what))


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


def pcap_file(fn, seqs, nfseqs, stats, last):
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
            torn_tail(fn, "torn record header at byte %d (%d bytes left)" % (off, len(d) - off), last)
            break
        _, _, incl, orig = struct.unpack(e + "IIII", d[off:off + 16])
        if incl > snap or incl > orig:
            problems.append("%s: record at byte %d claims %d bytes (snaplen %d, orig %d)" %
                            (fn, off, incl, snap, orig))
            break
        if off + 16 + incl > len(d):
            stats["torn"] += 1
            torn_tail(fn, "torn record at byte %d: %d of %d bytes" % (off, len(d) - off - 16, incl), last)
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


def text_file(fn, seqs, stats, last):
    d = open(fn, "rb").read()
    if d and not d.endswith(b"\n"):
        stats["torn"] += 1
        torn_tail(fn, "ends inside a line: %r" % d[-80:], last)
    for i, line in enumerate(d.split(b"\n")[:-1] if d else []):
        m = LINE.match(line.decode("utf-8", "replace"))
        if not m:
            problems.append("%s: line %d is not a whole line: %r" % (fn, i + 1, line[:200]))
            continue
        seqs.append(seq_of(int(m.group(1)), int(m.group(2))))


def main():
    global crashed
    kind, files, since = sys.argv[1], sys.argv[2:], None
    if files[:1] == ["--crashed"]:
        crashed, files = True, files[1:]
    if files[:1] == ["--since"]:
        since, files = int(files[1]), files[2:]
    seqs, nfseqs = [], []
    stats = {"torn": 0, "headers": 0}
    for i, fn in enumerate(files):
        if kind == "pcap":
            pcap_file(fn, seqs, nfseqs, stats, i == len(files) - 1)
        else:
            text_file(fn, seqs, stats, i == len(files) - 1)
    dups = len(seqs) - len(set(seqs))
    disorder = sum(1 for a, b in zip(seqs, seqs[1:]) if b <= a)
    if dups:
        problems.append("%d numbers appear twice" % dups)
    if disorder:
        problems.append("%d records out of order" % disorder)
    out = {"records": len(seqs), "dups": dups, "disorder": disorder, "torn": stats["torn"],
           "headers": stats["headers"], "first": min(seqs, default=-1), "last": max(seqs, default=-1),
           "holes": (max(seqs) - min(seqs) + 1 - len(set(seqs))) if seqs else 0,
           "segments": sum(1 for i, x in enumerate(seqs) if i == 0 or x != seqs[i - 1] + 1)}
    if since is not None:
        out["since"] = sum(1 for x in seqs if x >= since)
    if nfseqs:
        out["nflog_seq_last"] = max(nfseqs)
        out["nflog_seq_holes"] = max(nfseqs) + 1 - len(set(nfseqs))
    print(" ".join("%s=%d" % kv for kv in out.items()))
    for p in problems[:20]:
        print("  " + p, file=sys.stderr)
    sys.exit(1 if problems else 0)


main()
