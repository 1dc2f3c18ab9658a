// WfCommons workflow instances (WfFormat 1.5 and 1.4 JSON, https://github.com/wfcommons/WfFormat) read as
// scenarios: each task becomes a component step with its recorded runtime, its parents as `after`, its
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

/// The scenario a WfCommons instance imports to under `options`. Without overlays, --set or --cluster, an
/// instance the loader would accept is built directly (the loader's defaults, no scenario document: ten
/// times faster on 1,000 tasks); `via_document` forces the document route, for the test that checks both
/// routes give the same scenario.
Scenario import_wfcommons(std::string_view text, const std::string& file, const LoadOptions& options,
                          bool via_document = false);

/// An `executedAt` timestamp in one of the forms WfCommons instances use (2020-12-25T20:10:08+00:00,
/// 20200415T183333+0000, 03-23-21T06:04:36Z: month-day-year), as UTC "2020-12-25T20:10:08Z";
/// nullopt if it is none of them.
std::optional<std::string> normalize_wfcommons_timestamp(std::string_view text);

}  // namespace shardflow
