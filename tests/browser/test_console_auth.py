"""A console with a token: without it every request gets 401 `unauthorized`
and nothing else; `?token=` once sets an HttpOnly cookie, redirects to `/`, and
the page then works as usual."""

from __future__ import annotations

import json
import urllib.error
import urllib.request

import pytest

from gateway import Gateway

TOKEN = "3f9c1b7e5a2d48c6b0e1f7a9d3c5e8b2"


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None


RAW = urllib.request.build_opener(urllib.request.ProxyHandler({}), _NoRedirect)


@pytest.fixture(scope="module")
def locked(pitchside_bin, tmp_path_factory):
    g = Gateway(pitchside_bin, tmp_path_factory.mktemp("locked"), token=TOKEN)
    yield g
    g.close()


def raw(url, method="GET", headers=None, data=None):
    """(status, headers, body) without following redirects."""
    req = urllib.request.Request(url, method=method, headers=headers or {}, data=data)
    try:
        with RAW.open(req, timeout=10) as r:
            return r.status, r.headers, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.headers, e.read()


def test_without_the_token_every_request_gets_401_and_learns_nothing(locked):
    ack = "/api/alerts/" + urllib.request.quote("testvenue/wearable/band-01/heart_rate/1", safe="") + "/ack"
    asks = [("GET", p) for p in ("/", "/app.js", "/style.css", "/api/state", "/api/events", "/nowhere")]
    asks += [("POST", ack), ("POST", "/api/health/pause"), ("POST", "/api/health/resume")]
    for wrong in (None, "Bearer " + TOKEN[:-1] + "0", "Bearer " + TOKEN + "x", TOKEN, "Basic " + TOKEN):
        for method, path in asks:
            headers = {"Authorization": wrong} if wrong else {}
            data = json.dumps({"by": "intruder"}).encode() if method == "POST" else None
            status, _, body = raw(locked.url + path, method, headers, data)
            assert (status, body) == (401, b"unauthorized"), (method, path, wrong, status, body[:200])
    status, _, body = raw(locked.url + "/", headers={"Cookie": "pitchside_token=" + TOKEN[:-1] + "0"})
    assert (status, body) == (401, b"unauthorized")
    assert not locked.state()["health"]["paused"], "a refused pause paused nothing"
    status, _, body = raw(locked.url + "/api/state", headers={"Authorization": "Bearer " + TOKEN})
    assert status == 200 and json.loads(body)["venue_id"] == "testvenue"
    assert TOKEN not in locked.log_tail(10**6), "the token is never logged"


def test_the_token_link_signs_a_tablet_in_with_an_httponly_cookie(page, second_page, locked):
    page.goto(locked.url + "/")
    assert page.text("body").strip() == "unauthorized"
    status, headers, _ = raw(f"{locked.url}/?token={TOKEN}")
    assert status in (302, 303, 307), status
    assert headers["Location"] in ("/", locked.url + "/"), headers["Location"]
    cookie = headers["Set-Cookie"]
    assert cookie.startswith(f"pitchside_token={TOKEN}") and "HttpOnly" in cookie and "SameSite=Strict" in cookie, cookie

    page.goto(f"{locked.url}/?token={TOKEN}")
    page.wait("document.querySelectorAll('#players .player').length > 0", 15, "players after signing in")
    page.wait("document.getElementById('conn').innerText === 'live'", 15, "live after signing in")
    assert page.eval("location.href") == locked.url + "/", "the token does not stay in the address bar"
    assert "pitchside_token" not in page.eval("document.cookie"), "the cookie is HttpOnly"
    # The other tablet has no cookie: still locked out.
    second_page.goto(locked.url + "/api/state")
    assert second_page.text("body").strip() == "unauthorized"
