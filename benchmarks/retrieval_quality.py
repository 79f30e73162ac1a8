"""Retrieval quality of the corpus index: recall@3 and MRR of Chroma (MiniLM), BM25 and their fusion.

Each labelled query is what the agent's retrieval node would send: an operator description or a line of
an analysis plan, with the ids of the examples a kernel writer would want to see. Three retrievers run
on the same corpus in the same process: Chroma alone (dense), the plain BM25 keyword baseline, and the
hybrid that `retrieval_corpus.index.search` uses by default (reciprocal-rank fusion of the two).

    python -m benchmarks.retrieval_quality [--out benchmarks/results] [--k 3]

Writes retrieval_quality.json (per-query ranks for both retrievers) and retrieval_quality.png.
"""

from __future__ import annotations

import argparse
import json
import platform
import tempfile
import time
from pathlib import Path
from typing import Any

from retrieval_corpus.corpus import load_examples
from retrieval_corpus.index import CorpusIndex
from retrieval_corpus.keyword import KeywordIndex

REPO = Path(__file__).resolve().parent.parent

# (query, relevant example ids). Written as queries, not copied from the metadata.
QUERIES: list[tuple[str, list[str]]] = [
    ("out = a * x + b * y for two big float tensors, memory bound", ["elementwise_axpby_float4"]),
    ("add a per-channel bias of shape (C,1,1) to an NCHW tensor and multiply by a per-channel scale",
     ["elementwise_channel_bias_scale_gridstride", "fused_conv2d_hardswish_scale"]),
    ("several pointwise torch ops in a row: exp, cos, multiply and add, fuse them",
     ["elementwise_fused_pointwise_chain"]),
    ("GELU activation with approximate='tanh' on a large matrix", ["activation_gelu_tanh_float4"]),
    ("swish x * sigmoid(x)", ["activation_silu_gridstride"]),
    ("Mish activation: x * tanh(softplus(x))", ["activation_mish_stable_softplus"]),
    ("PReLU with a learnable negative slope for every channel", ["activation_prelu_per_channel"]),
    ("torch.sum(x, dim=-1) for many rows of 1024 elements", ["reduction_row_sum_warp_shuffle"]),
    ("maximum value of each row, rows have 65536 elements", ["reduction_block_row_max_long_rows"]),
    ("mean over dim=1 of a (batch, seq, features) tensor",
     ["reduction_mean_middle_dim_coalesced"]),
    ("sum of all squared elements of a tensor to a single scalar",
     ["reduction_global_sum_squares_two_pass"]),
    ("softmax over the last dimension of attention scores with 512 keys",
     ["softmax_warp_per_row_registers"]),
    ("softmax over a 50k vocabulary per row, too long to keep in registers",
     ["softmax_online_block_long_rows"]),
    ("Plan: keep Conv3d in cuDNN, replace the softmax over channels (dim=1) with a custom kernel",
     ["softmax_channel_dim_strided"]),
    ("nn.LayerNorm over the hidden dimension of a transformer", ["normalization_layernorm_rows_registers"]),
    ("RMSNorm as in LLaMA: divide by root mean square and multiply by weight",
     ["normalization_rmsnorm_block_float4"]),
    ("GroupNorm with 8 groups on a conv feature map", ["normalization_groupnorm_split_welford"]),
    ("BatchNorm2d in training mode, batch statistics and running mean update",
     ["normalization_batchnorm2d_training_stats"]),
    ("MaxPool2d kernel 3 stride 2 padding 1 after the ResNet stem", ["pooling_maxpool2d_direct"]),
    ("AdaptiveAvgPool2d to 1x1 before the classifier", ["pooling_global_avgpool_warp"]),
    ("cross entropy loss of logits and class indices", ["loss_cross_entropy_warp_logsumexp"]),
    ("Huber / smooth L1 regression loss with mean reduction", ["loss_smooth_l1_fused_reduction"]),
    ("cosine similarity between paired embedding rows, averaged into a loss",
     ["loss_cosine_similarity_rows"]),
    ("x.t().contiguous(): materialise the transpose of a matrix", ["transpose_tiled_2d"]),
    ("convert activations from NCHW to channels-last NHWC", ["transpose_nchw_to_nhwc"]),
    ("reshape (B, S, H, D) to (B, H, S, D) for multi-head attention", ["transpose_heads_permute"]),
    ("compute 0.5 * (A + A.transpose(-1, -2)) for a batch of matrices", ["transpose_symmetrize"]),
    ("torch.cumsum along the last dimension", ["scan_inclusive_rows_block", "scan_exclusive_rows_warp"]),
    ("prefix sum of one array with millions of elements", ["scan_decoupled_lookback_1d"]),
    ("reverse cumulative sum along the time axis (dim=1)", ["scan_reverse_middle_dim"]),
    ("hand-written matrix multiplication with shared memory tiles",
     ["gemm_nt_smem_tiled", "gemm_register_blocked"]),
    ("x @ x.transpose(1, 2) batched, divided by n", ["gemm_batched_gram"]),
    ("matrix times vector, batch size one linear layer",
     ["gemv_warp_per_row", "gemv_transposed_split"]),
    ("Plan: keep nn.Linear as cuBLAS and fuse bias, GELU and the residual add into one epilogue",
     ["fused_linear_gelu_residual"]),
    ("SwiGLU feed-forward: chunk the projection in two, silu(a) * b", ["fused_linear_swiglu"]),
    ("conv followed by hardswish and multiply by a scale, fuse the tail",
     ["fused_conv2d_hardswish_scale"]),
    ("depthwise 3x3 convolution, groups equal to channels", ["conv_depthwise2d_direct"]),
    ("implement Conv2d by unfolding patches into a matrix and multiplying",
     ["conv2d_im2col_gemm"]),
    ("index of the largest logit in each row", ["argmax_lastdim_warp", "argmax_vocab_block"]),
    ("argmin over the channel dimension", ["argmin_middle_dim"]),
    ("Plan: fuse the LayerNorm and GELU that follow the ConvTranspose3d",
     ["normalization_layernorm_rows_registers", "fused_conv2d_hardswish_scale"]),
    ("log-sum-exp of each row, numerically stable",
     ["loss_cross_entropy_warp_logsumexp", "softmax_online_block_long_rows"]),
]

