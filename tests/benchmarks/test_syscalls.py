"""The profile section's count of system calls: strace's summary read as it prints it."""

from __future__ import annotations

from benchmarks.syscalls import KINDS, parse

# ``strace -c -f -p <server>`` over 5,000 kept lookups (one line with errors, the total).
SUMMARY = """\
% time     seconds  usecs/call     calls    errors syscall
------ ----------- ----------- --------- --------- ----------------
 35.22    0.231228          23     10005           write
 27.00    0.177220          17     10007           read
 24.70    0.162163          16     10017           epoll_pwait
 13.07    0.085823          17      5043           getpid
  0.00    0.000000           0         4         2 epoll_ctl
------ ----------- ----------- --------- --------- ----------------
100.00    0.656447          18     35092         2 total
"""


def test_strace_summary_is_read_by_system_call() -> None:
    calls = parse(SUMMARY)
    assert calls == {"write": 10005, "read": 10007, "epoll_pwait": 10017, "getpid": 5043,
                     "epoll_ctl": 4}
    assert [sum(calls.get(c, 0) for c in KINDS[k]) for k in ("waits", "reads", "writes")] \
        == [10017, 10007, 10005]
