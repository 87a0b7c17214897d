// Pass: torch.jit.wait that keeps the autocast state where eager has it.
#pragma once

#include <memory>

namespace torch::jit {
struct Graph;
} // namespace torch::jit

namespace jitamp {

// Puts jitamp::wait_prepare before and jitamp::wait_resume after every
// aten::wait (task_ops.cpp). aten::wait may suspend the interpreter and
// resume the graph on another thread, which would close an open autocast
// scope there instead of on the caller's thread, and leave a forked task's
// autocast state on the thread it leaves. wait_prepare blocks (eager's wait
// does), except in a forked task's own run outside every scope opened in the
// task, where it moves the task's state to the thread the task resumes on
// (wait_resume) and lets the interpreter suspend: blocking there could
// hold every inter-op thread while the tasks waited for are queued. Callees
// are inlined into callers that may hold a scope open, and any function may
// run as a task, so the decision is made at run time, for every wait.
// Idempotent. Returns whether it changed the graph. Does not enter fork
// subgraphs (see RewriteAutocast).
bool KeepAutocastStateAcrossWaits(const std::shared_ptr<torch::jit::Graph>& graph);

} // namespace jitamp
