"""The retrievers a team already runs, judged by the same needles as the built-in configurations.

An external retriever is registered without code, in a JSON file (the ``retrievers_file`` setting,
``RAG_ASSETS_RETRIEVERS_FILE``, passed in by the caller): a list of entries with a ``key`` and a ``kind``,
one module per kind under ``kinds/`` (``http``, ``python``, ``chroma``, ``lancedb``), each entry a pydantic
model with one client signature (``retrievers_file.py`` holds the list of kinds). ``asking.py`` asks every query
a few at once, ``locate.py`` places each returned passage in the canonical text, ``rows.py`` judges it by
the needle rule, ``versions.py`` stamps the rows with the index version.

The judgement is the needle rule on the returned text: a hit is correct when the folded needle lies in
its text (and in the named document when the hit names one). Each hit is located in the canonical text,
exactly (whitespace folded) or by its best approximate match (the match ratio is recorded), so a hit has
a ``#char=`` locator like ours; one that cannot be located is kept, counted, and never correct for a
document query. A query that errs or times out is a miss with its error recorded.
"""

from rag_assets.lib.retrieve.external.asking import Answered, ask_all
from rag_assets.lib.retrieve.external.hits import (
    Ask,
    Embed,
    ExternalRetrieverError,
    Hit,
    QueryFailed,
    QueryLimits,
    hit_from_dict,
    hits_from_answer,
)
from rag_assets.lib.retrieve.external.kinds.base import ExternalSpec
from rag_assets.lib.retrieve.external.kinds.chroma_collection import ChromaEntry
from rag_assets.lib.retrieve.external.kinds.http_service import HttpEntry
from rag_assets.lib.retrieve.external.kinds.lancedb_table import LanceDBEntry
from rag_assets.lib.retrieve.external.kinds.python_object import PythonEntry, adapt
from rag_assets.lib.retrieve.external.locate import LOCATED_RATIO, MIN_RUN, PLACES, SEED, Located, Locator
from rag_assets.lib.retrieve.external.retrievers_file import (
    ENTRY_TYPES,
    KINDS,
    asker,
    registry,
    spec_from,
    specs_from_file,
)
from rag_assets.lib.retrieve.external.rows import MAX_ERROR_SHARE, external_rows, failure_of, hit_holds, hit_id
from rag_assets.lib.retrieve.external.versions import PROBES, external_stamp, index_version

__all__ = [
    "ENTRY_TYPES", "KINDS", "LOCATED_RATIO", "MAX_ERROR_SHARE", "MIN_RUN", "PLACES", "PROBES", "SEED",
    "Answered", "Ask", "ChromaEntry", "Embed", "ExternalRetrieverError", "ExternalSpec", "Hit", "HttpEntry",
    "LanceDBEntry", "Located", "Locator", "PythonEntry", "QueryFailed", "QueryLimits",
    "adapt", "ask_all", "asker", "external_rows", "external_stamp", "failure_of", "hit_from_dict", "hit_id", "hit_holds",
    "hits_from_answer", "index_version", "registry", "spec_from", "specs_from_file",
]
