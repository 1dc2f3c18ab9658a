// libFuzzer entry for the scenario loader. Any input must either load or throw InputError: another
// exception escapes to libFuzzer and counts as a finding, as does a crash or a sanitizer report.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include <shardflow/core/error.hpp>
#include <shardflow/core/scenario.hpp>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    (void)shardflow::load_scenario_text(std::string_view(reinterpret_cast<const char*>(data), size),
                                        "fuzz.yaml");
  } catch (const shardflow::InputError&) {
    // Bad input, reported properly: the expected outcome for most inputs.
  }
  return 0;
}
