// The placeholders a step's `command` may use, filled the same way by every backend:
//
//   {{item}}        the task's loop item as compact JSON (its index for `count:` loops)
//   {{item.index}}  the task's index in its nearest loop
//   {{item.KEY}}    the item's value at KEY (a string as is, anything else as JSON)
//
// Other {{...}} text is left as written.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace shardflow {

/// `arg` with the placeholders filled in for the item `item` (JSON text) at `index`. Throws
/// std::runtime_error for {{item.KEY}} when the item is not a mapping or has no KEY.
std::string fill_placeholders(const std::string& arg, const std::string& item, std::uint32_t index);

/// How the Kubernetes backend fills them: {{item.index}} becomes `index_text` as written (such as
/// "$(JOB_COMPLETION_INDEX)"), and every other character, filled values included, has each `$` doubled so
/// that Kubernetes' $(VAR) expansion of `command` leaves it as it was.
std::string fill_placeholders_k8s(const std::string& arg, const std::string& item,
                                  const std::string& index_text);

/// The item keys the arguments name as {{item.KEY}} ({{item.index}} aside), in order.
std::vector<std::string> item_keys_named(const std::vector<std::string>& args);

/// Whether the arguments use {{item}} or {{item.KEY}} (placeholders that need the item's value, not
/// just its index).
bool uses_item_value(const std::vector<std::string>& args);

}  // namespace shardflow
