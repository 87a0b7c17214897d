"""Model-zoo models through jitamp.export, against eager autocast.

    python scripts/export_zoo.py [--only NAME,NAME] [--dtype bfloat16]

Each model (torchvision's and timm's, random weights, eval mode) sits in a
wrapper whose forward is `with torch.autocast("cpu", dtype=...): return
self.m(x)`; the wrapper is scripted with jitamp and exported with
jitamp.export under torch.no_grad(), in both forms (regions, explicit
casts). A row says, per form, whether `ep.module()` gives eager's dtypes
and bits on calls 1-3 and after torch.export.save / load (`exact`), or what
jitamp.export refused. The anchor columns: PyTorch's converter
(TS2EPConverter) of the same scripted wrapper, and torch.export.export of
the eager wrapper, each compared with eager the same way.

Needs torchvision and timm (not dependencies of jitamp: `pip install
--no-deps torchvision==<the one built for your torch> timm pillow`). Where
torchvision's C++ ops do not load (its CUDA wheel beside a CPU torch), the
script defines the schemas of the ops torchvision's Python names (registers
fake kernels for at import, or compiles calls of), and a plain nms for detection's
post-processing; every side of a comparison runs the same ones.
"""
from __future__ import annotations

import argparse
import io
import sys
import time
import traceback
import warnings
from typing import Any, Callable, Dict, List

import torch
from torch import Tensor, nn

warnings.simplefilter("ignore")


def _torchvision_without_its_ops() -> None:
    import torchvision  # noqa: F401 - loads its ops library where it can, before the probe

    try:
        torch.ops.torchvision.nms  # noqa: B018 - the ops library loaded
        return
    except (AttributeError, RuntimeError):
        pass
    library = torch.library.Library("torchvision", "DEF")
    library.define("nms(Tensor dets, Tensor scores, float iou_threshold) -> Tensor")
    library.define("qnms(Tensor dets, Tensor scores, float iou_threshold) -> Tensor")
    library.define("box_iou_rotated(Tensor boxes1, Tensor boxes2) -> Tensor")  # named by scripted ops/boxes.py

    def nms(boxes: Tensor, scores: Tensor, threshold: float) -> Tensor:
        order = scores.argsort(descending=True)
        keep: list[int] = []
        suppressed = torch.zeros(len(order), dtype=torch.bool)
        areas = (boxes[:, 2] - boxes[:, 0]) * (boxes[:, 3] - boxes[:, 1])
        for position, index in enumerate(order.tolist()):
            if suppressed[position]:
                continue
            keep.append(index)
            rest = order[position + 1:]
            top_left = torch.maximum(boxes[index, :2], boxes[rest, :2])
            bottom_right = torch.minimum(boxes[index, 2:], boxes[rest, 2:])
            overlap = (bottom_right - top_left).clamp(min=0).prod(1)
            iou = overlap / (areas[index] + areas[rest] - overlap)
            suppressed[position + 1:] |= iou > threshold
        return torch.tensor(keep, dtype=torch.int64)

    library.impl("nms", nms, "CPU")
    _torchvision_without_its_ops.library = library  # kept alive


class Classifier(nn.Module):
    def __init__(self, model: nn.Module, dtype: torch.dtype):
        super().__init__()
        self.m = model
        self.dtype = dtype

    def forward(self, x: Tensor) -> Tensor:
        with torch.autocast("cpu", dtype=self.dtype):
            return self.m(x)


class Segmenter(nn.Module):
    def __init__(self, model: nn.Module, dtype: torch.dtype):
        super().__init__()
        self.m = model
        self.dtype = dtype

    def forward(self, x: Tensor) -> Dict[str, Tensor]:
        with torch.autocast("cpu", dtype=self.dtype):
            return self.m(x)


class Detector(nn.Module):
    def __init__(self, model: nn.Module, dtype: torch.dtype):
        super().__init__()
        self.m = model
        self.dtype = dtype

    def forward(self, images: List[Tensor]) -> List[Dict[str, Tensor]]:
        with torch.autocast("cpu", dtype=self.dtype):
            if torch.jit.is_scripting():
                return self.m(images)[1]  # scripted detection returns (losses, detections)
            return self.m(images)


def _image(size: int, batch: int = 1) -> Tensor:
    return torch.randn(batch, 3, size, size, generator=torch.Generator().manual_seed(0))


