"""A differential fuzzer for jitamp: generated TorchScript programs with
autocast scopes, run eagerly and scripted with jitamp, compared by the
tests' oracle (`jitamp.testing`, also behind tests/oracle.py). A developer
tool of the repository, not shipped in the wheel: run it from a checkout,
with jitamp installed, to check jitamp on a torch and CPU (docs/fuzzing.md).

    python tools/jitamp_fuzz --count 10000 --seed 1 --jobs 2 --out DIR
    python tools/jitamp_fuzz --seed 1 --index 67 --out DIR --print   # one program

(`PYTHONPATH=tools python -m jitamp_fuzz ...` is the same; the tests import
it with tools/ on sys.path, tests/conftest.py.)

Modules: `generator` (seeded programs: (seed, index) -> source), `runner`
(import, script, compare, classify), `shrink` (delta debugging to a minimal
failing program), `cli` (batches in worker processes, reproducers).

What is generated: functions and nn.Modules (submodules, nn.Linear,
parameters) whose tensors are all [4, 4], with ops from templates covering
every policy kind the installed torch's table has on CPU (lower_precision_fp,
fp32, promote; fp32_set_opt_dtype / fp32_append_dtype rows are CUDA-only in
2.13, so their ops, softmax/sum/cumsum/norm, run as "no CPU policy"), ops with
no policy, `Tensor?` arguments (None, an Optional argument, an Optional
local refined at run time), `Tensor[]` arguments (cat/stack), in-place and
`out=` forms; autocast scopes in every spelling (torch.autocast positional
and device_type=, torch.amp.autocast, torch.cpu.amp.autocast,
torch.cuda.amp.autocast, `@torch.autocast` on helpers), nested up to 3
deep, with `enabled=`/`dtype=`/`cache_enabled=` as constants, arguments and
computed values, cpu and cuda (and a device-type argument), `as` names,
pre-built and conditionally chosen objects, re-entry; if/else, for, while,
break/continue, early return, `raise` and `assert`; autocast state
queries; helpers (plain, `@torch.jit.script`,
`@torch.jit.ignore`), `torch.jit.fork`/`wait`; inputs float32, bfloat16,
float16, float64, int64, with and without requires_grad; called plainly, in
an eager autocast of either dtype, a disabled one, under no_grad or under
torch.inference_mode (as model servers often call models); with
backward; save/load for a share of module programs; every module program
also frozen (torch.jit.freeze, compared under no_grad in the same eager
region) and, where jitamp.freeze(standalone=True) takes it and the region
leaves autocast off, frozen standalone (run here, then saved and loaded to
run on TorchScript's stock executor); jitamp enabled or not at run time;
a quarter scripted with `jitamp.enable(profiling_executor=True)` (EXECUTOR;
their standalone model is frozen for that executor too, what a stock
torch.jit.load runs), whose gradients are compared with a tolerance (its
symbolic autodiff sums a value's gradient in its own order, docs/executors.md,
"Symbolic autodiff").

Lower-precision dtypes: a program keeps one everywhere (every scope, a
dtype argument, the eager region; "uniform"), or mixes them (a quarter of
module programs, a third of function programs, with and without
gradients), where eager's cast cache, keyed by the tensor alone, hands a
scope of one dtype the casts of leaves made under another. A frozen model's
weights are constants, which that cache never serves: where eager's module
gets another dtype's cast and the frozen model equals eager with the cache
off, the runner reports "known:frozen-cast-cache"; where it equals eager
whose parameters do not require grad (a kernel path that depends on it),
"known:frozen-constant-weights". On a GPU (`--device cuda`), where eager's
own results vary (a kernel without a deterministic implementation, or two
eager runs that differ): "known:eager-nondeterministic". Two threads, one
under inference mode, one meeting the plan the other made in its grad
mode (a folded tensor constant made under inference mode, which the grad
thread cannot save for backward; differentiable graphs made with grad,
which save the inference thread's inputs): "known:inference-mode-plan".

Known deviations (docs/runtime-model.md, "The cast cache"; the xfails) are
avoided by the generator:
- a weight changed in place under no_grad inside a region: in-place and
  out= forms only write to fresh op results (never inputs, parameters,
  views or aliases);
- early return/break/continue out of a `with` block or before one
  (TorchScript's front end fails on both; jitamp lowers autocast blocks
  there): generated in 40% of programs ("exits around scopes"), which then
  use only autocast objects jitamp can name (no conditionally chosen
  object; no `as` name where eager binds it to None).
TorchScript's own differences are recognized by the runner: dead code
(every value goes to a returned `sink` list; an error eager raises on a
line whose ops are all dead in the program scripted without jitamp, which
TorchScript never runs, is "known:dead-code", and so is an error the
program raises from a line of a `@torch.jit.script` callee that the
callee's own plan, which eager calls, has dropped as dead, where the
caller's loop keeps it), errors of `@torch.jit.script`
callees called eagerly and of `@torch.jit.ignore` functions (unwrapped),
autograd node names in in-place errors (MulBackward0/1), gradient summation
order of forked tasks (compared with a tolerance, and beyond it reported
as "known:fork-grad-order" where a direct call instead of fork/wait gives
eager's gradients: plain TorchScript gives the same; so are two backward
errors that meet in another order), `@torch.autocast` decorators
(jitamp-only syntax), and two errors the profiling executor's symbolic
autodiff raises where eager does not or raises another (an in-place op on
a view of a differentiable subgraph's result: "known:profiling-view-of-leaf";
`out=` forms with grad: "known:profiling-out-grad"), a symbolic formula
that raises where eager's derivative works ("known:profiling-backward-formula":
`abs` of a complex tensor calls `sign`; dtype errors excluded), and in-place
errors naming a differentiable subgraph's output ("known:profiling-autograd-node")
or raised where eager returns, a formula having saved a tensor eager's does
not ("known:profiling-saved-by-formula": softmax with dtype= saves its
input), gradients NaN on one side only ("known:profiling-nan-grad": relu's
formula multiplies a NaN gradient by its mask, eager's selects), gradients
through complex values ("known:profiling-complex-grad": the formulas
conjugate nothing, nor take the real part of a real input's complex
gradient; the simple executor gives eager's), a later op's error
raised first ("known:profiling-error-order": the plan moves an op autodiff
leaves out of a subgraph before one eager reaches first; the simple
executor gives eager's), eager's dtype error from a weight's cached cast
of another dtype not raised ("known:profiling-detached-cache": a
differentiable subgraph's detached inputs never meet eager's cache; the
simple executor gives eager's); plain TorchScript does all of these. A profiling program with no
autocast anywhere (or scopes that change nothing eager computes: then its
scope-free twin) that differs is run as plain TorchScript too (and an
error the scope-free twin on plain TorchScript raises at the same call
where eager with its scopes doing nothing raises eager's is
"known:plain-torchscript"), and a
difference of the same kind is "known:profiling-plain-torchscript", and so
is an error that plain TorchScript, called in the same region, raises at the
same call where eager does not (where autocast changes what the program
computes: not for an error a dtype decides, but a symbolic formula's in a
program without scopes); so is a frozen model's ("known:frozen-plain-torchscript": freezing's own
optimizations remove an `out=` op whose results only dead code reads, and
eager's error with it). (TorchScript's preoptimization, whose peephole pass
folds `x.t().t()` to `x`, was one, findings 9 and 10, until jitamp made
the graph its executors run: csrc/jit_autocast/pipeline/pipeline.h.)

CUDA tensors: `--device cuda` (docs/fuzzing.md, "On a GPU"; CPU programs
keep CUDA scopes, which cast nothing on CPU tensors). Not covered yet: frozen models with gradients (frozen weights are constants),
`linalg.lstsq` (eager's own CPU results differ from call to call, with
the buffers' alignment: no exact reference). (Covered since issue 42, part
5: complex values (complex64 inputs among the mixed dtypes, complex
matmul, fft round trips, polar); tuples, `Dict[str, Tensor]` and objects
of a TorchScript class `Pair` (a scope in one of its methods) holding
tensors, read and written inside and outside scopes;
`torch.jit.optimize_for_inference` of every module program (compared as
the frozen one); a tenth of the uniform programs also called from two
threads at once, each in its own eager region (without gradients: eager's
cast cache is one for all threads, cleared by each one's region exit); the fp32 rows of linalg
decompositions (qr, svd, eigh, eig, eigvals, cholesky, pinverse,
cholesky_solve, triangular_solve); rnn cells and `torch.lstm` (no CPU row:
their linear / mkldnn kernels cast inside); integer and bool scalars
computed from tensors as op arguments. Covered since issue 41/42: autocast state queries,
`raise` and `assert` statements, pooling, grid_sample, more losses,
linalg.solve/svdvals, fft2/ifft, nanquantile; other shapes inside ops and
broadcasting operands, within [4, 4] variables; `jitamp.add_autocast` of
a fifth of the module programs, scripted without jitamp, against eager
inside `torch.autocast`.)
"""
