#include <optional>
#include <stdexcept>
#include <string_view>

#include <nlohmann/json.hpp>

#include <shardflow/core/placeholders.hpp>
#include <shardflow/core/text.hpp>

namespace shardflow {
namespace {

std::string escape_dollars(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (const char c : s) {
    out += c;
    if (c == '$') out += '$';
  }
  return out;
}

// Calls on_text(literal) and on_placeholder(name, literal) for each piece of `arg`, in order.
template <typename Text, typename Placeholder>
void scan(const std::string& arg, Text&& on_text, Placeholder&& on_placeholder) {
  std::size_t pos = 0;
  for (;;) {
    const std::size_t open = arg.find("{{", pos);
    const std::size_t close = open == std::string::npos ? open : arg.find("}}", open + 2);
    if (close == std::string::npos) {
      on_text(std::string_view(arg).substr(pos));
      return;
    }
    on_text(std::string_view(arg).substr(pos, open - pos));
    const std::string name = arg.substr(open + 2, close - open - 2);
    pos = close + 2;
    on_placeholder(name, std::string_view(arg).substr(open, pos - open));
  }
}

// The value of {{item.KEY}} for `name` = "item.KEY".
std::string item_value(const std::string& name, const std::string& item,
                       std::optional<nlohmann::ordered_json>& parsed) {
  const std::string key = name.substr(5);
  if (!parsed) parsed = nlohmann::ordered_json::parse(item, nullptr, false);
  if (!parsed->is_object())
    throw std::runtime_error("{{" + name + "}}: the loop item " + item + " is not a mapping");
  if (!parsed->contains(key)) {
    std::string keys;
    for (const auto& [kk, vv] : parsed->items()) keys += (keys.empty() ? "" : ", ") + kk;
    throw std::runtime_error("{{" + name + "}}: unknown item key " + quote(key) + " (the item " + item +
                             " has: " + keys + ")");
  }
  const auto& v = parsed->at(key);
  return v.is_string() ? v.get<std::string>() : v.dump();
}

std::string fill(const std::string& arg, const std::string& item, const std::string& index_text, bool k8s) {
  std::string out;
  std::optional<nlohmann::ordered_json> parsed;
  auto text = [&](std::string_view s) { out += k8s ? escape_dollars(s) : std::string(s); };
  scan(arg, text, [&](const std::string& name, std::string_view literal) {
    if (name == "item") {
      text(item);
    } else if (name == "item.index") {
      out += index_text;
    } else if (name.starts_with("item.")) {
      text(item_value(name, item, parsed));
    } else {
      text(literal);
    }
  });
  return out;
}

}  // namespace

std::string fill_placeholders(const std::string& arg, const std::string& item, std::uint32_t index) {
  return fill(arg, item, std::to_string(index), false);
}

std::string fill_placeholders_k8s(const std::string& arg, const std::string& item,
                                  const std::string& index_text) {
  return fill(arg, item, index_text, true);
}

std::vector<std::string> item_keys_named(const std::vector<std::string>& args) {
  std::vector<std::string> keys;
  for (const auto& arg : args)
    scan(
        arg, [](std::string_view) {},
        [&](const std::string& name, std::string_view) {
          if (name.starts_with("item.") && name != "item.index") keys.push_back(name.substr(5));
        });
  return keys;
}

bool uses_item_value(const std::vector<std::string>& args) {
  bool uses = false;
  for (const auto& arg : args)
    scan(
        arg, [](std::string_view) {},
        [&](const std::string& name, std::string_view) {
          if (name == "item" || (name.starts_with("item.") && name != "item.index")) uses = true;
        });
  return uses;
}

}  // namespace shardflow
