// jitamp_example: loads a model that jitamp rewrote and saved, runs forward
// on a random input and prints the output's dtype and shape.
//
//   build/cpp/jitamp_example MODEL.pt [ROWS COLS]     (default 4 x 16)
//
// MODEL.pt comes from Python: `jitamp.enable()`, then
// `torch.jit.script(model).save("MODEL.pt")`; or `jitamp convert plain.pt
// MODEL.pt --autocast cpu:bfloat16` for a model saved without autocast.
//
// jitamp's ops reach the model through the static registrations of the op
// library: link jitamp_ops with --no-as-needed (CMakeLists.txt), or start a
// program that links torch alone with LD_PRELOAD=$(jitamp library). The
// model's loader object configures it while torch::jit::load unpickles it:
// the load is all a host needs.
#include <torch/script.h>

#include "pipeline/function_rewrite.h"

#include <iostream>
#include <string>

int main(int argc, char** argv) {
  if (argc != 2 && argc != 4) {
    std::cerr << "usage: jitamp_example MODEL.pt [ROWS COLS]\n";
    return 2;
  }
  const int64_t rows = argc == 4 ? std::stoll(argv[2]) : 4;
  const int64_t cols = argc == 4 ? std::stoll(argv[3]) : 16;
  try {
    torch::jit::Module model = torch::jit::load(argv[1]);
    // Needed only for a copy made after the load (Module::clone,
    // torch::jit::freeze): its new functions raise until configured. On the
    // loaded model itself it changes nothing.
    jitamp::RewriteModule(model);
    model.eval();
    c10::InferenceMode inference;  // as servers call models; optional
    const at::Tensor output = model.forward({torch::randn({rows, cols})}).toTensor();
    std::cout << "dtype " << output.scalar_type() << "\nshape " << output.sizes() << "\n";
  } catch (const c10::Error& error) {
    std::cerr << "jitamp_example: " << error.what_without_backtrace() << "\n";
    return 1;
  } catch (const std::exception& error) {
    std::cerr << "jitamp_example: " << error.what() << "\n";
    return 1;
  }
  return 0;
}
