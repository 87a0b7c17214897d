"""A seeded generator of TorchScript programs with autocast scopes.

`generate(seed, index)` returns a `Program`: a small tree of statements
(so the shrinker can delete and simplify them) that renders to the Python
source of a module holding the function `prog` (or the nn.Module `Prog`),
its helpers, and a plain-Python harness (`make_args`, the eager region
around the call, whether gradients are compared, ...) that the runner reads.
Everything is a function of (seed, index): the same pair gives the same
source, byte for byte.

Autocast state queries (torch.is_autocast_enabled(...), get_autocast_dtype,
...) are op templates too: their answers choose values and dtypes.

Every tensor variable has shape [4, 4]: each op template below maps [4, 4]
operands to a [4, 4] result (through reshapes, broadcasting or slicing where
the op needs other shapes), so any operand fits any op. A group of templates
runs its op on other shapes (2x4, 4x2, batched 2x4x4, vectors) and with
broadcasting operands ([4, 1], [1, 4], [4]). Types are Tensor,
bool, int, str, torch.dtype, Optional[Tensor] and List[Tensor], all of which
TorchScript infers from the annotations the generator writes.
"""
from __future__ import annotations

import random
import re
from dataclasses import dataclass, field
from typing import NamedTuple

from jitamp._library import EAGER_ENTER_RETURNS_NONE

# The share of programs scripted with jitamp.enable(profiling_executor=True).
PROFILING_SHARE = 0.25
# The share of module programs also given autocast by jitamp.add_autocast.
ADD_AUTOCAST_SHARE = 0.2
# The share of programs also called from two threads at once.
THREADS_SHARE = 0.1


def _add_autocast_draw(kind: str, seed: int, index: int) -> str | None:
    """The dtype jitamp.add_autocast gives a module program, or None."""
    draw = random.Random(f"jitamp-fuzz-add-autocast:{seed}:{index}")
    if kind != "module" or draw.random() >= ADD_AUTOCAST_SHARE:
        return None
    return draw.choice(["bfloat16", "float16"])

# --------------------------------------------------------------------------
# Op templates. `policy` is the op's effective CPU policy in the installed
# torch's table ("none": no CPU row; the CUDA policy, if any, is in `cuda`),
# checked against jitamp.passes.policy by tests/test_fuzz.py. `fresh`: the
# result is a new tensor (never an alias or view of an operand), so in-place
# and out= forms may write to it.


class Op(NamedTuple):
    name: str       # the aten op the template reaches (for coverage stats)
    policy: str     # effective CPU policy of `name`
    arity: int
    fmt: str        # {a} {b} {c}: tensor operands; {opt}: an optional tensor or None
    fresh: bool = True


