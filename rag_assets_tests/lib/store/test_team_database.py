"""A team's database URL as it may be shown: the password and every query value but the harmless ones
masked, a password put in from a variable percent-encoded (so it connects and the URL still parses), and a
driver's message with every form of the secrets taken out."""

from __future__ import annotations

import urllib.parse

import pytest

from rag_assets.lib.store.team_database import (
    TeamDatabaseError,
    cut_password,
    masked_url,
    scrubbed,
    secrets_of,
    variables_of,
    with_variables,
)

HARD = "p@ss/w#rd%41?:x"  # every character that breaks a URL written as is


@pytest.mark.parametrize("url, shown", [
    ("postgresql://rag:secret@db:5432/team", "postgresql://rag:***@db:5432/team"),
    ("postgresql://rag@db/team", "postgresql://rag@db/team"),  # nothing to hide: as written
    ("sqlite:////var/team.db", "sqlite:////var/team.db"),
    ("https://svc/search?k=5&pwd=hunter2&jwt=a.b.c&session=xyz", "https://svc/search?k=5&pwd=***&jwt=***&session=***"),
    ("https://svc/search?q=anything&format=json", "https://svc/search?q=***&format=json"),  # not harmless: masked
    ("https://svc/v?api-version=2&x-sig=abc#token=1", "https://svc/v?api-version=2&x-sig=***#***"),
    ("postgresql://rag:${PW}@db/team", "postgresql://rag:***@db/team"),
    ("postgresql://rag:p@ss@[::1x]/db", "postgresql://***"),  # a bad IPv6 host: only what it is
    ("postgresql://rag:pa#ss@host/db", "postgresql://***"),  # a password cut at its # (a bad port)
    ("postgresql://rag:12/ss@host/db", "postgresql://***"),  # a password cut at its / (the @ in the path)
])
def test_a_url_is_shown_with_every_secret_masked(url, shown):
    assert masked_url(url) == shown


def test_a_substituted_password_is_percent_encoded_connects_and_is_masked():
    url = with_variables("postgresql://rag:${TEAM_DB_PASSWORD}@db:5432/team", {"TEAM_DB_PASSWORD": HARD})
    parts = urllib.parse.urlsplit(url)
    assert (parts.hostname, parts.port, parts.path) == ("db", 5432, "/team")
    assert urllib.parse.unquote(parts.password) == HARD  # what a driver decodes
    assert masked_url(url) == "postgresql://rag:***@db:5432/team"
    assert variables_of("postgresql://${U}:${P}@h/${U}") == ["P", "U"]
    with pytest.raises(TeamDatabaseError, match="names PW, which the environment does not set") as raised:
        with_variables("postgresql://rag:${PW}@db/team", {})
    assert "${PW}" not in str(raised.value)


def test_a_drivers_message_loses_every_form_of_the_secret():
    written = "postgresql://rag:${TEAM_DB_PASSWORD}@db/team?sslmode=require&token=tok-123"
    environ = {"TEAM_DB_PASSWORD": HARD}
    secrets = secrets_of(written, environ)
    assert HARD in secrets and urllib.parse.quote(HARD, safe="") in secrets and "tok-123" in secrets
    assert "require" not in secrets  # a harmless value is no secret
    message = (f'could not translate host name "{HARD}@db" to address; password {urllib.parse.quote(HARD, safe="")}; '
               f"{urllib.parse.quote_plus(HARD)}; token tok-123")
    said = scrubbed(message, secrets)
    assert HARD not in said and urllib.parse.quote(HARD, safe="") not in said and "tok-123" not in said
    assert said.count("***") == 4
    assert scrubbed("nothing secret here", secrets) == "nothing secret here"


def test_a_password_cut_by_a_slash_or_hash_is_seen():
    assert cut_password("postgresql://rag:12/ss@host/db") and cut_password("mysql://u:a#b@h/d")
    assert not cut_password("postgresql://rag:${PW}@host/db") and not cut_password("sqlite:////tmp/a@b.db")
    assert not cut_password("https://svc/search?email=a@b.c")  # an @ in a query is no cut password
