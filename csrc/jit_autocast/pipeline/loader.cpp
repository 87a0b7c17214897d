// Loading a saved jitamp model with any loader.
//
// How a function runs (TorchScript's simple executor; PyTorch's built-in
// JIT autocast kept away) is not saved with a model: torch.jit.load and
// torch::jit::load compile its code afresh, with the defaults. So the model
// carries an object that sets it: jitamp.rewrite() gives the root module an
// attribute `_jitamp_loader` of the TorchScript class
// jitamp._loader.ModelLoader (python/jitamp/_loader.py), whose
// __setstate__ calls
//   jitamp::prepare_loaded(%loader, %simple_executor)
// The unpickler runs __setstate__ while it loads the model, after the
// module's code is compiled and before anything of it can run; this kernel
// then rewrites (idempotently: a saved model is already rewritten) and
// configures every function of the compilation unit the load created,
// exactly as jitamp.rewrite() does.
#include "pipeline/loader.h"

#include "pipeline/function_rewrite.h"

namespace jitamp {

void prepareLoaded(const c10::IValue& loader, bool simple_executor) {
  RewriteCompilationUnitOf(loader, RewriteOptions{simple_executor});
}

} // namespace jitamp
