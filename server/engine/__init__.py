"""The interpreter, async and without the wire: Database, Session and the path of
one statement from its plan to its result (resolve, writes, settings, guard)."""
