"""Models for jitamp.export's tests (tests/test_export.py), each with an
autocast scope in its forward, beside test_architectures' real ones: the
constructs PyTorch's TorchScript converter fails on (the issue's list:
nn.TransformerEncoder's fast-path checks, a GRUCell loop with a
loop-carried state, a scalar made of sizes, dict and list outputs), and
the kinds of module of PyTorch's own converter tests
(test/export/test_converter.py: containers, dict and list outputs,
prim::If, loops, nested modules and buffers), each with a scope added."""
from __future__ import annotations

import atexit
import functools
import importlib.util
import pathlib
import shutil
import sys
import tempfile
import types
from typing import Dict, List, Tuple

import torch
from torch import Tensor, nn

import test_architectures as architectures


def _gen(seed: int) -> torch.Generator:
    return torch.Generator().manual_seed(seed)


class Encoder(nn.Module):
    """nn.TransformerEncoder, eval mode: its fast-path checks read
    torch.is_autocast_enabled() and the grad mode."""

    def __init__(self, norm_first: bool):
        super().__init__()
        layer = nn.TransformerEncoderLayer(16, 2, dim_feedforward=32, dropout=0.0, batch_first=True,
                                           norm_first=norm_first)
        self.encoder = nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)

    def forward(self, x: Tensor) -> Tensor:
        with torch.autocast("cpu", dtype=torch.bfloat16):
            return self.encoder(x)


class GRUCellLoop(nn.Module):
    """A loop over time whose hidden state is carried from step to step
    (the scope's dtype a module attribute)."""

    def __init__(self, dtype: torch.dtype = torch.bfloat16):
        super().__init__()
        self.cell = nn.GRUCell(8, 8)
        self.head = nn.Linear(8, 4)
        self.dtype = dtype

    def forward(self, x: Tensor) -> Tensor:
        with torch.autocast("cpu", dtype=self.dtype):
            h = torch.zeros(x.size(0), 8)
            outputs: List[Tensor] = []
            for t in range(x.size(1)):
                h = self.cell(x[:, t], h)
                outputs.append(self.head(h))
            return torch.stack(outputs, 1)


class ScalarOfSizes(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 8)

    def forward(self, x: Tensor) -> Tensor:
        with torch.autocast("cpu", dtype=torch.bfloat16):
            return self.fc(x) * (x.dim() + len(x)) / x.size(-1)


class FromData(nn.Module):
    """Tensors made of Python lists and numbers (aten::tensor, as_tensor)."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 8)

    def forward(self, x: Tensor) -> Tensor:
        with torch.autocast("cpu", dtype=torch.bfloat16):
            sizes: List[int] = [x.size(0), x.size(1)]
            scale = torch.as_tensor(sizes, dtype=torch.float32, device=x.device)
            return self.fc(x) * scale[1] + torch.tensor([0.5, 2.0]).sum() + torch.tensor(3)


class Detector(nn.Module):
    """Detection's interface: a list of images in, a list of dicts out."""

    def __init__(self):
        super().__init__()
        self.backbone = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.Conv2d(8, 8, 3, padding=1))
        self.boxes = nn.Linear(8, 4)
        self.scores = nn.Linear(8, 3)

    def forward(self, images: List[Tensor]) -> List[Dict[str, Tensor]]:
        results: List[Dict[str, Tensor]] = []
        with torch.autocast("cpu", dtype=torch.bfloat16):
            for image in images:
                features = self.backbone(image.unsqueeze(0)).flatten(2).transpose(1, 2)[0]
                scores = self.scores(features).softmax(-1)
                best, labels = scores.max(-1)
                results.append({"boxes": self.boxes(features), "scores": best, "labels": labels})
        return results


# PyTorch's converter tests' kinds of module, each with a scope

class Containers(nn.Module):
    def __init__(self):
        super().__init__()
        self.blocks = nn.ModuleList([nn.Linear(8, 8) for _ in range(3)])
        self.heads = nn.ModuleDict({"a": nn.Linear(8, 2), "b": nn.Linear(8, 3)})
        self.tail = nn.Sequential(nn.Linear(8, 8), nn.GELU())

    def forward(self, x: Tensor) -> Tuple[Tensor, Tensor]:
        with torch.autocast("cpu", dtype=torch.bfloat16):
            for block in self.blocks:
                x = block(x).relu()
            x = self.tail(x)
            return self.heads["a"](x), self.heads["b"](x)


class DictAndListOutputs(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 8)

    def forward(self, x: Tensor) -> Tuple[Dict[str, Tensor], List[Tensor]]:
        out: Dict[str, Tensor] = {}
        with torch.autocast("cpu", dtype=torch.bfloat16):
            y = self.fc(x)
            out["y"] = y
            out["softmax"] = y.softmax(-1)
            parts = [y[:2], y.float()[2:]]
        out["after"] = y * 2
        return out, parts


