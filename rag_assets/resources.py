"""Resources: where data lives (Parquet per partition, one DuckDB file) and the embedding models."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Literal, get_origin

import pyarrow as pa
import pyarrow.parquet as pq
from dagster import (
    Config,
    ConfigurableIOManager,
    ConfigurableResource,
    InputContext,
    MetadataValue,
    OutputContext,
    TableColumn,
    TableSchema,
)
from pydantic import Field

from rag_assets import settings
from rag_assets.lib.embed.models import current_revision, load_model, registry
from rag_assets.lib.embed.spec import Embedder
from rag_assets.lib.evaluate.decision import DecisionRule
from rag_assets.lib.retrieve.ann import HNSWConfig
from rag_assets.lib.retrieve.bm25 import BM25Config
from rag_assets.lib.store import paths
from rag_assets.lib.store.object_store import use_object_store
from rag_assets.lib.store.paths import (
    StagedParquet,
    full_disk_named,
    publish,
    read_stored,
    stored_file,
    stored_uri,
)
from rag_assets.lib.store.schemas import check_schema, check_table
from rag_assets.partitions import dimensions_of
from rag_assets.tags import TRIGGER_TAG


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


def _setting(path: str):
    """A field whose default (read when the resource is built) and description are those of the setting
    at ``path`` in ``rag_assets.settings``, the one place a setting is defined."""
    return Field(default_factory=lambda: settings.value(path), description=settings.description(path),
                 **settings.bounds(path))


def _config_type(annotation):
    """A settings field's type as Dagster's config takes it (a choice of words is a string)."""
    return str if get_origin(annotation) is Literal else annotation


def group_config(group: str) -> type[Config]:
    """The Dagster config of one settings group, generated from it (``rag_assets.settings.GROUPS``): every
    field of the group, its type, its description, and as default the setting's value when built."""
    fields = settings.GROUPS[group].model_fields
    namespace = {"__annotations__": {name: _config_type(info.annotation) for name, info in fields.items()},
                 "__doc__": settings.GROUPS[group].__doc__,
                 **{name: _setting(f"{group}.{name}") for name in fields}}
    return type(f"{settings.GROUPS[group].__name__}Config", (Config,), namespace)


BM25Settings = group_config("bm25")
HNSWSettings = group_config("hnsw")
ObjectStoreSettings = group_config("object_store")
DecisionSettings = group_config("decision")
PublishSettings = group_config("publish")


