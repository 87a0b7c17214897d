// aoti_run: runs an AOTInductor package from C++ without Python, through
// torch::inductor::AOTIModelPackageLoader (the loader LibTorch serving
// uses), so that the test suite can check that a program jitamp.export made
// gives, compiled and loaded there, the bits of eager's own export.
//
//   aoti_run [--calls N] PACKAGE.pt2 INPUTS.pt OUTPUT_PREFIX
//
// INPUTS.pt holds the program's inputs, flattened, as a list of tensors
// saved by torch.save (read with torch::pickle_load). The program runs the
// package N times (default 3) on them and writes each call's outputs, a list
// of tensors as a tuple, to OUTPUT_PREFIX<call>.pt (torch::pickle_save, which torch.load
// reads with weights_only=True). Exit status 2 is a usage error, 1 a failure
// (the message on stderr).
#include <torch/csrc/inductor/aoti_package/model_package_loader.h>
#include <torch/serialize.h>

#include <cstdlib>
#include <fstream>
#include <iostream>
#include <iterator>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace {

const char* kUsage = "usage: aoti_run [--calls N] PACKAGE.pt2 INPUTS.pt OUTPUT_PREFIX\n";

std::vector<char> readFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    throw std::runtime_error("cannot read " + path);
  }
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void writeFile(const std::string& path, const std::vector<char>& bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!out) {
    throw std::runtime_error("cannot write " + path);
  }
}

std::vector<at::Tensor> readTensors(const std::string& path) {
  c10::IValue loaded = torch::pickle_load(readFile(path));
  if (!loaded.isList()) {
    throw std::runtime_error(path + " does not hold a list of tensors");
  }
  std::vector<at::Tensor> tensors;
  for (const c10::IValue& item : loaded.toListRef()) {
    if (!item.isTensor()) {
      throw std::runtime_error(path + " holds a " + item.tagKind() + ", not a tensor");
    }
    tensors.push_back(item.toTensor());
  }
  return tensors;
}

}  // namespace

int main(int argc, char** argv) {
  int calls = 3;
  std::vector<std::string> positional;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--calls" && i + 1 < argc) {
      calls = std::atoi(argv[++i]);
    } else {
      positional.push_back(arg);
    }
  }
  if (positional.size() != 3 || calls < 1) {
    std::cerr << kUsage;
    return 2;
  }
  try {
    torch::inductor::AOTIModelPackageLoader loader(positional[0]);
    std::vector<at::Tensor> inputs = readTensors(positional[1]);
    for (int call = 1; call <= calls; ++call) {
      // a tuple, which torch.load reads with weights_only=True (a
      // List[Tensor] pickles through a TorchScript helper it refuses)
      std::vector<c10::IValue> outputs;
      for (const at::Tensor& output : loader.run(inputs)) {
        outputs.emplace_back(output);
      }
      writeFile(positional[2] + std::to_string(call) + ".pt", torch::pickle_save(c10::ivalue::Tuple::create(std::move(outputs))));
    }
  } catch (const std::exception& error) {
    std::cerr << "aoti_run: " << error.what() << "\n";
    return 1;
  }
  return 0;
}
