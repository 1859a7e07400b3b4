"""``python -m benchmarks._cprofile_server OUT serve …``: the server, profiled on demand.

SIGUSR1 starts cProfile, SIGUSR2 stops it and writes the stats to OUT, so the
profile holds the measured statements only: not the imports, the start-up or
the warm-up.
"""

from __future__ import annotations

import cProfile
import signal
import sys

from glove_scratchpad.server.cli import main


def run(argv: list[str]) -> int:
    out, args = argv[0], argv[1:]
    profiler = cProfile.Profile()

    def start(*_: object) -> None:
        profiler.enable()

    def stop(*_: object) -> None:
        profiler.disable()
        profiler.dump_stats(out)

    signal.signal(signal.SIGUSR1, start)
    signal.signal(signal.SIGUSR2, stop)
    return main(args)


if __name__ == "__main__":
    sys.exit(run(sys.argv[1:]))
