"""The seed pipeline (scenarios/shard-preprocess-train.yaml) written with the Kubeflow Pipelines SDK.

100 shards preprocessed in a dsl.ParallelFor of at most 50 at once, their statistics gathered with
dsl.Collected into one aggregate step (fan-in), then three training runs, one per learning rate, on GPUs.

    python shard_preprocess_train.py pipeline.yaml      # compile (offline) to a PipelineSpec
    shardflow simulate pipeline.yaml --overlay scenarios/kfp/shard_preprocess_train.model.yaml

tests/cli/kfp_e2e_test.sh compiles it with the kfp version scripts/setup --kfp installs and checks what
shardflow plans against the numbers below.
"""
import sys

from kfp import compiler, dsl
from typing import List

SHARDS = 100
SHARD_PARALLELISM = 50
LEARNING_RATES = [0.1, 0.01, 0.001]


@dsl.component(base_image="ghcr.io/acme/preprocess:1.2")
def preprocess(shard: int) -> str:
    return f"stats-{shard}"


@dsl.component(base_image="ghcr.io/acme/aggregate:1.2")
def aggregate(stats: List[str]) -> str:
    return ",".join(stats)


@dsl.component(base_image="ghcr.io/acme/train:1.2")
def train(stats: str, lr: float) -> float:
    return lr


@dsl.pipeline(name="shard-preprocess-train")
def shard_preprocess_train():
    with dsl.ParallelFor(items=list(range(SHARDS)), parallelism=SHARD_PARALLELISM) as shard:
        pre = preprocess(shard=shard)
        pre.set_cpu_request("4").set_memory_request("16Gi")
        pre.set_retry(num_retries=3, backoff_duration="10s", backoff_factor=2.0, backoff_max_duration="3600s")
    agg = aggregate(stats=dsl.Collected(pre.output))
    agg.set_cpu_request("8").set_memory_request("32Gi")
    with dsl.ParallelFor(items=LEARNING_RATES, parallelism=len(LEARNING_RATES)) as lr:
        t = train(stats=agg.output, lr=lr)
        t.set_cpu_request("8").set_memory_request("64Gi")
        t.set_accelerator_type("nvidia.com/gpu").set_accelerator_limit(1)


if __name__ == "__main__":
    compiler.Compiler().compile(shard_preprocess_train, sys.argv[1] if len(sys.argv) > 1 else "pipeline.yaml")
