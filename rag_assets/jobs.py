"""The named jobs: one per partitioning, so the runs list tells what each run built.

The stages' jobs are built from ``stages.STAGES``, which ``rag-assets`` runs in data-flow order
(``rag_assets/runner``); the schedules run
``observe_inputs`` and ``nightly_observation``, the ``nightly_completion`` sensor the rebuilds and the
evaluation that complete a night; the UI can launch any of them.
"""

from dagster import AssetSelection, define_asset_job

from rag_assets.assets.chunks import chunking_strategy
from rag_assets.assets.corpus import corpus_folder
from rag_assets.assets.embeddings import embedding_model
from rag_assets.assets.external import external_retriever
from rag_assets.assets.publish import published_evaluation
from rag_assets.stages import STAGES
from rag_assets.tags import TRIGGER_TAG

observe_inputs = define_asset_job("observe_inputs", selection=[corpus_folder, embedding_model],
                                  description="Hash the corpus folder and every model's weights.")
observe_strategies = define_asset_job("observe_strategies", selection=[chunking_strategy],
                                      description="Version every registered chunking strategy: its definition and "
                                      "its splitter library's installed version.")
observe_external = define_asset_job("observe_external", selection=[external_retriever],
                                    description="Ask every external retriever its index version (or probe it).")
publish_evaluation = define_asset_job(
    "publish_evaluation", selection=[published_evaluation],
    description="Write every evaluation run the team's database (publish.url) does not hold yet.")
STAGE_JOBS = [define_asset_job(stage.job, selection=AssetSelection.assets(*stage.assets), description=stage.description)
              for stage in STAGES]  # in data-flow order (stages.py)
nightly_observation = define_asset_job(
    "nightly_observation", selection=[corpus_folder, embedding_model],
    tags={TRIGGER_TAG: "nightly"},
    description="The night's observations of the corpus and the models (the external retrievers are observed every "
    "15 minutes, a partitioning of their own); the "
    "nightly_completion sensor then rebuilds what they made stale and appends the evaluation run (nightly.py).")

JOBS = [observe_inputs, observe_strategies, observe_external, *STAGE_JOBS, publish_evaluation, nightly_observation]
