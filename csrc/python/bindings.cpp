// jitamp._C: the Python face of the passes and the policy table. Importing
// it also registers the jitamp ops (the files of csrc/jit_autocast, linked
// into the same library).
#include "ir/graph_function_state.h"
#include "ir/op_casts.h"
#include "ir/policy_table.h"
#include "ops/scope_ops.h"
#include "ops/task_ops.h"
#include "passes/call_autocast_ops_directly.h"
#include "profiling/expose_static_casts_to_fuser.h"
#include "passes/lower_autocast_scopes.h"
#include "passes/strip_static_scopes.h"
#include "passes/wrap_in_autocast_scope.h"
#include "pipeline/function_rewrite.h"
#include "pipeline/pipeline.h"

#include <torch/csrc/DynamicTypes.h>
#include <torch/csrc/jit/api/module.h>
#include <torch/csrc/jit/python/pybind_utils.h>
#include <torch/csrc/jit/runtime/jit_exception.h>
#include <torch/extension.h>

namespace py = pybind11;

PYBIND11_MODULE(_C, m) {
  m.doc() = "jitamp's compiled pass and ops";

  m.def(
      "rewrite_graph",
      &jitamp::RewriteAutocast,
      py::arg("graph"),
      "Rewrite one graph in place; returns whether it changed.");

  m.def(
      "export_graph",
      &jitamp::ExportGraph,
      py::arg("graph"),
      "The export pipeline on a frozen copy's inlined graph, in place.");

  m.def(
      "wait_for_task_threads",
      &jitamp::WaitForTaskThreads,
      py::arg("timeout_ms"),
      py::call_guard<py::gil_scoped_release>(),
      "At exit: until the inter-op threads let finished tasks go (task_ops.h).");

  m.def(
      "set_eager_enter_result",
      [](bool is_none, std::string error_class, std::string error_message) {
        jitamp::SetEagerEnterResult(jitamp::EagerEnterResult{
            is_none, std::move(error_class), std::move(error_message)});
      },
      py::arg("is_none"),
      py::arg("with_none_error_class"),
      py::arg("with_none_error_message"),
      "What eager's autocast.__enter__ returns (see lower_autocast_scopes.h).");

  m.def(
      "set_eager_scope_check",
      [](py::object check) {
        // Kept for the life of the process (never destroyed: the library
        // outlives the interpreter).
        auto* held = new py::object(std::move(check));
        jitamp::SetEagerScopeCheck(
            [held](const std::string& device, at::ScalarType dtype, bool enabled) {
              py::gil_scoped_acquire gil;
              try {
                const py::object torch_dtype = py::reinterpret_borrow<py::object>(
                    reinterpret_cast<PyObject*>(torch::getTHPDtype(dtype)));
                return (*held)(device, torch_dtype, enabled)
                    .cast<bool>();
              } catch (py::error_already_set& error) {
                // Raised in scripted code as eager raises it: same class.
                const py::object cls = error.type();
                const std::string name =
                    py::str(cls.attr("__module__")).cast<std::string>() + "." +
                    py::str(cls.attr("__qualname__")).cast<std::string>();
                const std::string message = py::str(error.value());
                throw torch::jit::JITException(message, name);
              }
            });
      },
      py::arg("check"),
      "Eager's autocast.__init__ for device types other than CPU and CUDA "
      "(scope_ops.h, SetEagerScopeCheck).");

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
      "function_as_module",
      [](const torch::jit::StrongFunctionPtr& function) {
        // What ScriptFunction.save saves (torch's addFunctionToModule): a
        // module whose forward is the function's graph with `self` added.
        torch::jit::Module module("__torch__.PlaceholderModule");
        module.register_attribute("training", c10::BoolType::get(), true);
        auto graph =
            torch::jit::toGraphFunction(*function.function_).graph()->copy();
        graph->insertInput(0, "self")->setType(module._ivalue()->type());
        torch::jit::Function* forward =
            module._ivalue()->compilation_unit()->create_function(
                c10::QualifiedName(*module.type()->name(), "forward"),
                std::move(graph));
        module.type()->addMethod(forward);
        return module;
      },
      py::arg("function"),
      "The module ScriptFunction.save saves: forward is the function.");

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
      "wrap_method_in_autocast",
      [](const torch::jit::Module& module,
         const std::string& name,
         const std::string& device_type,
         const std::string& dtype) {
        const auto method = module.find_method(name);
        TORCH_CHECK(method, "the module has no method '", name, "'");
        torch::jit::Function& function = method->function();
        TORCH_CHECK(
            !jitamp::HasRun(function),
            "jitamp cannot wrap '",
            name,
            "' in an autocast scope: it has already run");
        TORCH_CHECK(
            dtype == "bfloat16" || dtype == "float16",
            "jitamp: an autocast scope's dtype is bfloat16 or float16, not ",
            dtype);
        jitamp::WrapInAutocastScope(
            torch::jit::toGraphFunction(function).graph(),
            device_type,
            dtype == "bfloat16" ? c10::kBFloat16 : c10::kHalf);
      },
      py::arg("module"),
      py::arg("method"),
      py::arg("device_type"),
      py::arg("dtype"),
      "Put a method's whole body in `with torch.autocast(device_type, dtype)`"
      " (wrap_in_autocast_scope.h); before the rewrite and the first call.");

  m.def(
      "set_fuser_casts_enabled",
      &jitamp::SetFuserCastsEnabled,
      py::arg("enabled"),
      "Whether the profiling executor shows the TensorExpr fuser the smart "
      "casts whose state is static (expose_static_casts_to_fuser.h; off by default); returns "
      "the previous setting.");

  m.def(
      "set_direct_calls_enabled",
      &jitamp::SetDirectCallsEnabled,
      py::arg("enabled"),
      "Whether simple-executor plans built from now on call ops whose "
      "autocast kernel only casts directly, making its casts themselves "
      "(call_autocast_ops_directly.h; on by default); returns the previous "
      "setting.");

  m.def(
      "freeze_module",
      &jitamp::FreezeModule,
      py::arg("frozen"),
      py::arg("simple_executor"),
      "The freeze pipeline (pipeline.h) on the copy torch.jit.freeze made of "
      "a module jitamp rewrote; returns the names of the methods whose casts "
      "it folded.");

  m.def(
      "optimize_for_inference",
      &jitamp::OptimizeForInference,
      py::arg("frozen"),
      py::arg("simple_executor"),
      py::arg("other_methods"),
      "The optimize_for_inference pipeline (pipeline.h): the freeze pipeline "
      "with torch.jit.optimize_for_inference's passes after the rewrite.");

  m.def(
      "preoptimize_module",
      &jitamp::PreoptimizeModule,
      py::arg("module"),
      "Make again the graph TorchScript runs of each method (and what it "
      "calls) that has not run, from its graph as it is now "
      "(function_rewrite.h): after editing a rewritten graph.");

  m.def(
      "static_scope_obstacles",
      &jitamp::StaticScopeObstacles,
      py::arg("graph"),
      "Why a folded frozen graph cannot do without jitamp's ops "
      "(strip_static_scopes.h); empty if it can.");

  m.def(
      "pipeline_steps",
      [] {
        py::list steps;
        for (const auto& step : jitamp::PipelineSteps()) {
          steps.append(py::make_tuple(
              step.pipeline,
              step.pass,
              step.header,
              step.on_graph,
              step.on_model));
        }
        return steps;
      },
      "(pipeline, pass, header, on_graph, on_model) for every step jitamp "
      "runs, in order (pipeline.h): the one pass list.");

  m.def(
      "run_passes",
      &jitamp::RunGraphPasses,
      py::arg("names"),
      py::arg("graph"),
      "Run graph passes of the list, in order, on `graph` as one run; "
      "returns whether they changed it (`jitamp opt --passes`).");

  m.def(
      "run_pipeline",
      &jitamp::RunGraphPipeline,
      py::arg("name"),
      py::arg("graph"),
      "Run the graph pipeline `name` on `graph`; returns the graph it made "
      "(`jitamp opt --pipeline`).");

  m.def(
      "run_module_passes",
      &jitamp::RunModulePasses,
      py::arg("names"),
      py::arg("module"),
      py::arg("simple_executor"),
      "Run steps of the freeze pipelines, in order, on a module "
      "torch.jit.freeze made (`jitamp opt --passes` on a model).");

  m.def(
      "freeze_standalone",
      &jitamp::FreezeStandalone,
      py::arg("frozen"),
      py::arg("simple_executor"),
      "The standalone_freeze pipeline (pipeline.h) on a module "
      "torch.jit.freeze made.");

  m.def(
      "policy_table",
      [] {
        py::list rows;
        for (const auto& row : jitamp::tableRows()) {
          rows.append(py::make_tuple(
              row.op,
              jitamp::policyName(row.cpu),
              jitamp::policyName(row.cuda),
              jitamp::policyName(row.effective.cpu),
              jitamp::policyName(row.effective.cuda),
              row.via,
              jitamp::policyVariesAcrossTorch(row.op, "")));
        }
        return rows;
      },
      "(op, cpu, cuda, effective cpu, effective cuda, via, varies) per "
      "table row.");

  m.def(
      "ops_missing_from_table",
      [](const std::string& device) {
        return jitamp::opsMissingFromTable(c10::Device(device).type());
      },
      py::arg("device"),
      "Ops the installed torch autocasts on `device` that the table lacks.");

  // Switches the tests set to stand in for another torch; not jitamp's API.
  py::module_ testing = m.def_submodule(
      "testing", "Tests only: make jitamp act as on another torch.");

  testing.def(
      "override_autocast_kernel",
      [](const std::string& op,
         const std::string& device,
         std::optional<bool> has_kernel) {
        jitamp::overrideAutocastKernelForTesting(
            op, c10::Device(device).type(), has_kernel);
      },
      py::arg("op"),
      py::arg("device"),
      py::arg("has_kernel"),
      "Pretend torch has (or lacks) an autocast kernel.");

  testing.def(
      "override_cast_order",
      &jitamp::overrideCastOrderForTesting,
      py::arg("last_first"),
      "Insert casts last argument first (True) or first "
      "argument first (False), as a torch built by another compiler would; "
      "None: this torch's order.");
}