# Written after the document format was chosen on QUERIES and never used to tune it: an honest estimate.
HELD_OUT: list[tuple[str, list[str]]] = [
    ("Plan: replace F.leaky_relu and the following multiply by a constant with one pointwise kernel",
     ["elementwise_fused_pointwise_chain", "activation_prelu_per_channel"]),
    ("logits.max(dim=-1).indices for greedy decoding over a 32k vocabulary", ["argmax_vocab_block"]),
    ("normalise each sample's feature map with statistics over channel groups",
     ["normalization_groupnorm_split_welford"]),
    ("running statistics update of batch normalisation while training a ResNet",
     ["normalization_batchnorm2d_training_stats"]),
    ("x.mean(dim=(2, 3), keepdim=True) global average over height and width",
     ["pooling_global_avgpool_warp"]),
    ("MaxPool3d with kernel 2 after a 3-D convolution", ["pooling_maxpool3d_direct"]),
    ("torch.bmm(q, k.transpose(1, 2)) for small attention heads", ["gemm_batched_gram"]),
    ("y = W @ x + b for a single input vector", ["gemv_warp_per_row"]),
    ("exclusive prefix sum to compute output offsets", ["scan_exclusive_rows_warp"]),
    ("swap the last two axes of a large matrix and make it contiguous", ["transpose_tiled_2d"]),
    ("F.softmax(scores / sqrt(d), dim=-1) over 256 keys", ["softmax_warp_per_row_registers"]),
    ("mean squared error between predictions and targets", ["loss_smooth_l1_fused_reduction"]),
    ("L2 norm of the whole gradient tensor (sqrt of sum of squares)",
     ["reduction_global_sum_squares_two_pass"]),
    ("Plan: keep the Conv2d in cuDNN; fuse bias add, ReLU and channel scaling into one kernel after it",
     ["fused_conv2d_hardswish_scale", "elementwise_channel_bias_scale_gridstride"]),
    ("gelu(x @ W.T + b) + x in a transformer MLP block", ["fused_linear_gelu_residual"]),
]


def _ranks(hits: list[dict[str, Any]], relevant: list[str]) -> list[int]:
    ids = [h["id"] for h in hits]
    return [ids.index(r) + 1 for r in relevant if r in ids]


