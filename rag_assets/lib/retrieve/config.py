"""The retrievers' parameters, declared once: their fields, defaults, bounds and descriptions. The settings
groups ``bm25`` and ``hnsw`` are these models read from the environment and the project file
(``rag_assets/settings.py``), and the Dagster resource's nested config is generated from those, so a
parameter added here is a setting, a run-config field and a field the retriever receives."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

DENSE_BLOCK_ROWS = 65_536  # about 1.3 MB of the dense retriever's working memory per query


class BM25Parameters(BaseModel):
    """Okapi BM25's parameters."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    k1: float = Field(1.2, ge=0, allow_inf_nan=False, description="BM25's term-frequency saturation k1.")
    b: float = Field(0.75, ge=0, le=1, description="BM25's length normalisation b.")
    lowercase: bool = Field(True, description="BM25 lower-cases tokens.")
    stopwords: Literal["none", "english"] = Field("none", description="BM25 stop words: 'none' or 'english' "
                                                  "(Lucene's set).")
    stemmer: str = Field("none", description="BM25 stemming: 'none' or a Snowball language ('english').")

    @field_validator("stemmer")
    @classmethod
    def _a_snowball_language(cls, value: str) -> str:
        import Stemmer  # PyStemmer: the Snowball stemmers

        if value != "none" and value not in Stemmer.algorithms():
            raise ValueError(f"not 'none' or a Snowball language ({', '.join(sorted(Stemmer.algorithms()))})")
        return value


class HNSWParameters(BaseModel):
    """The ann retriever's HNSW graph (faiss)."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    m: int = Field(32, ge=2, description="Neighbours per node (faiss M).")
    ef_construction: int = Field(200, ge=1, description="The candidate list while building.")
    ef_search: int = Field(128, ge=1, description="The candidate list while searching.")
