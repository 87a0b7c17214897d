// The jitamp op library: the guard class, every schema and every kernel,
// registered in one translation unit so that the class exists before the
// schemas and kernel signatures that name it (static initialization order
// across files is unspecified). Kernels are in ops/cast_ops.h and .cpp
// (smart casts), ops/scope_ops.cpp (scopes, fallback calls), ops/task_ops.cpp
// (waits, forked tasks), ops/frozen_kernels.cpp (ATen's kernels, faster
// in frozen models) and pipeline/loader.cpp (loading saved models).
#include "ops/cast_ops.h"
#include "ops/frozen_kernels.h"
#include "ops/scope_ops.h"
#include "ops/task_ops.h"
#include "profiling/expose_static_casts_to_fuser.h"
#include "pipeline/loader.h"

#include <torch/library.h>

namespace jitamp {

TORCH_LIBRARY(jitamp, m) {
  m.class_<AutocastGuard>("AutocastGuard");
  m.class_<TaskAutocastGuard>("TaskAutocastGuard");
  m.class_<TaskTicket>("TaskTicket");
  m.class_<SuspendedAutocast>("SuspendedAutocast");

  // Smart casts. FROM_SCHEMA with alias annotations: a cast that does not
  // apply returns its input itself. The `region` input is the token of the
  // autocast region the cast belongs to (made by the enter op of its scope,
  // or by autocast_caller_region for code outside any scope): CSE merges
  // two casts of one value within a region (the JIT's own cleanups apply)
  // but never across regions, and constant propagation never folds a cast
  // (a region token is never a constant). The kernels do not read it. The
  // plain Tensor overloads come first: a Tensor value also matches
  // `Tensor?`, and the first match wins.
  const char* casts[] = {
      "autocast_to_fp16(Tensor(a) self, str devices, int region) -> Tensor(a)",
      "autocast_to_fp16.optional(Tensor(a)? self, str devices, int region) -> Tensor(a)?",
      "autocast_to_fp16.list(Tensor[] tensors, str devices, int region) -> Tensor[]",
      "autocast_to_fp32(Tensor(a) self, str devices, int region) -> Tensor(a)",
      "autocast_to_fp32.optional(Tensor(a)? self, str devices, int region) -> Tensor(a)?",
      "autocast_to_fp32.list(Tensor[] tensors, str devices, int region) -> Tensor[]",
      "autocast_to_fp32.if_no_dtype(Tensor(a) self, str devices, ScalarType? dtype, int region) -> Tensor(a)",
      "autocast_promote(Tensor(a) a, Tensor(b) b, str devices, int region) -> (Tensor(a), Tensor(b))",
      "autocast_promote.three(Tensor(a) a, Tensor(b) b, Tensor(c) c, str devices, int region) -> (Tensor(a), Tensor(b), Tensor(c))",
      "autocast_promote.four(Tensor(a) a, Tensor(b) b, Tensor(c) c, Tensor(d) d, str devices, int region) -> (Tensor(a), Tensor(b), Tensor(c), Tensor(d))",
      "autocast_promote.list(Tensor[] tensors, str devices, int region) -> Tensor[]",
  };
  for (const char* schema : casts) {
    m.def(schema);
  }
  // The fold barrier (fold_barriers.h): an identity that keeps the op
  // reading it from constant propagation (its region token is never a
  // constant). Overloads in the order of the casts' (a Tensor also matches
  // `Tensor?`); the list one returns a new list of the same tensors. The
  // Scalar one keeps a Scalar argument from being a constant
  // (ProfilingExecutorPlan, pipeline/pipeline.h).
  const char* barriers[] = {
      "autocast_dependent(Tensor(a) self, int region) -> Tensor(a)",
      "autocast_dependent.optional(Tensor(a)? self, int region) -> Tensor(a)?",
      "autocast_dependent.list(Tensor[] tensors, int region) -> Tensor[]",
      "autocast_dependent.scalar(Scalar self, int region) -> Scalar",
  };
  for (const char* schema : barriers) {
    m.def(schema);
  }
  // What the profiling executor makes of a single-tensor smart cast whose
  // state is static, for the TensorExpr fuser (expose_static_casts_to_fuser.h). Not in any
  // saved or rewritten graph.
  m.def(kFusibleToFp16Schema);
  m.def(kFusibleToFp32Schema);
  // A loop's cast of a value defined before the loop, made once before it
  // (SimpleExecutorPlan, pipeline/pipeline.h): only in the simple executor's plan.
  m.def(
      "autocast_to_fp16_before_loop(Tensor(a) self, str devices, "
      "int max_trip_count, bool initial_condition, int region) -> Tensor(a)");

  // aten::max_pool2d's schema, pooling in channels-last layout where that
  // gives eager's bits faster (frozen_kernels.h; passes/pool_channels_last.h).
  m.def(
      "max_pool2d(Tensor self, int[2] kernel_size, int[2] stride=[], "
      "int[2] padding=0, int[2] dilation=1, bool ceil_mode=False) -> Tensor");

  // Scope and task ops (scope_ops.cpp, task_ops.cpp). CONSERVATIVE: they have side effects on
  // thread-local state, so dead code elimination, CSE and reordering leave
  // them alone (with the default FROM_SCHEMA, DCE deletes them).
  const char* scopes[] = {
      "autocast_caller_region() -> int",
      "autocast_enter(Any autocast) -> (__torch__.torch.classes.jitamp.AutocastGuard guard, int region)",
      "autocast_enter.args(str device_type, ScalarType dtype, bool enabled=True, bool? cache_enabled=None) -> (__torch__.torch.classes.jitamp.AutocastGuard guard, int region)",
      // The three above as they are in the graphs jitamp's executors
      // compile (passes/use_scope_ops_of_plans.h); those above raise.
      "autocast_caller_region_in_plan() -> int",
      "autocast_enter_in_plan(Any autocast) -> (__torch__.torch.classes.jitamp.AutocastGuard guard, int region)",
      "autocast_enter_in_plan.args(str device_type, ScalarType dtype, bool enabled=True, bool? cache_enabled=None) -> (__torch__.torch.classes.jitamp.AutocastGuard guard, int region)",
      "autocast_exit(__torch__.torch.classes.jitamp.AutocastGuard guard) -> ()",
      "autocast_cache_enabled(bool? cache_enabled) -> bool",
      "autocast_task_state() -> __torch__.torch.classes.jitamp.TaskTicket",
      "autocast_task_started(__torch__.torch.classes.jitamp.TaskTicket ticket) -> ()",
      "autocast_task_enter(__torch__.torch.classes.jitamp.TaskTicket ticket) -> __torch__.torch.classes.jitamp.TaskAutocastGuard",
      "autocast_task_exit(__torch__.torch.classes.jitamp.TaskAutocastGuard guard) -> ()",
      "prepare_loaded(Any loader, bool simple_executor) -> ()",
      "raise_as_eager(str message, str cls) -> ()",
      "suspend_autocast() -> __torch__.torch.classes.jitamp.SuspendedAutocast",
      "keep_out_of_line() -> ()",
      "resume_autocast(__torch__.torch.classes.jitamp.SuspendedAutocast suspended) -> ()",
  };
  for (const char* schema : scopes) {
    m.def(torch::schema(schema, c10::AliasAnalysisKind::CONSERVATIVE));
  }
  // Generic like aten::wait (task_ops.cpp). jitamp::wait: the blocking
  // wait of files saved before wait_prepare, which still load.
  for (const char* schema :
       {"wait_prepare(Future(t) future) -> __torch__.torch.classes.jitamp.TaskAutocastGuard?",
        "wait_resume(__torch__.torch.classes.jitamp.TaskAutocastGuard? lent) -> ()",
        "wait(Future(t) future) -> t"}) {
    m.def(torch::schema(
        schema, c10::AliasAnalysisKind::CONSERVATIVE, /*allow_typevars=*/true));
  }
}

TORCH_LIBRARY_IMPL(jitamp, CompositeImplicitAutograd, m) {
  m.impl("autocast_to_fp16", TORCH_FN(smartCast<true>));
  m.impl("autocast_to_fp16.optional", TORCH_FN(smartCastOptional<true>));
  m.impl("autocast_to_fp16.list", TORCH_FN(smartCastList<true>));
  m.impl("autocast_to_fp32", TORCH_FN(smartCast<false>));
  m.impl("autocast_to_fp32.optional", TORCH_FN(smartCastOptional<false>));
  m.impl("autocast_to_fp32.list", TORCH_FN(smartCastList<false>));
  m.impl("autocast_to_fp32.if_no_dtype", TORCH_FN(toFp32IfNoDtype));
  m.impl("autocast_promote", TORCH_FN(promote2));
  m.impl("autocast_promote.three", TORCH_FN(promote3));
  m.impl("autocast_promote.four", TORCH_FN(promote4));
  m.impl("autocast_promote.list", TORCH_FN(promoteList));
  m.impl("autocast_dependent", TORCH_FN(passThrough<at::Tensor>));
  m.impl("autocast_dependent.optional", TORCH_FN(passThrough<std::optional<at::Tensor>>));
  m.impl("autocast_dependent.list", TORCH_FN(passThroughList));
  m.impl("autocast_dependent.scalar", TORCH_FN(passThrough<c10::Scalar>));
  m.impl("fusible_to_fp16", TORCH_FN(fusibleCast<true>));
  m.impl("fusible_to_fp32", TORCH_FN(fusibleCast<false>));
  m.impl("autocast_to_fp16_before_loop", TORCH_FN(toFp16BeforeLoop));
  m.impl("max_pool2d", TORCH_FN(maxPool2d));

  for (const char* as_saved :
       {"autocast_caller_region", "autocast_enter", "autocast_enter.args"}) {
    m.impl(
        as_saved,
        torch::CppFunction::makeFromBoxedFunction<&raiseOutsidePlan>());
  }
  m.impl("autocast_caller_region_in_plan", TORCH_FN(autocastCallerRegion));
  m.impl("autocast_enter_in_plan", TORCH_FN(autocastEnter));
  m.impl("autocast_enter_in_plan.args", TORCH_FN(autocastEnterArgs));
  m.impl("autocast_exit", TORCH_FN(autocastExit));
  m.impl("autocast_cache_enabled", TORCH_FN(autocastCacheEnabled));
  m.impl("wait_prepare", torch::CppFunction::makeFromBoxedFunction<&waitPrepare>());
  m.impl("wait_resume", torch::CppFunction::makeFromBoxedFunction<&waitResume>());
  m.impl("wait", torch::CppFunction::makeFromBoxedFunction<&waitOnThisThread>());
  m.impl("autocast_task_state", TORCH_FN(autocastTaskState));
  m.impl("autocast_task_started", TORCH_FN(autocastTaskStarted));
  m.impl(
      "autocast_task_enter",
      torch::CppFunction::makeFromBoxedFunction<&autocastTaskEnter>());
  m.impl("autocast_task_exit", TORCH_FN(autocastTaskExit));
  m.impl("prepare_loaded", TORCH_FN(prepareLoaded));
  m.impl("raise_as_eager", TORCH_FN(raiseAsEager));
  // KeepIfsOutOfLine (keep_ifs_out_of_line.h): nothing to do
  m.impl("keep_out_of_line", [] {});
  m.impl("suspend_autocast", TORCH_FN(suspendAutocast));
  m.impl("resume_autocast", TORCH_FN(resumeAutocast));
}

} // namespace jitamp
