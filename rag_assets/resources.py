"""Resources: where data lives (Parquet per partition, one DuckDB file) and the embedding models."""

from __future__ import annotations

import os
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
from dagster import (
    ConfigurableIOManager,
    ConfigurableResource,
    InputContext,
    MetadataValue,
    OutputContext,
    TableColumn,
    TableSchema,
)
from pydantic import Field

from rag_assets.lib import paths
from rag_assets.lib.embedding import MODELS, Embedder, current_revision, load_model
from rag_assets.lib.paths import StagedParquet, full_disk_named, publish, read_stored, stored_file, stored_uri
from rag_assets.lib.retrievers.ann import HNSWConfig
from rag_assets.lib.retrievers.bm25 import BM25Config
from rag_assets.lib.retrievers.dense import BLOCK_ROWS as DENSE_BLOCK_ROWS
from rag_assets.lib.schemas import check_schema, check_table
from rag_assets.partitions import dimensions_of


def standard_metadata(schema: pa.Schema, rows: int, uri: str) -> dict:
    """Dagster's standard metadata for a Parquet output, which the catalog shows without opening an
    event: row count, column schema (from the Arrow schema) and where the file lives (``stored_uri``)."""
    columns = [TableColumn(name=field.name, type=str(field.type), description=(field.metadata or {}).get(
        b"description", b"").decode() or None) for field in schema]
    return {"dagster/row_count": MetadataValue.int(rows),
            "dagster/column_schema": MetadataValue.table_schema(TableSchema(columns=columns)),
            "dagster/uri": MetadataValue.path(uri)}


# settings that choose where or in what steps the graph runs, never what it computes: changing them
# rebuilds nothing (they are left out of a run's settings fingerprint)
EXECUTION_ONLY = ("ray_address", "dask_scheduler", "dense_block_rows")


class RagSettings(ConfigurableResource):
    """What the graph reads and where it writes: any document folder and needle set a user brings."""

    home: str = Field(
        default_factory=lambda: str(paths.storage_home()),
        description="Storage folder for every output ($RAG_ASSETS_HOME; default storage/ in the project).",
    )
    corpus_dir: str = Field(
        default_factory=paths.corpus_dir,
        description="Folder of documents to evaluate on; every file under it is a document ($RAG_ASSETS_CORPUS).",
    )
    eval_set: str = Field(
        default_factory=paths.eval_set,
        description="JSON Lines file of needle questions for this corpus, or a BEIR folder (queries and qrels) "
        "($RAG_ASSETS_EVAL_SET).",
    )
    beir_split: str = Field(default="test", description="The qrels split to evaluate when eval_set is a BEIR folder.")
    out_of_domain: str = Field(
        default_factory=paths.out_of_domain,
        description="JSON Lines file of queries the corpus cannot answer ('' for none: no refusal calibration; "
        "$RAG_ASSETS_OUT_OF_DOMAIN).",
    )
    phrasings: list[str] = Field(
        default=["doc", "ticket"], description="Phrasings every needle must carry, each with a non-empty question."
    )
    max_document_bytes: int = Field(
        default=50 * 1024 * 1024,
        description="A document larger than this fails extraction (status 'failed') instead of being read.",
    )
    top_k: int = Field(default=25, description="Chunks kept per query and retriever.")
    owners: list[str] = Field(
        default_factory=lambda: [o.strip() for o in os.environ.get("RAG_ASSETS_OWNERS", "").split(",") if o.strip()],
        description="Owners shown on every asset in the UI: e-mail addresses or team:NAME ($RAG_ASSETS_OWNERS, "
        "comma-separated).")
    asset_tags: dict[str, str] = Field(
        default_factory=lambda: dict(pair.split("=", 1) for pair in os.environ.get("RAG_ASSETS_TAGS", "").split(",")
                                     if "=" in pair),
        description="Tags shown on every asset in the UI ($RAG_ASSETS_TAGS, comma-separated key=value).")
    retrievers: list[str] = Field(
        default=["dense", "ann", "bm25", "hybrid", "late_interaction", "cross_encoder"],
        description="Retrievers to run (see rag_assets/lib/retrievers); unavailable ones are skipped and reported.",
    )
    cross_encoder: str = Field(
        default="",
        description="Folder of a trained sentence-transformers CrossEncoder for the second stage; '' for none.",
    )
    ray_address: str = Field(
        default_factory=lambda: os.environ.get("RAY_ADDRESS", ""),
        description="Embed on this Ray cluster (e.g. 10.0.0.5:6379; $RAY_ADDRESS): Ray Data map_batches with one "
        "model-holding actor per worker CPU. '' embeds in process.")
    dask_scheduler: str = Field(
        default_factory=lambda: os.environ.get("RAG_ASSETS_DASK_SCHEDULER", ""),
        description="Embed on this Dask cluster instead (e.g. tcp://10.0.0.5:8786; $RAG_ASSETS_DASK_SCHEDULER). "
        "'' embeds in process.")
    dense_block_rows: int = Field(
        default=DENSE_BLOCK_ROWS, ge=1,
        description="The dense retriever scores this many chunk vectors at a time: its working memory per query "
        "is about 20 bytes a row, whatever the collection's size.")
    ann_m: int = Field(default=32, description="The ann retriever's HNSW graph: neighbours per node (faiss M).")
    ann_ef_construction: int = Field(default=200, description="The ann retriever's HNSW candidate list while building.")
    ann_ef_search: int = Field(default=128, description="The ann retriever's HNSW candidate list while searching.")
    bm25_k1: float = Field(default=1.2, description="BM25's term-frequency saturation k1.")
    bm25_b: float = Field(default=0.75, description="BM25's length normalisation b.")
    bm25_lowercase: bool = Field(default=True, description="BM25 lower-cases tokens.")
    bm25_stopwords: str = Field(default="none", description="BM25 stop words: 'none' or 'english' (Lucene's set).")
    bm25_stemmer: str = Field(default="none", description="BM25 stemming: 'none' or a Snowball language ('english').")
    nightly_cron: str = Field(
        default_factory=lambda: os.environ.get("RAG_ASSETS_NIGHTLY_CRON", "0 2 * * *"),
        description="When the nightly evaluation runs (cron; $RAG_ASSETS_NIGHTLY_CRON, default 02:00).",
    )
    nightly_timezone: str = Field(
        default_factory=lambda: os.environ.get("RAG_ASSETS_NIGHTLY_TIMEZONE", "UTC"),
        description="The timezone of nightly_cron ($RAG_ASSETS_NIGHTLY_TIMEZONE, default UTC).",
    )

    @property
    def ann(self) -> HNSWConfig:
        return HNSWConfig(m=self.ann_m, ef_construction=self.ann_ef_construction, ef_search=self.ann_ef_search)

    @property
    def bm25(self) -> BM25Config:
        return BM25Config(k1=self.bm25_k1, b=self.bm25_b, lowercase=self.bm25_lowercase,
                          stopwords=self.bm25_stopwords, stemmer=self.bm25_stemmer)

    @property
    def duckdb_path(self) -> Path:
        return paths.duckdb_path(Path(self.home))


