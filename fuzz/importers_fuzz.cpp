// libFuzzer entry for the two importers. The first byte chooses one: 'w' reads the rest as a WfCommons
// instance (import_wfcommons, whatever the content looks like), anything else as a scenario file through
// load_scenario_text, which hands a KFP PipelineSpec to the KFP importer (the corpus,
// fuzz/corpus-importers/, holds both kinds). Any input must import or throw InputError; another exception,
// a crash or a sanitizer report is a finding. For WfCommons input, the positioned JSON reader must accept
// exactly what nlohmann's own parser accepts.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include <shardflow/core/error.hpp>
#include <shardflow/core/scenario.hpp>

#include "json_document.hpp"
#include "wfcommons_import.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);
  try {
    if (data[0] == 'w') {
      bool parsed = true;
      try {
        (void)shardflow::parse_json_document(text, "fuzz.json");
      } catch (const shardflow::InputError&) {
        parsed = false;
      }
      if (parsed != nlohmann::json::accept(text)) std::abort();  // the two readers disagree
      (void)shardflow::import_wfcommons(text, "fuzz.json", {});
    } else {
      (void)shardflow::load_scenario_text(text, "fuzz.yaml");
    }
  } catch (const shardflow::InputError&) {
    // Bad input, reported properly.
  }
  return 0;
}
