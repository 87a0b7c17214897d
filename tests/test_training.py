"""Training through scripted autocast regions, compared with eager."""
import copy

import pytest
import torch
from torch import nn

from oracle import assert_same, autocast_state, check_against_eager, cpu_autocast, script


class Block(nn.Module):
    """Linear -> GELU -> LayerNorm in bf16 with a float32 residual: the
    mixed-dtype shape that trips TorchScript's symbolic autodiff."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(16, 16)
        self.norm = nn.LayerNorm(16)
        self.head = nn.Linear(16, 4)

    def forward(self, x):
        with torch.autocast("cpu", dtype=torch.bfloat16):
            h = x + self.norm(torch.nn.functional.gelu(self.fc(x)))
            y = self.head(h)
        return y


class Unscoped(nn.Module):
    """No scope: autocast comes from the caller (an eager region)."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(16, 16)

    def forward(self, x):
        return torch.softmax(self.fc(x), -1) + x


def _grads_after_backward(model, x, forward_autocast, backward_autocast):
    model.zero_grad(set_to_none=True)
    x = x.detach().clone().requires_grad_(True)
    with forward_autocast():
        out = model(x)
    with backward_autocast():
        out.float().sum().backward()
    return [out.detach(), x.grad] + [p.grad for p in model.parameters()]


@pytest.mark.parametrize("backward_in", ["same_autocast", "no_autocast"])
@pytest.mark.parametrize("make", [Block, Unscoped])
def test_backward_inside_or_outside_the_forward_autocast(make, backward_in):
    torch.manual_seed(0)
    model = make()
    scripted = script(copy.deepcopy(model))
    x = torch.randn(8, 16)
    forward_ctx = cpu_autocast()
    backward_ctx = cpu_autocast() if backward_in == "same_autocast" else cpu_autocast(enabled=False)
    before = autocast_state()
    for call in range(1, 11):
        expected = _grads_after_backward(model, x, forward_ctx, backward_ctx)
        got = _grads_after_backward(scripted, x, forward_ctx, backward_ctx)
        assert_same(expected, got, what=f"call {call}")
        assert autocast_state() == before


@pytest.mark.parametrize("make", [Block, Unscoped])
def test_gradients_on_calls_1_to_10(make):
    torch.manual_seed(0)
    model = make()
    outer = None if make is Block else cpu_autocast()
    check_against_eager(model, (torch.randn(8, 16),), scripted=script(copy.deepcopy(model)),
                        grad=True, outer=outer, calls=tuple(range(1, 11)))


def _train(model, steps, data, target):
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    scaler = torch.amp.GradScaler("cpu", init_scale=2.0**8)
    losses = []
    for step in range(steps):
        opt.zero_grad(set_to_none=True)
        out = model(data[step % len(data)])
        loss = torch.nn.functional.cross_entropy(out.float(), target[step % len(target)])
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
        losses.append(loss.detach())
    return torch.stack(losses), [p.detach().clone() for p in model.parameters()]


def test_twenty_steps_with_grad_scaler_match_eager():
    torch.manual_seed(0)
    eager = Block()
    scripted = script(copy.deepcopy(eager))
    data = [torch.randn(8, 16) for _ in range(4)]
    target = [torch.randint(0, 4, (8,)) for _ in range(4)]
    eager_losses, eager_params = _train(eager, 20, data, target)
    script_losses, script_params = _train(scripted, 20, data, target)
    # The same kernels run in the same order: equal, not just close.
    assert_same(eager_losses, script_losses, what="losses")
    assert_same(eager_params, script_params, what="parameters")
    assert eager_losses[-1] < eager_losses[0], "the model trains"
