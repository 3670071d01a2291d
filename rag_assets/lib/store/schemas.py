"""The contract of every Parquet file the graph writes: one Arrow schema per stage output.

Each asset builds its table with ``table_from_rows`` (a row with a column too many or too few is
an error naming the column, never silently dropped or filled), and the IO manager checks every
table against its asset's schema before it writes (``check_table``). A column that happens to be
all null in one partition keeps its declared type, so every partition of an asset reads back
with one schema.

``vector`` is the one column whose type depends on the model: a fixed-size list of float32 of
the model's dimension (``embeddings_schema``).
"""

from __future__ import annotations

from typing import Iterable, Mapping

import pyarrow as pa


class SchemaError(ValueError):
    """A table does not match its stage's declared schema; the message names the asset and column."""


STAMP = [
    ("model", pa.string()), ("revision", pa.string()), ("dimension", pa.int64()), ("normalized", pa.bool_()),
    ("pipeline_version", pa.string()), ("extractor_version", pa.string()), ("snapshot_id", pa.string()),
    ("strategy", pa.string()),
]
STAMP_FIELDS = tuple(name for name, _ in STAMP)

CORPUS_SNAPSHOT = pa.schema([
    ("path", pa.string()), ("size", pa.int64()), ("sha256", pa.string()), ("format", pa.string()),
    ("corpus_dir", pa.string()), ("snapshot_id", pa.string()),
])

SECTION = pa.struct([
    ("path", pa.string()), ("heading", pa.string()), ("level", pa.int64()), ("anchor", pa.string()),
    ("start", pa.int64()), ("end", pa.int64()),
])
EXTRACTED_TEXT = pa.schema([
    ("doc_id", pa.string()), ("format", pa.string()), ("title", pa.string()), ("text", pa.string()),
    ("sections", pa.list_(SECTION)), ("status", pa.string()), ("error", pa.string()), ("extractor", pa.string()),
    ("extractor_version", pa.string()), ("snapshot_id", pa.string()),
    # fidelity: lines of the text that still carry source syntax; constructs kept or dropped unrendered
    ("syntax_lines", pa.int64()), ("unknown_constructs", pa.int64()),
    # directives whose text the site generates from the documented code (autodoc), left without text here
    ("from_code", pa.int64()),
])

EVAL_SET = pa.schema([
    ("query_id", pa.string()), ("source", pa.string()), ("needle_id", pa.string()), ("phrasing", pa.string()),
    ("question", pa.string()), ("query_kind", pa.string()), ("kind", pa.string()),
    ("spans", pa.list_(pa.struct([("doc_id", pa.string()), ("text", pa.string())]))),
    ("relevant_doc_ids", pa.list_(pa.string())), ("eval_version", pa.string()), ("eval_hash", pa.string()),
    ("labelled", pa.bool_()),  # a needle a team's real question picked (``needles label``): its ticket is required
])

CHUNKS = pa.schema([
    ("chunk_id", pa.string()), ("doc_id", pa.string()), ("strategy", pa.string()), ("section", pa.string()),
    ("text", pa.string()), ("content", pa.string()), ("start", pa.int64()), ("end", pa.int64()),
    ("span_start", pa.int64()), ("snapshot_id", pa.string()), ("extractor_version", pa.string()),
])

CHUNK_QUALITY = pa.schema([
    ("strategy", pa.string()), ("chunks", pa.int64()), ("mean_characters", pa.float64()),
    ("max_characters", pa.int64()), ("mean_content_tokens", pa.float64()), ("max_content_tokens", pa.int64()),
    ("needles", pa.int64()), ("answers_destroyed", pa.int64()), ("destroyed_needles", pa.list_(pa.string())),
    # a team's splitter: chunks it returned that could not be located in the canonical text (not kept, not judged)
    ("unlocated_chunks", pa.int64()), ("unlocated", pa.list_(pa.string())),
])


def embeddings_schema(dimension: int) -> pa.Schema:
    return pa.schema([
        ("chunk_id", pa.string()), ("vector", pa.list_(pa.float32(), dimension)), ("tokens", pa.int64()),
        ("header_tokens", pa.int64()), ("truncated", pa.bool_()), *STAMP,
    ])


QUERY_COLUMNS = ["query_id", "needle_id", "phrasing", "query_kind", "kind", "eval_version", "eval_hash"]
RETRIEVAL_RUNS = pa.schema([
    ("query_id", pa.string()), ("needle_id", pa.string()), ("phrasing", pa.string()), ("query_kind", pa.string()),
    ("kind", pa.string()), ("eval_version", pa.string()), ("eval_hash", pa.string()), ("retriever", pa.string()),
    ("chunk_ids", pa.list_(pa.string())), ("scores", pa.list_(pa.float64())), ("distances", pa.list_(pa.float64())),
    ("latency_ms", pa.float64()), ("stage_ms", pa.float64()), ("hit_rank", pa.int64()),
    ("relevant_ranks", pa.list_(pa.int64())), ("relevant_total", pa.int64()),
    # what the list puts into a prompt (lib/retrieve/context.py): each returned chunk's content tokens, and
    # their running total by rank
    ("content_tokens", pa.list_(pa.int64())), ("context_tokens", pa.list_(pa.int64())), *STAMP,
])

