// What of a scenario the simulator reads (simulation_view) and how it prices a node.
#include <shardflow/sim/simulator.hpp>

namespace shardflow::sim {

double node_price_per_hour(const NodePool& pool) {
  return pool.spot ? pool.price_per_hour * (1 - pool.spot_discount) : pool.price_per_hour;
}

Scenario simulation_view(const Scenario& scenario) {
  Scenario view = scenario;
  view.description.clear();
  view.file.clear();
  // Read only by node_price_per_hour, for the trace's NodeRecord::price_per_hour. `spot` itself stays:
  // spot nodes are reclaimed (spot_mean_reclaim), and it decides whether the discount applies.
  for (NodePool& pool : view.cluster.node_pools) {
    pool.price_per_hour = 0;
    pool.spot_discount = 0;
  }
  return view;
}

}  // namespace shardflow::sim
