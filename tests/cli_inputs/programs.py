"""Programs the CLI tests dump (TorchScript needs them in a real file)."""
import torch
from torch import nn


def scoped_mm(x, y):
    with torch.autocast("cpu", dtype=torch.bfloat16):
        z = torch.mm(x, y)
    return z


def nested_scopes(x, flag: bool):
    with torch.autocast("cpu", dtype=torch.bfloat16):
        a = torch.mm(x, x)
        with torch.autocast("cpu", enabled=flag):
            b = torch.cat([a, x])
    return b


class ScopedLinear(nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(4, 4)

    def forward(self, x):
        with torch.autocast("cpu", dtype=torch.bfloat16):
            y = self.linear(x)
        return y


def make_linear():
    return ScopedLinear()


def needs_args(x: int):
    return x


class NeedsArgs(nn.Module):
    def __init__(self, width: int):
        super().__init__()
        self.width = width


def not_scriptable(x):
    return {1: "a", "b": 2}[x]


already_run = torch.jit.script(scoped_mm)
already_run(torch.ones(2, 2), torch.ones(2, 2))