class ShapeBranches(nn.Module):
    """prim::If decided by shapes and by a module flag."""

    def __init__(self, flag: bool = True):
        super().__init__()
        self.fc = nn.Linear(8, 8)
        self.flag = flag

    def forward(self, x: Tensor) -> Tensor:
        with torch.autocast("cpu", dtype=torch.bfloat16):
            if x.dim() == 3:
                x = x.flatten(0, 1)
            y = self.fc(x)
            if self.flag and y.size(0) > 2:
                y = torch.mm(y, y.t())
            else:
                y = y.float().log_softmax(-1)
        return y


class Loops(nn.Module):
    """A for loop over a range, a while loop, a loop over a list."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 8)

    def forward(self, x: Tensor) -> Tensor:
        with torch.autocast("cpu", dtype=torch.bfloat16):
            for _ in range(2):
                x = self.fc(x)
            n = 0
            while n < x.size(0):
                x = x + torch.mm(x, self.fc.weight)
                n += 2
            total = x
            for piece in [x[:1], x[1:2]]:
                total = total + piece
            return total


class WithBuffers(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("scale", torch.rand(8, generator=_gen(2)) + 0.5)
        self.inner = Inner()

    def forward(self, x: Tensor) -> Tensor:
        with torch.autocast("cpu", dtype=torch.bfloat16):
            return self.inner(x * self.scale) + self.inner.offset


class Inner(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 8)
        self.register_buffer("offset", torch.randn(8, generator=_gen(3)))

    def forward(self, x: Tensor) -> Tensor:
        return torch.mm(self.fc(x), self.fc.weight.t())


def _sequence() -> list:
    return [torch.randn(3, 5, 16, generator=_gen(4))]


def _rows(batch: int = 4) -> list:
    return [torch.randn(batch, 8, generator=_gen(5))]


MODELS = {
    "encoder_post_norm": (lambda: Encoder(norm_first=False), _sequence),
    "encoder_pre_norm": (lambda: Encoder(norm_first=True), _sequence),
    "gru_cell_loop": (GRUCellLoop, lambda: [torch.randn(2, 5, 8, generator=_gen(6))]),
    "scalar_of_sizes": (ScalarOfSizes, _rows),
    "from_data": (FromData, _rows),
    "detector": (Detector, lambda: [[torch.randn(3, 6, 5, generator=_gen(7)),
                                     torch.randn(3, 4, 7, generator=_gen(8))]]),
    "containers": (Containers, _rows),
    "dict_and_list_outputs": (DictAndListOutputs, _rows),
    "shape_branches": (ShapeBranches, _rows),
    "shape_branches_3d": (ShapeBranches, lambda: [torch.randn(2, 1, 8, generator=_gen(9))]),
    "loops": (Loops, _rows),
    "buffers": (WithBuffers, _rows),
}
for _name in architectures.NAMES:
    MODELS[_name] = (lambda name=_name: architectures.build(name), lambda name=_name: architectures.inputs(name))


def build(name: str) -> nn.Module:
    torch.manual_seed(0)
    return MODELS[name][0]().eval()


def inputs(name: str) -> list:
    return MODELS[name][1]()


# what names the models' autocast dtype: their scopes, and GRUCellLoop's default
_DTYPE_SPELLINGS = ('torch.autocast("cpu", dtype=torch.bfloat16)', "dtype: torch.dtype = torch.bfloat16")


@functools.cache
def in_dtype(dtype: torch.dtype) -> types.ModuleType:
    """This module with every autocast scope of its models (and of
    test_architectures') in `dtype` instead of bfloat16: a twin for
    runtimes whose kernels take float16 and not bfloat16 (onnxruntime's
    CPU ones). TorchScript compiles from source, so the twin is the source
    with the scopes' dtype replaced, imported from a folder of its own."""
    if dtype is torch.bfloat16:
        return sys.modules[__name__]
    folder = pathlib.Path(tempfile.mkdtemp(prefix="jitamp-models-"))
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    suffix = "_" + str(dtype).rsplit(".", 1)[-1]
    here = pathlib.Path(__file__).parent
    for name in ("test_architectures", "export_models"):
        source = (here / f"{name}.py").read_text()
        assert _DTYPE_SPELLINGS[0] in source, name
        for spelling in _DTYPE_SPELLINGS:
            source = source.replace(spelling, spelling.replace("torch.bfloat16", str(dtype)))
        source = source.replace("import test_architectures as", f"import test_architectures{suffix} as")
        (folder / f"{name}{suffix}.py").write_text(source)
        spec = importlib.util.spec_from_file_location(f"{name}{suffix}", folder / f"{name}{suffix}.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module
        spec.loader.exec_module(module)
    return module

