// WfCommons workflow instances (WfFormat 1.6, 1.5 and 1.4 JSON, https://github.com/wfcommons/WfFormat) read
// as scenarios: each task becomes a component step with its recorded runtime, its parents as `after`, its
// files' sizes as input and output, and each machine a node pool of one node; the scheduler is the
// `list` policy with no overheads, as workflow simulators (WRENCH, DSLab) schedule. Like the KFP
// importer, it builds a scenario document that the scenario loader reads (scenario_document.hpp), so
// overlays, --set and every check are the loader's, and a value the loader rejects is reported at its
// place in the JSON file. docs/wfcommons-import.md describes the mapping. Private to core.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include <shardflow/core/scenario.hpp>

namespace shardflow {

/// Whether `text` is read as a WfCommons instance: its first character (after blanks and a UTF-8 byte
/// order mark) is `{` and it has a `"workflow"` key. Decided before any parsing, so that bad JSON in an
/// instance gets a JSON error rather than a YAML one.
bool looks_like_wfcommons(std::string_view text);

/// The ways an import is built, fastest first.
enum class WfRoute {
  direct,        // without overlays, --set or --cluster: no scenario document at all
  direct_steps,  // overlays, --set or --cluster that leave the pipeline alone: a document without it
  document,      // the whole scenario document: anything else, and every input the loader rejects
};

/// The scenario a WfCommons instance imports to under `options`, by the fastest route that applies: an
/// instance the loader would accept is built without a scenario document when nothing changes it (the
/// loader's defaults: ten times faster on 1,000 tasks), and with one for its cluster alone when the
/// changes leave the pipeline alone. `via_document` forces the whole document, and `route` (if given)
/// says which was taken, for the tests that check that the routes give the same scenario.
Scenario import_wfcommons(std::string_view text, const std::string& file, const LoadOptions& options,
                          bool via_document = false, WfRoute* route = nullptr);

/// An `executedAt` timestamp in one of the forms WfCommons instances use (2020-12-25T20:10:08+00:00,
/// 20200415T183333+0000, 03-23-21T06:04:36Z: month-day-year), as UTC "2020-12-25T20:10:08Z";
/// nullopt if it is none of them.
std::optional<std::string> normalize_wfcommons_timestamp(std::string_view text);

}  // namespace shardflow