OPS: list[Op] = [
    # lower_precision_fp
    Op("aten::mm", "lower_precision_fp", 2, "torch.mm({a}, {b})"),
    Op("aten::matmul", "lower_precision_fp", 2, "torch.matmul({a}, {b})"),
    Op("aten::matmul", "lower_precision_fp", 2, "{a} @ {b}"),
    Op("aten::addmm", "lower_precision_fp", 3, "torch.addmm({c}, {a}, {b})"),
    Op("aten::addmm", "lower_precision_fp", 3, "torch.addmm({c}, {a}, {b}, beta=0.5, alpha=2.0)"),
    Op("aten::linear", "lower_precision_fp", 2, "F.linear({a}, {b})"),
    Op("aten::linear", "lower_precision_fp", 2, "F.linear({a}, {b}, {opt})"),
    Op("aten::bmm", "lower_precision_fp", 2, "torch.bmm({a}.unsqueeze(0), {b}.unsqueeze(0)).squeeze(0)"),
    Op("aten::baddbmm", "lower_precision_fp", 3,
       "torch.baddbmm({c}.unsqueeze(0), {a}.unsqueeze(0), {b}.unsqueeze(0)).squeeze(0)"),
    Op("aten::addbmm", "lower_precision_fp", 3, "torch.addbmm({c}, {a}.unsqueeze(0), {b}.unsqueeze(0))"),
    Op("aten::conv2d", "lower_precision_fp", 2,
       "F.conv2d({a}.reshape(1, 1, 4, 4), {b}[:3, :3].reshape(1, 1, 3, 3), None, 1, 1).reshape(4, 4)"),
    Op("aten::conv2d", "lower_precision_fp", 3,
       "F.conv2d({a}.reshape(1, 1, 4, 4), {b}[:3, :3].reshape(1, 1, 3, 3), {c}[0, :1], 1, 1).reshape(4, 4)"),
    Op("aten::conv1d", "lower_precision_fp", 2, "F.conv1d({a}.unsqueeze(0), {b}.unsqueeze(2)).squeeze(0)"),
    Op("aten::conv1d", "lower_precision_fp", 2, "F.conv1d({a}.unsqueeze(0), {b}.unsqueeze(2), {opt}).squeeze(0)"),
    Op("aten::conv_transpose2d.input", "lower_precision_fp", 2,
       "F.conv_transpose2d({a}.reshape(1, 1, 4, 4), {b}[:1, :1].reshape(1, 1, 1, 1)).reshape(4, 4)"),
    Op("aten::prelu", "lower_precision_fp", 2, "F.prelu({a}, {b}[0])"),
    Op("aten::scaled_dot_product_attention", "lower_precision_fp", 3,
       "F.scaled_dot_product_attention({a}.unsqueeze(0), {b}.unsqueeze(0), {c}.unsqueeze(0)).squeeze(0)"),
    Op("aten::linalg_vecdot", "lower_precision_fp", 3, "torch.linalg.vecdot({a}, {b}).unsqueeze(1) + {c}"),
    # fp32
    Op("aten::cdist", "fp32", 2, "torch.cdist({a}, {b})"),
    Op("aten::mse_loss", "fp32", 2, "F.mse_loss({a}, {b}, reduction='none')"),
    Op("aten::l1_loss", "fp32", 3, "F.l1_loss({a}, {b}) + {c}"),
    Op("aten::smooth_l1_loss", "fp32", 2, "F.smooth_l1_loss({a}, {b}, reduction='none')"),
    Op("aten::huber_loss", "fp32", 2, "F.huber_loss({a}, {b}, reduction='none')"),
    Op("aten::binary_cross_entropy_with_logits", "fp32", 2,
       "F.binary_cross_entropy_with_logits({a}, torch.sigmoid({b}), reduction='none')"),
    Op("aten::binary_cross_entropy", "fp32", 2,
       "F.binary_cross_entropy(torch.sigmoid({a}), torch.sigmoid({b}), reduction='none')"),
    Op("aten::prod.dim_int", "fp32", 2, "torch.prod({a}, 1, keepdim=True) + {b}"),
    Op("aten::prod", "fp32", 2, "torch.prod({a}) * {b}"),
    Op("aten::trace", "fp32", 2, "torch.trace({a}) + {b}"),
    Op("aten::linalg_inv", "fp32", 1, "torch.linalg.inv({a} + torch.eye(4, dtype={a}.dtype) * 4.0)"),
    Op("aten::fft_fft", "fp32", 1, "torch.fft.fft({a}).abs()"),
    Op("aten::fft_rfft", "fp32", 2, "torch.fft.rfft({a}).abs().sum(1, keepdim=True) + {b}"),
    Op("aten::quantile.scalar", "fp32", 2, "torch.quantile({a}, 0.5, dim=1, keepdim=True) + {b}"),
    Op("aten::reflection_pad1d", "fp32", 1, "F.pad({a}.unsqueeze(0), [1, 1], mode='reflect').squeeze(0)[:, 1:5]",
       fresh=False),
    Op("aten::replication_pad2d", "fp32", 1,
       "F.pad({a}.reshape(1, 1, 4, 4), [1, 1, 1, 1], mode='replicate').reshape(6, 6)[1:5, 1:5]", fresh=False),
    Op("aten::adaptive_avg_pool3d", "fp32", 1, "F.adaptive_avg_pool3d({a}.reshape(1, 1, 1, 4, 4), [1, 4, 4]).reshape(4, 4)"),
    Op("aten::kl_div", "fp32", 2, "F.kl_div({a}, {b}, reduction='none')"),
    Op("aten::nll_loss_nd", "fp32", 2, "F.nll_loss({a}, torch.tensor([0, 1, 2, 3])) + {b}"),
    Op("aten::cross_entropy_loss", "fp32", 3, "F.cross_entropy({a}, torch.softmax({b}, 1)) + {c}"),
    Op("aten::margin_ranking_loss", "fp32", 3, "F.margin_ranking_loss({a}, {b}, {c}, reduction='none')"),
    Op("aten::soft_margin_loss", "fp32", 3, "F.soft_margin_loss({a}, {b}) * {c}"),
    Op("aten::avg_pool3d", "fp32", 1, "F.avg_pool3d({a}.reshape(1, 1, 1, 4, 4), [1, 3, 3], 1, [0, 1, 1]).reshape(4, 4)"),
    Op("aten::max_pool3d", "fp32", 1, "F.max_pool3d({a}.reshape(1, 1, 1, 4, 4), [1, 3, 3], 1, [0, 1, 1]).reshape(4, 4)"),
    Op("aten::grid_sampler", "fp32", 2,
       "F.grid_sample({a}.reshape(1, 1, 4, 4), torch.tanh({b}).reshape(1, 4, 2, 2), align_corners=False)"
       ".reshape(4, 2).repeat(1, 2)"),
    Op("aten::cosine_embedding_loss", "fp32", 3,
       "F.cosine_embedding_loss({a}, {b}, torch.sign({c}[0]), reduction='none').unsqueeze(1) + {c}"),
    Op("aten::hinge_embedding_loss", "fp32", 2, "F.hinge_embedding_loss({a}, torch.sign({b}), reduction='none')"),
    Op("aten::multi_margin_loss", "fp32", 2,
       "F.multi_margin_loss({a}, torch.tensor([0, 1, 2, 3]), reduction='none').unsqueeze(1) + {b}"),
    Op("aten::triplet_margin_loss", "fp32", 3, "F.triplet_margin_loss({a}, {b}, {c}, reduction='none').unsqueeze(1) * {c}"),
    Op("aten::poisson_nll_loss", "fp32", 2, "F.poisson_nll_loss({a}, {b}.abs(), reduction='none')"),
    Op("aten::linalg_solve", "fp32", 2, "torch.linalg.solve({a} + torch.eye(4, dtype={a}.dtype) * 4.0, {b})"),
    Op("aten::linalg_svdvals", "fp32", 2, "torch.linalg.svdvals({a}).unsqueeze(1) + {b}"),
    Op("aten::fft_ifft", "fp32", 1, "torch.fft.ifft({a}).abs()"),
    Op("aten::fft_fft2", "fp32", 1, "torch.fft.fft2({a}).abs()"),
    Op("aten::nanquantile.scalar", "fp32", 2, "torch.nanquantile({a}, 0.25, dim=1, keepdim=True) + {b}"),
    # promote
    Op("aten::cat", "promote", 2, "torch.cat([{a}, {b}], 1)[:, 2:6]", fresh=False),
    Op("aten::cat", "promote", 3, "torch.cat([{a}[:1], {b}[:2], {c}[:1]], 0)"),
    Op("aten::stack", "promote", 3, "torch.stack([{a}, {b}, {c}])[1]", fresh=False),
    Op("aten::index_copy", "promote", 2, "{a}.index_copy(0, torch.tensor([1, 3]), {b}[:2])"),
    # no CPU policy (several have a CUDA one)
    Op("aten::add", "none", 2, "{a} + {b}"),
    Op("aten::mul", "none", 2, "{a} * {b}"),
    Op("aten::sub", "none", 2, "{a} - {b} * 0.5"),
    Op("aten::relu", "none", 1, "torch.relu({a})"),
    Op("aten::tanh", "none", 1, "torch.tanh({a})"),
    Op("aten::gelu", "none", 1, "F.gelu({a})"),
    Op("aten::exp", "none", 1, "torch.exp({a})"),
    Op("aten::log", "none", 1, "torch.log({a}.abs() + 1.0)"),
    Op("aten::softmax.int", "none", 1, "torch.softmax({a}, -1)"),
    Op("aten::softmax.int", "none", 1, "torch.softmax({a}, -1, dtype=torch.float32)"),
    Op("aten::log_softmax.int", "none", 1, "F.log_softmax({a}, 1)"),
    Op("aten::layer_norm", "none", 1, "F.layer_norm({a}, [4])"),
    Op("aten::layer_norm", "none", 3, "F.layer_norm({a}, [4], {b}[0], {c}[1])"),
    Op("aten::group_norm", "none", 1, "F.group_norm({a}.unsqueeze(0), 2).squeeze(0)"),
    Op("aten::sum.dim_IntList", "none", 2, "{a}.sum(-1, keepdim=True) + {b}"),
    Op("aten::cumsum", "none", 1, "torch.cumsum({a}, 1)"),
    Op("aten::pow.Tensor_Scalar", "none", 1, "torch.pow({a}, 2)"),
    Op("aten::addcmul", "none", 3, "torch.addcmul({a}, {b}, {c}, value=0.5)"),
    Op("aten::linalg_vector_norm", "none", 2, "torch.linalg.vector_norm({a}, dim=[1], keepdim=True) + {b}"),
    Op("aten::mv", "none", 3, "torch.mv({a}, {b}[0]).unsqueeze(1) + {c}"),
    Op("aten::einsum", "none", 2, "torch.einsum('ij,jk->ik', {a}, {b})"),
    Op("aten::where.self", "none", 2, "torch.where({a} > 0, {a}, {b})"),
    Op("aten::clamp", "none", 1, "{a}.clamp(-1.0, 1.0)"),
    Op("aten::to", "none", 1, "{a}.float()", fresh=False),
    Op("aten::to", "none", 1, "{a}.to(torch.bfloat16)", fresh=False),
    Op("aten::to", "none", 2, "{a}.to({b}.dtype)", fresh=False),
    Op("aten::t", "none", 1, "{a}.t()", fresh=False),
    Op("aten::clone", "none", 1, "{a}.clone()"),
    # other shapes inside, and broadcasting operands (still [4, 4] results)
    Op("aten::mm", "lower_precision_fp", 2, "torch.mm({a}[:2], {b}).repeat(2, 1)"),
    Op("aten::matmul", "lower_precision_fp", 2, "torch.matmul({a}.unsqueeze(0).expand(2, 4, 4), {b}).sum(0)"),
    Op("aten::matmul", "lower_precision_fp", 3, "torch.matmul({a}, {b}[0]).unsqueeze(1) * {c}"),
    Op("aten::linear", "lower_precision_fp", 3, "F.linear({a}[:, :2], {b}[:, :2], {c}[0])"),
    Op("aten::addmm", "lower_precision_fp", 3, "torch.addmm({c}[0], {a}, {b})"),
    Op("aten::baddbmm", "lower_precision_fp", 3,
       "torch.baddbmm({c}[:1].unsqueeze(0), {a}.unsqueeze(0), {b}.unsqueeze(0)).squeeze(0)"),
    Op("aten::cdist", "fp32", 2, "torch.cdist({a}[:2], {b}).repeat(2, 1)"),
    Op("aten::prod.dim_int", "fp32", 2, "torch.prod({a}[:2], 0) + {b}"),
    Op("aten::stack", "promote", 3, "torch.stack([{a}[0], {b}[1], {c}[2], {a}[3]])"),
    Op("aten::cat", "promote", 2, "torch.cat([{a}[:, :1], {b}[:, 1:]], 1)", fresh=False),
    Op("aten::add", "none", 2, "{a} + {b}[:, :1]"),
    Op("aten::mul", "none", 2, "{a} * {b}[0]"),
    Op("aten::where.self", "none", 3, "torch.where({a} > 0, {b}[:1], {c}[:, 1:2])"),
    Op("aten::addcmul", "none", 3, "torch.addcmul({a}, {b}[:, :1], {c}[:1], value=0.5)"),
    Op("aten::sum.dim_IntList", "none", 2, "{a}.sum(0) + {b}"),
    Op("aten::layer_norm", "none", 1, "F.layer_norm({a}[:, :2], [2]).repeat(1, 2)"),
    # fp32 rows of linalg decompositions (not linalg.lstsq: eager's own
    # results differ from call to call on CPU, with the buffers' alignment)
    Op("aten::linalg_qr", "fp32", 1, "torch.linalg.qr({a})[0]"),
    Op("aten::linalg_svd", "fp32", 2, "torch.linalg.svd({a})[0] * {b}"),
    Op("aten::linalg_eigh", "fp32", 1, "torch.linalg.eigh({a} + {a}.t())[1]"),
    # (finite inputs: eager's linalg.eigvals of an all-NaN or all-inf
    # matrix segfaults in LAPACK on CPU, torch 2.13; docs/facts.md)
    Op("aten::linalg_eigvals", "fp32", 2, "torch.linalg.eigvals({a}.nan_to_num(0.0, 0.0, 0.0)).abs().unsqueeze(1) + {b}"),
    Op("aten::linalg_eig", "fp32", 1, "torch.linalg.eig({a}.nan_to_num(0.0, 0.0, 0.0))[0].real.unsqueeze(0) * {a}"),
    Op("aten::linalg_cholesky", "fp32", 1, "torch.linalg.cholesky({a} @ {a}.t() + torch.eye(4, dtype={a}.dtype))"),
    Op("aten::pinverse", "fp32", 1, "torch.pinverse({a})"),
    Op("aten::cholesky_solve", "fp32", 2,
       "torch.cholesky_solve({b}, {a}.tril(-1) * 0.1 + torch.eye(4, dtype={a}.dtype) * 2.0)"),
    Op("aten::triangular_solve", "fp32", 2,
       "torch.triangular_solve({b}, {a}.triu(1) * 0.1 + torch.eye(4, dtype={a}.dtype) * 4.0)[0]"),
    # rnn cells and layers: no CPU row (the cells' linear and the layer's
    # mkldnn kernel cast inside, under the scope's eager state)
    Op("aten::rnn_tanh_cell", "none", 3, "torch.rnn_tanh_cell({a}, {b}, {c}, {b}.t())"),
    Op("aten::rnn_relu_cell", "none", 3, "torch.rnn_relu_cell({a}, {b}, {c}, {c}, {b}[0], {a}[1])"),
    Op("aten::gru_cell", "none", 3, "torch.gru_cell({a}, {b}, {c}.repeat(3, 1), {b}.repeat(3, 1))"),
    Op("aten::lstm_cell", "none", 3, "torch.lstm_cell({a}, [{b}, {c}], {c}.repeat(4, 1), {a}.repeat(4, 1))[1]"),
    Op("aten::lstm", "none", 3,
       "torch.lstm({a}.unsqueeze(1), [{b}[:1].unsqueeze(0), {c}[:1].unsqueeze(0)], "
       "[{b}.repeat(4, 1), {c}.repeat(4, 1)], False, 1, 0.0, False, False, False)[0].squeeze(1)"),
    # complex values (autocast casts floating tensors only: complex ones keep their dtype)
    Op("aten::matmul", "lower_precision_fp", 2,
       "torch.view_as_real(torch.complex({a}.float(), {b}.float()) @ torch.complex({b}.float(), {a}.float()))"
       ".sum(-1)"),
    Op("aten::fft_ifft", "fp32", 1, "torch.fft.ifft(torch.fft.fft({a})).real"),
    Op("aten::polar", "fp32", 2, "torch.polar({a}.abs(), {b}).angle()"),
    Op("aten::mm", "lower_precision_fp", 3, "torch.mm({a}.to(torch.complex64), {b}.to(torch.complex64)).abs() + {c}"),
    # integer and bool scalars computed from tensors
    Op("aten::roll", "none", 2, "torch.roll({a}, int({b}.argmax()) % 4, 1)", fresh=False),
    Op("aten::topk", "none", 2, "torch.topk({a}, int({b}.abs().argmin()) % 4 + 1, 1)[0].sum(1, keepdim=True) + {b}"),
    Op("aten::cumsum", "none", 2, "torch.cumsum({a}, 1 if bool({b}.sum() > 0) else 0)"),
    # autocast state queries: what they answer is the scope's (or the caller's)
    Op("aten::is_autocast_enabled", "none", 2, "{a} if torch.is_autocast_enabled('cpu') else {b}", fresh=False),
    Op("aten::is_autocast_enabled", "none", 2, "{a} if torch.is_autocast_enabled() else {b}", fresh=False),
    Op("aten::is_autocast_cpu_enabled", "none", 1, "{a} * float(torch.is_autocast_cpu_enabled())"),
    Op("aten::get_autocast_dtype", "none", 1, "{a}.to(torch.get_autocast_dtype('cpu'))", fresh=False),
    Op("aten::get_autocast_cpu_dtype", "none", 1, "torch.zeros(4, 4, dtype=torch.get_autocast_cpu_dtype()) + {a}"),
    Op("aten::get_autocast_gpu_dtype", "none", 1, "{a}.to(torch.get_autocast_gpu_dtype())", fresh=False),
    Op("aten::is_autocast_cache_enabled", "none", 2, "{a} if torch.is_autocast_cache_enabled() else {b}",
       fresh=False),
    Op("aten::_is_autocast_available", "none", 2, "{a} if torch.amp.is_autocast_available('cpu') else {b}",
       fresh=False),
]

