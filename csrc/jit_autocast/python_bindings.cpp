// jitamp._C: the Python face of the pass and the policy table. Importing it
// also registers the jitamp ops (the other files of this library).
#include "function_rewrite.h"
#include "jitamp_rewrite.h"
#include "policy_table.h"

#include <torch/csrc/jit/api/module.h>
#include <torch/csrc/jit/python/pybind_utils.h>
#include <torch/extension.h>

namespace py = pybind11;

PYBIND11_MODULE(_C, m) {
  m.doc() = "jitamp's compiled pass and ops";

  m.def(
      "rewrite_graph",
      [](const std::shared_ptr<torch::jit::Graph>& graph) {
        return jitamp::RewriteAutocast(graph);
      },
      py::arg("graph"),
      "Rewrite one graph in place; returns whether it changed.");

  m.def(
      "rewrite_function",
      [](const torch::jit::StrongFunctionPtr& function, bool simple_executor) {
        return jitamp::RewriteFunction(
            *function.function_, jitamp::RewriteOptions{simple_executor});
      },
      py::arg("function"),
      py::arg("simple_executor") = true,
      "Rewrite a ScriptFunction and what it calls; returns the names changed.");

  m.def(
      "rewrite_module",
      [](const torch::jit::Module& module, bool simple_executor) {
        return jitamp::RewriteModule(
            module, jitamp::RewriteOptions{simple_executor});
      },
      py::arg("module"),
      py::arg("simple_executor") = true,
      "Rewrite every method of a ScriptModule (its C++ `_c`) and submodules.");

  m.def(
      "function_has_run",
      [](const torch::jit::StrongFunctionPtr& function) {
        return jitamp::HasRun(*function.function_);
      },
      py::arg("function"));

  m.def(
      "policy_table",
      [] {
        py::list rows;
        for (const auto& entry : jitamp::policyTable()) {
          std::string name = entry.name;
          if (entry.overload[0] != '\0') {
            name += std::string(".") + entry.overload;
          }
          rows.append(py::make_tuple(
              name,
              jitamp::policyName(entry.cpu),
              jitamp::policyName(entry.cuda),
              entry.cpu_implied,
              entry.cuda_implied));
        }
        return rows;
      },
      "(op, cpu policy, cuda policy, cpu implied, cuda implied) per entry.");
}
