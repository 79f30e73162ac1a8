"""The moves of regions.moves on real CPU tensors: a convolution's bias after it where a pointwise op reads
it, a max pool or a max or min over dims before the non-decreasing steps that feed it (bit-identical), and
the steps that must stay where they are."""

from __future__ import annotations

import torch
import torch.nn.functional as F

from regions.offering import offered
from regions.steps import canonical
from regions.trace import graph_module


def _same(model: torch.nn.Module, inputs: list) -> torch.fx.GraphModule:
    gm = graph_module(model, inputs)
    torch.testing.assert_close(gm(*inputs), model(*inputs), rtol=1e-4, atol=1e-5)
    return gm


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
