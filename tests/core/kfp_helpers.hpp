// What the KFP importer's tests share: a pipeline's shape in one line, and load options.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include <shardflow/core/pipeline.hpp>
#include <shardflow/core/scenario.hpp>

namespace shardflow::test {

// A pipeline's steps in one line: name[count] or name[count/parallelism] for a loop, (after a,b) for
// dependencies, {children} for a group; steps in the file's order.
inline std::string shape(const std::vector<Step>& steps) {
  std::string out;
  for (const Step& s : steps) {
    if (!out.empty()) out += " ";
    out += s.name;
    if (s.loop) {
      out += "[" + std::to_string(s.loop->count);
      if (s.loop->parallelism) out += "/" + std::to_string(s.loop->parallelism);
      out += "]";
    }
    if (!s.after.empty()) {
      out += "(after ";
      for (std::size_t i = 0; i < s.after.size(); ++i) out += (i ? "," : "") + s.after[i];
      out += ")";
    }
    if (s.is_group()) out += "{" + shape(s.steps) + "}";
  }
  return out;
}

inline LoadOptions options(std::string overlay = "", std::vector<std::string> params = {},
                           std::vector<std::string>* warnings = nullptr) {
  LoadOptions o;
  if (!overlay.empty()) o.overlays.push_back({"model.yaml", std::move(overlay)});
  o.params = std::move(params);
  if (warnings) o.warn = [warnings](const std::string& w) { warnings->push_back(w); };
  return o;
}

}  // namespace shardflow::test
