// sim::simulate: the Model (model.hpp) and its parts compile here, as one translation unit, so that
// the hot paths across parts inline as they did in one class.
#include <shardflow/sim/simulator.hpp>

#include "autoscaler.inl"
#include "controller.inl"
#include "model.hpp"
#include "node_events.inl"
#include "pod_lifecycle.inl"
#include "speculation.inl"

namespace shardflow::sim {

Trace simulate(const Scenario& scenario, const Plan& plan, const SimOptions& options, SimStats& stats) {
  Model model(scenario, plan, options);
  model.run();
  stats = model.stats();
  return model.take_trace();
}

Trace simulate(const Scenario& scenario, const Plan& plan, const SimOptions& options) {
  SimStats stats;
  return simulate(scenario, plan, options, stats);
}

}  // namespace shardflow::sim