class ParquetIOManager(ConfigurableIOManager):
    """Arrow tables as Parquet files, one per partition, in Hive layout under home/parquet.

    ``<asset>/data.parquet`` when unpartitioned, ``<asset>/<dim>=<key>/.../data.parquet`` when
    partitioned, so DuckDB reads any set of partitions with ``read_parquet(..., hive_partitioning)``.
    Each file is written to a temporary name and renamed, so a reader never sees half a file. An
    asset that wrote its own file in row groups (``StagedParquet``, under the same storage folder)
    hands it over to be checked and renamed into place.
    """

    home: str = Field(default_factory=lambda: str(paths.storage_home()))

    def _path(self, context: InputContext | OutputContext, partition_key: str | None) -> Path:
        dimensions = None if partition_key is None else dimensions_of(context.asset_partitions_def, partition_key)
        return paths.partition_path(Path(self.home), "/".join(context.asset_key.path), dimensions)

    def handle_output(self, context: OutputContext, obj: pa.Table | StagedParquet) -> None:
        key = context.asset_partition_key if context.has_asset_partitions else None
        path = self._path(context, key)
        if isinstance(obj, StagedParquet):
            context.add_output_metadata(self._move_in(context.asset_key.path[-1], obj, path))
            return
        check_table(context.asset_key.path[-1], obj)
        path.parent.mkdir(parents=True, exist_ok=True)
        temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        try:
            with full_disk_named(path):
                pq.write_table(obj, temporary)
            publish(Path(self.home), temporary, path)
        except BaseException:  # a full disk, a failed upload, or stopped: the last good file stays, no half file
            temporary.unlink(missing_ok=True)
            raise
        context.add_output_metadata(standard_metadata(obj.schema, obj.num_rows, stored_uri(Path(self.home), path)))

    def _move_in(self, asset: str, staged: StagedParquet, path: Path) -> dict:
        """The staged file checked against the asset's schema and published as ``path``; discarded
        when it does not pass or cannot be published, so the last good file stays."""
        try:
            metadata = pq.read_metadata(staged.path)
            schema = metadata.schema.to_arrow_schema()
            check_schema(asset, schema)
            path.parent.mkdir(parents=True, exist_ok=True)
            publish(Path(self.home), staged.path, path)
        except BaseException:
            staged.discard()
            raise
        return standard_metadata(schema, metadata.num_rows, stored_uri(Path(self.home), path))

    def load_input(self, context: InputContext) -> pa.Table:
        asset = context.asset_key.to_user_string()
        if not context.has_asset_partitions:
            return read_stored(stored_file(Path(self.home), self._path(context, None)), asset)
        keys = sorted(context.asset_partition_keys)
        tables = []
        for key in keys:
            path = stored_file(Path(self.home), self._path(context, key))
            if not path.exists():
                raise FileNotFoundError(f"{asset} partition {key} has not been materialised ({path})")
            tables.append(read_stored(path, asset, dimensions_of(context.asset_partitions_def, key)))
        return pa.concat_tables(tables)


_LOADED_MODELS: dict[tuple[str, str], Embedder] = {}


class EmbeddingModels(ConfigurableResource):
    """The registered embedding models, each loaded once per process and weights revision."""

    onnx_dir: str = Field(
        default="",
        description="Folder for ONNX graphs exported from sentence-transformers weights (faster on CPU); "
        "'' runs them with PyTorch.",
    )

    def get(self, key: str) -> Embedder:
        if key not in MODELS:
            return load_model(key)  # raises, naming the registry
        loaded = _LOADED_MODELS.get((key, self.onnx_dir))
        if loaded is None or loaded.revision != current_revision(MODELS[key]):
            loaded = load_model(key, onnx_dir=Path(self.onnx_dir) if self.onnx_dir else None)
            _LOADED_MODELS[(key, self.onnx_dir)] = loaded
        return loaded

    def installed_revision(self, key: str) -> str:
        """The revision of the weights installed now, computed from the files without loading them."""
        return current_revision(MODELS[key])

    def installed_revisions(self, stamps) -> dict[str, str]:
        """{model: installed revision} for every registered model the stamps name."""
        return {key: self.installed_revision(key) for key in MODELS if key in {s["model"] for s in stamps}}
