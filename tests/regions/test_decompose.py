"""Composite ops rewritten as covered ones (norms, vector norms, losses, attention, einsum, products of a
vector, (values, indices) picks): the rewritten graph computes what the model computes, on real CPU
tensors, and the rewrite yields regions with contracts where the composite was kept whole. Arguments a
rewrite does not reproduce keep the op whole."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
import torch.nn.functional as F

from evaluator.problem import load_problem
from regions.offering import offered
from regions.trace import graph_module, load_module

FAMILY_TASKS = [
    "level1/7_Max_Values_Along_Dim.py",
    "level1/8_Instance_Norm_Maps.py",
    "level1/9_Group_Norm_Four_Groups.py",
    "level1/10_Batch_Norm_Training_Stats.py",
    "level1/11_Cross_Entropy_Logits.py",
    "level1/12_Huber_Loss_Mean.py",
    "level1/13_Scaled_Dot_Product_Attention.py",
    "level1/17_Einsum_Batched_Projection.py",
    "level2/3_Causal_Attention_Sliced_Mask.py",
    "level1/39_L2_Normalize_Functional.py",
    "level1/48_BCE_With_Logits.py",
    "level1/49_NLL_Loss.py",
    "level1/19_Frobenius_Normalize.py",
    "level1/66_Matrix_Times_Vector_1d.py",
    "level1/79_Margin_Ranking_Loss.py",
    "level1/80_Soft_Margin_Loss.py",
    "level1/82_Vector_Norm.py",
    "level1/3_Adaptive_Average_Pool_Global.py",
]


def _same(model: torch.nn.Module, inputs: list) -> torch.fx.GraphModule:
    gm = graph_module(model, inputs)
    torch.testing.assert_close(gm(*inputs), model(*inputs), rtol=1e-4, atol=1e-5)
    return gm


@pytest.mark.parametrize("task", FAMILY_TASKS)
def test_the_rewritten_family_task_computes_the_model_and_is_offered(task: str, families_dir: Path) -> None:
    problem = load_problem(families_dir / task)
    module = load_module(problem)
    torch.manual_seed(0)
    model = module.Model(*module.get_init_inputs())
    _same(model, list(module.get_inputs()))
    chosen, _ = offered(problem.source, "moderate")
    assert chosen, f"{task}: nothing offered"


class _Losses(torch.nn.Module):
    def forward(self, a: torch.Tensor, b: torch.Tensor, c: torch.Tensor) -> torch.Tensor:
        return torch.stack(
            [
                F.mse_loss(a, b, reduction="sum"),
                F.smooth_l1_loss(a, b, beta=0.3),
                F.l1_loss(a, c),
                F.triplet_margin_loss(a, b, c, margin=0.7),
                F.huber_loss(a, c, reduction="none").mean(),
            ]
        )


class _Norms(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.bn = torch.nn.BatchNorm1d(6).eval()  # running statistics: a map only
        self.inorm = torch.nn.InstanceNorm1d(6, affine=True)
        self.w = torch.nn.Parameter(torch.randn(6))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.bn(x) + self.inorm(x) + F.group_norm(x, 3, weight=self.w, eps=1e-3)


class _Attention(torch.nn.Module):
    def forward(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        causal = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return causal + F.scaled_dot_product_attention(q, k, v, scale=0.3)


class _Einsums(torch.nn.Module):
    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        pairs = torch.einsum("bhij,bhkj->bhik", x, y)  # summed last dims: y is permuted
        return torch.einsum("bhik,hk->hbi", pairs, torch.ones(3, 5)) + x.max(dim=-1).values.permute(1, 0, 2)


class _Pools(torch.nn.Module):
    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        whole = F.adaptive_avg_pool2d(x, 1) + F.adaptive_avg_pool2d(x, (1, 1)).sum()
        whole = whole.sum() + F.adaptive_avg_pool3d(y, (1, 1, 1)).sum()
        return whole + F.adaptive_avg_pool2d(x, (1, 2)).sum()


def test_global_average_pooling_is_a_mean_and_other_sizes_stay_windows() -> None:
    torch.manual_seed(0)
    code = _same(_Pools(), [torch.randn(2, 3, 7, 5), torch.randn(2, 3, 4, 3, 5)]).code
    assert code.count("torch.mean") == 3 and code.count("adaptive_avg_pool") == 1  # (1, 2) is a window


def test_losses_norms_attention_and_einsums_compute_the_model() -> None:
    torch.manual_seed(0)
    a, b, c = (torch.randn(4, 10) for _ in range(3))
    code = _same(_Losses(), [a, b, c]).code
    assert "loss" not in code  # every loss rewritten
    bn = _Norms()
    bn.bn.running_mean.normal_()
    bn.bn.running_var.uniform_(0.5, 2.0)
    code = _same(bn, [torch.randn(2, 6, 9)]).code
    assert "norm(" not in code and code.count("torch.var") == 2
    q, k, v = (torch.randn(2, 3, 7, 4) for _ in range(3))
    code = _same(_Attention(), [q, k, v]).code
    assert "scaled_dot_product" not in code and code.count("torch.softmax") == 2
    code = _same(_Einsums(), [torch.randn(2, 3, 5, 4), torch.randn(2, 3, 5, 4)]).code
    assert "einsum" not in code and "torch.amax" in code


class _Kept(torch.nn.Module):
    def forward(self, x: torch.Tensor, t: torch.Tensor, m: torch.Tensor) -> torch.Tensor:
        ce = F.cross_entropy(x, t, label_smoothing=0.1)
        attention = F.scaled_dot_product_attention(x[None], x[None], x[None], attn_mask=m)
        return ce + attention.sum() + torch.einsum("ii->", x[:, :4])


def test_arguments_a_rewrite_does_not_reproduce_keep_the_op_whole() -> None:
    x, t, m = torch.randn(4, 6), torch.randint(0, 6, (4,)), torch.randn(4, 4)
    code = _same(_Kept(), [x, t, m]).code
    assert all(op in code for op in ("cross_entropy", "scaled_dot_product_attention", "einsum"))