# In-place and out= forms: `{t}` is a fresh variable written to.
INPLACE: list[Op] = [
    Op("aten::add_", "none", 1, "{t}.add_({a})"),
    Op("aten::mul_", "none", 0, "{t}.mul_(2.0)"),
    Op("aten::clamp_", "none", 0, "{t}.clamp_(-1.0, 1.0)"),
    Op("aten::addmm_", "none", 2, "{t}.addmm_({a}, {b})"),
    Op("aten::copy_", "none", 1, "{t}.copy_({a})"),
    Op("aten::mm.out", "none", 2, "torch.mm({a}, {b}, out={t})"),
    Op("aten::addmm.out", "none", 3, "torch.addmm({c}, {a}, {b}, out={t})"),
    Op("aten::cat.out", "none", 2, "torch.cat([{a}[:2], {b}[:2]], 0, out={t})"),
    Op("aten::softmax.int_out", "none", 1, "torch.softmax({a}, 1, out={t})"),
]

LOWER = {"bf16": "torch.bfloat16", "fp16": "torch.float16"}
INPUT_DTYPES = {"f32": "torch.float32", "bf16": "torch.bfloat16", "fp16": "torch.float16",
                "f64": "torch.float64", "i64": "torch.int64", "c64": "torch.complex64"}


