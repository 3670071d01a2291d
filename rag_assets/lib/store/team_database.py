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


# query parameters whose value is a secret: shown masked wherever a URL is described (metadata, logs, errors)
SECRET_PARAMETERS = ("key", "token", "secret", "password", "passwd", "auth", "signature", "sig", "credential",
                     "access_token", "api_key", "apikey")


def masked_url(url: str) -> str:
    """``url`` (a database's or a service's) with its password and the values of secret-looking query
    parameters as ``***``."""
    import urllib.parse

    parts = urllib.parse.urlsplit(url)
    pairs = urllib.parse.parse_qsl(parts.query, keep_blank_values=True)
    if not parts.password and not any(word in name.lower() for name, _ in pairs for word in SECRET_PARAMETERS):
        return url  # nothing to hide: as written (sqlite:////path would lose a slash through urlunsplit)
    netloc = parts.netloc
    if parts.password:
        netloc = netloc.replace(f":{parts.password}@", ":***@", 1)
    query = urllib.parse.urlencode([(name, "***" if any(word in name.lower() for word in SECRET_PARAMETERS) else value)
                                    for name, value in pairs],
                                   safe="*")
    return urllib.parse.urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))


_VARIABLE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")


def variables_of(url: str) -> list[str]:
    """The environment variables ``url`` names as ``${NAME}``."""
    return sorted(set(_VARIABLE.findall(url)))


def with_variables(url: str, environ: Mapping[str, str]) -> str:
    """``url`` with each ``${NAME}`` replaced by that variable of ``environ`` (a password kept out of the
    settings and of Dagster's run configuration); TeamDatabaseError naming a variable that is not set."""
    missing = sorted({name for name in _VARIABLE.findall(url) if name not in environ})
    if missing:
        raise TeamDatabaseError(f"{masked_url(url)} names {', '.join(missing)}, which the environment does not set")
    return _VARIABLE.sub(lambda match: environ[match.group(1)], url)


def query_rows(url: str, query: str) -> tuple[list[str], list[tuple]]:
    """The column names and rows ``query`` returns from the PostgreSQL database at ``url``."""
    import psycopg2

    try:
        with psycopg2.connect(url, connect_timeout=10) as connection, connection.cursor() as cursor:
            cursor.execute(query)
            columns = [column.name for column in cursor.description or ()]
            rows = cursor.fetchall() if cursor.description else []
    except psycopg2.Error as error:
        raise TeamDatabaseError(f"PostgreSQL ({masked_url(url)}): {str(error).strip().splitlines()[0]} "
                                f"(query: {query})") from None
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
