// jitamp_run: runs a TorchScript model saved after the jitamp rewrite, from
// C++ without Python, so that the test suite can check that a deployed model
// gives Python's outputs.
//
//   jitamp_run [--autocast] [--no-grad | --inference-mode] [--grad FILE] [--stock] [--calls N] MODEL.pt INPUT.bin ROWS COLS OUTPUT.bin
//
// INPUT.bin holds a ROWS x COLS float32 tensor as raw little-endian bytes,
// row-major. The model's forward(input) must return one tensor. The program
// calls forward N times (default 3), fails unless every call returns the same
// dtype, shape and bits, and writes the last output, converted to float32 and
// made contiguous, to OUTPUT.bin (raw bytes, host = little-endian order). On
// stdout it prints
//   dtype <ScalarType name, e.g. BFloat16 or Float>
//   shape <size> <size> ...
// --autocast makes the calls inside a CPU bfloat16 autocast region set up
// here, as `with torch.autocast("cpu", dtype=torch.bfloat16):` does in Python.
// --no-grad makes them with gradient recording off (torch.no_grad()),
// --inference-mode inside c10::InferenceMode (torch.inference_mode(), as
// model servers often run models).
//
// The jitamp ops reach the model through the static registrations of the
// jitamp_ops library, which this program must be linked with (see
// cpp/CMakeLists.txt, -DJITAMP_BUILD_TESTS=ON); nothing here names them.
//
// Built with JITAMP_RUN_PLAIN_HOST defined (the torch_run target), it is a
// host that has never heard of jitamp, as tritonserver or any prebuilt
// LibTorch program is: it links torch alone, behaves as --stock always, and
// gets jitamp's ops only from a library loaded into the process before it
// starts (LD_PRELOAD=libjitamp_ops.so).
#include <ATen/autocast_mode.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <torch/csrc/jit/passes/autocast.h>
#include <torch/script.h>

#ifndef JITAMP_RUN_PLAIN_HOST
#include "pipeline/function_rewrite.h"
#endif

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

#ifdef JITAMP_RUN_PLAIN_HOST
constexpr bool kPlainHost = true;
const char* const kProgram = "torch_run";
#else
constexpr bool kPlainHost = false;
const char* const kProgram = "jitamp_run";
#endif

const char* kUsage =
    "usage: jitamp_run [--autocast] [--no-grad | --inference-mode] [--grad FILE] [--stock] [--copy deepcopy|clone|freeze] [--calls N] MODEL.pt INPUT.bin ROWS COLS OUTPUT.bin\n"
    "  Loads MODEL.pt (a TorchScript model rewritten by jitamp), calls forward on the\n"
    "  ROWS x COLS float32 tensor in INPUT.bin (raw little-endian bytes) N times\n"
    "  (default 3), writes the output as float32 raw bytes to OUTPUT.bin and prints\n"
    "  its original dtype and shape.\n"
    "  --autocast  run forward inside a CPU bfloat16 autocast region\n"
    "  --autocast-fp16  the same with float16\n"
    "  --no-grad   run forward with gradient recording off\n"
    "  --inference-mode  run forward inside c10::InferenceMode\n"
    "  --grad FILE also run backward of sum(output as float32) and write the\n"
    "              input's gradient (float32 raw bytes) to FILE\n"
    "  --stock     load as a host that only links jitamp_ops does: no\n"
    "              jitamp::RewriteModule, PyTorch's JIT autocast left on\n"
    "  --copy deepcopy|clone|freeze  run a copy of the loaded model, made\n"
    "              by Module::deepcopy, Module::clone or (in eval mode)\n"
    "              torch::jit::freeze, before RewriteModule\n";

struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

int64_t parsePositive(const std::string& what, const std::string& text) {
  errno = 0;
  char* end = nullptr;
  const long long value = std::strtoll(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || errno != 0 || value <= 0) {
    throw UsageError(what + " must be a positive integer, got '" + text + "'");
  }
  return value;
}

at::Tensor readInput(const std::string& path, int64_t rows, int64_t cols) {
  std::ifstream file(path, std::ios::binary | std::ios::ate);
  if (!file) {
    throw std::runtime_error("cannot open input file '" + path + "'");
  }
  const auto size = static_cast<int64_t>(file.tellg());
  const int64_t expected = rows * cols * static_cast<int64_t>(sizeof(float));
  if (size != expected) {
    throw std::runtime_error(
        "input file '" + path + "' has " + std::to_string(size) + " bytes, expected " +
        std::to_string(expected) + " (" + std::to_string(rows) + " x " +
        std::to_string(cols) + " float32)");
  }
  at::Tensor input = at::empty({rows, cols}, at::kFloat);
  file.seekg(0);
  file.read(reinterpret_cast<char*>(input.data_ptr<float>()), expected);
  if (!file) {
    throw std::runtime_error("cannot read input file '" + path + "'");
  }
  return input;
}