def evaluate(  # noqa: ANN001 - search is any search(query, n) -> list of {"id": ...}
    search, k: int, queries: list[tuple[str, list[str]]] = QUERIES, depth: int = 10
) -> dict[str, Any]:
    """recall@k (share of a query's relevant ids in the top k, averaged) and MRR over the top `depth`."""
    rows = []
    for query, relevant in queries:
        hits = search(query, depth)
        ranks = _ranks(hits, relevant)
        rows.append(
            {
                "query": query,
                "relevant": relevant,
                "top": [h["id"] for h in hits[:k]],
                "ranks": ranks,
                "recall_at_k": sum(r <= k for r in ranks) / len(relevant),
                "reciprocal_rank": 1.0 / min(ranks) if ranks else 0.0,
            }
        )
    n = len(rows)
    return {
        "recall_at_k": sum(r["recall_at_k"] for r in rows) / n,
        "mrr": sum(r["reciprocal_rank"] for r in rows) / n,
        "queries": rows,
    }


def _plot(result: dict[str, Any], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    k = result["k"]
    sets = [
        ("retrievers", f"labelled ({result['queries']})"),
        ("held_out", f"held out ({result['held_out_queries']})"),
    ]
    names = list(result["retrievers"])
    fig, axes = plt.subplots(1, 2, figsize=(10, 4), sharey=True)
    for ax, metric, label in zip(axes, ("recall_at_k", "mrr"), (f"recall@{k}", "MRR"), strict=True):
        width = 0.8 / len(names)
        for j, name in enumerate(names):
            values = [result[key][name][metric] for key, _ in sets]
            xs = [i + (j - (len(names) - 1) / 2) * width for i in range(len(sets))]
            ax.bar(xs, values, width=width, label=name)
            for x, v in zip(xs, values, strict=True):
                ax.text(x, v + 0.01, f"{v:.2f}", ha="center", fontsize=8)
        if metric == "recall_at_k":
            ax.axhline(0.8, color="grey", linestyle="--", linewidth=1, label="target 0.8")
        ax.set_xticks(range(len(sets)), [title for _, title in sets])
        ax.set_ylim(0, 1.1)
        ax.set_title(f"{label} over {result['corpus_size']} examples")
        ax.legend(loc="lower right", fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def run(k: int) -> dict[str, Any]:
    examples = load_examples()
    known = {e.id for e in examples}
    unknown = sorted({r for _, rel in QUERIES + HELD_OUT for r in rel} - known)
    if unknown:
        raise SystemExit(f"labels name examples that do not exist: {unknown}")
    with tempfile.TemporaryDirectory() as tmp:
        started = time.perf_counter()
        chroma = CorpusIndex(tmp, examples=examples)
        build_s = time.perf_counter() - started
        keyword = KeywordIndex(examples)
        searches = {
            "chroma_dense": lambda q, n: chroma.search(q, k=n, mode="dense"),
            "keyword_bm25": lambda q, n: keyword.search(q, k=n),
            "hybrid_rrf": lambda q, n: chroma.search(q, k=n, mode="hybrid"),
        }
        retrievers = {name: evaluate(fn, k) for name, fn in searches.items()}
        held_out = {name: evaluate(fn, k, HELD_OUT) for name, fn in searches.items()}
    return {
        "k": k,
        "corpus_size": len(examples),
        "queries": len(QUERIES),
        "index_build_seconds": round(build_s, 2),
        "machine": platform.node(),
        "retrievers": retrievers,
        "held_out_queries": len(HELD_OUT),
        "held_out": held_out,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--out", type=Path, default=REPO / "benchmarks" / "results")
    parser.add_argument("--k", type=int, default=3)
    args = parser.parse_args(argv)
    result = run(args.k)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "retrieval_quality.json").write_text(json.dumps(result, indent=2) + "\n")
    _plot(result, args.out / "retrieval_quality.png")
    for label in ("retrievers", "held_out"):
        for name, r in result[label].items():
            print(f"{label:10s} {name:14s} recall@{args.k} {r['recall_at_k']:.3f}  MRR {r['mrr']:.3f}")
            for q in r["queries"]:
                if q["recall_at_k"] < 1.0:
                    print(f"    miss: {q['query'][:70]!r} -> {q['top']} (ranks {q['ranks']})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