# --------------------------------------------------------------------------
# The program tree.

@dataclass
class Line:
    text: str
    defines: str | None = None  # the tensor variable it assigns, if any
    fixed: bool = False  # may not be neutralized (only removed)
    sink: bool = False  # append the value to `sink`, the list every program returns

    def render(self, indent: int) -> list[str]:
        text = self.text + (f"; sink.append({self.defines})" if self.sink else "")
        return ["    " * indent + text]


@dataclass
class Block:
    header: str                      # "with ...:", "if ...:", "for ...:", "while ...:"
    body: list = field(default_factory=list)
    orelse: list | None = None       # if/else
    pre: str | None = None           # a line before the header (a while's counter)
    first: str | None = None         # a fixed first body line (a while's increment)

    def render(self, indent: int) -> list[str]:
        pad = "    " * indent
        out = []
        if self.pre:
            out.append(pad + self.pre)
        out.append(pad + self.header)
        inner = []
        if self.first:
            inner.append(pad + "    " + self.first)
        for node in self.body:
            inner.extend(node.render(indent + 1))
        if len(inner) == (1 if self.first else 0):
            inner.append(pad + "    pass")
        out.extend(inner)
        if self.orelse is not None:
            out.append(pad + "else:")
            inner = []
            for node in self.orelse:
                inner.extend(node.render(indent + 1))
            out.extend(inner or [pad + "    pass"])
        return out


@dataclass
class Def:
    """A top-level definition: decorator/def/class lines, then a body."""
    header: list[str]
    body: list
    tail: list[str] = field(default_factory=list)  # e.g. the return line
    indent: int = 1
    name: str = ""

    def render(self) -> list[str]:
        out = list(self.header)
        for node in self.body:
            out.extend(node.render(self.indent))
        out.extend(self.tail)
        return out


@dataclass
class Program:
    seed: int
    index: int
    defs: list[Def]
    harness: dict  # plain data the runner reads (see HARNESS_KEYS)
    features: set = field(default_factory=set)

    def render(self) -> str:
        lines = [
            f"# jitamp_fuzz program: seed {self.seed}, index {self.index}",
            "# Reproduce: python tools/jitamp_fuzz --seed %d --index %d" % (self.seed, self.index),
            "from typing import Dict, List, Optional, Tuple",
            "",
            "import torch",
            "import torch.nn.functional as F",
            "from torch import Tensor",
            "",
        ]
        for d in self.defs:
            lines.append("")
            lines.extend(d.render())
            lines.append("")
        lines.append("")
        lines.extend(render_harness(self.harness))
        return "\n".join(lines) + "\n"


def render_harness(h: dict) -> list[str]:
    """The plain-Python part: inputs per call, what to compare."""
    out = ["# --- harness (plain Python, never scripted) ---"]
    on = ""
    if h.get("DEVICE") is not None:
        out.append(f"DEVICE = {h['DEVICE']!r}")
        on = ".to(DEVICE)"
    for key in ("KIND", "GRAD", "OUTER", "SAVE", "RUNTIME_JITAMP", "ALTERNATE", "EXECUTOR", "ADD_AUTOCAST",
                "THREADS"):
        out.append(f"{key} = {h[key]!r}")
    out.append("")
    out.append("")
    out.append("def make_args(call: int) -> list:")
    out.append(f"    g = torch.Generator().manual_seed({h['input_seed']})")
    out.append("    flag = call % 2 == 1 if ALTERNATE else True")
    names = []
    for name, dtype in h["tensors"]:
        if dtype == "i64":
            out.append(f"    {name} = torch.randint(-3, 4, (4, 4), generator=g){on}")
        elif dtype == "c64":
            out.append(f"    {name} = torch.randn(4, 4, generator=g, dtype=torch.complex64){on}")
        else:
            out.append(f"    {name} = torch.randn(4, 4, generator=g).to({INPUT_DTYPES[dtype]}){on}")
        names.append(name)
    for name, kind in h["extras"]:
        if kind == "flag":
            out.append(f"    {name} = flag")
        elif kind == "dtype":
            out.append(f"    {name} = {h['dtype_arg']}")
        elif kind == "int":
            out.append(f"    {name} = 3 if flag else 1")
        elif kind == "device":
            out.append(f"    {name} = {h['device_arg']!r}")
        elif kind == "optional":
            out.append(f"    {name} = torch.randn(4, generator=g){on} if flag else None")
        names.append(name)
    out.append("    return [" + ", ".join(names) + "]")
    out.append("")
    out.append("")
    out.append("def build():")
    out.append(f"    torch.manual_seed({h['input_seed']})")
    out.append(f"    return Prog(){on}" if h["KIND"] == "module" else "    return prog")
    return out


# --------------------------------------------------------------------------
# Generation.

@dataclass
class Var:
    name: str
    fresh: bool  # a new tensor written nowhere else: in-place/out= may target it
    # written in place: never reassigned after (in a loop, the write would
    # reach the new value, an alias of an input or a weight, next iteration)
    written: bool = False
    assignable: bool = True  # `name = ...` is a statement (not a tuple's element)


@dataclass
class Ctx:
    scopes: int = 0          # autocast scopes open around this point
    loops: int = 0           # loops open
    with_in_loop: bool = False  # a with opened inside the innermost loop
    top: bool = True         # the main body's top level (no block around)
    depth: int = 0           # block nesting
    main: bool = True


# Op templates as programs whose tensors live on a GPU spell them
# (`generate(..., device="cuda")`): tensor factories take their operand's
# device; the replicate pad calls its ATen op, since under
# torch.use_deterministic_algorithms(True) (a GPU batch's workers) eager's
# F.pad of a CUDA tensor runs a Python decomposition (index ops: another
# backward, which saves no input an in-place write can then invalidate),
# and TorchScript's, built without that branch (`torch.jit.is_scripting()`),
# the op: a difference plain TorchScript makes (seed 281126, index 64).
_ON_DEVICE = (
    ("torch.tensor([0, 1, 2, 3])", "torch.tensor([0, 1, 2, 3], device={a}.device)"),
    ("torch.tensor([1, 3])", "torch.tensor([1, 3], device={a}.device)"),
    ("torch.eye(4, dtype={a}.dtype)", "torch.eye(4, dtype={a}.dtype, device={a}.device)"),
    ("torch.zeros(4, 4, dtype=torch.get_autocast_cpu_dtype())",
     "torch.zeros(4, 4, dtype=torch.get_autocast_cpu_dtype(), device={a}.device)"),
    ("F.pad({a}.reshape(1, 1, 4, 4), [1, 1, 1, 1], mode='replicate')",
     "torch.ops.aten.replication_pad2d({a}.reshape(1, 1, 4, 4), [1, 1, 1, 1])"),
)


def _on_device(fmt: str) -> str:
    for cpu, anywhere in _ON_DEVICE:
        fmt = fmt.replace(cpu, anywhere)
    return fmt