void writeOutput(const std::string& path, const at::Tensor& output) {
  const at::Tensor data = output.detach().to(at::kFloat).contiguous();
  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  file.write(
      reinterpret_cast<const char*>(data.const_data_ptr<float>()),
      static_cast<std::streamsize>(data.numel() * sizeof(float)));
  if (!file) {
    throw std::runtime_error("cannot write output file '" + path + "'");
  }
}

// What `with torch.autocast("cpu", dtype=torch.bfloat16):` does on entry and
// exit (cache_enabled stays as it is, True by default).
class CpuAutocastRegion {
 public:
  explicit CpuAutocastRegion(at::ScalarType dtype)
      : prev_enabled_(at::autocast::is_autocast_enabled(at::kCPU)),
        prev_dtype_(at::autocast::get_autocast_dtype(at::kCPU)) {
    at::autocast::set_autocast_enabled(at::kCPU, true);
    at::autocast::set_autocast_dtype(at::kCPU, dtype);
    at::autocast::increment_nesting();
  }
  ~CpuAutocastRegion() {
    if (at::autocast::decrement_nesting() == 0) {
      at::autocast::clear_cache();
    }
    at::autocast::set_autocast_enabled(at::kCPU, prev_enabled_);
    at::autocast::set_autocast_dtype(at::kCPU, prev_dtype_);
  }
  CpuAutocastRegion(const CpuAutocastRegion&) = delete;
  CpuAutocastRegion& operator=(const CpuAutocastRegion&) = delete;

 private:
  bool prev_enabled_;
  at::ScalarType prev_dtype_;
};

at::Tensor callForward(
    torch::jit::Module& module,
    const at::Tensor& input,
    std::optional<at::ScalarType> autocast) {
  std::optional<CpuAutocastRegion> region;
  if (autocast) {
    region.emplace(*autocast);
  }
  const c10::IValue result = module.forward({input});
  if (!result.isTensor()) {
    throw std::runtime_error(
        std::string("forward must return a Tensor, returned ") + result.tagKind());
  }
  return result.toTensor();
}

bool sameBits(const at::Tensor& a, const at::Tensor& b) {
  // torch::equal is false for NaN == NaN; compare the bytes instead.
  if (a.scalar_type() != b.scalar_type() || a.sizes() != b.sizes()) {
    return false;
  }
  const at::Tensor ca = a.detach().contiguous();
  const at::Tensor cb = b.detach().contiguous();
  return std::memcmp(ca.const_data_ptr(), cb.const_data_ptr(), ca.nbytes()) == 0;
}

