# peephole_keeping_transposes (preoptimize): TorchScript's peephole pass
# (shape peepholes off), as preoptimizeGraph runs it, except that
# `x.t().t()` stays. Plain PeepholeOptimize folds it to x, a view to its
# base; eager's autocast caches the cast of a leaf that requires grad and
# never a view's, so under autocast eager casts x and x.t().t() apart, and
# backward sums their gradients in float32 (folded, both share one cached
# cast and the sum is in bfloat16; outside autocast the fold still changes
# the order of backward's sums). The pass puts an aten::alias between the
# two transposes while the peephole pass runs, and takes it out after. The
# rest of the peephole pass still runs: len() of a list literal becomes the
# constant 2. The BEFORE run shows the graph the pass takes (rewritten,
# configured, inlined, casts of None removed).
# RUN: jitamp opt %s:gram --passes=rewrite,configure,inline,remove_casts_of_none | filecheck %s --check-prefix BEFORE
# RUN: jitamp opt %s:gram --passes=rewrite,configure,inline,remove_casts_of_none,peephole_keeping_transposes | filecheck %s
import torch


def gram(x):
    with torch.autocast("cpu"):
        y = torch.mm(x, x.t().t())
        n = len([x, y])
    return y, n

# BEFORE: [[T1:%[^ ]+]] : Tensor = aten::t(%x.1)
# BEFORE-NEXT: [[T2:%[^ ]+]] : Tensor = aten::t([[T1]])
# BEFORE: aten::mm(
# BEFORE: [[L:%[^ ]+]] : Tensor[] = prim::ListConstruct(%x.1,
# BEFORE-NEXT: %n.1 : int = aten::len([[L]])

# CHECK: [[T1:%[^ ]+]] : Tensor = aten::t(%x.1)
# CHECK-NEXT: [[T2:%[^ ]+]] : Tensor = aten::t([[T1]])
# CHECK-NEXT: [[TC:%[^ ]+]] : Tensor = jitamp::autocast_to_fp16([[T2]],
# CHECK-NEXT: [[XC:%[^ ]+]] : Tensor = jitamp::autocast_to_fp16(%x.1,
# CHECK-NEXT: %y.1 : Tensor = aten::mm([[XC]], [[TC]])
# CHECK-NOT: aten::len
# CHECK: [[TWO:%[^ ]+]] : int = prim::Constant[value=2]()
# CHECK-NOT: aten::len
# CHECK: prim::TupleConstruct(%y.1, [[TWO]])
