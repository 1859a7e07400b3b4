"""``scratchpad.search(words [, max])``: the tables and functions a task needs, by its words.

A catalog of hundreds of tables (GitHub's REST API makes 760) is too long to read;
the words of a task ("who starred this repo") are rarely those of an operation's
summary ("List stargazers"). The search answers with a handful of short rows,
best first, from Postgres' own full-text search.

Rules:
- The index is built once, with the shell tables: its rows are part of the
  name's DDL (``search_ddl``), so servers sharing a name share it and other
  resources rebuild it. A search reads it and calls no tool.
- It lives in the server's system schema: the table ``_search`` (one row per
  table, system view and function: what a row of the answer shows, and one
  ``tsvector`` per field), the table ``_search_words`` (the synonyms) and the
  function ``search``. Statements cannot name the two tables: they are not
  resources, so the gate refuses them.
- The fields, by weight (``FIELD_WEIGHTS``): the name's words
  (``pulls_list_review_comments`` is "pulls list review comments", camelCase
  split too); the summary and, for an HTTP table, its operations' summaries,
  paths, ids and tags (``Resource.about``), for an MCP table its tool's
  description; the columns' names; the whole description and the columns'
  descriptions.
- Synonyms are expanded in the query, word by word (``repo`` also finds
  ``repository``), from ``SYNONYMS``: a plain table that works on any Postgres,
  where a thesaurus dictionary needs a file in the server's share directory.
  Stems (english) make singular and plural one word; a long stem is a prefix
  too (``contributed`` finds ``contributors``).
- A row's score sums, over the query's words (each with its synonyms), the
  weights of the fields the word is in, times the word's rarity (the log of
  the rows over the rows it is in): a table that has more of the task's rare
  words, in its name more than in its columns, comes first. A field counts a
  word once, so a table of many operations is not ranked for their number.
- Any text is a query: it is cut to ``QUERY_CHARS``, and everything but letters
  and digits is a space before it reaches ``to_tsquery``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from glove_scratchpad.names import Schemas, quote_ident
from glove_scratchpad.resources import Fn, Resource

from ._views import own_description, resource_group, short_text

__all__ = ["INDEX_TABLE", "MAX_ROWS", "SEARCH_FUNCTION", "SUMMARY_CHARS", "SYNONYMS",
           "name_words", "search_ddl"]

SEARCH_FUNCTION = "search"
INDEX_TABLE = "_search"
WORDS_TABLE = "_search_words"
MAX_ROWS = 50  # rows one search returns at most, whatever max asks
DEFAULT_ROWS = 5
QUERY_CHARS = 500  # of the words searched: a task, not a document
QUERY_WORDS = 24
SUMMARY_CHARS = 50  # a row's summary: five rows read as a few hundred characters
PREFIX_CHARS = 6  # a stem this long finds the words it begins too (contribut: contributor)
RARITY_FLOOR = 0.1  # a word every row has still counts a little
# What a word counts in each field: the name, the summaries, the columns' names, the
# descriptions. Measured on benchmarks/search.py.
FIELD_WEIGHTS = (1.0, 0.8, 0.2, 0.05)
SYNONYM_SHARE = 0.9  # of a field's weight, when it has a synonym of a word, not the word

# Words tool names use differently from people. Each group's words find each other;
# a word may be in several groups. Kept small: a wide group dilutes every search.
SYNONYMS: tuple[tuple[str, ...], ...] = (
    ("repo", "repository", "project"),
    ("pr", "pull"),
    ("delete", "remove", "destroy", "erase"),
    ("star", "stargazer", "starred"),
    ("issue", "ticket", "bug"),
    ("create", "add", "new", "make", "open", "publish", "set up"),
    ("update", "edit", "change", "modify"),
    ("org", "organization", "company"),
    ("user", "person", "people", "someone", "account", "login"),
    ("login", "username"),
    ("follow", "follower"),
    ("watch", "watcher", "subscriber", "subscription"),
    ("comment", "reply"),
    ("release", "version"),
    ("workflow", "action", "ci", "pipeline", "build"),
    ("authenticated", "my", "me", "mine", "myself", "i"),
    ("secret", "credential", "password", "leak", "leaked"),
    ("notification", "notify", "inbox"),
    ("gist", "snippet", "paste"),
    ("collaborator", "access", "permission"),
    ("team", "group"),
    ("email", "mail"),
    ("webhook", "hook"),
    ("search", "find", "look"),
    ("file", "content", "contents"),
    ("block", "ban"),
    ("invitation", "invite"),
    ("reaction", "emoji", "react"),
    ("check", "status"),
    ("run", "job", "running"),
    ("lock", "freeze"),
    ("visit", "view", "visitor", "traffic"),
    ("clone", "traffic"),
    ("vulnerability", "alert", "advisory"),
    ("assign", "assignee"),
    ("reviewer", "review"),
)

_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
_NOT_WORD = re.compile(r"[^0-9A-Za-z]+")
# What the OpenAPI bridge appends to a table's description: its operations, which the
# search reads but a row's summary leaves out.
_OPERATIONS = re.compile(r"\s*\((?:GET|POST|PUT|PATCH|DELETE) /.*$", re.S)


def name_words(name: str) -> str:
    """A name as words: ``pulls_list_review_comments`` and ``pullsListReviewComments``
    are "pulls list review comments"."""
    return " ".join(w.lower() for w in _NOT_WORD.split(_CAMEL.sub(" ", name)) if w)


def _literal(text: str) -> str:
    """An escape string literal: the same under any standard_conforming_strings."""
    clean = text.replace("\x00", "")
    return "E'" + clean.replace("\\", "\\\\").replace("'", "''") + "'"


def _row(name: str, kind: str, namespace: str, summary: str, keys: str, verbs: str,
         fields: tuple[str, str, str, str]) -> str:
    values = [name, kind, namespace, summary, keys, verbs, *fields]
    return "(" + ", ".join(_literal(v) for v in values) + ")"


def _resource_row(resource: Resource, name: str, namespace: str | None = None) -> str:
    about = " ".join(resource.about)
    first = short_text(own_description(resource), limit=10_000)
    columns = " ".join(name_words(c.name) for c in resource.columns)
    described = " ".join(c.description for c in resource.columns if c.description)
    return _row(name, "table", namespace or resource_group(resource),
                short_text(_OPERATIONS.sub("", own_description(resource)), SUMMARY_CHARS),
                ", ".join(resource.keys),
                ", ".join(resource.verbs),
                (name_words(resource.name), name_words(f"{first} {about}"), columns,
                 f"{resource.description} {described}"))


def _fn_row(fn: Fn, name: str) -> str:
    params = [p.name for p in fn.params]
    described = " ".join(p.description for p in fn.params if p.description)
    return _row(name, "function", name.split(".", 1)[0],
                short_text(own_description(fn), SUMMARY_CHARS),
                ", ".join(p.name for p in fn.params if p.required), "call",
                (name_words(fn.name), name_words(short_text(own_description(fn), limit=10_000)),
                 " ".join(name_words(p) for p in params), f"{fn.description} {described}"))


def _synonym_rows() -> str:
    """Each word with the words of every group it is in."""
    alts: dict[str, set[str]] = {}
    for group in SYNONYMS:
        for word in group:
            alts.setdefault(word, set()).update(w for w in group if w != word)
    return ", ".join(f"({_literal(w)}, {_literal(' '.join(sorted(a)))})"
                     for w, a in sorted(alts.items()))


def search_ddl(schemas: Schemas, resources: Iterable[Resource], system: Iterable[Resource],
               fns: Iterable[Fn]) -> list[str]:
    """The index of these tables, system views and functions, and the function that
    searches it, in ``schemas.system``."""
    s = quote_ident(schemas.system)
    index, words = f"{s}.{quote_ident(INDEX_TABLE)}", f"{s}.{quote_ident(WORDS_TABLE)}"
    rows = [_resource_row(r, r.name) for r in resources]
    rows += [_resource_row(r, f"{schemas.system}.{r.name}", schemas.system) for r in system]
    rows += [_fn_row(f, f"{schemas.fns}.{f.name}") for f in fns]
    out = [
        f"DROP FUNCTION IF EXISTS {s}.{SEARCH_FUNCTION}(text, integer)",
        f"DROP TABLE IF EXISTS {index}",
        f"DROP TABLE IF EXISTS {words}",
        f"CREATE TABLE {index} (name text PRIMARY KEY, kind text NOT NULL, namespace text "
        "NOT NULL, summary text NOT NULL, keys text NOT NULL, verbs text NOT NULL, "
        "a tsvector NOT NULL, b tsvector NOT NULL, c tsvector NOT NULL, d tsvector NOT NULL, "
        "doc tsvector NOT NULL)",
        f"CREATE TABLE {words} (word text PRIMARY KEY, alts text NOT NULL)",
    ]
    if rows:
        out.append(
            f"INSERT INTO {index} SELECT *, a || b || c || d FROM (SELECT name, kind, "
            "namespace, summary, keys, verbs, to_tsvector('english', a) AS a, to_tsvector("
            "'english', b) AS b, to_tsvector('english', c) AS c, to_tsvector('english', d) AS d "
            "FROM (VALUES "
            + ", ".join(rows) + ") AS v(name, kind, namespace, summary, keys, verbs, a, b, c, "
            "d)) AS t")
    # Each word under its stem as well (repos: repo), so a plural finds its synonyms.
    out.append(
        f"INSERT INTO {words} SELECT k, string_agg(DISTINCT alts, ' ') FROM (SELECT w AS k, "
        f"alts FROM (VALUES {_synonym_rows()}) AS v(w, alts) UNION ALL SELECT "
        "(ts_lexize('english_stem', w))[1], alts FROM (VALUES "
        f"{_synonym_rows()}) AS v(w, alts)) AS s WHERE k IS NOT NULL GROUP BY k")
    out.append(f"CREATE INDEX ON {index} USING gin (doc)")
    out.append(_function_ddl(s, index, words))
    out.append(
        f"COMMENT ON FUNCTION {s}.{SEARCH_FUNCTION}(text, integer) IS " + _literal(
            f"The tables and functions a task needs, best first: SELECT * FROM "
            f"{schemas.system}.search('who starred this repo'). max: rows (default "
            f"{DEFAULT_ROWS}, at most {MAX_ROWS}). Calls no tool."))
    return out


def _or_query(vector: str) -> str:
    """The tsquery of any of a tsvector's stems, a long one as a prefix too."""
    return (f"to_tsquery('simple', array_to_string(ARRAY(SELECT CASE WHEN length(l) >= "
            f"{PREFIX_CHARS} THEN l || ':*' ELSE l END FROM unnest(tsvector_to_array({vector}))"
            " AS l), ' | '))")