int run(int argc, char** argv) {
  std::optional<at::ScalarType> autocast;
  bool no_grad = false;
  bool inference_mode = false;
  bool stock = false;
  std::string copy;
  std::string grad_path;
  int64_t calls = 3;
  std::vector<std::string> positional;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "-h" || arg == "--help") {
      std::cout << kUsage;
      return 0;
    } else if (arg == "--autocast") {
      autocast = at::kBFloat16;
    } else if (arg == "--autocast-fp16") {
      autocast = at::kHalf;
    } else if (arg == "--no-grad") {
      no_grad = true;
    } else if (arg == "--inference-mode") {
      inference_mode = true;
    } else if (arg == "--stock") {
      stock = true;
    } else if (arg == "--copy") {
      copy = i + 1 < argc ? argv[++i] : "";
      if (copy != "deepcopy" && copy != "clone" && copy != "freeze") {
        throw UsageError("--copy needs 'deepcopy', 'clone' or 'freeze'");
      }
    } else if (arg == "--grad") {
      if (i + 1 == argc) {
        throw UsageError("--grad needs a file name");
      }
      grad_path = argv[++i];
    } else if (arg == "--calls") {
      if (i + 1 == argc) {
        throw UsageError("--calls needs a value");
      }
      calls = parsePositive("--calls", argv[++i]);
    } else if (arg.size() > 1 && arg[0] == '-') {
      throw UsageError("unknown option '" + arg + "'");
    } else {
      positional.push_back(arg);
    }
  }
  if (positional.size() != 5) {
    throw UsageError(
        "expected 5 arguments (MODEL.pt INPUT.bin ROWS COLS OUTPUT.bin), got " +
        std::to_string(positional.size()));
  }
  const uint16_t probe = 1;
  if (*reinterpret_cast<const uint8_t*>(&probe) != 1) {
    throw std::runtime_error("this program reads and writes little-endian data only");
  }
  // A model rewritten by jitamp names jitamp:: ops; without the library its
  // load fails with an unhelpful "Unknown builtin op".
  if (!kPlainHost &&
      !c10::Dispatcher::singleton().findSchema({"jitamp::autocast_enter", ""})) {
    throw std::runtime_error(
        "the jitamp ops are not registered: link jitamp_run with the jitamp_ops "
        "library (with -Wl,--no-as-needed)");
  }

  // TorchScript's own autocast pass off, as jitamp.enable() does in Python.
  // The model's loader object (pipeline/loader.cpp) already keeps it away from
  // the model's methods; this also covers the functions TorchScript creates
  // at run time for torch.jit.fork. --stock leaves it on, as a host that
  // only links jitamp_ops does.
  stock = stock || kPlainHost;
  if (!stock) {
    torch::jit::setAutocastMode(false);
  }

  const std::string& model_path = positional[0];
  const int64_t rows = parsePositive("ROWS", positional[2]);
  const int64_t cols = parsePositive("COLS", positional[3]);
  const at::Tensor input = readInput(positional[1], rows, cols);

  torch::jit::Module module;
  try {
    module = torch::jit::load(model_path);
  } catch (const c10::Error& error) {
    throw std::runtime_error(
        "cannot load model '" + model_path + "': " + error.what_without_backtrace());
  }
  if (copy == "deepcopy") {
    module = module.deepcopy();
  } else if (copy == "clone") {
    module = module.clone();
  } else if (copy == "freeze") {
    module.eval();
    module = torch::jit::freeze(module);
  }
  // What jitamp.rewrite() does in Python after torch.jit.load. A model
  // rewritten and saved by jitamp needs nothing more than the load (its
  // loader object has configured it): this changes nothing then, and
  // --stock skips it, as a host that only links jitamp_ops does.
#ifndef JITAMP_RUN_PLAIN_HOST
  if (!stock) {
    jitamp::RewriteModule(module);
  }
#endif

  std::optional<torch::NoGradGuard> no_grad_guard;
  if (no_grad) {
    no_grad_guard.emplace();
  }
  std::optional<c10::InferenceMode> inference_mode_guard;
  if (inference_mode) {
    inference_mode_guard.emplace();
  }
  TORCH_CHECK(
      !((no_grad || inference_mode) && !grad_path.empty()),
      "--grad needs gradients: drop --no-grad and --inference-mode");
  at::Tensor first;
  at::Tensor first_grad;
  at::Tensor output;
  at::Tensor grad;
  for (int64_t call = 1; call <= calls; ++call) {
    at::Tensor leaf = input;
    if (!grad_path.empty()) {
      leaf = input.detach().clone().requires_grad_(true);
    }
    output = callForward(module, leaf, autocast);
    if (!grad_path.empty()) {
      // d(sum(output as float32)) / d(input), as the Python test computes.
      output.to(at::kFloat).sum().backward();
      grad = leaf.grad();
    }
    if (call == 1) {
      first = output;
      first_grad = grad;
    } else if (!sameBits(first, output) || (grad.defined() && !sameBits(first_grad, grad))) {
      throw std::runtime_error(
          "call " + std::to_string(call) + " returned a different output or gradient than call 1");
    }
  }

  writeOutput(positional[4], output);
  if (!grad_path.empty()) {
    writeOutput(grad_path, grad);
  }
  std::cout << "dtype " << output.scalar_type() << "\nshape";
  for (const int64_t size : output.sizes()) {
    std::cout << ' ' << size;
  }
  std::cout << std::endl;
  return 0;
}

} // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const UsageError& error) {
    std::cerr << kProgram << ": " << error.what() << "\n" << kUsage;
    return 2;
  } catch (const c10::Error& error) {
    std::cerr << kProgram << ": error: " << error.what_without_backtrace() << "\n";
    return 1;
  } catch (const std::exception& error) {
    std::cerr << kProgram << ": error: " << error.what() << "\n";
    return 1;
  }
}
