"""Every setting of rag_assets, and the one module that reads the environment.

A setting is defined once, here: its type, its default, the environment variable that sets it and
what it does. The command line takes its defaults from here, the Dagster resource ``RagSettings``
its field defaults and descriptions (``rag_assets/resources.py``), and no other module of the
package reads ``os.environ`` (``rag_assets_tests/test_settings.py`` checks it). Settings are read
when they are needed, never at import time: ``current()`` returns those of the environment as it
is now (kept while the environment does not change), and a value that does not parse is a
``SettingsError`` naming the variable, the value and what it must be.

The settings come in groups: what is evaluated (the top level: inputs and ``evaluation``), how the
verdict decides (``decision``), the retrievers' parameters (``bm25``, ``hnsw``), when things run (``schedule``), where the work runs
(``scale_out``), the Dagster instance (``instance``), where shared data lives (``object_store``)
and what the catalog shows (``catalog``). ``table()`` lists every variable, for the documentation.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import AliasChoices, Field, ValidationError, field_validator
from pydantic_settings import BaseSettings, EnvSettingsSource, NoDecode, PydanticBaseSettingsSource, SettingsConfigDict

from rag_assets.lib.retrieve.config import DENSE_BLOCK_ROWS, BM25Parameters, HNSWParameters
from rag_assets.lib.store.names import PROJECT_FILE_NAME

PROJECT_ROOT = Path(__file__).resolve().parents[1]
DEFAULT_CORPUS_DIR = PROJECT_ROOT / "data" / "corpus" / "python-3.11-docs" / "html"
DEFAULT_EVAL_SET = PROJECT_ROOT / "data" / "eval" / "python-3.11-docs.needles.jsonl"
DEFAULT_OUT_OF_DOMAIN = PROJECT_ROOT / "data" / "eval" / "python-3.11-docs.out_of_domain.jsonl"
PREFIX = "RAG_ASSETS_"


class SettingsError(ValueError):
    """A setting's value does not parse: the message names the variable, the value and what it must be."""


def _env(name: str) -> Any:
    """A field read from the environment variable ``name`` (exactly, whatever the group's prefix)."""
    return AliasChoices(name)


def comma_separated(value: Any) -> Any:
    """A setting given as one string of comma-separated parts (an environment variable) as their list; any
    other value (a list from a project file or a run's config) as it is."""
    return [part.strip() for part in value.split(",") if part.strip()] if isinstance(value, str) else value


# the longest path rag_assets writes under its storage folder, with room to spare: a partition file under two
# 64-character names and a temporary suffix, a Dagster compute log under a run id and a step key
PATHS_BELOW_HOME = 400


def _exists(folder: Path) -> bool:
    try:
        return folder.exists()
    except OSError:  # a name too long to ask about
        return False


def fits_the_file_system(home: Path) -> Path:
    """``home`` if every file rag_assets writes under it can be named on this system: each part of it at most
    NAME_MAX bytes and the whole at most PATH_MAX less ``PATHS_BELOW_HOME``."""
    existing = next(folder for folder in (home, *home.parents) if _exists(folder))
    name_max, path_max = os.pathconf(existing, "PC_NAME_MAX"), os.pathconf(existing, "PC_PATH_MAX")
    too_long = [part for part in home.parts if len(os.fsencode(part)) > name_max]
    if too_long:
        raise ValueError(f"a folder name of {len(os.fsencode(too_long[0])):,} bytes ({too_long[0][:40]}...): this "
                         f"file system allows {name_max}; choose another storage folder")
    length = len(os.fsencode(str(home)))
    if length + PATHS_BELOW_HOME > path_max:
        raise ValueError(f"the storage folder's path is {length:,} bytes long and the files under it need up to "
                         f"{PATHS_BELOW_HOME} more, past the {path_max:,} this system allows in a path; choose a "
                         "storage folder with a shorter path")
    return home


class _Group(BaseSettings):
    model_config = SettingsConfigDict(env_prefix=PREFIX, extra="forbid", frozen=True, populate_by_name=True,
                                      allow_inf_nan=False)


