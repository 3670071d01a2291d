"""What every external retriever's entry is: a ``key`` (a safe name), a ``kind``, the fields its kind
declares (none other), and a client of one signature, ``asker(embed, environ) -> (query, k) -> hits``."""

from __future__ import annotations

from typing import Any, Mapping

from pydantic import BaseModel, ConfigDict, Field, field_validator

from rag_assets.lib.retrieve.external.hits import Ask, Embed, QueryLimits
from rag_assets.lib.store.names import check_name

KEY = "the retriever key"  # how an unsafe key is named in the message

# the numbers an entry may set, each held to a range (a JSON number of its kind, never a string or true)
IN_FLIGHT = Field(4, ge=1, le=64, strict=True, description="queries asked at once")


class ExternalSpec(BaseModel):
    """One entry of the retrievers file. A kind is a subclass with ``kind: Literal["<kind>"]``, its fields
    (required ones without a default) and ``asker``; the methods below are the facts callers read."""

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)

    key: str
    kind: str

    @field_validator("key", mode="before")
    @classmethod
    def _safe_key(cls, key: Any) -> str:
        return check_name(key, KEY)

    def asker(self, embed: Embed | None, environ: Mapping[str, str], limits: QueryLimits = QueryLimits()) -> Ask:
        """How to ask this retriever one query, raising QueryFailed for one query that fails. ``embed``:
        the registered model's query vectors, when the entry names a model; ``environ``: the values of
        the variables ``variables()`` names; ``limits``: what one query may take (every kind is held to them
        from outside, ``retrievers_file.bounded``; a client that can stop early does)."""
        raise NotImplementedError

    def variables(self) -> list[str]:
        """The environment variables the client reads its secrets from (their values reach ``asker``)."""
        return []

    def embedding_model(self) -> str | None:
        """The registered model whose query vectors this store is queried with, if any."""
        return None

    def in_flight_queries(self) -> int:
        """How many queries are asked at once."""
        return 4

    def reported_version(self, environ: Mapping[str, str] | None = None) -> str | None:
        """The index version the retriever reports itself, or None (then its probe answers are hashed);
        ``environ``: the values of its secrets, as for its queries."""
        return None

    def describe(self) -> dict:
        """What the metadata may show: the fields the file set, never a header's value, only the variable
        it comes from."""
        shown = self.model_dump(exclude_unset=True)
        headers = shown.pop("headers", None)
        if headers is not None:
            shown["headers"] = {header: f"${variable}" for header, variable in headers.items()}
        return shown

    @classmethod
    def fields(cls) -> list[str]:
        """The fields an entry of this kind may have besides ``key`` and ``kind``, sorted."""
        return sorted(name for name in cls.model_fields if name not in ("key", "kind"))
