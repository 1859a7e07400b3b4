"""Statements for the differential check, generated from a seed over ``world.py``'s tables.

``Generator(seed).cases(n)`` gives ``n`` cases, the same ones for the same seed. A
case is one statement, or a short script (settings, then reads; a write, then reads;
a transaction), each step run through the server and on the reference.

The families follow what the planner treats differently: filters with every
operator (fractional and out-of-range constants on integers, parameters, NULLs,
BETWEEN, LIKE, OR), keys bound by values, IN lists, ``= ANY``, OR, subqueries and
feeds (joins, LATERAL, correlated subqueries, CTEs, functions in FROM), outer
joins and anti-joins, aggregates, windows, DISTINCT, set operations, LIMIT and
OFFSET with and without ORDER BY, settings that change how literals read,
writes followed by reads, in and out of transactions, and the same reads over the
tables of an HTTP API.
"""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from .world import CITIES, KINDS, NAMES, STATUSES, SUBJECTS, TAGS

__all__ = ["Case", "Generator", "Step"]


@dataclass(frozen=True)
class Step:
    """One statement of a case, and how its answers are compared."""

    sql: str
    params: tuple[Any, ...] = ()
    ordered: bool = False  # an ORDER BY fixes the order of every row
    full: str | None = None  # a LIMIT without a total order: the same statement unlimited
    write: bool = False  # the tool's rows change when it fires
    binary: bool = False  # rows in binary: text would follow a DateStyle psycopg cannot read


@dataclass(frozen=True)
class Case:
    family: str
    steps: tuple[Step, ...]
    cleanup: tuple[Step, ...] = ()  # run on both sides however the steps end, not compared

    @property
    def text(self) -> str:
        return "; ".join(s.sql + (f"  -- params {s.params!r}" if s.params else "")
                         for s in self.steps)


