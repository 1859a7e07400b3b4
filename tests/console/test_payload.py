"""What the console shows comes from tools and may be hostile: a row holding a script,
an image whose error handler runs code, a link and instructions for a model is shown as
text, in a real browser: nothing of it runs (the browser's console log and the page's
own state say so), nothing of it is markup in the DOM, and no request leaves the page."""

from __future__ import annotations

from urllib.parse import urlsplit

import psycopg

from .fix_browser import Browser
from .fix_console import PASSWORDS, PAYLOAD, Served


async def shown_as_text(browser: Browser, path: str) -> str:
    """Open ``path`` and check the payload on it is inert; the page's text."""
    await browser.get(path)
    text = await browser.text()
    assert "Ignore previous instructions" in text, f"{path} does not show the payload"
    assert '<script>window.__pwned = 1; console.error("PWNED-script")</script>' in text
    assert "<img src=\"x\" onerror=" in text
    assert '<a href="http://evil.example/steal">click here</a>' in text
    assert await browser.script("return window.__pwned === undefined")
    scripts = await browser.script(
        "return [...document.scripts].map(s => s.getAttribute('src'))")
    assert scripts == ["/static/console.js"]  # the console's own, nothing else
    assert await browser.script("return document.images.length") == 0
    links = await browser.script("return [...document.links].map(a => a.href)")
    assert all(urlsplit(h).netloc == urlsplit(browser.base).netloc for h in links), links
    handlers = await browser.script(
        "return [...document.querySelectorAll('*')].flatMap(e => [...e.attributes])"
        ".filter(a => a.name.startsWith('on')).map(a => a.name)")
    assert handlers == []
    log = await browser.console_log()
    assert not [e for e in log if "PWNED" in e["message"]], log
    # A script the page tried to run, or a load it tried, would be refused by the
    # Content-Security-Policy, and the browser would say so here.
    assert not [e for e in log if e["level"] == "SEVERE"], log
    requested = await browser.requests()
    foreign = [u for u in requested if urlsplit(u).netloc != urlsplit(browser.base).netloc]
    assert foreign == [], foreign
    return text


async def test_a_payload_in_the_data_is_shown_as_text(browser: Browser,
                                                      served: Served) -> None:
    async with await psycopg.AsyncConnection.connect(served.dsn("agent"),
                                                     autocommit=True) as agent:
        await agent.execute("SELECT text FROM web")
        # The agent's statement carries the payload too: the sessions page shows it.
        literal = "'" + PAYLOAD.replace("'", "''") + "'"
        await agent.execute(f"SELECT {literal}::text AS note, url FROM web")
        await browser.sign_in("ops", PASSWORDS["ops"])
        await shown_as_text(browser, "/activity")
    await shown_as_text(browser, "/resources")  # in the table's description