class Evaluation(_Group):
    """What every evaluation computes, whatever the corpus."""

    top_k: int = Field(25, ge=1, le=10_000, description="Chunks kept per query and retriever.")
    retrievers: Annotated[list[str], NoDecode] = Field(
        [], description="Retrievers to run, comma-separated (none: every registered retriever, see "
        "rag_assets/lib/retrieve/engine.py); unavailable ones are skipped and reported.")
    cross_encoder: str = Field("", description="Folder of a trained sentence-transformers CrossEncoder for the "
                               "second stage; '' for none.")
    phrasings: Annotated[list[str], NoDecode] = Field(
        ["doc", "ticket"], description="Phrasings every needle must carry, each with a non-empty question "
        "(comma-separated).")
    max_document_bytes: int = Field(50 * 1024 * 1024, ge=1, description="A document larger than this fails "
                                    "extraction (status 'failed') instead of being read.")
    external_deadline_seconds: float = Field(30.0, gt=0, le=3600, description="The most one query of an external "
                                             "retriever may take in all (connecting, waiting, reading, retries, a "
                                             "Python retriever's own work); past it the query is a miss with its reason.")
    external_max_answer_bytes: int = Field(8 * 1024 * 1024, ge=1024, description="The largest answer an external "
                                           "retriever may give one query; a larger one is a miss with its reason, "
                                           "never read whole.")
    max_lost_needles: float = Field(0.2, ge=0, le=1, description="The evaluation goes on without the needles a "
                                    "corpus edit lost (edited, removed, now repeated or a heading; named in the "
                                    "verdict) unless more than this share of them is lost: then it stops, naming them.")
    run_tree_code: bool = Field(False, description="Let a Sphinx tree's own code run when it is read: its conf.py "
                                "is executed, its extensions loaded and autodoc imports the documented package, as "
                                "its site's build does. This RUNS THE TREE'S CODE: off by default, when autodoc's "
                                "pages give no text (counted) and the tree's configuration is only read.")

    @field_validator("retrievers", "phrasings", mode="before")
    @classmethod
    def _comma_separated(cls, value: Any) -> Any:
        return comma_separated(value)


class Decision(_Group):
    """How the verdict decides: at which context budget, with which figures beside it, and how the family of
    paired tests is adjusted (``lib/evaluate/decision.py``)."""

    model_config = SettingsConfigDict(env_prefix=PREFIX + "DECISION_")

    budget: int = Field(1024, ge=1, le=1_000_000, description="The context budget the verdict decides at, in tokens "
                        "(cl100k_base): the configuration with the highest success there is shipped, and `ask` "
                        "builds its context to it.")
    budgets: Annotated[list[int], NoDecode] = Field(
        [256, 512, 1024, 2048, 4096], description="Context budgets success and context are computed at, "
        "comma-separated tokens (the verdict's budget is always one).")
    adjustment: Literal["holm", "bh"] = Field(
        "holm", description="How the p-values of one evaluation's paired tests are adjusted: holm (the family-wise "
        "error rate) or bh (Benjamini-Hochberg, the false discovery rate).")
    margin: float = Field(0.05, ge=0, lt=1, description="The non-inferiority margin, in success at the budget: "
                          "the cheapest configuration shown (one-sided paired test over needles, adjusted with the "
                          "run's tests) to be worse than the pick by less than this is named as its cheaper "
                          "equivalent.")

    @field_validator("budgets", mode="before")
    @classmethod
    def _comma_separated(cls, value: Any) -> Any:
        return comma_separated(value)

    @field_validator("budgets", mode="after")
    @classmethod
    def _positive(cls, value: list[int]) -> list[int]:
        if not value or any(budget < 1 or budget > 1_000_000 for budget in value):
            raise ValueError("each context budget is a number of tokens from 1 to 1,000,000, and there is at "
                             "least one")
        return value


class BM25(_Group, BM25Parameters):
    """Okapi BM25's parameters (declared in ``lib/retrieve/config.py``)."""

    model_config = SettingsConfigDict(env_prefix=PREFIX + "BM25_")


class HNSW(_Group, HNSWParameters):
    """The ann retriever's HNSW graph (faiss; declared in ``lib/retrieve/config.py``)."""

    model_config = SettingsConfigDict(env_prefix=PREFIX + "HNSW_")


