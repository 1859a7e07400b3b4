"""The tasks of the search benchmark (``benchmarks/search.py``): what a user asks, and the
operation of GitHub's REST API that does it.

Phrased as people ask, not copied from the operations' summaries: the words are
the user's ("who starred this repo"), the operation is GitHub's
(``GET /repos/{owner}/{repo}/stargazers``). The table that serves the operation is
found in the catalog (its description lists its operations), so a task names what
the API does, not how the server groups operations into tables.
"""

from __future__ import annotations

__all__ = ["TASKS"]

_TASKS: tuple[tuple[str, str], ...] = (
    ("who starred this repo", "GET {r}/stargazers"),
    ("what is the latest release of the project", "GET {r}/releases/latest"),
    ("open a PR from my feature branch", "POST {r}/pulls"),
    ("merge this pull request", "PUT {r}/pulls/{pull_number}/merge"),
    ("file a new bug report on the repo", "POST {r}/issues"),
    ("close ticket 42", "PATCH {r}/issues/{issue_number}"),
    ("comment on an issue", "POST {r}/issues/{issue_number}/comments"),
    ("which branches does the repository have", "GET {r}/branches"),
    ("show recent commits on main", "GET {r}/commits"),
    ("who contributed to this project", "GET {r}/contributors"),
    ("find repositories about machine learning", "GET /search/repositories"),
    ("search for code that calls a function", "GET /search/code"),
    ("look up a GitHub user by their login", "GET /users/{username}"),
    ("who am I logged in as", "GET /user"),
    ("my repositories", "GET /user/repos"),
    ("repos owned by an organization", "GET /orgs/{org}/repos"),
    ("people who follow me", "GET /user/followers"),
    ("follow someone", "PUT /user/following/{username}"),
    ("star a repo", "PUT /user/starred/{owner}/{repo}"),
    ("repos I have starred", "GET /user/starred"),
    ("fork the project into my account", "POST {r}/forks"),
    ("delete the repository", "DELETE {r}"),
    ("rename a branch", "POST {r}/branches/{branch}/rename"),
    ("read the README", "GET {r}/readme"),
    ("get the contents of a file in the repo", "GET {r}/contents/{path}"),
    ("commit a change to a file", "PUT {r}/contents/{path}"),
    ("which languages is the code written in", "GET {r}/languages"),
    ("list the tags of the repo", "GET {r}/tags"),
    ("publish a new release", "POST {r}/releases"),
    ("download assets attached to a release", "GET {r}/releases/{release_id}/assets"),
    ("files changed in a pull request", "GET {r}/pulls/{pull_number}/files"),
    ("ask someone to review my PR", "POST {r}/pulls/{pull_number}/requested_reviewers"),
    ("reviews left on a pull request", "GET {r}/pulls/{pull_number}/reviews"),
    ("compare two branches", "GET {r}/compare/{basehead}"),
    ("assign an issue to a teammate", "POST {r}/issues/{issue_number}/assignees"),
    ("lock the conversation on an issue", "PUT {r}/issues/{issue_number}/lock"),
    ("create a label for triage", "POST {r}/labels"),
    ("add a label to issue 7", "POST {r}/issues/{issue_number}/labels"),
    ("set up a milestone for version 2", "POST {r}/milestones"),
    ("my unread notifications", "GET /notifications"),
    ("mark all notifications as read", "PUT /notifications"),
    ("which CI workflows does the repo have", "GET {r}/actions/workflows"),
    ("recent CI runs of the repository", "GET {r}/actions/runs"),
    ("cancel a running build", "POST {r}/actions/runs/{run_id}/cancel"),
    ("retry only the failed jobs", "POST {r}/actions/runs/{run_id}/rerun-failed-jobs"),
    ("trigger a workflow manually", "POST {r}/actions/workflows/{workflow_id}/dispatches"),
    ("build artifacts of the repo", "GET {r}/actions/artifacts"),
    ("add a secret for GitHub Actions", "PUT {r}/actions/secrets/{secret_name}"),
    ("who has write access to the repo", "GET {r}/collaborators"),
    ("invite a collaborator", "PUT {r}/collaborators/{username}"),
    ("members of our organization", "GET /orgs/{org}/members"),
    ("teams in the org", "GET /orgs/{org}/teams"),
    ("create a gist with a snippet", "POST /gists"),
    ("public gists", "GET /gists/public"),
    ("how many API calls do I have left", "GET /rate_limit"),
    ("how many people visited the repo", "GET {r}/traffic/views"),
    ("how often was the repo cloned", "GET {r}/traffic/clones"),
    ("set up a webhook for pushes", "POST {r}/hooks"),
    ("security vulnerabilities found by dependabot", "GET {r}/dependabot/alerts"),
    ("leaked secrets detected in the repository", "GET {r}/secret-scanning/alerts"),
    ("code scanning alerts", "GET {r}/code-scanning/alerts"),
    ("add my ssh key", "POST /user/keys"),
    ("my email addresses", "GET /user/emails"),
    ("block an annoying user", "PUT /user/blocks/{username}"),
    ("which organizations is this user in", "GET /users/{username}/orgs"),
    ("who is watching the repository", "GET {r}/subscribers"),
    ("topics of the repository", "GET {r}/topics"),
    ("the license of the project", "GET {r}/license"),
    ("emoji reactions on an issue", "GET {r}/issues/{issue_number}/reactions"),
    ("status of checks on a commit", "GET {r}/commits/{ref}/check-runs"),
    ("protect the main branch", "PUT {r}/branches/{branch}/protection"),
    ("deploy to production", "POST {r}/deployments"),
    ("render markdown to html", "POST /markdown"),
    ("issues assigned to me", "GET /issues"),
)

# {r}: a repository's path, written once so that the lines stay short.
TASKS = tuple((words, op.replace("{r}", "/repos/{owner}/{repo}")) for words, op in _TASKS)
