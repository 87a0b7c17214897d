# rewrite_module (first step of the standalone_freeze pipeline;
# pipeline/function_rewrite.h): jitamp.freeze(model, standalone=True)
# rewrites the model and then freezes it with torch's own torch.jit.freeze
# (no loader object, whose freeze hook would configure the copy). The copy's
# graphs are copies of the rewritten ones, but its methods are new
# Functions that jitamp never configured: the step runs RewriteModule on
# them, which rewrites any graph that still needs it (none here: the
# rewrite is idempotent) and configures each method (ignore_amp, so that
# TorchScript's built-in autocast pass never adds its casts; jitamp's
# executor and preoptimized graph), none of which the IR shows. `jitamp opt`
# prepares the model the same way (scripted with jitamp, rewritten, frozen
# by torch.jit.freeze alone), so this step changes no IR text here: no step
# comes before it, so there is no BEFORE run, and this case checks that it
# leaves the rewritten frozen graph intact, each operand cast once, the
# scope lowered once (a rewrite that cast again or lowered again would fail
# the CHECK-NEXT chain). The checks would pass if the step did nothing; the
# configuration is tested by running the frozen model
# (tests/test_freeze.py, test_standalone_has_no_jitamp_op_and_matches_eager).
# RUN: jitamp opt %s:Net --passes=rewrite_module | filecheck %s
import torch
from torch import Tensor, nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x: Tensor) -> Tensor:
        with torch.autocast("cpu", dtype=torch.bfloat16):
            y = self.fc(x)
        return y.float()

# CHECK-NOT: prim::Enter
# CHECK: prim::SetAttr[name="_jitamp_cache_enabled"]
# CHECK-NEXT: jitamp::autocast_enter(
# CHECK-NEXT: [[R:%[^ ]+]] : int = jitamp::autocast_caller_region()
# CHECK-NEXT: [[B:%[^ ]+]] : Tensor = jitamp::autocast_to_fp16(%self.fc.bias, {{%[^ ]+}}, [[R]])
# CHECK-NEXT: [[W:%[^ ]+]] : Tensor = jitamp::autocast_to_fp16(%self.fc.weight, {{%[^ ]+}}, [[R]])
# CHECK-NEXT: [[X:%[^ ]+]] : Tensor = jitamp::autocast_to_fp16(%x.1, {{%[^ ]+}}, [[R]])
# CHECK-NEXT: %y.1 : Tensor = aten::linear([[X]], [[W]], [[B]])
# CHECK-NEXT: jitamp::autocast_exit(
# CHECK-NOT: jitamp::autocast_to_fp16
# CHECK-NOT: prim::Exit
