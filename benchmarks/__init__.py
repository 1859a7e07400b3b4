"""Benchmarks of glove-scratchpad against direct Postgres: ``python -m benchmarks``.

Each module is one family of the issue "Benchmarks against direct Postgres":
``lookup`` (point lookup), ``throughput``, ``materialize``, ``explain`` (the
pre-pass), ``resolvers`` (resolver concurrency), ``idle`` (idle connections) and
``profiling`` (where one statement's time goes). ``env`` starts the sidecar, the
server and the relay (``relay``); ``report`` writes docs/benchmarks.md; the
server serves ``bench_resources``. ``checks`` verifies the answer of every timed
statement (a wrong one fails the benchmark); ``pgwire`` is a raw simple-protocol client.
"""