class Schedule(_Group):
    """What runs by itself under the daemon."""

    cron: str = Field("0 2 * * *", validation_alias=_env(PREFIX + "NIGHTLY_CRON"),
                      description="When the nightly evaluation runs (cron).")
    timezone: str = Field("UTC", validation_alias=_env(PREFIX + "NIGHTLY_TIMEZONE"),
                          description="The timezone of the nightly cron.")
    automation: Literal["running", "stopped"] = Field(
        "running", validation_alias=_env(PREFIX + "AUTOMATION"),
        description="Whether the automation sensor starts running ('stopped': turn it on from the UI's "
        "Automation page).")


class ScaleOut(_Group):
    """Where, and in how many pieces, the work runs; never what it computes (left out of a run's fingerprint)."""

    ray_address: str = Field("", validation_alias=_env("RAY_ADDRESS"),
                             description="Embed on this Ray cluster (e.g. 10.0.0.5:6379): Ray Data map_batches "
                             "with one model-holding actor per worker CPU. '' embeds in process.")
    dask_scheduler: str = Field("", description="Embed on this Dask cluster instead (e.g. tcp://10.0.0.5:8786). "
                                "'' embeds in process.")
    executor: Literal["in_process", "multiprocess", "k8s"] = Field(
        "in_process", description="How a run executes its steps: in_process (one process per run), multiprocess "
        "(a process per step) or k8s (a Kubernetes Job per step, the k8s extra).")
    max_steps: int = Field(0, ge=0, description="At most this many steps of a run at once with the multiprocess "
                           "or k8s executor (0: no limit).")
    connect_timeout: float = Field(5.0, gt=0, le=600, description="Seconds each server a setting names (Ray, Dask, "
                                   "PostgreSQL, the object store) is given to answer, once, before a command runs "
                                   "anything.")
    dense_block_rows: int = Field(DENSE_BLOCK_ROWS, ge=1, description="The dense retriever scores this many chunk vectors "
                                  "at a time: its working memory per query is about 20 bytes a row, whatever the "
                                  "collection's size.")


def default_max_runs() -> int:
    """One run per core, at most 4 (each run holds its models in memory); each run then gets its share of
    the cores (``threads_per_run``). On 2 cores, two runs of one thread each rebuilt a model's 7
    partitions in 1.05x the time of `rag-assets backfill`, one run of two threads in 1.8x, four runs of
    two threads each in 2.3x (bench/backfill_paths.py)."""
    return max(1, min(os.cpu_count() or 1, 4))


