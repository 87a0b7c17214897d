"""A model rewritten by jitamp on one torch, run on another.

    python scripts/cross_version.py save DIR    # under torch A, jitamp built for A
    python scripts/cross_version.py check DIR   # under torch B, jitamp built for B

`save` scripts (with jitamp) and saves each model below, plain and frozen,
with its weights and inputs, and each function (torch.jit.save saves a
scripted function as a module whose forward is the function); `check`
loads each with `import jitamp;
torch.jit.load` and compares it with eager autocast on the torch running
`check`: output dtypes and values, called three times. Torch versions
autocast some ops differently (`jitamp table` lists them): the loaded model
must follow the torch that runs it. scripts/cross_version.sh builds jitamp
for two torch versions and runs both directions.
"""
from __future__ import annotations

import json
import os
import sys
import warnings

import torch
from torch import Tensor, nn


class AddmmActivation(nn.Module):
    """aten::_addmm_activation: lower_precision_fp on CPU from torch 2.6 on,
    not autocast in 2.4."""

    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.randn(8, 8))
        self.b = nn.Parameter(torch.randn(8))
        self.w2 = nn.Parameter(torch.randn(8, 8))

    def forward(self, x: Tensor) -> Tensor:
        with torch.autocast("cpu", dtype=torch.bfloat16):
            y = torch._addmm_activation(self.b, x, self.w)
            z = torch._addmm_activation(self.b, self.w2, self.w, use_gelu=True)
            return y + z.sum(0) + torch.mm(x, self.w2)


class Mixed(nn.Module):
    """Ops every supported torch autocasts alike, in and out of scopes."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 8)
        self.norm = nn.LayerNorm(8)
        self.conv = nn.Conv1d(1, 1, 3, padding=1)

    def forward(self, x: Tensor) -> Tensor:
        with torch.autocast("cpu", dtype=torch.bfloat16):
            h = self.norm(torch.relu(self.fc(x)))
            with torch.autocast("cpu", enabled=False):
                s = torch.softmax(h.float(), dim=-1)
            c = self.conv(h.unsqueeze(1)).squeeze(1)
            return torch.cat([s, c], dim=0).sum(0) + torch.prod(h, 0)


MODELS = {"addmm_activation": AddmmActivation, "mixed": Mixed}


def addmm_activation_function(b: Tensor, x: Tensor, w: Tensor) -> Tensor:
    with torch.autocast("cpu", dtype=torch.bfloat16):
        return torch._addmm_activation(b, x, w) + torch.addmm(b, x, w)


FUNCTIONS = {"addmm_activation_function": addmm_activation_function}


def save(directory: str) -> None:
    import jitamp

    jitamp.enable()
    os.makedirs(directory, exist_ok=True)
    for name, cls in MODELS.items():
        torch.manual_seed(0)
        model = cls().eval()
        torch.save(model.state_dict(), os.path.join(directory, f"{name}.weights"))
        torch.save(torch.randn(4, 8), os.path.join(directory, f"{name}.input"))
        scripted = torch.jit.script(model)
        torch.jit.save(scripted, os.path.join(directory, f"{name}.pt"))
        frozen = torch.jit.freeze(scripted)
        torch.jit.save(frozen, os.path.join(directory, f"{name}.frozen.pt"))
    for name, function in FUNCTIONS.items():
        torch.manual_seed(0)
        torch.save([torch.randn(8), torch.randn(4, 8), torch.randn(8, 8)],
                   os.path.join(directory, f"{name}.input"))
        torch.jit.save(torch.jit.script(function), os.path.join(directory, f"{name}.pt"))
    with open(os.path.join(directory, "saved_by.json"), "w") as f:
        json.dump({"torch": torch.__version__}, f)
    print(f"saved models: {len(MODELS)}, plain and frozen; functions: {len(FUNCTIONS)}; "
          f"with torch {torch.__version__}")


def check(directory: str) -> int:
    import jitamp  # noqa: F401  (configures the models as they load)

    with open(os.path.join(directory, "saved_by.json")) as f:
        saved_by = json.load(f)["torch"]
    failures = 0

    def compare(what: str, eager, loaded, args) -> int:
        """1 if `loaded` differs from eager on any of 3 calls, grad or no_grad."""
        for mode in (torch.enable_grad, torch.no_grad):
            with mode():
                expected = eager(*args)
                for call in range(3):
                    got = loaded(*args)
                    if got.dtype != expected.dtype or not torch.equal(got, expected):
                        print(f"DIFFERS {what} ({mode.__name__}, call {call + 1}): "
                              f"eager {expected.dtype}, loaded {got.dtype}, "
                              f"max diff {(got.double() - expected.double()).abs().max().item():.3g}")
                        return 1
        return 0

    for name, cls in MODELS.items():
        model = cls().eval()
        model.load_state_dict(torch.load(os.path.join(directory, f"{name}.weights"), weights_only=True))
        x = torch.load(os.path.join(directory, f"{name}.input"), weights_only=True)
        for variant in ("", ".frozen"):
            loaded = torch.jit.load(os.path.join(directory, f"{name}{variant}.pt"))
            failures += compare(f"{name}{variant}", model, loaded, [x])
    for name, function in FUNCTIONS.items():
        args = torch.load(os.path.join(directory, f"{name}.input"), weights_only=True)
        loaded = torch.jit.load(os.path.join(directory, f"{name}.pt"))
        failures += compare(name, function, loaded, args)
    print(f"saved with torch {saved_by}, run with torch {torch.__version__}: "
          f"{'all equal to eager' if failures == 0 else f'{failures} differ from eager'} "
          f"(models: {len(MODELS) * 2}, functions: {len(FUNCTIONS)}; grad and no_grad, 3 calls each)")
    return 1 if failures else 0


if __name__ == "__main__":
    # TorchScript's deprecation warning on every script, save and load
    from jitamp.testing import TORCHSCRIPT_DEPRECATION

    for category in (DeprecationWarning, FutureWarning):
        warnings.filterwarnings("ignore", message=TORCHSCRIPT_DEPRECATION, category=category)
    if len(sys.argv) != 3 or sys.argv[1] not in ("save", "check"):
        print(__doc__.split("\n\n")[1])
        sys.exit(2)
    if sys.argv[1] == "save":
        save(sys.argv[2])
    else:
        sys.exit(check(sys.argv[2]))