class Generator:
    def __init__(self, seed: int, index: int, save_share: float = 0.3, device: str | None = None):
        self.seed, self.index, self.save_share = seed, index, save_share
        # None: CPU tensors, the programs every run before had; else the
        # device the inputs and parameters live on, whose autocast the
        # scopes mostly name (the other device's scopes cast nothing there).
        self.device = device
        self.rng = random.Random(f"jitamp-fuzz:{seed}:{index}")
        self.n = 0
        self.features: set[str] = set()
        self.use_sink = True
        self.sink_helpers: set[str] = set()
        self.uses_class = False

    # -- helpers ----------------------------------------------------------
    def name(self, prefix: str = "v") -> str:
        self.n += 1
        return f"{prefix}{self.n}"

    def chance(self, p: float) -> bool:
        return self.rng.random() < p

    def pick(self, seq):
        return self.rng.choice(seq)

    # -- expressions -------------------------------------------------------
    def dtype_expr(self) -> str:
        r = self.rng.random()
        if self.mixed:
            if r < 0.35:
                return self.pick(["torch.bfloat16", "torch.float16"])
            if r < 0.55 and "dt" in self.extra_names:
                self.features.add("dtype=argument")
                return "dt"
            if r < 0.75 and "flag" in self.extra_names:
                self.features.add("dtype=computed")
                return "torch.float16 if flag else torch.bfloat16"
            if r < 0.8:
                self.features.add("dtype=float32")
                return "torch.float32"
            return ""
        # uniform: every scope's lower dtype is the program's
        if r < 0.4:
            return LOWER[self.lower]
        if r < 0.6 and "dt" in self.extra_names:
            self.features.add("dtype=argument")
            return "dt"
        if r < 0.7 and "flag" in self.extra_names:
            self.features.add("dtype=computed")
            return f"{LOWER[self.lower]} if flag else dt" if "dt" in self.extra_names else LOWER[self.lower]
        if r < 0.75:
            self.features.add("dtype=float32")
            return "torch.float32"
        return "" if self.lower == "bf16" else LOWER[self.lower]

    def enabled_expr(self, env: list[Var]) -> str:
        r = self.rng.random()
        if r < 0.55:
            return ""
        if r < 0.65:
            return self.pick(["True", "False"])
        if "flag" in self.extra_names and r < 0.8:
            self.features.add("enabled=argument")
            return self.pick(["flag", "not flag"])
        if "n" in self.extra_names and r < 0.9:
            self.features.add("enabled=computed")
            return "n > 2"
        self.features.add("enabled=computed")
        return f"bool({self.pick(env).name}.sum() > 0)"

    def cache_expr(self) -> str:
        r = self.rng.random()
        if r < 0.75:
            return ""
        self.features.add("cache_enabled")
        if r < 0.9 or "flag" not in self.extra_names:
            return self.pick(["True", "False"])
        return "flag"

    def autocast_expr(self, env: list[Var]) -> str:
        r = self.rng.random()
        device = "cpu"
        if r < 0.1:
            device = "cuda"
        elif r < 0.15 and "dev" in self.extra_names:
            device = "dev"
        if self.device is not None and self.device != "cpu" and device != "dev":
            device = "cpu" if device == self.device else self.device
        dtype, enabled, cache = self.dtype_expr(), self.enabled_expr(env), self.cache_expr()
        if device == "cuda":
            # (a draw either way: CUDA programs keep their other draws)
            picked = self.pick(["", "torch.float16", "torch.bfloat16"])
            if self.device != "cuda" or self.mixed:  # CPU tensors: the scope casts nothing
                self.features.add("device=cuda")
                dtype = picked
        if self.device not in (None, "cpu") and device != "cpu" and dtype == "" and not self.mixed:
            # the program's lower dtype, not the device's default (CUDA's
            # is float16): two threads share eager's cast cache
            dtype = "" if device == "cuda" and self.lower == "fp16" else LOWER[self.lower]
        kw = []
        if dtype:
            kw.append(f"dtype={dtype}")
        if enabled:
            kw.append(f"enabled={enabled}")
        if cache:
            kw.append(f"cache_enabled={cache}")
        s = self.rng.random()
        if device == "cpu" and s < 0.15:
            self.features.add("spelling=torch.cpu.amp.autocast")
            return f"torch.cpu.amp.autocast({', '.join(kw)})"
        if device == "cuda" and s < 0.3:
            self.features.add("spelling=torch.cuda.amp.autocast")
            return f"torch.cuda.amp.autocast({', '.join(kw)})"
        dev = device if device == "dev" else repr(device)
        if s < 0.3:
            self.features.add("spelling=torch.amp.autocast")
            return f"torch.amp.autocast({', '.join([dev] + kw)})"
        if s < 0.4:
            self.features.add("spelling=device_type=")
            return f"torch.autocast({', '.join([f'device_type={dev}'] + kw)})"
        self.features.add("spelling=torch.autocast")
        if device == "dev":
            self.features.add("device=argument")
        return f"torch.autocast({', '.join([dev] + kw)})"

    def operands(self, env: list[Var], k: int) -> list[str]:
        return [self.pick(env).name for _ in range(k)]

    def op_expr(self, env: list[Var]) -> tuple[str, bool]:
        op = self.pick(OPS)
        self.features.add(f"op:{op.name}")
        a, b, c = (self.operands(env, 3) + ["", "", ""])[:3]
        opt = "None"
        if "{opt}" in op.fmt:
            choices = ["None", f"{self.pick(env).name}[0]"] + self.optionals
            opt = self.pick(choices)
            if opt in self.optionals:
                self.features.add("Tensor?=optional variable")
        fmt = op.fmt if self.device is None else _on_device(op.fmt)
        return fmt.format(a=a, b=b, c=c, opt=opt), op.fresh

    # -- statements ---------------------------------------------------------
    def block(self, env: list[Var], ctx: Ctx, budget: int) -> list:
        """Statements of one block; `env` is extended with the variables a
        with-block leaves visible (and a top-level block defines)."""
        nodes: list = []
        acs: list[str] = []  # `as` names / prebuilt autocast objects usable here
        while budget > 0:
            budget -= 1
            r = self.rng.random()
            if r < 0.45 or ctx.depth >= 4:
                nodes.append(self.assign(env, ctx))
            elif r < 0.52:
                node = self.inplace(env)
                if node is not None:
                    nodes.append(node)
            elif r < 0.70 and ctx.scopes < 3:
                nodes.extend(self.with_block(env, ctx, acs))
            elif r < 0.76:
                nodes.append(self.if_block(env, ctx))
            elif r < 0.82 and ctx.loops < 2:
                nodes.append(self.loop(env, ctx))
            elif r < 0.86 and ctx.loops and (self.scope_exits or not ctx.with_in_loop):
                self.features.add(f"control:break/continue")
                cond = self.cond(env)
                nodes.append(Block(f"if {cond}:", [Line(self.pick(["break", "continue"]), fixed=True)]))
            elif r < 0.89 and ctx.main and (self.scope_exits or (ctx.top and ctx.scopes == 0)):
                self.features.add("control:early return")
                nodes.append(Block(f"if {self.cond(env)}:", [Line(self.return_line(env), fixed=True)]))
            elif r < 0.95 and self.callables:
                nodes.append(self.call(env))
            elif r < 0.965:
                nodes.append(self.raising(env))
            elif r < 0.99:
                nodes.append(self.container(env))
            elif ctx.scopes < 3 and acs:
                self.features.add("autocast:re-entry")
                nodes.extend(self.with_block(env, ctx, acs, reuse=self.pick(acs)))
            else:
                nodes.append(self.assign(env, ctx))
        return nodes

    def assign(self, env: list[Var], ctx: Ctx) -> Line:
        if self.chance(0.15) and _objects(env):
            return self.method_call(env)
        expr, fresh = self.op_expr(env)
        reassignable = [v for v in env if v.assignable and not v.name.startswith(("x", "self.")) and not v.written]
        if reassignable and self.chance(0.2):
            v = self.pick(reassignable)
            v.fresh = False  # it may now hold either value: no longer a safe in-place target
            return Line(f"{v.name} = {expr}", defines=v.name, sink=self.use_sink)
        name = self.name()
        env.append(Var(name, fresh))
        return Line(f"{name} = {expr}", defines=name, sink=self.use_sink)

    def inplace(self, env: list[Var]) -> Line | None:
        targets = [v for v in env if v.fresh]
        if not targets:
            return None
        op = self.pick(INPLACE)
        self.features.add(f"op:{op.name}")
        a, b, c = (self.operands(env, 3) + ["", "", ""])[:3]
        if self.device not in (None, "cpu"):
            # CUDA's kernels do not all refuse an operand that overlaps what
            # they write, as CPU's do (cat's out=): the result then races
            # (seed 281126, index 32; seed 112950 before)
            a, b, c = (f"{x}.clone()" if x else x for x in (a, b, c))
        target = self.pick(targets)
        target.written = True
        return Line(op.fmt.format(t=target.name, a=a, b=b, c=c))

    def raising(self, env: list[Var]) -> Line | Block:
        """A `raise` under a condition, or an `assert`: where a value
        decides whether the call fails (eager's exception against the
        scripted one's class and message)."""
        v = self.pick(env).name
        if self.chance(0.5):
            self.features.add("control:raise")
            cls = self.pick(["ValueError", "RuntimeError", "AssertionError"])
            return Block(f"if bool({v}.sum() > 4.0):", [Line(f"raise {cls}('fuzz: {v} too large')", fixed=True)])
        self.features.add("control:assert")
        return Line(f"assert bool({v}.abs().max() < 8.0), 'fuzz: {v} out of range'", fixed=True)

    def container(self, env: list[Var]) -> Line:
        """A tuple, a Dict[str, Tensor] or an object of the program's class
        `Pair` holding two tensors: their elements are operands from here
        on (a dict's entries and an object's attributes are assigned to
        too); or a call of a visible object's method (`prod`: a matmul;
        `scoped`: one inside an autocast scope of its own)."""
        if self.chance(0.3) and _objects(env):
            return self.method_call(env)
        a, b = self.operands(env, 2)
        r = self.rng.random()
        if r < 0.35:
            self.features.add("value:tuple")
            name = self.name("tu")
            env.extend([Var(f"{name}[0]", False, assignable=False), Var(f"{name}[1]", False, assignable=False)])
            return Line(f"{name} = ({a}, {b})", fixed=True)
        if r < 0.7:
            self.features.add("value:dict")
            name = self.name("d")
            env.extend([Var(f'{name}["p"]', False), Var(f'{name}["q"]', False)])
            return Line(f'{name}: Dict[str, Tensor] = {{"p": {a}, "q": {b}}}', fixed=True)
        self.features.add("value:class")
        self.uses_class = True
        name = self.name("o")
        env.extend([Var(f"{name}.a", False), Var(f"{name}.b", False)])
        return Line(f"{name} = Pair({a}, {b})", fixed=True)

    def method_call(self, env: list[Var]) -> Line:
        self.features.add("value:class method")
        objects = _objects(env)
        name = self.name()
        env.append(Var(name, True))
        method = self.pick(["prod", "scoped"])
        return Line(f"{name} = {self.pick(objects)}.{method}()", defines=name, sink=self.use_sink)

    def pair_class(self) -> Def:
        """The class `container` makes objects of (compiled by TorchScript
        where scripted code uses it; a plain Python class in eager)."""
        dtype = self.pick(list(LOWER.values())) if self.mixed else LOWER[self.lower]
        lines = ["    def __init__(self, a: Tensor, b: Tensor):", "        self.a = a", "        self.b = b", "",
                 "    def prod(self) -> Tensor:", "        return torch.mm(self.a, self.b)", "",
                 "    def scoped(self) -> Tensor:",
                 f"        with torch.autocast('cpu', dtype={dtype}):",
                 "            r = torch.mm(self.a, self.b)", "        return r"]
        return Def(["class Pair:"] + lines, [], name="Pair")

    def cond(self, env: list[Var]) -> str:
        choices = [f"bool({self.pick(env).name}.sum() > 0)"]
        if "flag" in self.extra_names:
            choices += ["flag", "not flag"]
        if "n" in self.extra_names:
            choices.append("n > 2")
        return self.pick(choices)

    def with_block(self, env, ctx: Ctx, acs: list[str], reuse: str | None = None) -> list:
        nodes = []
        inner = Ctx(ctx.scopes + 1, ctx.loops, ctx.loops > 0 or ctx.with_in_loop, False, ctx.depth + 1, ctx.main)
        if reuse is not None:
            header = f"with {reuse}:"
        else:
            expr = self.autocast_expr(env)
            r = self.rng.random()
            # (Where eager binds `as` names to None, torch < 2.5, not around
            # early exits, which jitamp does not lower there.)
            if r < 0.15 and not (EAGER_ENTER_RETURNS_NONE and self.scope_exits):
                self.features.add("autocast:as name")
                ac = self.name("ac")
                header = f"with {expr} as {ac}:"
                acs.append(ac)
            elif r < 0.25:
                self.features.add("autocast:prebuilt object")
                ac = self.name("ac")
                nodes.append(Line(f"{ac} = {expr}", fixed=True))
                acs.append(ac)
                header = f"with {ac}:"
            elif r < 0.3 and not self.scope_exits and "flag" in self.extra_names \
                    and not expr.startswith("torch.cpu.amp") \
                    and not expr.startswith("torch.cuda.amp"):
                self.features.add("autocast:conditional object")
                ac = self.name("ac")
                other = self.autocast_expr(env)
                cls = expr.split("(")[0]
                other = cls + "(" + other.split("(", 1)[1] if other.split("(")[0] == cls else f"{cls}('cpu', enabled=False)"
                if "device_type=" in other and cls == "torch.amp.autocast":
                    other = "torch.amp.autocast('cpu', enabled=False)"
                nodes.append(Line(f"{ac} = {expr} if flag else {other}", fixed=True))
                acs.append(ac)
                header = f"with {ac}:"
            else:
                header = f"with {expr}:"
        body = self.block(env, inner, self.rng.randint(1, 4))
        nodes.append(Block(header, body))
        return nodes

    def if_block(self, env, ctx: Ctx) -> Block:
        self.features.add("control:if")
        inner = Ctx(ctx.scopes, ctx.loops, ctx.with_in_loop, False, ctx.depth + 1, ctx.main)
        body = self.block(list(env), inner, self.rng.randint(1, 3))
        orelse = self.block(list(env), inner, self.rng.randint(1, 2)) if self.chance(0.5) else None
        return Block(f"if {self.cond(env)}:", body, orelse)

    def loop(self, env, ctx: Ctx) -> Block:
        inner = Ctx(ctx.scopes, ctx.loops + 1, False, False, ctx.depth + 1, ctx.main)
        body = self.block(list(env), inner, self.rng.randint(1, 3))
        if not self.scope_exits and any(_has_with(n) for n in body):
            body = drop_loop_exits(body)
        if self.chance(0.6):
            self.features.add("control:for")
            bound = "n" if "n" in self.extra_names and self.chance(0.5) else "2"
            return Block(f"for {self.name('i')} in range({bound}):", body)
        self.features.add("control:while")
        k = self.name("k")
        return Block(f"while {k} < 2:", body, pre=f"{k} = 0", first=f"{k} += 1")

    def call(self, env) -> Line:
        usable = [c for c in self.callables if self.use_sink or not self._takes_sink(c)]
        if not usable:
            return self.assign(env, Ctx())
        kind, fname, arity = self.pick(usable)
        self.features.add(f"call:{kind}")
        takes_sink = self._takes_sink((kind, fname, arity))
        args = ", ".join(self.operands(env, arity) + (["sink"] if takes_sink else []))
        name = self.name()
        env.append(Var(name, False))
        if kind == "fork":
            fut = self.name("fut")
            return Line(f"{fut} = torch.jit.fork({fname}, {args}); {name} = torch.jit.wait({fut})",
                        defines=name, sink=self.use_sink)
        return Line(f"{name} = {fname}({args})", defines=name, sink=self.use_sink)

    def _takes_sink(self, c) -> bool:
        kind, fname, _ = c
        return kind in ("function", "autocast-decorated", "submodule") or kind == "fork" and fname in self.sink_helpers

    def return_line(self, env) -> str:
        # mostly the latest values, so the result depends on what ran
        recent = env[-3:]
        vals = [self.pick(recent if self.chance(0.7) else env).name for _ in range(self.n_returns)]
        return "return (" + ", ".join(vals + ["sink"]) + ")"

    # -- the program ---------------------------------------------------------
    def generate(self) -> Program:
        rng = self.rng
        self.kind = "module" if self.chance(0.3) else "function"
        # Mixed lower-precision dtypes across nested scopes, where eager's
        # cast cache (keyed by the tensor alone) hands a scope of one dtype
        # the casts of leaves made under another. Whether a module program
        # mixes, and whether a mixed program has gradients, are drawn apart
        # from the program's stream: neither was generated before, and the
        # programs that were stay what they were.
        apart = random.Random(f"jitamp-fuzz-mixed:{self.seed}:{self.index}")
        self.mixed = self.chance(0.35) if self.kind == "function" else apart.random() < 0.25
        self.lower = self.pick(["bf16", "fp16"])
        # Early return / break / continue anywhere around autocast scopes,
        # which jitamp lowers (jitamp/_early_exits.py) where every scope's
        # object is one it can name: no conditionally chosen objects then,
        # nor `as` names where eager binds them to None (torch < 2.5).
        self.scope_exits = self.chance(0.4)
        if self.scope_exits:
            self.features.add("control:exits around scopes")
        grad = apart.random() < 0.6 if self.mixed else self.chance(0.6)
        n_tensors = rng.randint(1, 3)
        if self.chance(0.55):
            dtypes = ["f32"] * n_tensors
        elif self.chance(0.5):
            dtypes = [self.pick(["bf16", "fp16", "f64"])] * n_tensors
        else:
            dtypes = [self.pick(["f32", "f32", "bf16", "fp16", "f64", "i64", "c64"]) for _ in range(n_tensors)]
        tensors = [(f"x{i}", d) for i, d in enumerate(dtypes)]
        for _, d in tensors:
            self.features.add(f"input:{d}")
        extras = []
        for name, kind, p in (("flag", "flag", 0.7), ("dt", "dtype", 0.4), ("n", "int", 0.4),
                              ("dev", "device", 0.15), ("bias", "optional", 0.25)):
            if self.chance(p):
                extras.append((name, kind))
        # helpers and submodules see only their own parameters
        self.extra_names, self.optionals = set(), []
        self.n_returns = rng.randint(1, 3)

        defs: list[Def] = []
        self.callables: list[tuple[str, str, int]] = []
        # helpers: plain (scripted recursively), @torch.jit.script, @torch.jit.ignore,
        # @torch.autocast-decorated; fork targets
        for _ in range(rng.randint(0, 2)):
            defs.append(self.helper())
        if self.chance(0.15):
            name = self.name("ign")
            self.features.add("helper:ignore")
            body = [Line(f"r = {self.op_expr([Var('a', False), Var('b', False)])[0]}", defines="r")]
            defs.append(Def(["@torch.jit.ignore", f"def {name}(a: Tensor, b: Tensor) -> Tensor:"], body,
                            ["    return r"], name=name))
            self.callables.append(("ignore", name, 2))

        sub = self.submodule() if self.kind == "module" and self.chance(0.5) else None
        self.extra_names = {n for n, _ in extras}
        self.optionals = ["bias"] if "bias" in self.extra_names else []
        env = [Var(n, False) for n, _ in tensors]
        params = [f"{n}: Tensor" for n, _ in tensors]
        types = {"flag": "bool", "dtype": "torch.dtype", "int": "int", "device": "str",
                 "optional": "Optional[Tensor]"}
        params += [f"{n}: {types[k]}" for n, k in extras]
        ret_type = "Tuple[" + ", ".join(["Tensor"] * self.n_returns + ["List[Tensor]"]) + "]"

        # Every value goes to `sink`, which the program returns: TorchScript
        # deletes unused ops (dead code), eager runs them (and raises).
        pre: list = [Line("sink: List[Tensor] = []", fixed=True)]
        if self.chance(0.25):
            self.features.add("Tensor?=local Optional")
            self.optionals.append("ob")
            pre.append(Line("ob: Optional[Tensor] = None", fixed=True))
            cond = "flag" if "flag" in self.extra_names else "True"
            pre.append(Block(f"if {cond}:", [Line(f"ob = {env[-1].name}[1]", fixed=True)]))

        if self.kind == "module":
            self.features.add("module")
            init = ["        super().__init__()", "        self.lin = torch.nn.Linear(4, 4)",
                    "        self.w = torch.nn.Parameter(torch.randn(4, 4))"]
            if sub is not None:
                defs.append(sub)
                init.append(f"        self.sub = {sub.name}()")
                self.callables.append(("submodule", "self.sub", 1))
            self.callables.append(("nn.Linear", "self.lin", 1))
            env.append(Var("self.w", False))
            header = ["class Prog(torch.nn.Module):", "    def __init__(self):"] + init + [
                "", f"    def forward(self, {', '.join(params)}) -> {ret_type}:"]
            indent = 2
        else:
            header = [f"def prog({', '.join(params)}) -> {ret_type}:"]
            indent = 1
        body = self.block(env, Ctx(), rng.randint(3, 8))
        body = pre + (body if self.scope_exits else drop_returns_before_with(body))
        tail = ["    " * indent + self.return_line(env)]
        defs.append(Def(header, body, tail, indent=indent, name="prog"))
        if self.uses_class:
            defs.insert(0, self.pair_class())

        fork = any(k == "fork" for k, _, _ in self.callables)
        ignore = any(k == "ignore" for k, _, _ in self.callables)
        r = rng.random()
        if r < 0.35:
            outer = None
        elif r < 0.8:
            outer = ("cpu", self.pick(["bfloat16", "float16"]) if self.mixed else
                     {"bf16": "bfloat16", "fp16": "float16"}[self.lower], True)
        elif r < 0.9:
            outer = ("cpu", "bfloat16", False)
        elif r < 0.95:
            outer = "no_grad"
        else:
            outer = "inference_mode"  # as model servers often call models
        if self.device is not None and isinstance(outer, tuple):
            outer = (self.device,) + outer[1:]
        harness = {
            "DEVICE": self.device,
            "KIND": self.kind,
            "GRAD": grad,
            "OUTER": outer,
            # A function program's draw is apart from the program's stream
            # (functions were not saved before: their programs stay the same)
            "SAVE": not ignore and (
                self.rng.random() < self.save_share if self.kind == "module" else
                random.Random(f"jitamp-fuzz-save:{self.seed}:{self.index}").random() < self.save_share),
            # forks run with jitamp enabled at run time (the known fork-subgraph
            # deviation under PyTorch's built-in JIT autocast, see runner)
            "RUNTIME_JITAMP": self.chance(0.5),
            "ALTERNATE": self.chance(0.6),
            # jitamp.enable(profiling_executor=True) for a quarter: drawn
            # apart from the program's stream, which stays what it was
            "EXECUTOR": ("profiling" if random.Random(f"jitamp-fuzz-executor:{self.seed}:{self.index}")
                         .random() < PROFILING_SHARE else "simple"),
            # jitamp.add_autocast of the module scripted without jitamp,
            # against eager inside torch.autocast (ADD_AUTOCAST_SHARE of
            # module programs; drawn apart from the program's stream)
            "ADD_AUTOCAST": _add_autocast_draw(self.kind, self.seed, self.index),
            # called from two threads at once (as a server's workers call a
            # model), the second in another eager region: drawn apart
            "THREADS": self._threads_draw(outer),
            "input_seed": rng.randrange(1 << 20),
            "tensors": tensors,
            "extras": extras,
            "dtype_arg": LOWER[self.lower] if not self.mixed else LOWER[self.pick(["bf16", "fp16"])],
            "device_arg": "cpu" if self.chance(0.7) else "cuda",
        }
        self.features.add("grad" if grad else "no grad")
        self.features.add(f"outer:{outer}")
        self.features.add(f"executor:{harness['EXECUTOR']}")
        if harness["ADD_AUTOCAST"]:
            self.features.add("add_autocast")
        if harness["THREADS"]:
            self.features.add("threads")
        return Program(self.seed, self.index, defs, harness, self.features)

    def _threads_draw(self, outer) -> tuple | None:
        """None, or the second thread's eager region (as OUTER's spec, in a
        one-tuple): autocast on where OUTER leaves it off, else none. Not
        for programs that mix lower precisions: eager's cast cache is one
        for all threads, so two threads casting one weight to two dtypes
        at once make eager's own results depend on their timing. Nor with
        `@torch.autocast` helpers: eager's decorator is one autocast object
        for all calls, whose __enter__ keeps the thread's previous state on
        the object, so two threads restore each other's state at exit
        (docs/facts.md; jitamp's scope per call does not)."""
        draw = random.Random(f"jitamp-fuzz-threads:{self.seed}:{self.index}")
        if (draw.random() >= THREADS_SHARE or self.mixed
                or any(kind == "autocast-decorated" for kind, _, _ in self.callables)):
            return None
        if outer is None or isinstance(outer, str) or not outer[2]:
            return ((self.device or "cpu", {"bf16": "bfloat16", "fp16": "float16"}[self.lower], True),)
        return (None,)

    def helper(self) -> Def:
        name = self.name("h")
        env = [Var("a", False), Var("b", False)]
        ctx = Ctx(top=False, main=False)
        r = self.rng.random()
        header = [f"def {name}(a: Tensor, b: Tensor, sink: List[Tensor]) -> Tensor:"]
        kind = "function"
        if r < 0.25:
            # Scripted even when eager calls it (its dead code goes on both
            # sides), and a Python list passed in is a copy: no sink.
            header = ["@torch.jit.script", f"def {name}(a: Tensor, b: Tensor) -> Tensor:"]
            kind = "jit.script callee"
            self.use_sink = False
        elif r < 0.35 and not self.mixed:
            header.insert(0, f"@torch.autocast('cpu', dtype={LOWER[self.lower]})")
            kind = "autocast-decorated"
            ctx = Ctx(scopes=1, top=False, main=False)
        self.features.add(f"helper:{kind}")
        body = self.block(env, ctx, self.rng.randint(1, 4))
        self.use_sink = True
        if kind != "jit.script callee":
            self.sink_helpers.add(name)
        ret = self.pick(env).name
        self.callables.append((kind, name, 2))
        if self.chance(0.35):
            self.callables.append(("fork", name, 2))
        return Def(header, body, [f"    return {ret}"], name=name)

    def submodule(self) -> Def:
        name = self.name("Sub")
        self.features.add("submodule")
        env = [Var("a", False), Var("self.w", False)]
        saved = self.callables
        self.callables = []
        body = self.block(env, Ctx(top=False, main=False), self.rng.randint(1, 3))
        self.callables = saved
        ret = self.pick(env).name
        header = [f"class {name}(torch.nn.Module):", "    def __init__(self):", "        super().__init__()",
                  "        self.w = torch.nn.Parameter(torch.randn(4, 4))", "",
                  "    def forward(self, a: Tensor, sink: List[Tensor]) -> Tensor:"]
        return Def(header, body, [f"        return {ret}"], indent=2, name=name)