def _field(column: str, weight: float) -> str:
    """What a field adds for one word: its weight when it has the word itself, a share
    of it when it has only a synonym."""
    return (f"CASE WHEN i.{column} @@ asked.q_own THEN {weight} WHEN i.{column} @@ asked.q "
            f"THEN {weight * SYNONYM_SHARE} ELSE 0 END")


def _function_ddl(s: str, index: str, words: str) -> str:
    # The words: camelCase split, anything but letters and digits a space, so that no
    # character of the text reaches to_tsquery's syntax. Each word with its synonyms is
    # one OR group of stems (a long stem also as a prefix: contributed finds
    # contributors); a row's score sums, over the groups it matches, the weights of the
    # fields the group is in times the group's rarity. The words' CTEs are MATERIALIZED:
    # inlined, Postgres would look up a word's synonyms once per row it matches.
    a, b, c, d = FIELD_WEIGHTS
    return f"""CREATE FUNCTION {s}.{SEARCH_FUNCTION}(words text, max integer DEFAULT \
{DEFAULT_ROWS})
RETURNS TABLE (name text, kind text, namespace text, score real, summary text, keys text,
               verbs text)
LANGUAGE sql STABLE PARALLEL SAFE SET search_path = pg_catalog, pg_temp AS $_gs_$
  WITH said AS MATERIALIZED (
    SELECT DISTINCT w FROM regexp_split_to_table(lower(regexp_replace(regexp_replace(
      left(coalesce(words, ''), {QUERY_CHARS}), '([[:lower:][:digit:]])([[:upper:]])',
      E'\\\\1 \\\\2', 'g'), '[^[:alnum:]]+', ' ', 'g')), ' ') AS w
    WHERE w <> '' LIMIT {QUERY_WORDS}
  ), grouped AS MATERIALIZED (
    SELECT w, to_tsvector('english', w) AS own, to_tsvector('english', w || ' ' || coalesce(
      (SELECT string_agg(x.alts, ' ') FROM {words} x
       WHERE x.word = said.w OR x.word = (ts_lexize('english_stem', said.w))[1]), '')) AS v
    FROM said
  ), asked AS MATERIALIZED (
    SELECT w, {_or_query("v")} AS q, {_or_query("own")} AS q_own
    FROM grouped WHERE v <> ''::tsvector
  ), matched AS (
    SELECT i.name, asked.w,
           {_field("a", a)} + {_field("b", b)} + {_field("c", c)} + {_field("d", d)} AS r
    FROM {index} i JOIN asked ON i.doc @@ asked.q
  ), rarity AS (
    SELECT w, ln((SELECT count(*) FROM {index})::float8 / count(*)) + {RARITY_FLOOR} AS idf
    FROM matched GROUP BY w
  ), scored AS (
    SELECT m.name, sum(m.r * rarity.idf) AS score
    FROM matched m JOIN rarity USING (w) GROUP BY m.name
  )
  SELECT i.name, i.kind, i.namespace, round(scored.score::numeric, 3)::real, i.summary,
         i.keys, i.verbs
  FROM scored JOIN {index} i USING (name)
  ORDER BY scored.score DESC, length(i.name), i.name
  LIMIT least(greatest(coalesce(max, {DEFAULT_ROWS}), 1), {MAX_ROWS})
$_gs_$"""
