"""Real APIs as they are, over the wire: reads have no effects, and a write the API
answered with a 2xx fired, whatever its answer says.

The API is the test's own (FastAPI on uvicorn): files, listed and got by id, written by
POST, PATCH, PUT and DELETE, whose writes answer as ``Files.mode`` says (as the document
says, disagreeing with it, empty, ``{}``, 204); a search and a batch that are POSTs
returning a list; and a one-row GET by path. Its own log says which requests came.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import psycopg
import pytest
from fastapi import FastAPI, HTTPException, Request, Response
from pydantic import BaseModel

from glove_scratchpad.resources import ResourceDefinitionError

from ..fix_http import http_served
from ..fix_server import rows
from .fix_api import Api, Tables, tables_of


class FileIn(BaseModel):
    name: str


class File(BaseModel):
    id: int
    name: str
    size: int


class Size(BaseModel):
    file_id: int
    size: int


class Query(BaseModel):
    q: str


@dataclass
class Files:
    files: dict[int, File] = field(default_factory=dict)
    log: list[tuple[str, str]] = field(default_factory=list)
    mode: str = "document"
    made: int = 1  # the last id given: never given again

    def answer(self, file: File, status: int = 200) -> Any:
        if self.mode == "disagrees":  # null where never null, and no size at all
            return Response(f'{{"id": {file.id}, "name": null}}', status,
                            media_type="application/json")
        if self.mode == "empty":
            return Response(b"", status)
        if self.mode == "{}":
            return Response("{}", status, media_type="application/json")
        if self.mode == "204":
            return Response(status_code=204)
        return Response(file.model_dump_json(), status, media_type="application/json")

    def app(self) -> FastAPI:
        app = FastAPI(title="Files")

        @app.middleware("http")
        async def logged(request: Request, call_next: Any) -> Any:
            if request.url.path != "/openapi.json":
                self.log.append((request.method, request.url.path))
            return await call_next(request)

        @app.get("/files", operation_id="files")
        def files() -> list[File]:
            return list(self.files.values())

        @app.get("/files/{file_id}", operation_id="getFile")
        def get_file(file_id: int) -> File:
            if file_id not in self.files:
                raise HTTPException(404, "no such file")
            return self.files[file_id]

        @app.post("/files", operation_id="createFile", status_code=201, response_model=File)
        def create(body: FileIn) -> Any:
            self.made += 1
            new = File(id=self.made, name=body.name, size=0)
            self.files[new.id] = new
            return self.answer(new, 201)

        @app.patch("/files/{file_id}", operation_id="renameFile", response_model=File)
        def rename(file_id: int, body: FileIn) -> Any:
            self.files[file_id] = self.files[file_id].model_copy(update={"name": body.name})
            return self.answer(self.files[file_id])

        @app.put("/files/{file_id}", operation_id="putFile", status_code=201,
                 response_model=File)
        def put(file_id: int, body: FileIn) -> Any:
            self.made = max(self.made, file_id)
            self.files[file_id] = File(id=file_id, name=body.name, size=0)
            return self.answer(self.files[file_id], 201)

        @app.delete("/files/{file_id}", operation_id="deleteFile", response_model=File)
        def delete(file_id: int) -> Any:
            return self.answer(self.files.pop(file_id))

        @app.post("/search", operation_id="search")
        def search(body: Query) -> list[File]:
            return [f for f in self.files.values() if body.q in f.name]

        @app.post("/batch", operation_id="batch")
        def batch(body: Query) -> list[File]:  # deletes every file it names
            gone = [f for f in self.files.values() if body.q in f.name]
            for f in gone:
                del self.files[f.id]
            return gone

        @app.get("/sizes/{file_id}", operation_id="sizeOf")
        def size_of(file_id: int) -> Size:
            if file_id not in self.files:
                raise HTTPException(404, "no such file")
            return Size(file_id=file_id, size=self.files[file_id].size)

        return app


@asynccontextmanager
async def files_api(sidecar: Any, **config: Any) -> AsyncIterator[tuple[Files, Tables]]:
    api = Files(files={1: File(id=1, name="a.txt", size=3)})
    hand = [{"name": "put_file", "insert": "PUT /files/{file_id}"}]  # a PUT that creates
    async with http_served(api.app()) as url, \
            tables_of(Api(url, None), sidecar, tables=hand,  # type: ignore[arg-type]
                      **config) as tables:
        api.log.clear()
        yield api, tables


async def test_a_select_sends_no_write_without_writes(sidecar):
    async with files_api(sidecar, writes=False) as (api, t), await t.connect() as conn:
        names = [r[0] for r in await rows(conn, "SELECT name FROM scratchpad.resources "
                                          "WHERE namespace = 't'")]
        assert {"t_files", "t_search", "t_batch", "t_put_file"} <= set(names), names
        for name in names:
            keys = (await rows(conn, "SELECT keys FROM scratchpad.resources WHERE name = %s",
                               name))[0][0]
            where = " AND ".join(f"{k} = '1'" for k in keys.split(", ") if k)
            # A table of a write alone has nothing to read: refused, sending nothing.
            with contextlib.suppress(psycopg.Error):
                await conn.execute(f"SELECT * FROM {name}" + (f" WHERE {where}" if where
                                                              else ""))
        assert {m for m, _ in api.log} == {"GET"}, api.log
        assert api.files and 1 in api.files  # the batch deleted nothing
        # scratchpad.resources says what each verb sends.
        [[said]] = await rows(conn, "SELECT description FROM scratchpad.resources "
                              "WHERE name = 't_batch'")
        assert "insert POST /batch" in said


async def test_a_declared_read_is_sent_by_a_select(sidecar):
    async with files_api(sidecar, writes=False, reads=["POST /search"]) as (api, t), \
            await t.connect() as conn:
        assert await rows(conn, "SELECT name FROM t_search WHERE q = 'a'") == [("a.txt",)]
        assert api.log == [("POST", "/search")]
        plan = " ".join(r[0] for r in await rows(
            conn, "EXPLAIN SELECT name FROM t_search WHERE q = 'a'"))
        assert "Request: POST" in plan and "/search" in plan
        with pytest.raises(psycopg.Error):
            await conn.execute("SELECT * FROM t_batch WHERE q = 'a'")
        assert api.files and ("POST", "/batch") not in api.log


async def test_a_read_declared_that_the_document_lacks_stops_the_start(sidecar):
    with pytest.raises(ResourceDefinitionError, match="reads names 'POST /serch'"):
        async with files_api(sidecar, reads=["POST /serch"]):
            pass


async def test_a_404_on_a_one_row_get_is_zero_rows(sidecar):
    async with files_api(sidecar) as (_, t), await t.connect() as conn:
        assert await rows(conn, "SELECT size FROM t_size_of WHERE file_id = 1") == [(3,)]
        assert await rows(conn, "SELECT size FROM t_size_of WHERE file_id = 99") == []
        assert any('"t_size_of" returned no rows' in m for _, m in conn.notices)
        assert await rows(conn, "SELECT name FROM t_files WHERE id = 99") == []


MODES = ["disagrees", "empty", "{}", "204"]


async def _statuses(conn: Any) -> list[str]:
    return [r[0] for r in await rows(conn, "SELECT status FROM scratchpad.journal")]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("in_tx", [False, True], ids=["alone", "in a transaction"])
async def test_a_write_answered_2xx_fired(sidecar, in_tx, mode):
    async with files_api(sidecar) as (api, t), await t.connect() as conn:
        api.mode = mode
        made = api.made + 1

        async def run(sql: str, tag: str) -> Any:
            if in_tx:
                await conn.execute("BEGIN")
            cur = await conn.execute(sql)
            got = cur.statusmessage, (await cur.fetchall() if cur.description else None)
            if in_tx:
                await conn.execute("COMMIT")
            assert got[0] == tag, sql
            return got[1]

        returned = await run("INSERT INTO t_files (name) VALUES ('new') RETURNING id, name",
                             "INSERT 0 1")
        assert api.files[made].name == "new"
        # Staged: the row as staged. Fired: what the answer has (its id, its null name),
        # else the row as written.
        assert returned == [(made, None) if mode == "disagrees" and not in_tx
                            else (None, "new")]
        await run(f"UPDATE t_files SET name = 'renamed' WHERE id = {made}", "UPDATE 1")
        assert api.files[made].name == "renamed"
        await run(f"INSERT INTO t_put_file (file_id, name) VALUES ({made + 1}, 'put')",
                  "INSERT 0 1")
        assert api.files[made + 1].name == "put"
        await run(f"DELETE FROM t_files WHERE id = {made}", "DELETE 1")
        await run(f"DELETE FROM t_files WHERE id = {made + 1}", "DELETE 1")
        assert made not in api.files and made + 1 not in api.files
        warnings = [m for s, m in conn.notices if s == "WARNING"]
        if mode == "disagrees":
            assert all('"name"' in w or '"size"' in w for w in warnings), warnings
            # (The PUT's table has no columns of its answer: nothing there to disagree.)
            for op in ("POST /files", "PATCH /files/{file_id}", "DELETE /files/{file_id}"):
                assert any(f"{op} fired" in w for w in warnings), (op, warnings)
        else:
            assert warnings == []
        assert await _statuses(conn) == ["fired"] * 5
