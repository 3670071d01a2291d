"""The named jobs: one per partitioning, so the runs list tells what each run built.

``rag-assets`` runs them in data-flow order (``rag_assets/runner``); the schedules run
``observe_inputs`` and ``nightly_observation``, the ``nightly_completion`` sensor the rebuilds and the
evaluation that complete a night; the UI can launch any of them.
"""

from dagster import define_asset_job

from rag_assets.assets.chunks import chunk_quality, chunks
from rag_assets.assets.corpus import corpus_folder, corpus_snapshot
from rag_assets.assets.embeddings import embedding_model, embeddings
from rag_assets.assets.eval_set import eval_set
from rag_assets.assets.external import external_retriever, external_runs
from rag_assets.assets.extraction import extracted_text
from rag_assets.assets.metrics import retrieval_metrics
from rag_assets.assets.retrieval import refusal_calibration, retrieval_runs
from rag_assets.tags import TRIGGER_TAG

observe_inputs = define_asset_job("observe_inputs", selection=[corpus_folder, embedding_model],
                                  description="Hash the corpus folder and every model's weights.")
observe_external = define_asset_job("observe_external", selection=[external_retriever],
                                    description="Ask every external retriever its index version (or probe it).")
evaluation_inputs = define_asset_job("evaluation_inputs", selection=[corpus_snapshot, extracted_text, eval_set],
                                     description="Snapshot, extract and check the evaluation set.")
chunking = define_asset_job("chunking", selection=[chunks, chunk_quality],
                            description="One chunking strategy: its chunks and what it costs.")
model_partition = define_asset_job("model_partition", selection=[embeddings, retrieval_runs, refusal_calibration],
                                   description="One model x strategy: embeddings, every query through every retriever, "
                                   "and when to refuse.")
external_partition = define_asset_job("external_partition", selection=[external_runs],
                                      description="One external retriever: every query asked of it, judged.")
evaluation_metrics = define_asset_job("evaluation_metrics", selection=[retrieval_metrics],
                                      description="Append an evaluation run of every materialised partition to DuckDB.")
nightly_observation = define_asset_job(
    "nightly_observation", selection=[corpus_folder, embedding_model],
    tags={TRIGGER_TAG: "nightly"},
    description="The night's observations of the corpus and the models (the external retrievers are observed every "
    "15 minutes, a partitioning of their own); the "
    "nightly_completion sensor then rebuilds what they made stale and appends the evaluation run (nightly.py).")

JOBS = [observe_inputs, observe_external, evaluation_inputs, chunking, model_partition, external_partition, evaluation_metrics,
        nightly_observation]