def _objects(env: list[Var]) -> list[str]:
    """The `Pair` objects visible in `env` (by their attribute `a`)."""
    return [v.name[:-2] for v in env if re.fullmatch(r"o\d+\.a", v.name)]


def _has_with(node) -> bool:
    if isinstance(node, Block):
        return node.header.startswith("with ") or any(
            _has_with(n) for n in node.body + (node.orelse or []))
    return False


def _is_early_return(node) -> bool:
    return isinstance(node, Block) and len(node.body) == 1 and isinstance(node.body[0], Line) \
        and node.body[0].text.startswith("return ")


def _is_loop_exit(node) -> bool:
    return isinstance(node, Block) and len(node.body) == 1 and isinstance(node.body[0], Line) \
        and node.body[0].text in ("break", "continue")


def drop_loop_exits(nodes: list) -> list:
    """TorchScript's front end fails the same way on a break/continue in a
    loop whose body has a `with` block after it: a loop body with a `with`
    keeps no break/continue of its own (nested loops keep theirs)."""
    out = []
    for node in nodes:
        if _is_loop_exit(node):
            continue
        if isinstance(node, Block) and not node.header.startswith(("for ", "while ")):
            node.body = drop_loop_exits(node.body)
            if node.orelse is not None:
                node.orelse = drop_loop_exits(node.orelse)
        out.append(node)
    return out


def drop_returns_before_with(nodes: list) -> list:
    """TorchScript's front end fails (internal assert in torch/csrc/jit/ir/ir.cpp, with or
    without jitamp) on an early return followed by any `with` block: keep
    only the early returns after the last `with`."""
    out = []
    for i, node in enumerate(nodes):
        if _is_early_return(node) and any(_has_with(n) for n in nodes[i + 1:]):
            continue
        out.append(node)
    return out


def generate(seed: int, index: int, save_share: float = 0.3, device: str | None = None) -> Program:
    """The program of (seed, index); `save_share`: the share of module
    programs (without `@torch.jit.ignore` calls) also compared after
    torch.jit.save/load; `device`: where its tensors live (None: CPU, as
    every program before; "cuda": inputs and parameters on the GPU, scopes
    mostly CUDA's, eager regions CUDA's)."""
    return Generator(seed, index, save_share, device).generate()
