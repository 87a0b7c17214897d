# The configure pipeline (pipeline/pipeline.cpp): what jitamp runs after the
# rewrite on every graph it configures, before any plan is made; its one
# pass, keep_loops_out_of_line, works around TorchScript's interpreter,
# which could emit a one-output loop inline at its one reader and lose a
# value the loop reads (docs/passes.md, 'KeepLoopsOutOfLine'). Its
# characteristic result, on a rewritten graph: the loop in the scope, whose
# result the add reads together with y (which the loop reads too), carries
# two more bools, False at the start and swapped by each iteration, while
# the rewrite's scope ops and casts stay as they were (the loop body's casts
# read the scope's token).
# RUN: jitamp opt %s:attend --passes=rewrite,configure | filecheck %s
import torch


def attend(x, w, n: int):
    with torch.autocast("cpu"):
        y = torch.mm(x, w)
        q = y
        for _ in range(n):
            q = torch.mm(q, y)
        z = y + q
    return z

# CHECK: [[G:%[^ ]+]] : __torch__.torch.classes.jitamp.AutocastGuard, [[R:%[^ ]+]] : int = jitamp::autocast_enter(
# CHECK: %y.1 : Tensor = aten::mm(
# CHECK-NEXT: [[FALSE:%[^ ]+]] : bool = prim::Constant[value=0]()
# CHECK-NEXT: [[Q:%[^ ]+]] : Tensor, {{%[^ ]+}} : bool, {{%[^ ]+}} : bool = prim::Loop(%n.1, {{%[^ ]+}}, %y.1, [[FALSE]], [[FALSE]])
# CHECK-NEXT: block0(%{{[^ ]+}} : int, [[QI:%[^ ]+]] : Tensor, [[A:%[^ ]+]] : bool, [[B:%[^ ]+]] : bool):
# CHECK-NEXT: [[Y:%[^ ]+]] : Tensor = jitamp::autocast_to_fp16(%y.1, {{%[^ ]+}}, [[R]])
# CHECK-NEXT: [[QC:%[^ ]+]] : Tensor = jitamp::autocast_to_fp16([[QI]], {{%[^ ]+}}, [[R]])
# CHECK-NEXT: [[M:%[^ ]+]] : Tensor = aten::mm([[QC]], [[Y]])
# CHECK-NEXT: -> ({{%[^ ]+}}, [[M]], [[B]], [[A]])
# CHECK-NEXT: aten::add(%y.1, [[Q]],
# CHECK-NEXT: jitamp::autocast_exit([[G]])
