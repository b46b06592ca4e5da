# SPDX-License-Identifier: GPL-2.0-or-later
"""kill -9 a process while it is writing to a given file.

  fault_kill_in_write.py PID PATH TIMEOUT_S

A buffered write() copies page by page and the file's size grows with
each page; between pages the kernel checks for a fatal signal and stops,
so a SIGKILL then leaves only part of that write in the file.  The writer
runs (it does not sleep), so /proc/PID/syscall would only say "running":
instead this polls the size of PATH and sends SIGKILL as soon as it grew
to a multiple of the page size, which is where a write that is still
copying stands (a finished write ends on a page boundary once in 4096).
If that is not seen within TIMEOUT_S the process is killed anyway.  Prints
what it did and the sizes seen.
"""
import os
import signal
import sys
import time

pid, path, timeout = int(sys.argv[1]), sys.argv[2], float(sys.argv[3])
end = time.monotonic() + timeout
last = os.stat(path).st_size
while time.monotonic() < end:
    size = os.stat(path).st_size
    if size != last and size % 4096 == 0:
        os.kill(pid, signal.SIGKILL)
        print("killed while %s grew from %d to %d bytes" % (path, last, size))
        sys.exit(0)
    last = size
os.kill(pid, signal.SIGKILL)
print("killed: no write to %s caught in %g s" % (path, timeout))