class RagSettings(ConfigurableResource):
    """What the graph reads and where it writes: any document folder and needle set a user brings.

    Every field is a setting of ``rag_assets.settings`` (its default and its environment variable);
    a run's configuration may set any of them (the UI's launchpad, the command line's options). The
    groups ``bm25``, ``hnsw``, ``object_store``, ``decision`` and ``publish`` are nested configs generated from their settings
    groups."""

    home: str = _setting("home")
    corpus_dir: str = _setting("corpus")
    eval_set: str = _setting("eval_set")
    beir_split: str = _setting("beir_split")
    out_of_domain: str = _setting("out_of_domain")
    models_file: str = _setting("models_file")
    retrievers_file: str = _setting("retrievers_file")
    strategies_file: str = _setting("strategies_file")
    phrasings: list[str] = _setting("evaluation.phrasings")
    max_document_bytes: int = _setting("evaluation.max_document_bytes")
    max_lost_needles: float = _setting("evaluation.max_lost_needles")
    run_tree_code: bool = _setting("evaluation.run_tree_code")
    external_deadline_seconds: float = _setting("evaluation.external_deadline_seconds")
    external_max_answer_bytes: int = _setting("evaluation.external_max_answer_bytes")
    top_k: int = _setting("evaluation.top_k")
    owners: list[str] = _setting("catalog.owners")
    asset_tags: dict[str, str] = _setting("catalog.tags")
    retrievers: list[str] = _setting("evaluation.retrievers")
    cross_encoder: str = _setting("evaluation.cross_encoder")
    ray_address: str = _setting("scale_out.ray_address")
    dask_scheduler: str = _setting("scale_out.dask_scheduler")
    dense_block_rows: int = _setting("scale_out.dense_block_rows")
    bm25: BM25Settings = Field(default_factory=lambda: BM25Settings(), description=settings.GROUPS["bm25"].__doc__)
    hnsw: HNSWSettings = Field(default_factory=lambda: HNSWSettings(), description=settings.GROUPS["hnsw"].__doc__)
    object_store: ObjectStoreSettings = Field(default_factory=lambda: ObjectStoreSettings(),
                                              description=settings.GROUPS["object_store"].__doc__)
    decision: DecisionSettings = Field(default_factory=lambda: DecisionSettings(),
                                       description=settings.GROUPS["decision"].__doc__)
    publish: PublishSettings = Field(default_factory=lambda: PublishSettings(),
                                     description=settings.GROUPS["publish"].__doc__)
    nightly_cron: str = _setting("schedule.cron")
    nightly_timezone: str = _setting("schedule.timezone")

    def setup_for_execution(self, context) -> None:
        use_object_store(Path(self.home), self.object_store.url, self.object_store.options)

    def bm25_config(self) -> BM25Config:
        return BM25Config.of(self.bm25)

    def hnsw_config(self) -> HNSWConfig:
        return HNSWConfig(**self.hnsw.model_dump())

    def decision_rule(self) -> DecisionRule:
        return DecisionRule(budget=self.decision.budget, budgets=tuple(self.decision.budgets),
                            adjustment=self.decision.adjustment, margin=self.decision.margin)

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

    home: str = _setting("home")
    object_store: ObjectStoreSettings = Field(default_factory=lambda: ObjectStoreSettings(),
                                              description=settings.GROUPS["object_store"].__doc__)

    def setup_for_execution(self, context) -> None:
        use_object_store(Path(self.home), self.object_store.url, self.object_store.options)

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


_LOADED_MODELS: dict[tuple[str, str, str], Embedder] = {}


class EmbeddingModels(ConfigurableResource):
    """The registered embedding models, each loaded once per process and weights revision."""

    onnx_dir: str = Field(
        default="",
        description="Folder for ONNX graphs exported from sentence-transformers weights (faster on CPU); "
        "'' runs them with PyTorch.",
    )
    models_file: str = _setting("models_file")

    def models(self) -> dict:
        """The model registry: the built-in models and those of ``models_file``."""
        return registry(self.models_file)

    def setup_for_execution(self, context) -> None:
        """In a run the daemon started (any trigger but ``cli``), at most ``instance.run_threads`` threads:
        such runs share the cores with each other."""
        run = context.run
        if run is not None and run.tags.get(TRIGGER_TAG, "ui") != "cli":
            from rag_assets.lib.embed.threads import limit_threads

            limit_threads(settings.current().instance.threads_per_run())

    def get(self, key: str) -> Embedder:
        models = self.models()
        if key not in models:
            return load_model(key, models)  # raises, naming the registry
        kept = (key, self.onnx_dir, repr(models[key]))
        loaded = _LOADED_MODELS.get(kept)
        if loaded is None or loaded.revision != current_revision(models[key]):
            loaded = load_model(key, models, onnx_dir=Path(self.onnx_dir) if self.onnx_dir else None)
            _LOADED_MODELS[kept] = loaded
        return loaded

    def installed_revision(self, key: str) -> str:
        """The revision of the weights installed now, computed from the files without loading them."""
        return current_revision(self.models()[key])

    def registered(self) -> list[str]:
        """The keys of the model registry now (the metrics evaluate the partitions of these only)."""
        return list(self.models())

    def installed_revisions(self, stamps) -> dict[str, str]:
        """{model: installed revision} for every registered model the stamps name."""
        named = {s["model"] for s in stamps}
        return {key: self.installed_revision(key) for key in self.models() if key in named}