# the rows of the retrievers that use no embedding model (BM25), once per strategy: the retrieval rows'
# columns (``model`` is the retriever's name), each ranking to the depth a fusion or a reranker of every model
# partition reads (``ranked_*``), and what the rankings were computed from (the chunks' data version, the
# retriever's parameters as JSON), so that a partition never fuses a ranking of other chunks or settings
LEXICAL_RUNS = pa.schema([
    *RETRIEVAL_RUNS, ("ranked_chunk_ids", pa.list_(pa.string())), ("ranked_scores", pa.list_(pa.float64())),
    ("ranked_distances", pa.list_(pa.float64())), ("chunks_version", pa.string()), ("parameters", pa.string()),
])

# an external retriever's rows: the retrieval rows' columns, with each query's error and how exactly each
# returned passage was located in the corpus (1.0 exact, below it approximate, 0.0 not located)
EXTERNAL_RUNS = pa.schema([*RETRIEVAL_RUNS, ("error", pa.string()), ("located_ratios", pa.list_(pa.float64()))])

# one row per retriever with a distance scale and cut of the grid (lib/refusal.py), with the
# retriever's separation figures and whether the cut is the suggested one
THRESHOLD_SWEEP = pa.schema([
    ("model", pa.string()), ("revision", pa.string()), ("strategy", pa.string()), ("snapshot_id", pa.string()),
    ("retriever", pa.string()), ("cut", pa.float64()),
    *[(name, pa.int64()) for name in ("in_domain", "out_of_domain", "near", "off_topic", "answered_with_needle",
                                      "answered_without_needle", "in_domain_refused", "bluffs", "bluffs_near",
                                      "bluffs_off_topic", "out_of_domain_refused")],
    ("worst_in_domain", pa.float64()), ("best_out_of_domain", pa.float64()), ("separable", pa.bool_()),
    ("auroc", pa.float64()), ("auroc_low", pa.float64()), ("auroc_high", pa.float64()), ("suggested", pa.bool_()),
])

# what the metrics read back from the retrieval and embedding partitions
RESULT_COLUMNS = ["query_id", "needle_id", "phrasing", "query_kind", "kind", "retriever", *STAMP_FIELDS,
                  "eval_version", "eval_hash", "hit_rank", "relevant_ranks", "relevant_total", "chunk_ids", "scores",
                  "distances", "latency_ms", "stage_ms", "content_tokens", "context_tokens"]
TOKEN_COLUMNS = ["model", "strategy", "tokens", "header_tokens", "truncated"]

SCHEMAS: dict[str, pa.Schema] = {
    "corpus_snapshot": CORPUS_SNAPSHOT,
    "extracted_text": EXTRACTED_TEXT,
    "eval_set": EVAL_SET,
    "chunks": CHUNKS,
    "chunk_quality": CHUNK_QUALITY,
    "embeddings": embeddings_schema(0),  # the vector's size is the model's: checked apart
    "retrieval_runs": RETRIEVAL_RUNS,
    "lexical_runs": LEXICAL_RUNS,
    "external_runs": EXTERNAL_RUNS,
    "refusal_calibration": THRESHOLD_SWEEP,
}


def table_from_rows(schema: pa.Schema, rows: Iterable[Mapping], what: str) -> pa.Table:
    """The rows as a table of exactly this schema; a row with another set of columns is an error."""
    rows = list(rows)
    names = set(schema.names)
    for number, row in enumerate(rows):
        if set(row) != names:
            extra, missing = sorted(set(row) - names), sorted(names - set(row))
            raise SchemaError(f"{what}: row {number} does not match the schema"
                              + (f"; extra columns {', '.join(extra)}" if extra else "")
                              + (f"; missing columns {', '.join(missing)}" if missing else ""))
    return pa.Table.from_pylist(rows, schema=schema)


def _same_type(declared: pa.DataType, found: pa.DataType) -> bool:
    if pa.types.is_fixed_size_list(declared) and pa.types.is_fixed_size_list(found):
        return declared.value_type == found.value_type and (declared.list_size in (0, found.list_size))
    return declared == found


def check_table(asset: str, table: pa.Table) -> None:
    """Raise SchemaError unless ``table`` has exactly the columns and types declared for ``asset``."""
    check_schema(asset, table.schema)


def check_schema(asset: str, schema: pa.Schema) -> None:
    """Raise SchemaError unless ``schema`` has exactly the columns and types declared for ``asset``."""
    declared = SCHEMAS.get(asset)
    if declared is None:
        raise SchemaError(f"{asset}: no schema is declared for it in rag_assets/lib/schemas.py")
    if schema.names != declared.names:
        raise SchemaError(f"{asset}: columns {schema.names} differ from the declared {declared.names}")
    for field in declared:
        found = schema.field(field.name).type
        if not _same_type(field.type, found):
            raise SchemaError(f"{asset}: column {field.name} is {found}, declared {field.type}")
