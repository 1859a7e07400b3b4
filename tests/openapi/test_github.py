"""GitHub's whole REST API as tables, from its real OpenAPI document (npm
``@octokit/openapi``), against Prism (npm ``@stoplight/prism-cli``) mocking it with
``--errors``: a request the document does not allow is refused, so a statement that
succeeds made only requests the document accepts.

The import's time and memory are measured; the catalog a model reads stays small;
a sample of GET tables, and writes, are called through SQL over the wire.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import resource
import socket
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import psycopg
import pytest
from psycopg import sql as sql_text

from glove_scratchpad.resources.openapi import OpenApiBridge
from glove_scratchpad.server import Database
from glove_scratchpad.server.agent import preamble

from ..fix_server import dsn, serving

NODE = Path(__file__).with_name("node") / "node_modules"
SPEC = NODE / "@octokit" / "openapi" / "generated" / "api.github.com.json"
PRISM = NODE / ".bin" / "prism"
IMPORT_SECONDS = 10.0  # the document to tables: the bound
IMPORT_MB = 500
PREAMBLE_CHARS = 8000
# GET tables across GitHub's areas, each called with its keys (test values by type).
GETS = [
    "gh_actions_list_self_hosted_runners_for_org", "gh_activity_get_thread",
    "gh_agent_tasks_get_task_by_id", "gh_agents_list_org_secrets",
    "gh_api_insights_get_subject_stats", "gh_apps_list_subscriptions_for_authenticated_user",
    "gh_billing_get_budget_org", "gh_checks_get_suite", "gh_classroom_get_assignment_grades",
    "gh_code_security_get_configuration_for_repository",
    "gh_codes_of_conduct_get_all_codes_of_conduct", "gh_codespaces_list_org_secrets",
    "gh_dependabot_list_repo_secrets", "gh_dependency_graph_generate_sbom_report",
    "gh_emojis_get", "gh_enterprise_teams_list", "gh_gists_list_public", "gh_git_get_tag",
    "gh_gitignore_get_template", "gh_hosted_compute_list_network_configurations_for_org",
    "gh_interactions_get_pull_request_creation_cap_for_repo", "gh_issues_list_for_repo",
    "gh_licenses_get_all_commonly_used", "gh_meta_root",
    "gh_migrations_list_repos_for_authenticated_user",
    "gh_oidc_get_oidc_custom_sub_template_for_org", "gh_orgs_list_attestations",
    "gh_packages_get_all_package_versions_for_package_owned_by_org",
    "gh_private_registries_list_org_private_registries", "gh_pulls_list_commits",
    "gh_rate_limit_get", "gh_reactions_list_for_issue_comment", "gh_repos_get_top_referrers",
    "gh_search_code", "gh_secret_scanning_get_alert", "gh_teams_list_repos_legacy",
    "gh_users_list_gpg_keys_for_authenticated_user", "gh_actions_get_hosted_runners_limits_for_org",
    "gh_activity_list_received_public_events_for_user", "gh_agent_tasks_list_tasks",
    "gh_agents_list_repo_organization_secrets", "gh_api_insights_get_time_stats_by_user",
    "gh_apps_get_webhook_delivery", "gh_checks_list_suites_for_ref",
    "gh_code_security_get_default_configurations_for_enterprise",
    "gh_codespaces_get_export_details_for_authenticated_user",
    "gh_dependabot_get_repo_public_key", "gh_dependency_graph_export_sbom",
    "gh_enterprise_team_memberships_list", "gh_gists_list_for_user", "gh_git_get_tree",
    "gh_gitignore_get_all_templates", "gh_hosted_compute_get_network_settings_for_org",
    "gh_interactions_get_restrictions_for_repo", "gh_issues_list_dependencies_blocking",
    "gh_licenses_get", "gh_meta_get_all_versions", "gh_migrations_list_repos_for_org",
    "gh_orgs_list_organization_fine_grained_permissions",
]
# Writes, each a statement of its own: staged requests a model would make.
WRITES = [
    "INSERT INTO gh_issues_list_for_repo (owner, repo, title, body) VALUES ('octocat', "
    "'hello', 'Found a bug', 'It breaks')",
    "UPDATE gh_issues_list_milestones SET title = 'v1.1', state = 'closed' WHERE "
    "owner = 'octocat' AND repo = 'hello' AND number = 1",
    "INSERT INTO gh_issues_list_labels_for_repo (owner, repo, name, color) VALUES "
    "('octocat', 'hello', 'triage', 'f29513')",
    "UPDATE gh_issues_list_labels_for_repo SET color = '00ff00' WHERE owner = 'octocat' AND "
    "repo = 'hello' AND name = 'bug'",
    "DELETE FROM gh_issues_list_labels_for_repo WHERE owner = 'octocat' AND repo = 'hello' "
    "AND name = 'bug'",
    "INSERT INTO gh_issues_list_milestones (owner, repo, title) VALUES ('octocat', 'hello', "
    "'v1.0')",
    "DELETE FROM gh_issues_list_milestones WHERE owner = 'octocat' AND repo = 'hello' AND "
    "number = 1",
    "INSERT INTO gh_issues_list_comments (owner, repo, issue_number, body) VALUES "
    "('octocat', 'hello', 1347, 'Me too')",
    "INSERT INTO gh_repos_list_releases (owner, repo, tag_name, name) VALUES ('octocat', "
    "'hello', 'v1.0.0', 'First')",
    "UPDATE gh_repos_list_releases SET name = 'First, fixed' WHERE owner = 'octocat' AND "
    "repo = 'hello' AND id = 1",
    "UPDATE gh_gists_get SET description = 'Notes' WHERE gist_id = 'aa5a315d61ae9438b18d'",
    "DELETE FROM gh_gists_get WHERE gist_id = 'aa5a315d61ae9438b18d'",
]


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
async def prism() -> AsyncIterator[str]:
    assert SPEC.exists(), "make test installs tests/openapi/node (npm ci)"
    port = _port()
    proc = await asyncio.create_subprocess_exec(
        str(PRISM), "mock", "--errors", "-h", "127.0.0.1", "-p", str(port), str(SPEC),
        stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    try:
        async with httpx.AsyncClient() as client, asyncio.timeout(120):
            while True:
                with contextlib.suppress(httpx.HTTPError):
                    await client.get(url + "/rate_limit")
                    break
                assert proc.returncode is None, "prism ended"
                await asyncio.sleep(0.5)
        yield url
    finally:
        proc.terminate()
        await proc.wait()


@pytest.fixture(scope="module")
async def github(prism: str, sidecar: Any) -> AsyncIterator[dict[str, Any]]:
    os.environ["GLOVE_TEST_GH_TOKEN"] = "gh-test-token"
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    started = time.monotonic()
    bridge = OpenApiBridge([{"namespace": "gh", "spec": str(SPEC), "base_url": prism,
                             "headers": {"Authorization": "token ${GLOVE_TEST_GH_TOKEN}"}}],
                           Path("."))
    tables = await bridge.load()
    loaded = time.monotonic() - started
    grown = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - rss) / 1024
    db = await Database.create(tables, writes=True, sidecar=sidecar, database="github")
    try:
        async with serving(db, writes=True) as server:
            yield {"db": db, "dsn": dsn(server), "tables": tables, "seconds": loaded,
                   "installed": time.monotonic() - started, "mb": grown, "bridge": bridge,
                   "prism": prism}
    finally:
        await db.close()
        await bridge.aclose()


def _value(schema: Any) -> Any:
    """A value Prism takes for a parameter of this schema."""
    if schema.get("enum"):
        return schema["enum"][0]
    kind = schema.get("type")
    if kind == "integer":
        return 1
    if kind == "boolean":
        return True
    if schema.get("format") == "date":
        return "2025-01-01"
    if schema.get("format") == "date-time":
        return "2025-01-01T00:00:00Z"
    return "octocat"


async def _statuses(conn: psycopg.AsyncConnection[Any], sql: str) -> list[str]:
    cur = await conn.execute("SELECT arguments->>'status' FROM scratchpad.calls WHERE "
                             "statement = %s AND verb LIKE 'http %%'", (sql,))
    return [s for (s,) in await cur.fetchall()]


async def test_the_whole_api_imports_fast_and_small_and_every_table_is_reachable(github):
    tables = github["tables"]
    assert len(tables) > 700
    assert github["seconds"] < IMPORT_SECONDS, github["seconds"]
    assert github["mb"] < IMPORT_MB, github["mb"]
    print(f"\nGitHub's document: {len(tables)} tables in {github['seconds']:.1f} s "
          f"({github['installed']:.1f} s with the catalog installed), "
          f"{github['mb']:.0f} MB more RSS")
    text = preamble(github["db"])
    assert len(text) < PREAMBLE_CHARS, len(text)
    assert "FROM scratchpad.resources WHERE namespace = 'gh'" in text
    async with await psycopg.AsyncConnection.connect(github["dsn"], autocommit=True) as conn:
        cur = await conn.execute("SELECT count(*) FROM scratchpad.resources WHERE "
                                 "namespace = 'gh'")
        assert await cur.fetchone() == (len(tables),)


async def test_a_sample_of_gets_is_accepted_by_prism(github):
    bridge = github["bridge"]
    plans = {p.name: p for p in _plans(bridge)}
    async with await psycopg.AsyncConnection.connect(github["dsn"], autocommit=True) as conn:
        for name in GETS:
            plan = plans[name]
            keys = [c for c in plan.columns if c.name in plan.keys]
            where = " AND ".join(
                f"{c.name} = "
                + sql_text.Literal(_value(plan.select.parameter(c.param).schema.contents))
                .as_string(conn) for c in keys)
            sql = f"SELECT * FROM {name}" + (f" WHERE {where}" if where else "") + " LIMIT 1"
            await conn.execute(sql)
            statuses = await _statuses(conn, sql)
            assert statuses and all(s.startswith("2") for s in statuses), (name, statuses)
        # A list-and-get table routes its item's key to the item GET.
        sql = ("SELECT name FROM gh_repos_list_releases WHERE owner = 'octocat' AND "
               "repo = 'hello' AND id = 1")
        cur = await conn.execute(sql)
        assert await cur.fetchall() == [("v1.0.0",)]
        cur = await conn.execute("SELECT arguments->>'url' FROM scratchpad.calls WHERE "
                                 "statement = %s AND verb = 'http GET'", (sql,))
        assert [u for (u,) in await cur.fetchall()] == [
            github["prism"] + "/repos/octocat/hello/releases/1"]
        # GitHub's document gives the issue GET's example as an Example object where
        # its value belongs, and Prism serves it: a row without the fields the document
        # requires is an error that says so, never a row of NULLs.
        with pytest.raises(psycopg.errors.ExternalRoutineException) as caught:
            await conn.execute("SELECT title FROM gh_issues_list_for_repo WHERE owner = "
                               "'octocat' AND repo = 'hello' AND number = 1347")
        assert 'without the field "id"' in str(caught.value)
        assert caught.value.diag.message_hint.startswith("The document and the API disagree")
    assert len(GETS) >= 50


async def test_writes_are_accepted_by_prism(github):
    async with await psycopg.AsyncConnection.connect(github["dsn"], autocommit=True) as conn:
        for sql in WRITES:
            await conn.execute(sql)
            statuses = await _statuses(conn, sql)
            assert statuses and all(s.startswith("2") for s in statuses), (sql, statuses)
            cur = await conn.execute("SELECT verb FROM scratchpad.calls WHERE statement = %s "
                                     "AND verb LIKE 'http %%' AND verb <> 'http GET'", (sql,))
            assert await cur.fetchall(), sql  # the write itself was sent
    assert len(WRITES) >= 10


def _plans(bridge: OpenApiBridge) -> list[Any]:
    from glove_scratchpad.resources.openapi._mapping import plan_tables
    from glove_scratchpad.resources.openapi._spec import Spec

    return plan_tables(Spec.load(str(SPEC), Path(".")), bridge.configs[0])
