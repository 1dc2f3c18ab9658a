// Small helpers to build pipelines in code for tests (no YAML involved).
#pragma once

#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

#include <shardflow/core/pipeline.hpp>

namespace shardflow::testing {

inline Step component(std::string name, double seconds, std::vector<StepIndex> deps = {}) {
  Step s;
  s.name = std::move(name);
  s.deps = std::move(deps);
  s.component.duration.base = Duration::from_seconds(seconds);
  s.component.resources.cpu = 1000;
  return s;
}

inline Step with_loop(Step s, std::uint32_t count, std::uint32_t parallelism = 0) {
  s.loop = Loop{count, {}, parallelism};
  return s;
}

inline Step group(std::string name, std::vector<Step> children, std::vector<StepIndex> deps = {},
                  std::uint32_t parallelism = 0) {
  Step s;
  s.name = std::move(name);
  s.steps = std::move(children);
  s.deps = std::move(deps);
  s.parallelism = parallelism;
  return s;
}

inline Pipeline pipeline(std::vector<Step> steps, std::string name = "test") {
  return Pipeline{std::move(name), std::move(steps)};
}

}  // namespace shardflow::testing
