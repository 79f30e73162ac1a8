"""Composite ops rewritten as covered ones (norms, losses, attention, einsum, (values, indices) picks): the
rewritten graph computes what the model computes, on real CPU tensors, and the rewrite yields regions with
contracts where the composite was kept whole. Arguments a rewrite does not reproduce keep the op whole."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
import torch.nn.functional as F

from evaluator.problem import load_problem
from regions.offering import offered
from regions.steps import canonical
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


class _Convs(torch.nn.Module):
    """A convolution read by a pointwise op, one read by a pooling window, a transposed one read twice."""

    def __init__(self) -> None:
        super().__init__()
        self.a = torch.nn.Conv2d(3, 4, 3)
        self.b = torch.nn.Conv2d(4, 4, 3)
        self.c = torch.nn.ConvTranspose2d(4, 2, 2, stride=2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = torch.relu(self.a(x))
        y = F.max_pool2d(self.b(y), 2)
        z = self.c(y)
        return z * torch.sigmoid(z)


def test_a_convolutions_bias_joins_the_pointwise_op_that_reads_it() -> None:
    """Only the first convolution's bias moves: the second feeds a window, the third two readers; the
    moved add and the relu make one map region, the convolution itself is left without bias."""
    torch.manual_seed(0)
    gm = _same(_Convs(), [torch.randn(2, 3, 12, 12)])
    code = gm.code
    assert "conv2d(x, a_weight, None," in code and "a_bias.view([1, -1, 1, 1])" in code
    assert "b_weight, b_bias," in code and "c_weight, c_bias," in code
    source = (
        "import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n\n\n"
        "class Model(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        "        self.conv = nn.Conv2d(3, 8, 3)\n\n    def forward(self, x):\n"
        "        return torch.relu(self.conv(x)) * 2.0\n\n\n"
        "def get_inputs():\n    return [torch.randn(2, 3, 16, 16)]\n\n\n"
        "def get_init_inputs():\n    return []\n"
    )
    ((region, _),), _ = offered(source, "moderate")
    assert [s.target for s in region.steps] == ["torch.add", "torch.relu", "torch.mul"]
    assert [list(t.shape) for t in region.inputs] == [[2, 8, 14, 14], [1, 8, 1, 1]]


class _Pooled(torch.nn.Module):
    """Non-decreasing steps before max pools (a channel's shift and an in-place ReLU; a division by a
    positive number and a clamp), and steps that must stay before theirs: a negative scale, a tanh, a
    value read twice. The convolutions have no bias of their own (moving one is not bit-exact on the CPU)."""

    def __init__(self) -> None:
        super().__init__()
        self.a = torch.nn.Conv2d(3, 4, 3, bias=False)
        self.shift = torch.nn.Parameter(torch.randn(1, 4, 1, 1))
        self.relu = torch.nn.ReLU(inplace=True)
        self.b = torch.nn.Conv3d(4, 4, 1, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = F.max_pool2d(self.relu(self.a(x) + self.shift), 2)  # conv, shift, relu_ -> pool
        z = F.max_pool3d(torch.clamp(self.b(y.unsqueeze(2)) / 2.0, min=-0.1), (1, 2, 2))
        w = F.max_pool2d(z.squeeze(2) * -1.5, 2)  # decreasing: stays
        v = torch.tanh(w)
        return F.max_pool2d(v, 1) + v.sum()  # v read twice: stays


def test_a_max_pool_moves_before_the_non_decreasing_steps_that_feed_it_exactly() -> None:
    """max(f(x)) = f(max(x)) for f non-decreasing with window-constant operands: the rewritten graph is
    bit-identical to the model on signed inputs; steps that decrease, or whose value is read again, stay."""
    torch.manual_seed(0)
    model, x = _Pooled(), torch.randn(2, 3, 18, 18)
    gm = graph_module(model, [x])
    assert torch.equal(gm(x), model(x))
    read = [canonical(n.args[0]) for n in gm.graph.nodes if "max_pool" in canonical(n)]
    assert read == [  # the first two pools read the convolutions, the steps follow them now; a decreasing
        "torch.nn.functional.conv2d",  # step and a value read twice stay before theirs
        "torch.nn.functional.conv3d",
        "torch.mul",
        "torch.tanh",
    ]
    source = (
        "import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n\n\n"
        "class Model(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        "        self.conv = nn.Conv2d(3, 8, 3)\n\n    def forward(self, x):\n"
        "        return F.max_pool2d(torch.relu(self.conv(x)), 2)\n\n\n"
        "def get_inputs():\n    return [torch.randn(2, 3, 18, 18)]\n\n\n"
        "def get_init_inputs():\n    return []\n"
    )
    ((region, _),), _ = offered(source, "moderate")
    assert region.kind == "window"
    assert [s.target for s in region.steps] == ["torch.nn.functional.max_pool2d", "torch.add", "torch.relu"]
    assert [list(t.shape) for t in region.inputs] == [[2, 8, 16, 16], [1, 8, 1, 1]]


class _Extrema(torch.nn.Module):
    """Non-decreasing steps before a max over a dim, a min over two and a whole tensor's max; a shift that
    varies along the reduced dim stays before its max, and so does one whose alignment the dropped dim
    would change."""

    def __init__(self) -> None:
        super().__init__()
        self.row = torch.nn.Parameter(torch.randn(4, 1))
        self.col = torch.nn.Parameter(torch.randn(1, 6))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        a = torch.amax(torch.relu(x + self.row), dim=1, keepdim=True)  # row is constant along dim 1
        b = torch.amin(torch.clamp(x * 2.0, max=1.0), dim=(0, 1), keepdim=True)
        c = torch.max(F.leaky_relu(x - 0.5))
        d, _ = torch.max(x + self.col, dim=1)  # col varies along dim 1: stays
        e = torch.amax(torch.relu(x + self.row), dim=1)  # dim 1 dropped, row reaches it: the add stays
        return a.sum() + b.sum() + c + d.sum() + e.sum()


def test_a_max_or_min_over_dims_moves_before_the_steps_that_commute_with_it_exactly() -> None:
    torch.manual_seed(0)
    model, x = _Extrema(), torch.randn(4, 6)
    gm = graph_module(model, [x])
    assert torch.equal(gm(x), model(x))
    extrema = [n for n in gm.graph.nodes if canonical(n) in ("torch.amax", "torch.amin", "torch.max")]
    assert [n.args[0].op for n in extrema] == ["placeholder"] * 3 + ["call_function"] * 2
    assert [canonical(n.args[0]) for n in extrema[3:]] == ["torch.add", "torch.add"]
    assert [canonical(u) for u in extrema[4].users] == ["torch.relu"]  # the relu alone moves after it