@dataclass
class Generator:
    seed: int
    rng: random.Random = field(init=False)

    def __post_init__(self) -> None:
        self.rng = random.Random(self.seed)

    def cases(self, n: int) -> Iterator[Case]:
        families: list[tuple[int, Callable[[], Case]]] = [
            (14, self.people_filters), (10, self.scores_keys), (7, self.feeds),
            (6, self.outer_joins), (5, self.tags_and_ctes), (5, self.orders_filters),
            (5, self.events_reads), (5, self.aggregates), (4, self.set_operations),
            (4, self.windows_distinct), (3, self.settings), (5, self.writes),
            (4, self.transactions), (3, self.chains), (6, self.api_reads)]
        weights = [w for w, _ in families]
        for _ in range(n):
            (_, make), = self.rng.choices(families, weights)
            yield make()

    def http_cases(self, n: int) -> Iterator[Case]:
        """``n`` cases over the HTTP API's tables alone: the short run of every test run."""
        for _ in range(n):
            r = self.rng.random()
            yield self.api_tags() if r < 0.4 else self.api_cards() if r < 0.7 \
                else self.api_reads()

    # -- pieces ----------------------------------------------------------------------

    def pick(self, seq: Any) -> Any:
        return self.rng.choice(list(seq))

    def some(self, seq: Any, low: int = 1, high: int = 3) -> list[Any]:
        seq = list(seq)
        return self.rng.sample(seq, self.rng.randint(low, min(high, len(seq))))

    def quoted(self, text: str) -> str:
        return "'" + text.replace("'", "''") + "'"

    def number(self) -> str:
        """A constant for an integer column: whole, fractional, out of range, or NULL."""
        r = self.rng.random()
        if r < 0.55:
            return str(self.rng.randint(15, 75))
        if r < 0.8:
            return f"{self.rng.randint(15, 75)}.5"
        if r < 0.88:
            return self.pick(["1e20", "-1e20", "9223372036854775808", "1e3"])
        if r < 0.94:
            return f"{self.rng.randint(15, 75)}::numeric"
        return "NULL"

    def compare(self) -> str:
        return self.pick(["=", "<>", "<", "<=", ">", ">=", "!="])

    def limit_tail(self, order: str) -> tuple[str, bool, bool]:
        """``ORDER BY … LIMIT …`` or less: the text, whether the order is total, and
        whether a LIMIT cuts an unordered answer."""
        r = self.rng.random()
        limit = f" LIMIT {self.rng.randint(0, 12)}"
        if self.rng.random() < 0.3:
            limit += f" OFFSET {self.rng.randint(0, 5)}"
        if r < 0.35:
            return "", False, False
        if r < 0.7:
            return f" ORDER BY {order}" + (limit if self.rng.random() < 0.6 else ""), True, False
        return limit, False, True

    def statement(self, family: str, select: str, order: str, params: tuple[Any, ...] = ()
                  ) -> Case:
        tail, ordered, limited = self.limit_tail(order)
        return Case(family, (Step(select + tail, params, ordered,
                                  select if limited else None),))

    # -- people: filters of every kind ------------------------------------------------

    def people_condition(self, alias: str = "") -> tuple[str, list[Any]]:
        a = f"{alias}." if alias else ""
        rng = self.rng
        kind = rng.randrange(16)
        params: list[Any] = []
        if kind == 0:
            text = f"{a}age {self.compare()} {self.number()}"
        elif kind == 1:
            low = rng.randint(15, 60)
            text = f"{a}age BETWEEN {low}{self.pick(['', '.5'])} AND {low + rng.randint(0, 20)}"
        elif kind == 2:
            values = [self.number() for _ in range(rng.randint(1, 4))]
            text = f"{a}age {self.pick(['IN', 'NOT IN'])} ({', '.join(values)})"
        elif kind == 3:
            text = f"{a}{self.pick(['age', 'city', 'seen'])} IS {self.pick(['', 'NOT '])}NULL"
        elif kind == 4:
            text = f"{a}city {self.compare()} {self.quoted(self.pick(CITIES))}"
        elif kind == 5:
            cities = ", ".join(self.quoted(c) for c in self.some(CITIES, 1, 4))
            text = f"{a}city IN ({cities})"
        elif kind == 6:
            head = self.pick(CITIES)[: rng.randint(1, 2)]
            op = self.pick(["LIKE", "ILIKE", "NOT LIKE"])
            pattern = head.upper() if op == "ILIKE" else head
            text = f"{a}city {op} {self.quoted(pattern + self.pick(['%', '_%', '__%']))}"
        elif kind == 7:
            text = f"{a}name {self.compare()} {self.quoted(self.pick(NAMES))}"
        elif kind == 8:
            day = f"2024-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}"
            value = self.pick([self.quoted(day), f"date {self.quoted(day)}"])
            text = f"{a}joined {self.compare()} {value}"
        elif kind == 9:
            day = rng.choice(["2024-12-29", "2024-12-30", "2024-12-31", "2025-01-01"])
            hours = f" {rng.randint(0, 23):02d}:00" if rng.random() < 0.5 else ""
            text = f"{a}seen {self.compare()} {self.quoted(day + hours)}"
        elif kind == 10:
            low = rng.choice(["2024-12-29", "2024-12-30"])
            high = rng.choice(["2024-12-31", "2025-01-01"])
            text = f"{a}seen BETWEEN {self.quoted(low)} AND {self.quoted(high)}"
        elif kind == 11:
            cents = self.pick(["", ".25", ".5"])
            text = f"{a}balance {self.compare()} {rng.randint(-50, 500)}{cents}"
        elif kind == 12:
            cities = self.some(CITIES, 2, 3)
            text = "(" + " OR ".join(f"{a}city = {self.quoted(c)}" for c in cities) + ")"
        elif kind == 13:
            value = self.pick([rng.randint(15, 75), rng.randint(15, 75) + 0.5])
            text = f"{a}age {self.compare()} %s"
            params.append(value)
        elif kind == 14:
            text = f"{a}id {self.compare()} {rng.randint(1, 60)}"
        else:
            text = f"{a}city = %s"
            params.append(self.pick(CITIES))
        return text, params

    def people_filters(self) -> Case:
        conds, params = [], []
        for _ in range(self.rng.randint(0, 3)):
            text, p = self.people_condition()
            conds.append(text)
            params += p
        cols = self.pick(["*", "id, name", "id, age, city", "name, joined, seen",
                          "id, balance"])
        where = f" WHERE {' AND '.join(conds)}" if conds else ""
        return self.statement("people_filters", f"SELECT {cols} FROM people{where}",
                              "id" if "id" in cols or cols == "*" else "name, joined, seen",
                              tuple(params))

    # -- scores: a required key ---------------------------------------------------------

    def person_ids(self, low: int = 1, high: int = 4) -> list[int]:
        return [self.rng.randint(1, 62) for _ in range(self.rng.randint(low, high))]

    def key_binding(self, alias: str = "s") -> tuple[str, tuple[Any, ...]]:
        rng = self.rng
        ids = self.person_ids()
        kind = rng.randrange(9)
        if kind == 0:
            return f"{alias}.person_id = {ids[0]}", ()
        if kind == 1:
            return f"{alias}.person_id IN ({', '.join(map(str, ids))})", ()
        if kind == 2:
            return f"{alias}.person_id = ANY(ARRAY[{', '.join(map(str, ids))}])", ()
        if kind == 3:
            branches = [f"{alias}.person_id = {i}" for i in [*ids[:2], rng.randint(1, 62)]]
            return "(" + " OR ".join(branches) + ")", ()
        if kind == 4:
            subject = self.quoted(self.pick(SUBJECTS))
            return (f"(({alias}.person_id = {ids[0]} AND {alias}.subject = {subject}) OR "
                    f"({alias}.person_id = {ids[-1] + 1} AND {alias}.points > 40))"), ()
        if kind == 5:
            city = self.quoted(self.pick(CITIES))
            return f"{alias}.person_id IN (SELECT id FROM people WHERE city = {city})", ()
        if kind == 6:
            return f"{alias}.person_id = %s", (ids[0],)
        if kind == 7:
            return f"{alias}.person_id = {ids[0]}.5", ()
        return f"{alias}.person_id IN (%s, %s)", (ids[0], ids[-1])

    def scores_keys(self) -> Case:
        where, params = self.key_binding()
        extra = ""
        if self.rng.random() < 0.4:
            extra = self.pick([" AND s.points > 50", " AND s.subject <> 'art'",
                               " AND s.points IS NULL", " AND s.subject LIKE 'm%'"])
        cols = self.pick(["s.*", "s.person_id, s.points", "s.subject"])
        return self.statement("scores_keys", f"SELECT {cols} FROM scores s WHERE {where}{extra}",
                              "s.person_id, s.subject, s.points", params)

    # -- keys fed by other tables -------------------------------------------------------

    def feeds(self) -> Case:
        rng = self.rng
        cond, params = self.people_condition("p")
        kind = rng.randrange(8)
        if kind == 0:
            sql = (f"SELECT p.id, s.subject, s.points FROM people p JOIN scores s ON "
                   f"s.person_id = p.id WHERE {cond}")
            order = "p.id, s.subject, s.points"
        elif kind == 1:
            sql = (f"SELECT p.id, x.total FROM people p, LATERAL (SELECT sum(points) AS total "
                   f"FROM scores s WHERE s.person_id = p.id) x WHERE {cond}")
            order = "p.id"
        elif kind == 2:
            sql = (f"SELECT p.id, (SELECT count(*) FROM scores s WHERE s.person_id = p.id) AS n "
                   f"FROM people p WHERE {cond}")
            order = "p.id"
        elif kind == 3:
            ids = ", ".join(map(str, self.person_ids(2, 5)))
            sql = (f"SELECT u, s.subject FROM unnest(ARRAY[{ids}]) u JOIN scores s ON "
                   "s.person_id = u")
            order = "u, s.subject"
            params = []
        elif kind == 4:
            low = rng.randint(1, 55)
            sql = (f"SELECT g, count(s.subject) FROM generate_series({low}, {low + 4}) g "
                   "LEFT JOIN scores s ON s.person_id = g GROUP BY g")
            order = "g"
            params = []
        elif kind == 5:
            ids = ", ".join(f"({i})" for i in self.person_ids(2, 4))
            sql = (f"SELECT v.x, s.points FROM (VALUES {ids}) v(x) JOIN scores s ON "
                   "s.person_id = v.x")
            order = "v.x, s.points"
            params = []
        elif kind == 6:
            tag = self.quoted(self.pick(TAGS))
            sql = (f"SELECT t.person_id, s.subject FROM tags t JOIN scores s ON "
                   f"s.person_id = t.person_id WHERE t.tag = {tag}")
            order = "t.person_id, s.subject"
            params = []
        else:
            sql = (f"SELECT p.id FROM people p WHERE {cond} AND EXISTS (SELECT 1 FROM scores s "
                   "WHERE s.person_id = p.id AND s.points > 50)")
            order = "p.id"
        return self.statement("feeds", sql, order, tuple(params))

    # -- outer joins, anti-joins ------------------------------------------------------

    def outer_joins(self) -> Case:
        rng = self.rng
        kind = rng.randrange(6)
        status = self.quoted(self.pick(STATUSES))
        if kind == 0:
            sql = ("SELECT p.id, o.id AS order_id FROM people p LEFT JOIN orders o ON "
                   "o.person_id = p.id WHERE o.status IS NULL")
            order = "p.id, order_id"
        elif kind == 1:
            sql = ("SELECT p.id FROM people p LEFT JOIN orders o ON o.person_id = p.id "
                   "WHERE o.id IS NULL")
            order = "p.id"
        elif kind == 2:
            sql = (f"SELECT p.id, o.status FROM people p LEFT JOIN orders o ON "
                   f"o.person_id = p.id AND o.status = {status} WHERE o.person_id IS NOT NULL")
            order = "p.id, o.status"
        elif kind == 3:
            sql = ("SELECT p.id FROM people p WHERE NOT EXISTS (SELECT 1 FROM orders o WHERE "
                   f"o.person_id = p.id AND o.status = {status})")
            order = "p.id"
        elif kind == 4:
            sql = ("SELECT o.id, p.name FROM orders o LEFT JOIN people p ON p.id = o.person_id "
                   f"WHERE p.city IS NULL AND o.status = {status}")
            order = "o.id"
        else:
            sql = ("SELECT p.id, o.id AS oid FROM people p FULL JOIN orders o ON "
                   f"o.person_id = p.id AND o.status = {status} WHERE o.amount IS NULL "
                   "OR p.id IS NULL")
            order = "p.id, oid"
        return self.statement("outer_joins", sql, order)

    # -- tags, and CTEs named like resources -------------------------------------------

    def tags_and_ctes(self) -> Case:
        tag = self.quoted(self.pick(TAGS))
        kind = self.rng.randrange(5)
        if kind == 0:
            sql = f"WITH tags AS (SELECT * FROM tags WHERE tag = {tag}) SELECT count(*) FROM tags"
            order = "1"
        elif kind == 1:
            tags = ", ".join(self.quoted(t) for t in self.some(TAGS, 1, 3))
            sql = f"SELECT person_id, tag FROM tags WHERE tag IN ({tags})"
            order = "person_id, tag"
        elif kind == 2:
            sql = (f"WITH t AS (SELECT person_id FROM tags WHERE tag = {tag}) SELECT p.id, p.name "
                   "FROM people p WHERE p.id IN (SELECT person_id FROM t)")
            order = "p.id"
        elif kind == 3:
            sql = ("WITH people AS (SELECT * FROM people WHERE city = 'lima'), "
                   "picked AS (SELECT * FROM people WHERE age > 30) "
                   "SELECT id, age FROM picked")
            order = "id"
        else:
            sql = (f"SELECT tag, count(*) FROM tags WHERE tag = {tag} OR tag = 'vip' GROUP BY tag")
            order = "tag"
        return self.statement("tags_and_ctes", sql, order)

    # -- orders: filters the tool ignores ------------------------------------------------

    def orders_filters(self) -> Case:
        rng = self.rng
        conds = []
        for _ in range(rng.randint(1, 3)):
            kind = rng.randrange(6)
            if kind == 0:
                conds.append(f"person_id {self.compare()} {self.number()}")
            elif kind == 1:
                statuses = ", ".join(self.quoted(s) for s in self.some(STATUSES))
                conds.append(f"status IN ({statuses})")
            elif kind == 2:
                conds.append(f"amount {self.compare()} {rng.randint(1, 999)}.{rng.randint(0, 99)}")
            elif kind == 3:
                conds.append(f"at {self.compare()} '2024-12-{rng.randint(25, 31)}'")
            elif kind == 4:
                conds.append(f"status IS {self.pick(['', 'NOT '])}NULL")
            else:
                conds.append(f"id {self.compare()} {rng.randint(1, 650)}")
        return self.statement("orders_filters",
                              f"SELECT id, person_id, status, amount FROM orders WHERE "
                              f"{' AND '.join(conds)}", "id")

    # -- events: key-less, kept, paged ---------------------------------------------------

    def events_reads(self) -> Case:
        rng = self.rng
        kind = rng.randrange(5)
        if kind == 0:
            return self.statement("events", "SELECT * FROM events WHERE id = "
                                  f"{rng.randint(1, 710)}", "kind, person_id, at")
        if kind == 1:
            return self.statement("events", f"SELECT kind, at FROM events WHERE kind = "
                                  f"{self.quoted(self.pick(KINDS))} AND id < {rng.randint(1, 700)}",
                                  "at, kind")
        if kind == 2:
            n = rng.randint(1, 120)
            return Case("events", (Step(f"SELECT id FROM events LIMIT {n}",
                                        full="SELECT id FROM events"),))
        if kind == 3:
            return self.statement("events", "SELECT kind, count(*) FROM events GROUP BY kind",
                                  "kind")
        return self.statement("events", f"SELECT e.id, p.name FROM events e JOIN people p ON "
                              f"p.id = e.person_id WHERE e.id BETWEEN {rng.randint(1, 600)} "
                              f"AND {rng.randint(600, 710)}", "e.id, p.name, e.at")

    # -- an HTTP API's tables: filters it applies, list and get, pages, a path key ---------

    def api_person_condition(self, alias: str = "") -> tuple[str, list[Any]]:
        """A condition of ``people_condition`` on a column the API's people have."""
        while True:
            text, params = self.people_condition(alias)
            if "balance" not in text:
                return text, params

    def api_reads(self) -> Case:
        rng = self.rng
        kind = rng.randrange(7)
        params: list[Any] = []
        if kind == 0:
            conds = []
            for _ in range(rng.randint(0, 3)):
                text, p = self.api_person_condition()
                conds.append(text)
                params += p
            if rng.random() < 0.5:  # one the API applies itself
                conds.append(self.pick([f"city = {self.quoted(self.pick(CITIES))}",
                                        f"name = {self.quoted(self.pick(NAMES))}"]))
            where = f" WHERE {' AND '.join(conds)}" if conds else ""
            sql, order = f"SELECT * FROM api_list_people{where}", "id"
        elif kind == 1:  # routed to the item GET; 61 and 62 are no one (a 404)
            ids = self.person_ids(1, 3)
            where = (f"id = {ids[0]}" if len(ids) == 1 else
                     f"id IN ({', '.join(map(str, ids))})")
            sql, order = f"SELECT id, name, seen FROM api_list_people WHERE {where}", "id"
        elif kind == 2:
            where, p2 = self.key_binding()
            params = list(p2)
            extra = self.pick(["", " AND s.points > 50", " AND s.subject <> 'art'"])
            sql = f"SELECT s.* FROM api_list_scores s WHERE {where}{extra}"
            order = "s.person_id, s.subject, s.points"
        elif kind == 3:
            cond, params = self.api_person_condition("p")
            sql = (f"SELECT p.id, s.subject, s.points FROM api_list_people p JOIN "
                   f"api_list_scores s ON s.person_id = p.id WHERE {cond}")
            order = "p.id, s.subject, s.points"
        elif kind == 4:
            cond, params = self.people_condition("p")
            sql = (f"SELECT p.id, x.total FROM people p, LATERAL (SELECT sum(points) AS total "
                   f"FROM api_list_scores s WHERE s.person_id = p.id) x WHERE {cond}")
            order = "p.id"
        elif kind == 5:
            city = self.quoted(self.pick(CITIES))
            where = self.pick(["", f" WHERE city = {city}", " WHERE age > 40"])
            n = rng.randint(0, 40)
            return Case("api_reads", (Step(f"SELECT id FROM api_list_people{where} LIMIT {n}",
                                           full=f"SELECT id FROM api_list_people{where}"),))
        else:
            cond, params = self.api_person_condition()
            sql = (f"SELECT city, count(*), max(joined) FROM api_list_people WHERE {cond} "
                   "GROUP BY city")
            order = "city"
        return self.statement("api_reads", sql, order, tuple(params))

    def api_tags(self) -> Case:
        """An enum parameter that is the rows' field (= sent, IN applied by Postgres), an
        array parameter (= and IN, one call with the list), a jsonb object column."""
        rng = self.rng
        conds = []
        kind = rng.randrange(5)
        if kind == 0:
            conds.append(f"tag = {self.quoted(self.pick(TAGS))}")
        elif kind == 1:
            conds.append(f"tag IN ({', '.join(self.quoted(t) for t in self.some(TAGS, 1, 3))})")
        elif kind == 2:
            conds.append(f"person_id IN ({', '.join(map(str, self.person_ids(1, 5)))})")
        elif kind == 3:
            conds.append(f"person_id = {self.person_ids(1, 1)[0]}")
        if rng.random() < 0.5:
            n = rng.randint(0, 4)
            conds.append(self.pick([f"(extra->>'n')::int > {n}", f"extra->>'n' = '{n}'",
                                    f"extra @> '{{\"n\": {n}}}'"]))
        where = f" WHERE {' AND '.join(conds)}" if conds else ""
        cols, order = self.pick([("*", "person_id, tag, extra::text"),
                                 ("person_id, tag", "person_id, tag"),
                                 ("tag, extra->>'n' AS n", "1, 2"),
                                 ("tag, count(*), sum((extra->>'n')::int)", "1")])
        group = " GROUP BY tag" if "count" in cols else ""
        return self.statement("api_tags", f"SELECT {cols} FROM api_list_tags{where}{group}",
                              order)

    def api_cards(self) -> Case:
        """A GET with no schema: its body one jsonb column, one call per key; a 404 (61
        and 62 are no one) no row."""
        ids = self.person_ids(1, 4)
        where = f"person_id = {ids[0]}" if len(ids) == 1 else \
            f"person_id IN ({', '.join(map(str, ids))})"
        kind = self.rng.randrange(3)
        if kind == 0:
            sql, order = f"SELECT * FROM api_get_card WHERE {where}", "person_id"
        elif kind == 1:
            sql = (f"SELECT person_id, body->>'name' AS name, body->'links' AS links "
                   f"FROM api_get_card WHERE {where} AND body->>'city' IS NOT NULL")
            order = "person_id"
        else:
            sql = ("SELECT p.id, c.body->>'name' = p.name AS same FROM api_list_people p "
                   f"JOIN api_get_card c ON c.person_id = p.id WHERE p.id IN "
                   f"({', '.join(map(str, ids))})")
            order = "p.id"
        return self.statement("api_cards", sql, order)

    # -- aggregates, windows, DISTINCT, set operations -----------------------------------

    def aggregates(self) -> Case:
        cond, params = self.people_condition()
        kind = self.rng.randrange(4)
        if kind == 0:
            sql = ("SELECT count(*), count(age), sum(age), min(joined), max(seen) FROM people "
                   f"WHERE {cond}")
            order = "1"
        elif kind == 1:
            sql = (f"SELECT city, count(*), avg(age) FROM people WHERE {cond} GROUP BY city "
                   "HAVING count(*) > 1")
            order = "city"
        elif kind == 2:
            where, params2 = self.key_binding()
            sql = (f"SELECT s.subject, sum(s.points), count(*) FROM scores s WHERE {where} "
                   "GROUP BY s.subject")
            params = list(params2)
            order = "s.subject"
        else:
            sql = ("SELECT status, count(*), sum(amount) FROM orders WHERE person_id IN "
                   f"({', '.join(map(str, self.person_ids(1, 6)))}) GROUP BY status")
            order = "status"
        return self.statement("aggregates", sql, order, tuple(params))

    def windows_distinct(self) -> Case:
        cond, params = self.people_condition()
        kind = self.rng.randrange(3)
        if kind == 0:
            sql = (f"SELECT id, city, row_number() OVER (PARTITION BY city ORDER BY id) FROM "
                   f"people WHERE {cond}")
            order = "id"
        elif kind == 1:
            sql = f"SELECT DISTINCT city FROM people WHERE {cond}"
            order = "city"
        else:
            where, params2 = self.key_binding()
            sql = (f"SELECT DISTINCT s.subject, s.points FROM scores s WHERE {where}")
            params = list(params2)
            order = "s.subject, s.points"
        return self.statement("windows_distinct", sql, order, tuple(params))

    def set_operations(self) -> Case:
        left, p1 = self.people_condition()
        right, p2 = self.people_condition()
        op = self.pick(["UNION", "UNION ALL", "INTERSECT", "EXCEPT", "EXCEPT ALL"])
        sql = (f"SELECT id, city FROM people WHERE {left} {op} "
               f"SELECT id, city FROM people WHERE {right}")
        return self.statement("set_operations", sql, "id, city", tuple(p1 + p2))

    # -- settings that change how literals read ------------------------------------------

    def settings(self) -> Case:
        rng = self.rng
        zone = self.pick(["America/Sao_Paulo", "Asia/Kolkata", "UTC", "Pacific/Auckland"])
        style = self.pick(["ISO, DMY", "ISO, MDY", "SQL, DMY", "German"])
        day = rng.randint(13, 28)
        reads = [
            Step("SELECT id, seen FROM people WHERE seen BETWEEN '2024-12-30' AND "
                 "'2024-12-31 12:00'"),
            Step(f"SELECT id FROM people WHERE joined = '{day:02d}/0{rng.randint(1, 9)}/2024'"
                 if "DMY" in style or style == "German" else
                 f"SELECT id FROM people WHERE joined = '0{rng.randint(1, 9)}/{day:02d}/2024'"),
            Step("SELECT id, seen::text, joined::text FROM people WHERE id < 6", ordered=False),
            Step(f"SELECT id FROM orders WHERE at > '2024-12-31 {rng.randint(0, 23):02d}:30'"),
        ]
        chosen = [dataclasses.replace(s, binary=True) for s in self.some(reads, 1, 3)]
        return Case("settings", (Step(f"SET TimeZone = '{zone}'"),
                                 Step(f"SET DateStyle = '{style}'"), *chosen),
                    cleanup=(Step("RESET ALL"),))

    # -- writes, then reads ---------------------------------------------------------------

    def note_write(self) -> Step:
        rng = self.rng
        kind = rng.randrange(4)
        if kind == 0:
            n = rng.randint(1, 2)
            values = ", ".join(f"({rng.randint(1, 60)}, {self.quoted(self.pick(NAMES))}, "
                               f"{self.quoted(self.pick(TAGS))})" for _ in range(n))
            return Step(f"INSERT INTO notes (person_id, title, body) VALUES {values}", write=True)
        if kind == 1:
            return Step("UPDATE notes SET body = body || '+' WHERE person_id < "
                        f"{rng.randint(5, 40)} AND title {self.compare()} "
                        f"{self.quoted(self.pick(NAMES))}", write=True)
        if kind == 2:
            return Step(f"UPDATE notes SET title = {self.quoted(self.pick(NAMES))} WHERE id = "
                        f"{rng.randint(1, 30)}", write=True)
        return Step(f"DELETE FROM notes WHERE id = {rng.randint(1, 30)} OR title = "
                    f"{self.quoted(self.pick(NAMES))}", write=True)

    def note_read(self) -> Step:
        return self.pick([
            Step("SELECT id, person_id, title, body FROM notes ORDER BY id, title, body",
                 ordered=True),
            Step("SELECT count(*), count(id) FROM notes WHERE title < "
                 f"{self.quoted(self.pick(NAMES))}"),
            Step("SELECT n.title, p.name FROM notes n JOIN people p ON p.id = n.person_id "
                 "WHERE p.age > 30"),
        ])

    def chain(self, in_transaction: bool) -> Step:
        """A statement whose WITH holds a write, and what reads its RETURNING. Outside a
        transaction an INSERT's RETURNING id is the tool's (the reference has none)."""
        rng = self.rng
        name, body = self.quoted(self.pick(NAMES)), self.quoted(self.pick(TAGS))
        person = rng.randint(1, 60)
        kind = rng.randrange(5)
        if kind == 0:
            sql = (f"WITH n AS (INSERT INTO notes (person_id, title, body) VALUES ({person}, "
                   f"{name}, {body}) RETURNING person_id, title) INSERT INTO notes "
                   "(person_id, title, body) SELECT person_id, title || 'x', 'copy' FROM n")
        elif kind == 1:
            sql = (f"WITH d AS (DELETE FROM notes WHERE id = {rng.randint(1, 30)} OR title = "
                   f"{name} RETURNING id, title) SELECT count(*), min(title) FROM d")
        elif kind == 2:
            sql = (f"WITH u AS (UPDATE notes SET body = body || '!' WHERE person_id < "
                   f"{rng.randint(5, 40)} RETURNING id, body) SELECT id, body FROM u")
        elif kind == 3:
            sql = (f"WITH n AS (INSERT INTO notes (person_id, title, body) VALUES ({person}, "
                   f"{name}, {body}), ({person + 1}, {name}, 'two') RETURNING "
                   f"{'id, ' if in_transaction else ''}title, body) SELECT * FROM n")
        else:
            sql = (f"WITH u AS (UPDATE notes SET title = {name} WHERE id = "
                   f"{rng.randint(1, 30)} RETURNING id, person_id), p AS (SELECT * FROM "
                   "people) SELECT u.id, p.name FROM u JOIN p ON p.id = u.person_id")
        return Step(sql, write=True)

    def chains(self) -> Case:
        if self.rng.random() < 0.5:
            return Case("chains", (self.chain(False), self.note_read()))
        return Case("chains", (Step("BEGIN"), self.chain(True), self.note_read(),
                               Step(self.pick(["COMMIT", "ROLLBACK"])), self.note_read()))

    def writes(self) -> Case:
        return Case("writes", (self.note_write(), self.note_read(), self.note_read()))

    def transactions(self) -> Case:
        steps = [Step("BEGIN")]
        for _ in range(self.rng.randint(1, 3)):
            steps.append(self.note_write())
            if self.rng.random() < 0.7:
                steps.append(self.note_read())
        steps.append(Step(self.pick(["COMMIT", "ROLLBACK"])))
        steps.append(self.note_read())
        return Case("transactions", tuple(steps))
