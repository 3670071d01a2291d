"""Kind ``lancedb``: a LanceDB table queried (cosine) with the query vectors of a registered model."""

from __future__ import annotations

from typing import Literal, Mapping

from rag_assets.lib.retrieve.external.hits import Ask, Embed, Hit, QueryLimits, str_or_none
from rag_assets.lib.retrieve.external.kinds.base import ExternalSpec


class LanceDBEntry(ExternalSpec):
    """``{"key": "docs", "kind": "lancedb", "uri": "/data/lance", "table": "team_docs", "model": "wordllama"}``."""

    kind: Literal["lancedb"]
    uri: str
    table: str
    text_column: str = "text"
    vector_column: str = "vector"
    doc_id_column: str = "doc_id"
    model: str

    def embedding_model(self) -> str | None:
        return self.model

    def asker(self, embed: Embed | None, environ: Mapping[str, str], limits: QueryLimits = QueryLimits()) -> Ask:
        import lancedb

        table = lancedb.connect(self.uri).open_table(self.table)
        text_column, doc_column, vector_column = self.text_column, self.doc_id_column, self.vector_column

        def ask(query: str, k: int) -> list[Hit]:
            rows = (table.search(list(map(float, embed([query])[0])), vector_column_name=vector_column)
                    .distance_type("cosine").limit(k).to_list())
            return [Hit(row[text_column], str_or_none(row.get(doc_column)), None, float(row["_distance"]))
                    for row in rows]
        return ask