def models() -> dict[str, tuple[Callable[[], nn.Module], type, Callable[[], tuple]]]:
    import timm
    import torchvision.models as tv
    from torchvision.models import detection, segmentation

    small_vit = lambda: tv.VisionTransformer(image_size=32, patch_size=8, num_layers=2, num_heads=2,  # noqa: E731
                                             hidden_dim=32, mlp_dim=64, num_classes=10)
    return {
        "tv.resnet18": (lambda: tv.resnet18(), Classifier, lambda: (_image(64),)),
        "tv.mobilenet_v3_small": (lambda: tv.mobilenet_v3_small(), Classifier, lambda: (_image(64),)),
        "tv.efficientnet_b0": (lambda: tv.efficientnet_b0(), Classifier, lambda: (_image(64),)),
        "tv.convnext_tiny": (lambda: tv.convnext_tiny(), Classifier, lambda: (_image(64),)),
        "tv.regnet_y_400mf": (lambda: tv.regnet_y_400mf(), Classifier, lambda: (_image(64),)),
        "tv.densenet121": (lambda: tv.densenet121(), Classifier, lambda: (_image(64),)),
        "tv.vit (VisionTransformer)": (small_vit, Classifier, lambda: (_image(32, 2),)),
        "tv.vit_b_16": (lambda: tv.vit_b_16(), Classifier, lambda: (_image(224),)),
        "tv.swin_t": (lambda: tv.swin_t(), Classifier, lambda: (_image(64),)),
        "tv.maxvit_t": (lambda: tv.maxvit_t(), Classifier, lambda: (_image(224),)),
        "tv.fcn_resnet50": (lambda: segmentation.fcn_resnet50(weights_backbone=None), Segmenter,
                            lambda: (_image(64),)),
        "tv.deeplabv3_mobilenet_v3_large": (
            lambda: segmentation.deeplabv3_mobilenet_v3_large(weights_backbone=None), Segmenter,
            lambda: (_image(64),)),
        "tv.lraspp_mobilenet_v3_large": (
            lambda: segmentation.lraspp_mobilenet_v3_large(weights_backbone=None), Segmenter,
            lambda: (_image(64),)),
        "tv.ssdlite320_mobilenet_v3_large": (
            lambda: detection.ssdlite320_mobilenet_v3_large(weights_backbone=None, num_classes=5), Detector,
            lambda: ([_image(96)[0], _image(80)[0]],)),
        "timm.vit_small_patch16_224": (lambda: timm.create_model("vit_small_patch16_224", img_size=64),
                                       Classifier, lambda: (_image(64),)),
        "timm.swin_tiny_patch4_window7_224": (lambda: timm.create_model("swin_tiny_patch4_window7_224"),
                                              Classifier, lambda: (_image(224),)),
        "timm.convnext_atto": (lambda: timm.create_model("convnext_atto"), Classifier, lambda: (_image(64),)),
        "timm.efficientnet_b0": (lambda: timm.create_model("efficientnet_b0"), Classifier,
                                 lambda: (_image(64),)),
        "timm.mobilenetv3_small_100": (lambda: timm.create_model("mobilenetv3_small_100"), Classifier,
                                       lambda: (_image(64),)),
        "timm.resnet18": (lambda: timm.create_model("resnet18"), Classifier, lambda: (_image(64),)),
    }


def _plain(value: Any) -> Any:
    """OrderedDicts (eager's segmentation output) as the dicts TorchScript returns."""
    if isinstance(value, dict):
        return {key: _plain(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_plain(item) for item in value)
    return value


def _same(expected: Any, got: Any) -> bool:
    left = torch.utils._pytree.tree_flatten(_plain(expected))
    right = torch.utils._pytree.tree_flatten(_plain(got))
    if left[1] != right[1]:
        return False
    return all(a.dtype == b.dtype and a.shape == b.shape and torch.equal(a, b) if isinstance(a, Tensor) else a == b
               for a, b in zip(left[0], right[0]))


def _verdict(program: Any, eager: nn.Module, args: tuple) -> str:
    expected = eager(*args)
    for _ in range(3):
        got = program.module()(*args)
        if not _same(expected, got):
            dtypes = sorted({str(t.dtype) for t in torch.utils._pytree.tree_leaves(got) if isinstance(t, Tensor)})
            return "differs" + (f" ({', '.join(dtypes)})" if dtypes else "")
    buffer = io.BytesIO()
    torch.export.save(program, buffer)
    buffer.seek(0)
    if not _same(expected, torch.export.load(buffer).module()(*args)):
        return "differs after save/load"
    return "exact"


def _short(error: BaseException) -> str:
    text = str(error).strip().splitlines()
    return f"{type(error).__name__}: {text[0][:90] if text else ''}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", default=None, help="NAME,NAME: these models only")
    parser.add_argument("--dtype", default="bfloat16", choices=["bfloat16", "float16"])
    parser.add_argument("--anchors", action="store_true", help="also PyTorch's converter and eager's export")
    args = parser.parse_args()
    _torchvision_without_its_ops()
    import jitamp
    import torchvision
    import timm

    dtype = getattr(torch, args.dtype)
    print(f"torch {torch.__version__}, torchvision {torchvision.__version__}, timm {timm.__version__}, "
          f"CPU autocast {args.dtype}")
    columns = ["regions", "explicit casts"] + (["TS2EPConverter", "torch.export(eager)"] if args.anchors else [])
    print("| model | " + " | ".join(columns) + " | seconds |")
    print("|---|" + "---|" * (len(columns) + 1))
    zoo = models()
    names = args.only.split(",") if args.only else list(zoo)
    for name in names:
        make, wrapper, inputs = zoo[name]
        torch.manual_seed(0)
        eager = wrapper(make().eval(), dtype).eval()
        example = inputs()
        started = time.monotonic()
        cells = []
        with torch.no_grad():
            try:
                jitamp.enable()
                scripted = torch.jit.script(eager)
            except Exception as error:
                print(f"| {name} | scripting fails: {_short(error)} |")
                continue
            finally:
                jitamp.disable()
            for explicit in (False, True):
                try:
                    cells.append(_verdict(jitamp.export(scripted, example, explicit_casts=explicit), eager, example))
                except jitamp.ExportError as error:
                    cells.append("refused: " + str(error).split(": ", 2)[-1].splitlines()[0][:100])
                except Exception as error:
                    cells.append("error: " + _short(error))
                    traceback.print_exc(file=sys.stderr)
            if args.anchors:
                from torch._export.converter import TS2EPConverter
                def converted() -> Any:  # scripted plainly: PyTorch's built-in JIT autocast off
                    previous = torch._C._jit_set_autocast_mode(False)
                    try:
                        return TS2EPConverter(torch.jit.script(eager), example).convert()
                    finally:
                        torch._C._jit_set_autocast_mode(previous)

                for make_program in (converted, lambda: torch.export.export(eager, example)):
                    try:
                        cells.append(_verdict(make_program(), eager, example))
                    except Exception as error:
                        cells.append("fails: " + _short(error))
        print(f"| {name} | " + " | ".join(cells) + f" | {time.monotonic() - started:.0f} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
