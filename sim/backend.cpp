#include <memory>

#include <shardflow/sim/simulator.hpp>

namespace shardflow::sim {
namespace {

class SimBackend final : public Backend {
 public:
  explicit SimBackend(NodeSearch search) : search_(search) {}
  [[nodiscard]] std::string name() const override { return "sim"; }
  // The loader already checked what the simulator needs (every task fits on some pool).
  void check(const Scenario&, const Plan&) const override {}
  Trace run(const Scenario& scenario, const Plan& plan, const RunOptions& options,
            RunObserver* /*observer*/) const override {
    SimOptions o;
    o.seed = options.seed;
    o.stop = options.stop;
    o.horizon = options.horizon;
    o.node_search = search_;
    o.draws = options.draws;
    o.records = options.records;
    o.progress = options.progress;
    return simulate(scenario, plan, o);
  }

 private:
  NodeSearch search_;
};

}  // namespace

std::unique_ptr<Backend> make_backend(NodeSearch node_search) {
  return std::make_unique<SimBackend>(node_search);
}

}  // namespace shardflow::sim