class Instance(_Group):
    """The Dagster instance under the storage folder."""

    postgres_url: str = Field("", validation_alias=_env("DAGSTER_PG_URL"),
                              description="postgresql+psycopg2://user:password@host:port/database: run, event-log "
                              "and schedule storage in PostgreSQL (the postgres extra); '' for SQLite in the "
                              "storage folder.")
    max_runs: int = Field(default_factory=default_max_runs, ge=1,
                          description="Runs the daemon starts at once (the queued run coordinator); default: one per "
                          "core, at most 4.")
    run_threads: int = Field(0, ge=0, description="Threads each run the daemon starts may use (numpy and PyTorch, "
                             "onnxruntime's texts in parallel); 0: the cores shared among max_runs. Runs of "
                             "`rag-assets` commands, one at a time, use every core.")

    def threads_per_run(self) -> int:
        return self.run_threads or max(1, (os.cpu_count() or 1) // self.max_runs)
    slot_wait: float = Field(900.0, ge=0, description="Seconds a command waits for a live run holding the "
                             "DuckDB writers' slot.")


class ObjectStorage(_Group):
    """The storage folder's shared data on object storage."""

    url: str = Field("", validation_alias=_env(PREFIX + "OBJECT_STORE"),
                     description="An fsspec URL (s3://bucket/prefix; the objectstore extra) holding every Parquet "
                     "partition, the caches and metrics.duckdb; '' keeps them in the storage folder only.")
    options: Annotated[dict[str, Any], NoDecode] = Field(
        {}, validation_alias=_env(PREFIX + "OBJECT_STORE_OPTIONS"),
        description="A JSON object passed to the filesystem, e.g. "
        '{"client_kwargs": {"endpoint_url": "http://minio:9000"}}.')

    @field_validator("options", mode="before")
    @classmethod
    def _json_object(cls, value: Any) -> Any:
        if not isinstance(value, str):
            return value
        try:
            decoded = json.loads(value.strip() or "{}")
        except json.JSONDecodeError as error:
            raise ValueError(f"is not JSON ({error})") from None
        if not isinstance(decoded, dict):
            raise ValueError("must be a JSON object")
        return decoded


class Publish(_Group):
    """Evaluation runs published to the team's own database (docs/outputs.md)."""

    url: str = Field("", validation_alias=_env(PREFIX + "PUBLISH_URL"),
                     description="A SQLAlchemy-style URL (postgresql://user@host/db, sqlite:////path/file.db, "
                     "mysql://user@host/db for MySQL or MariaDB) that every evaluation run is also written to, after "
                     "metrics.duckdb; '' for none.")
    table_prefix: str = Field("rag_", pattern=r"^[A-Za-z_][A-Za-z0-9_]{0,31}$",
                              validation_alias=_env(PREFIX + "PUBLISH_TABLE_PREFIX"),
                              description="The prefix of the published tables' names.")

    @field_validator("url", mode="after")
    @classmethod
    def _url(cls, url: str) -> str:
        return checked_database_url(url)


DATABASE_SCHEMES = ("postgresql", "postgres", "sqlite", "mysql", "mariadb")


def checked_database_url(url: str) -> str:
    """``url`` when it is a database URL this project can write to whose password, if any, is named as
    ``${VARIABLE}`` (put in when it connects, so never written into Dagster's run database or printed); else
    ValueError saying what is wrong (never the password)."""
    import urllib.parse

    from rag_assets.lib.store.team_database import cut_password, variables_of

    if not url:
        return url
    try:
        parts = urllib.parse.urlsplit(url)
        if "${" not in parts.netloc:
            parts.port  # noqa: B018 - parsed for its ValueError
        if cut_password(url):
            raise ValueError
    except ValueError:
        raise ValueError("not a URL: its host or port cannot be read (a password with @ / ? # or % in it is named as "
                         "${VARIABLE}, whose value is percent-encoded when it is put in)") from None
    if parts.scheme.split("+")[0].lower() not in DATABASE_SCHEMES:
        raise ValueError(f"scheme {parts.scheme!r} is not one of {', '.join(s + '://' for s in DATABASE_SCHEMES)}")
    if parts.password and variables_of(parts.password) != [parts.password[2:-1]]:
        raise ValueError("holds its password as written; name it as ${VARIABLE} (postgresql://user:${TEAM_DB_PASSWORD}"
                         "@host/db): the variable's value is put in when it connects, so the password is never "
                         "written to Dagster's run database or shown")
    return url


class Catalog(_Group):
    """What the Dagster UI shows on every asset."""

    owners: Annotated[list[str], NoDecode] = Field(
        [], description="Owners: e-mail addresses or team:NAME, comma-separated.")
    tags: Annotated[dict[str, str], NoDecode] = Field({}, description="Tags, comma-separated key=value.")

    @field_validator("owners", mode="before")
    @classmethod
    def _owners(cls, value: Any) -> Any:
        return comma_separated(value)

    @field_validator("tags", mode="before")
    @classmethod
    def _tags(cls, value: Any) -> Any:
        if not isinstance(value, str):
            return value
        pairs = [part.strip() for part in value.split(",") if part.strip()]
        bad = [pair for pair in pairs if "=" not in pair]
        if bad:
            raise ValueError(f"every tag is key=value; {', '.join(bad)} is not")
        return dict(pair.split("=", 1) for pair in pairs)


class _TopLevelEnvironment(EnvSettingsSource):
    """The environment for the top-level settings only: a group reads its own variables, so
    ``RAG_ASSETS_OBJECT_STORE`` (the setting object_store.url) is never taken for the group itself."""

    def get_field_value(self, field, field_name: str):
        if isinstance(field.annotation, type) and issubclass(field.annotation, _Group):
            return None, field_name, False
        return super().get_field_value(field, field_name)


class Settings(_Group):
    """Every setting: the inputs and the storage folder at the top, the rest in groups."""

    @classmethod
    def settings_customise_sources(cls, settings_cls, init_settings: PydanticBaseSettingsSource, **_others
                                   ) -> tuple[PydanticBaseSettingsSource, ...]:
        return init_settings, _TopLevelEnvironment(settings_cls)

    home: Path = Field(PROJECT_ROOT / "storage", description="Storage folder for every output (default: storage/ "
                       "in the project).")
    corpus: str = Field(str(DEFAULT_CORPUS_DIR), description="Folder of documents to evaluate on; every file under "
                        "it is a document.")
    eval_set: str = Field(str(DEFAULT_EVAL_SET), description="JSON Lines file of needle questions for this corpus, "
                          "or a BEIR folder (queries and qrels).")
    out_of_domain: str = Field(str(DEFAULT_OUT_OF_DOMAIN), description="JSON Lines file of queries the corpus "
                               "cannot answer ('' for none: no refusal calibration).")
    beir_split: str = Field("test", description="The qrels split to evaluate when the evaluation set is a BEIR "
                            "folder.")
    models_file: str = Field("", description="A JSON file of model registry entries added to the built-in models "
                             "(a local copy of a model's weights has 'folder').")
    models: Annotated[list[str], NoDecode] = Field([], description="Models `evaluate` runs, comma-separated (none: "
                                                   "every registered model).")
    strategies: Annotated[list[str], NoDecode] = Field([], description="Chunking strategies `evaluate` runs, "
                                                       "comma-separated (none: every strategy).")
    strategies_file: str = Field("", description="A JSON or TOML file of chunking strategies added to the built-in "
                                 "ones: sizes and overlaps (sweeps), a team's own splitter (langchain, llamaindex, "
                                 "chonkie, semchunk, text_splitter, python); '' for none.")
    retrievers_file: str = Field("", description="A JSON file of external retrievers (a team's own: http, python, "
                                 "chroma, lancedb) evaluated beside the built-in configurations; '' for none.")
    debug: bool = Field(False, description="On failure, Dagster's log and the Python traceback instead of one "
                        "paragraph.")
    report_port: int = Field(3001, ge=1, le=65535, description="The port of 127.0.0.1 on which `rag-assets ui` serves "
                             "the storage folder's evaluation page (report/), beside the UI; the metrics asset's "
                             "`evaluation_page` link points there.")
    evaluation: Evaluation = Field(default_factory=Evaluation)
    decision: Decision = Field(default_factory=Decision)
    bm25: BM25 = Field(default_factory=BM25)
    hnsw: HNSW = Field(default_factory=HNSW)
    schedule: Schedule = Field(default_factory=Schedule)
    scale_out: ScaleOut = Field(default_factory=ScaleOut)
    instance: Instance = Field(default_factory=Instance)
    object_store: ObjectStorage = Field(default_factory=ObjectStorage)
    publish: Publish = Field(default_factory=Publish)
    catalog: Catalog = Field(default_factory=Catalog)

    @field_validator("models", "strategies", mode="before")
    @classmethod
    def _names(cls, value: Any) -> Any:
        return comma_separated(value)

    @field_validator("home", mode="after")
    @classmethod
    def _absolute(cls, value: Path) -> Path:
        return fits_the_file_system(value.expanduser().resolve())

    @field_validator("debug", mode="before")
    @classmethod
    def _flag(cls, value: Any) -> Any:
        return value.strip().lower() not in ("", "0", "false", "no", "off") if isinstance(value, str) else value


GROUPS: dict[str, type[_Group]] = {
    name: field.annotation for name, field in Settings.model_fields.items()
    if isinstance(field.annotation, type) and issubclass(field.annotation, _Group)
}
# variables read outside the RAG_ASSETS_ prefix
_OTHER_VARIABLES = ("RAY_ADDRESS", "DAGSTER_PG_URL")


def variable(group: type[_Group], field: str) -> str:
    """The environment variable that sets ``field`` of ``group``."""
    alias = group.model_fields[field].validation_alias
    if isinstance(alias, AliasChoices):
        return str(alias.choices[0])
    return f"{group.model_config.get('env_prefix', '')}{field}".upper()


def _shortened(value: Any) -> Any:
    """A value as a one-line message shows it: a long string by its two ends."""
    text = str(value) if isinstance(value, (str, Path)) else value
    return f"{text[:60]}...{text[-60:]}" if isinstance(text, str) and len(text) > 160 else value


def _validated(group: type[_Group], _from: dict[str, str] | None = None, **values) -> _Group:
    """``group`` built from ``values`` and the environment; SettingsError names each value at fault by its
    variable, or by ``_from[field]`` (the project file's key) when the value came from there."""
    try:
        return group(**values)
    except ValidationError as error:
        problems = []
        for problem in error.errors():
            field = str(problem["loc"][0]) if problem["loc"] else ""
            name = variable(group, field) if field in group.model_fields else field
            raw = _shortened(problem.get("input") if field in (_from or {}) else os.environ.get(name, problem.get("input")))
            named = next((f for f in group.model_fields if field in (f, variable(group, f))), field)
            if named == "url" and isinstance(raw, str):  # a URL may hold a secret: shown as it may be shown
                from rag_assets.lib.store.team_database import masked_url

                raw = masked_url(raw)
            if field in (_from or {}):
                problems.append(f"{_from[field]} = {raw!r}: {problem['msg'].removeprefix('Value error, ')}")
                continue
            problems.append(f"{name}={raw!r}: {problem['msg'].removeprefix('Value error, ')}")
        raise SettingsError("; ".join(problems)) from None


PROJECT_FILE = PROJECT_FILE_NAME  # declared once (the corpus walk never reads it as a document)
PROJECT_VARIABLE = PREFIX + "PROJECT"
_PATH_KEYS = ("home", "corpus", "eval_set", "out_of_domain", "models_file", "retrievers_file", "strategies_file")


def project_file() -> Path | None:
    """The project file: ``$RAG_ASSETS_PROJECT``, else the nearest ``rag-assets.toml`` from the current folder
    up. One file, read by the command line, the UI and the daemon (``rag-assets ui`` passes it on)."""
    named = os.environ.get(PROJECT_VARIABLE)
    if named:
        return Path(named).expanduser().resolve()
    folder = Path.cwd().resolve()
    for candidate in (folder, *folder.parents):
        if (candidate / PROJECT_FILE).is_file():
            return candidate / PROJECT_FILE
    return None


def pass_project_file_on() -> None:
    """Name the project file found from here in ``$RAG_ASSETS_PROJECT``, for processes started elsewhere."""
    found = project_file()
    if found is not None:
        os.environ[PROJECT_VARIABLE] = str(found)


def project_values(path: Path) -> dict[str, Any]:
    """The project file's values: top-level keys for the top-level settings, a table per group; relative
    paths resolved against the file's folder. SettingsError names the file and the key at fault."""
    import tomllib

    try:
        raw = path.read_bytes()
        values = tomllib.loads(raw.decode("utf-8").removeprefix("\ufeff"))  # a BOM is no statement
    except OSError as error:
        raise SettingsError(f"{PROJECT_VARIABLE}={path}: {error.strerror or error}") from None
    except UnicodeDecodeError as error:
        line = raw[:error.start].count(b"\n") + 1
        raise SettingsError(f"{path}: not UTF-8 (line {line}, byte {error.start}: {error.object[error.start:error.end]!r}); "
                            "save it as UTF-8 (TOML is UTF-8)") from None
    except tomllib.TOMLDecodeError as error:
        raise SettingsError(f"{path}: not TOML: {error}") from None
    for key, value in values.items():
        if isinstance(value, dict):
            if key not in GROUPS:
                raise SettingsError(f"{path}: unknown table [{key}]; the tables are {', '.join(GROUPS)}")
            unknown = sorted(set(value) - set(GROUPS[key].model_fields))
            if unknown:
                raise SettingsError(f"{path}: unknown key(s) {', '.join(unknown)} in [{key}]; it has "
                                    f"{', '.join(GROUPS[key].model_fields)}")
        elif key not in Settings.model_fields or key in GROUPS:
            raise SettingsError(f"{path}: unknown key {key!r}; the top-level keys are "
                                f"{', '.join(k for k in Settings.model_fields if k not in GROUPS)}")
        elif key in _PATH_KEYS and isinstance(value, str) and value:
            values[key] = str((path.parent / value).resolve())
    return values


def _from_file(group: type[_Group], values: dict[str, Any], where: Path | None) -> dict[str, Any]:
    """The file's values a group takes: those whose variable is not set (the environment wins)."""
    return {name: value for name, value in values.items() if variable(group, name) not in os.environ} if where else {}


def load() -> Settings:
    """The settings of the environment now, over those of the project file, every group validated
    (SettingsError names what is wrong: the variable, or the file and the key)."""
    path = project_file()
    values = project_values(path) if path else {}
    groups = {}
    for name, group in GROUPS.items():
        given = _from_file(group, values.get(name, {}), path)
        groups[name] = _validated(group, {key: f"{path}: [{name}] {key}" for key in given}, **given)
    given = _from_file(Settings, {key: value for key, value in values.items() if not isinstance(value, dict)}, path)
    return _validated(Settings, {key: f"{path}: {key}" for key in given}, **given, **groups)


_loaded: dict[tuple, Settings] = {}


def _environment_key() -> tuple:
    path = project_file()
    stamp = (str(path), path.stat().st_mtime_ns) if path and path.is_file() else None
    return (stamp, str(Path.cwd()) if path is None else "", *sorted(
        (name, value) for name, value in os.environ.items()
        if name.upper().startswith(PREFIX) or name.upper() in _OTHER_VARIABLES))


def current() -> Settings:
    """``load()``, kept while the variables it reads are unchanged."""
    key = _environment_key()
    if key not in _loaded:
        _loaded.clear()
        _loaded[key] = load()
    return _loaded[key]


def value(path: str) -> Any:
    """The current value of a setting by its dotted path (``bm25.k1``), as a plain value (paths as text)."""
    found: Any = current()
    for part in path.split("."):
        found = getattr(found, part)
    return str(found) if isinstance(found, Path) else found.model_dump() if isinstance(found, BaseSettings) else found


def description(path: str) -> str:
    """A setting's description, with the variable that sets it."""
    group, field = _field(path)
    return f"{group.model_fields[field].description} (${variable(group, field)})"


def parse(path: str, text: str) -> Any:
    """``text`` (a command-line option's value) as the setting at ``path`` takes it: its declared type and
    range, so an option is held to what the setting is (``--top-k 0`` as ``evaluation.top_k`` is). A
    ``SettingsError`` says what the value must be."""
    group, field = _field(path)
    try:  # the group's own validation (its validators too), without reading the environment
        return getattr(group.model_validate({field: text}), field)
    except ValidationError as error:
        raise SettingsError(f"{text!r} is not a value of {path}: {_sentence(error.errors()[0]['msg'])}") from None


def _sentence(message: str) -> str:
    return message[:1].lower() + message[1:]


def bounds(path: str) -> dict[str, Any]:
    """The declared range of the setting at ``path`` as ``Field`` keywords (ge, gt, le, lt, allow_inf_nan), for
    a field that stands for it elsewhere (a Dagster resource's)."""
    group, field = _field(path)
    found = {}
    for item in group.model_fields[field].metadata:
        found |= {name: getattr(item, name) for name in ("ge", "gt", "le", "lt", "allow_inf_nan") if hasattr(item, name)}
    return found


def _field(path: str) -> tuple[type[_Group], str]:
    *groups, field = path.split(".")
    owner: type[_Group] = Settings
    for name in groups:
        owner = GROUPS[name] if owner is Settings else owner
    return owner, field


def table() -> list[tuple[str, str, str, str]]:
    """(variable, setting, default, description) of every setting, for the documentation."""
    rows = []
    for name, field in Settings.model_fields.items():
        if name in GROUPS:
            group = GROUPS[name]
            rows += [(variable(group, inner), f"{name}.{inner}", _default(group, inner),
                      group.model_fields[inner].description or "") for inner in group.model_fields]
        else:
            rows.append((variable(Settings, name), name, _default(Settings, name), field.description or ""))
    return rows


def _default(group: type[_Group], field: str) -> str:
    default = group.model_fields[field].get_default(call_default_factory=True)
    if isinstance(default, Path):
        return str(default.relative_to(PROJECT_ROOT)) if default.is_relative_to(PROJECT_ROOT) else str(default)
    if isinstance(default, str) and default.startswith(str(PROJECT_ROOT)):
        return str(Path(default).relative_to(PROJECT_ROOT))
    if isinstance(default, list):
        return ",".join(str(item) for item in default)
    return repr(default) if isinstance(default, str) else str(default)


def defaults(group: type[_Group]) -> _Group:
    """A group with every field at its default, the environment unread (what the library's own defaults are)."""
    return group.model_construct()
