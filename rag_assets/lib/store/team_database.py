"""A query run in the team's own PostgreSQL (its trace table, its chunk table): rows by column name, and one
error line that names the database (its password hidden), the cause and the query."""

from __future__ import annotations

import re
from typing import Mapping, Sequence

POSTGRES_SCHEMES = ("postgresql://", "postgres://")


class TeamDatabaseError(ValueError):
    """A query that could not run: the message names the database (password hidden) and the query."""


def is_postgres_url(source: str) -> bool:
    return source.startswith(POSTGRES_SCHEMES)


# query parameters whose value is harmless to show (a size, a format, which index or schema): every other
# query value is shown masked wherever a URL is described (metadata, logs, errors), whatever it is named
HARMLESS_PARAMETERS = frozenset({
    "k", "n", "top_k", "topk", "limit", "size", "offset", "page", "per_page", "format", "output", "pretty", "lang",
    "language", "locale", "version", "v", "api-version", "api_version", "index", "collection", "namespace", "db",
    "database", "schema", "table", "mode", "charset", "encoding", "sslmode", "ssl", "connect_timeout", "timeout",
    "application_name", "target_session_attrs", "search_path", "driver"})
MASK = "***"


def masked_url(url: str) -> str:
    """``url`` (a database's or a service's, after its variables were put in) as it may be shown: its password,
    every query value but the harmless ones (``HARMLESS_PARAMETERS``) and any fragment as ``***``. A URL
    that cannot be parsed is shown as its scheme alone."""
    import urllib.parse

    garbled = f"{url.partition(':')[0][:20]}://{MASK}"
    try:
        parts = urllib.parse.urlsplit(url)
        password, _port = parts.password, parts.port
    except ValueError:  # a bad IPv6 host, a bad port (a password cut at its #): only what it is is shown
        return garbled
    if cut_password(url):
        return garbled
    pairs = urllib.parse.parse_qsl(parts.query, keep_blank_values=True)
    hidden = [name for name, value in pairs if value and name.lower() not in HARMLESS_PARAMETERS]
    if not password and not hidden and not parts.fragment:
        return url  # nothing to hide: as written (sqlite:////path would lose a slash through urlunsplit)
    netloc = parts.netloc
    if password:
        user, _, host = netloc.rpartition("@")
        netloc = f"{user.partition(':')[0]}:{MASK}@{host}"
    query = "&".join(f"{urllib.parse.quote(name, safe='')}="
                     f"{MASK if value and name.lower() not in HARMLESS_PARAMETERS else urllib.parse.quote(value, safe='')}"
                     for name, value in pairs)
    return urllib.parse.urlunsplit((parts.scheme, netloc, parts.path, query, MASK if parts.fragment else ""))


def cut_password(url: str) -> bool:
    """Whether ``url`` looks like a password with ``/ ? #`` in it written as is: a host is named, and an ``@``
    comes after it before any query value (the password's end read as a path, query or fragment)."""
    import urllib.parse

    netloc = urllib.parse.urlsplit(url).netloc
    rest = url[url.index(netloc) + len(netloc):] if netloc else ""
    return "@" in rest and "=" not in rest.partition("@")[0]  # not a query value's @ (email=a@b)


def secrets_of(url: str, environ: Mapping[str, str] | None = None) -> list[str]:
    """What of ``url`` (as written, with ``${NAME}`` variables) must never be shown, in every form it may take
    in a driver's message: the values of the variables it names (as set and percent-encoded), the password
    and the query values ``masked_url`` hides (as written and decoded). Longest first."""
    import urllib.parse

    found = [environ[name] for name in variables_of(url) if environ and name in environ]
    try:
        parts = urllib.parse.urlsplit(with_variables(url, environ) if environ is not None else url)
        found += [parts.password or ""]
        found += [value for name, value in urllib.parse.parse_qsl(parts.query, keep_blank_values=True)
                  if name.lower() not in HARMLESS_PARAMETERS]
    except (ValueError, TeamDatabaseError):
        pass
    forms = {form for secret in found for form in (secret, urllib.parse.quote(secret, safe=""),
                                                  urllib.parse.unquote(secret), urllib.parse.quote_plus(secret))}
    return sorted((form for form in forms if len(form) >= 3), key=len, reverse=True)


def scrubbed(message: str, secrets: Sequence[str]) -> str:
    """``message`` (a driver's error, say) with every one of ``secrets`` as ``***``."""
    for secret in secrets:
        message = message.replace(secret, MASK)
    return message


_VARIABLE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")


def variables_of(url: str) -> list[str]:
    """The environment variables ``url`` names as ``${NAME}``."""
    return sorted(set(_VARIABLE.findall(url)))


def with_variables(url: str, environ: Mapping[str, str]) -> str:
    """``url`` with each ``${NAME}`` replaced by that variable of ``environ``, percent-encoded (so that a password
    with ``@ / # % :`` still connects, and the URL still parses: a driver decodes it), a password kept out of
    the settings and of Dagster's run configuration; TeamDatabaseError naming a variable that is not set."""
    import urllib.parse

    missing = sorted({name for name in _VARIABLE.findall(url) if name not in environ})
    if missing:
        raise TeamDatabaseError(f"{masked_url(url)} names {', '.join(missing)}, which the environment does not set")
    return _VARIABLE.sub(lambda match: urllib.parse.quote(environ[match.group(1)], safe=""), url)


def query_rows(url: str, query: str) -> tuple[list[str], list[tuple]]:
    """The column names and rows ``query`` returns from the PostgreSQL database at ``url``, run in a read-only
    transaction that is rolled back: a team's database is only read, whatever the query says (``DROP TABLE``
    fails there, and nothing it did is kept)."""
    import psycopg2

    connection = None
    try:
        connection = psycopg2.connect(url, connect_timeout=10)
        connection.set_session(readonly=True, autocommit=False)
        with connection.cursor() as cursor:
            cursor.execute(query)
            columns = [column.name for column in cursor.description or ()]
            rows = cursor.fetchall() if cursor.description else []
    except psycopg2.Error as error:
        cause = scrubbed(str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__,
                         secrets_of(url))
        raise TeamDatabaseError(f"PostgreSQL ({masked_url(url)}): {cause} (query: {query})") from None
    finally:
        if connection is not None:
            connection.rollback()
            connection.close()
    return columns, rows


def named_rows(url: str, query: str, required: Sequence[str]) -> list[dict]:
    """The rows of ``query`` as {column: value}; TeamDatabaseError naming the missing columns (and those it
    has) when one of ``required`` is not among them."""
    columns, rows = query_rows(url, query)
    missing = [name for name in required if name not in columns]
    if missing:
        raise TeamDatabaseError(f"PostgreSQL ({masked_url(url)}): the query returns no column "
                                f"{', '.join(repr(m) for m in missing)} (it returns {', '.join(columns) or 'none'}; "
                                f"name them with AS) (query: {query})")
    return [dict(zip(columns, row)) for row in rows]
