// Pass: `with torch.autocast(...)` scopes to ops that drive eager's state.
#pragma once

#include <memory>
#include <string>

namespace torch::jit {
struct Graph;
} // namespace torch::jit

namespace jitamp {

// Lowers each prim::Enter / prim::Exit on an autocast object to
//   %guard, %region = jitamp::autocast_enter(%autocast)
//   jitamp::autocast_exit(%guard)
// (scope_ops.cpp), which change eager's thread-local autocast state as
// autocast.__enter__ / __exit__ do. `with autocast(...) as ac` names the
// object itself. Throws, pointing at the source, on an exit without its
// enter. Idempotent. Returns whether it changed the graph. Does not enter
// fork subgraphs (see RewriteAutocast).
bool LowerAutocastScopes(const std::shared_ptr<torch::jit::Graph>& graph);

// What `with torch.autocast(...) as ac` binds in eager on the installed
// torch. TorchScript's __enter__ returns the object; eager's returned None
// before torch 2.5 (it returns self since). Where it is None, the lowering
// makes each use of `ac` do what eager does with None: re-entering it
// (`with ac:`) raises what `with None:` raises in this Python
// (`with_none_error_class`, `with_none_error_message`), reading an
// attribute or calling a method raises AttributeError; any other use is
// refused with the source line.
// Set once from Python at import (jitamp/_library.py asks eager); programs
// without Python keep the default, the object.
struct EagerEnterResult {
  bool is_none = false;
  std::string with_none_error_class = "builtins.TypeError";
  std::string with_none_error_message =
      "'NoneType' object does not support the context manager protocol";
};
void SetEagerEnterResult(EagerEnterResult result);

} // namespace jitamp
