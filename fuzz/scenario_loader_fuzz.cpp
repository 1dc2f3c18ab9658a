// libFuzzer entry for the scenario loader. Any input must either load or throw InputError: another
// exception escapes to libFuzzer and counts as a finding, as does a crash or a sanitizer report.
// Lines after a line "#--set" are overrides (PATH=VALUE, as `--set` gives them), so the override paths
// are fuzzed along with the file they change. Each input is loaded twice, the second time collecting
// every problem (check_scenario_file's mode): that finds no problem exactly when the first load succeeds.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <shardflow/core/error.hpp>
#include <shardflow/core/scenario.hpp>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  std::vector<std::string> sets;
  constexpr std::string_view kMarker = "\n#--set\n";
  if (const std::size_t at = text.find(kMarker); at != std::string_view::npos) {
    std::string_view rest = text.substr(at + kMarker.size());
    text = text.substr(0, at + 1);
    while (!rest.empty()) {
      const std::size_t nl = rest.find('\n');
      sets.emplace_back(rest.substr(0, nl));
      rest = nl == std::string_view::npos ? std::string_view() : rest.substr(nl + 1);
    }
  }
  bool loaded = true;
  try {
    (void)shardflow::load_scenario_text(text, "fuzz.yaml", sets);
  } catch (const shardflow::InputError&) {
    loaded = false;  // bad input, reported properly: the expected outcome for most inputs
  }
  // Collecting every problem (shardflow validate) finds none exactly when the load succeeds.
  std::vector<shardflow::InputError> problems;
  shardflow::LoadOptions options;
  options.sets = sets;
  options.problems = &problems;
  bool thrown = false;
  try {
    (void)shardflow::load_scenario_text(text, "fuzz.yaml", options);
  } catch (const shardflow::InputError&) {
    thrown = true;
  }
  if (loaded != (problems.empty() && !thrown)) std::abort();
  return 0;
}
