"""Kind ``pgvector``: a table of the team's PostgreSQL with a pgvector column, queried with the query vectors of
a registered model and the table's distance operator (``<=>`` cosine, ``<->`` L2, ``<#>`` negative inner
product), through psycopg2 (the postgres extra). The URL may name its password as ``${VARIABLE}``. The index
version is the table's own: its row count and largest id."""

from __future__ import annotations

import re
import threading
from typing import Literal, Mapping

from pydantic import field_validator

from rag_assets.lib.retrieve.external.hits import Ask, Embed, Hit, QueryFailed, QueryLimits, str_or_none
from rag_assets.lib.retrieve.external.kinds.base import ExternalSpec
from rag_assets.lib.store.team_database import masked_url, scrubbed, secrets_of, variables_of, with_variables

OPERATORS = {"cosine": "<=>", "l2": "<->", "inner_product": "<#>"}
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_$]*(\.[A-Za-z_][A-Za-z0-9_$]*)?$")


class PgvectorEntry(ExternalSpec):
    """``{"key": "docs", "kind": "pgvector", "url": "postgresql://app:${DOCS_DB_PASSWORD}@db/app",
    "table": "chunks", "model": "all-MiniLM-L6-v2"}``; the columns (``vector_column``, ``text_column``,
    ``doc_id_column``, ``id_column``) and ``distance`` (cosine, l2, inner_product) as the table has them."""

    kind: Literal["pgvector"]
    url: str
    table: str
    model: str
    vector_column: str = "embedding"
    text_column: str = "text"
    doc_id_column: str | None = "doc_id"
    id_column: str = "id"
    distance: Literal["cosine", "l2", "inner_product"] = "cosine"

    @field_validator("table", "vector_column", "text_column", "doc_id_column", "id_column")
    @classmethod
    def _identifier(cls, name: str | None) -> str | None:
        if name is not None and not _NAME.match(name):
            raise ValueError(f"{name!r} is not a table or column name (letters, digits and _, schema.table)")
        return name

    def embedding_model(self) -> str | None:
        return self.model

    def variables(self) -> list[str]:
        return variables_of(self.url)

    def describe(self) -> dict:
        return super().describe() | {"url": masked_url(self.url)}

    def _connect(self, environ: Mapping[str, str], limits: QueryLimits):
        import psycopg2

        connection = psycopg2.connect(with_variables(self.url, environ), connect_timeout=max(1, int(limits.deadline_seconds)),
                                      options=f"-c statement_timeout={int(limits.deadline_seconds * 1000)}")
        connection.set_session(readonly=True)  # the team's table is only read
        return connection

    def _names(self):
        from psycopg2 import sql

        return {"table": sql.Identifier(*self.table.split(".")), "vector": sql.Identifier(self.vector_column),
                "text": sql.Identifier(self.text_column), "id": sql.Identifier(self.id_column),
                "doc": sql.Identifier(self.doc_id_column) if self.doc_id_column else sql.SQL("NULL")}

    def reported_version(self, environ: Mapping[str, str] | None = None) -> str | None:
        from psycopg2 import sql

        connection = self._connect(environ or {}, QueryLimits())
        try:
            with connection.cursor() as cursor:
                cursor.execute(sql.SQL("SELECT count(*), max({id})::text FROM {table}").format(**self._names()))
                rows, largest = cursor.fetchone()
        finally:
            connection.rollback()
            connection.close()
        return f"rows {rows}, max id {largest}"

    def asker(self, embed: Embed | None, environ: Mapping[str, str], limits: QueryLimits = QueryLimits()) -> Ask:
        import psycopg2
        from psycopg2 import sql

        names = self._names()
        query_sql = sql.SQL("SELECT {text}, {doc}::text, {vector} " + OPERATORS[self.distance] + " %s::vector "
                            "FROM {table} ORDER BY {vector} " + OPERATORS[self.distance] + " %s::vector LIMIT %s"
                            ).format(**names)
        local = threading.local()  # a connection per asking thread: a psycopg2 connection runs one query at a time

        def ask(query: str, k: int) -> list[Hit]:
            vector = "[" + ",".join(repr(float(value)) for value in embed([query])[0]) + "]"
            try:
                if getattr(local, "connection", None) is None or local.connection.closed:
                    local.connection = self._connect(environ, limits)
                with local.connection.cursor() as cursor:
                    cursor.execute(query_sql, (vector, vector, k))
                    rows = cursor.fetchall()
                local.connection.rollback()  # a read: end its transaction
            except psycopg2.Error as error:
                if getattr(local, "connection", None) is not None:
                    local.connection.close()
                cause = scrubbed(str(error).strip().splitlines()[0], secrets_of(self.url, environ))
                raise QueryFailed(f"PostgreSQL ({masked_url(self.url)}): {cause}") from None
            return [Hit(text, str_or_none(doc_id), None, float(distance)) for text, doc_id, distance in rows]
        return ask
