#include "suggest.hpp"

#include <algorithm>
#include <cstddef>

#include <shardflow/core/text.hpp>

namespace shardflow::cli {
namespace {

std::string strip_dashes(const std::string& s) {
  std::size_t i = 0;
  while (i < s.size() && s[i] == '-') ++i;
  return s.substr(i);
}

// "shardflow k8s status" for the chain app, k8s, status.
std::string command_of(const std::vector<CLI::App*>& chain) {
  std::string command = "shardflow";
  for (std::size_t c = 1; c < chain.size(); ++c) command += " " + chain[c]->get_name();
  return command;
}

// "shardflow k8s: unknown command "stat" (did you mean status?); the commands are cleanup and status
// (shardflow k8s --help)", for a word that is none of the last command's subcommands.
std::string unknown_command(const std::vector<CLI::App*>& chain, const std::string& word) {
  const auto subs = chain.back()->get_subcommands([](CLI::App*) { return true; });
  std::vector<std::string> names;
  std::string list;
  for (std::size_t k = 0; k < subs.size(); ++k) {
    names.push_back(subs[k]->get_name());
    list += (k == 0 ? "" : k + 1 == subs.size() ? " and " : ", ") + subs[k]->get_name();
  }
  const std::string command = command_of(chain);
  return command + ": unknown command \"" + word + "\"" + did_you_mean(word, names) + "; the commands are " +
         list + " (" + command + " --help)\n";
}

}  // namespace

std::optional<std::string> unknown_command_message(CLI::App& app, const std::string& word) {
  for (CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; }))
    if (sub->check_name(word)) return std::nullopt;
  return unknown_command({&app}, word);
}

std::vector<std::string> closest(const std::string& raw, const std::vector<std::string>& candidates) {
  const std::string word = strip_dashes(raw);
  if (word.empty() || word.size() > 64) return {};  // a long word is a value, not a typo of a name
  // Scores: containment first (by how much the lengths differ), then edits; lower is closer.
  constexpr std::size_t kContains = 0, kEdits = 1000;
  std::vector<std::pair<std::size_t, std::string>> scored;
  for (const std::string& c : candidates) {
    if (c.empty() || c == word) continue;
    const std::string& shorter = c.size() < word.size() ? c : word;
    const std::string& longer = c.size() < word.size() ? word : c;
    if (shorter.size() >= 3 && longer.find(shorter) != std::string::npos) {
      scored.emplace_back(kContains + (longer.size() - shorter.size()), c);
      continue;
    }
    const std::size_t d = edit_distance(word, c);
    if (d <= std::max<std::size_t>(1, std::min(word.size(), c.size()) / 3))
      scored.emplace_back(kEdits + d, c);
  }
  std::stable_sort(scored.begin(), scored.end(),
                   [](const auto& x, const auto& y) { return x.first < y.first; });
  std::vector<std::string> out;
  for (const auto& [score, name] : scored) {
    if (out.size() == 2 || score != scored.front().first) break;  // only the equally close best ones
    if (std::find(out.begin(), out.end(), name) == out.end()) out.push_back(name);
  }
  return out;
}

std::string did_you_mean(const std::string& word, const std::vector<std::string>& candidates,
                         const std::string& prefix) {
  const std::vector<std::string> best = closest(word, candidates);
  if (best.empty()) return "";
  std::string s = " (did you mean " + prefix + best[0];
  if (best.size() > 1) s += " or " + prefix + best[1];
  return s + "?)";
}

std::optional<std::string> unknown_option_message(CLI::App& app, int argc, const char* const* argv) {
  std::vector<CLI::App*> chain{&app};  // the app and the subcommands named so far
  bool value_next = false;             // the previous word was an option that takes a value
  for (int i = 1; i < argc; ++i) {
    const std::string word = argv[i];
    if (word == "--") break;  // what follows is positional
    if (value_next) {
      value_next = false;
      continue;
    }
    if (word.size() < 2 || word[0] != '-' || (word[1] >= '0' && word[1] <= '9') || word[1] == '.') {
      // A positional or a negative number; a subcommand's name moves down the chain.
      const auto subs = chain.back()->get_subcommands([](CLI::App*) { return true; });
      const auto named =
          std::find_if(subs.begin(), subs.end(), [&](CLI::App* s) { return s->check_name(word); });
      if (named != subs.end()) {
        chain.push_back(*named);
        continue;
      }
      // A command made only of subcommands (k8s) takes no other word: this one is a mistyped command.
      const auto options = chain.back()->get_options();
      const bool takes_positionals = std::any_of(options.begin(), options.end(),
                                                 [](const CLI::Option* o) { return o->get_positional(); });
      if (chain.size() > 1 && !subs.empty() && !takes_positionals) return unknown_command(chain, word);
      continue;
    }
    const bool long_form = word[1] == '-';
    const std::string name = long_form ? word.substr(0, word.find('=')) : word.substr(0, 2);
    const CLI::Option* known = nullptr;
    for (auto it = chain.rbegin(); it != chain.rend() && known == nullptr; ++it)
      known = (*it)->get_option_no_throw(name);
    if (known != nullptr) {
      // `--opt value` (not `--opt=value`, not `-xVALUE`) takes the next word as its value.
      value_next = known->get_items_expected_min() > 0 && word == name;
      continue;
    }
    std::vector<std::string> names;
    for (const CLI::Option* o : chain.back()->get_options())
      for (const std::string& l : o->get_lnames()) names.push_back(l);
    const std::string command = command_of(chain);
    // An option of other commands (simulate --backend is run's; shardflow --seed 3 simulate: before the
    // command): said, since a typo's suggestion cannot find it.
    std::vector<std::string> owners;
    for (const CLI::App* sub : chain.front()->get_subcommands([](CLI::App*) { return true; }))
      if (sub != chain.back() && sub->get_option_no_throw(name) != nullptr) owners.push_back(sub->get_name());
    std::string where;
    if (!owners.empty() && chain.size() == 1) {
      where = " (options go after the command: shardflow COMMAND " + name + " ...)";
    } else if (!owners.empty()) {
      where = " (an option of ";
      for (std::size_t k = 0; k < owners.size() && k < 4; ++k)
        where += (k ? (k + 1 == owners.size() || k == 3 ? " and " : ", ") : "") +
                 ("`shardflow " + owners[k] + "`");
      where += ")";
    }
    const std::string meant = did_you_mean(name, names, "--");
    return command + ": unknown option \"" + name + "\"" + (meant.empty() ? where : meant) + "; " + command +
           " --help lists the options\n";
  }
  return std::nullopt;
}

std::optional<std::string> parse_error_message(const CLI::ParseError& e, int argc, const char* const* argv) {
  const std::string what = e.what();
  const auto ends = [&](std::string_view tail) { return what.ends_with(tail); };
  const std::size_t colon = what.find(": ");
  const std::string option = colon == std::string::npos ? std::string() : what.substr(0, colon);
  const std::string rest = colon == std::string::npos ? what : what.substr(colon + 2);
  // "--seed: At Most 1 required but received 2"
  if (rest.starts_with("At Most 1 required but received ")) {
    return option + ": given " + rest.substr(std::string_view("At Most 1 required but received ").size()) +
           " times; it takes one value: give it once\n";
  }
  // "--seed: 1 required TEXT:UINT64 missing" (--seed= or --seed at the end)
  if (!option.empty() && option.starts_with("-") && rest.starts_with("1 required ") && ends(" missing"))
    return option + ": the value is missing; give one (" + option + " VALUE)\n";
  // "--backend:  not in {sim,local,k8s}" (empty), "--backend: cloud not in {sim,local,k8s}"
  if (const std::size_t in = rest.find(" not in {");
      !option.empty() && in != std::string::npos && ends("}")) {
    std::string choices = rest.substr(in + 9, rest.size() - in - 10);
    for (std::size_t c = choices.find(','); c != std::string::npos; c = choices.find(',', c + 2))
      choices.replace(c, 1, ", ");
    const std::string value = rest.substr(0, in);
    if (value.empty() || value == " ") return option + ": the value is empty; give one of " + choices + "\n";
    return option + ": " + quote(value) + " is not one of " + choices + "\n";
  }
  // "Could not convert: --no-files = banana": a switch given a value.
  if (what.starts_with("Could not convert: ")) {
    const std::string body = what.substr(std::string_view("Could not convert: ").size());
    if (const std::size_t eq = body.find(" = "); eq != std::string::npos)
      return body.substr(0, eq) + ": is a switch and takes no value, got " + quote(body.substr(eq + 3)) +
             " (leave the value out)\n";
  }
  // "The following argument was not expected: -=1" (-q=1): a short option takes no '='.
  if (what.starts_with("The following argument was not expected: -="))
    for (int i = 1; i < argc; ++i) {
      const std::string_view a = argv[i];
      if (a.size() > 2 && a[0] == '-' && a[1] != '-' && a[2] == '=')
        return std::string(a) + ": a short option takes no '=' (" + std::string(a.substr(0, 2)) +
               " alone, or its long name --NAME=VALUE)\n";
    }
  // "The following argument was not expected: 6" after "--vary PATH=4," (a space after a comma split the
  // list into two words).
  if (const std::string_view head = "The following argument was not expected: "; what.starts_with(head))
    for (int i = 2; i < argc; ++i)
      if (const std::string_view prev = argv[i - 1]; what.substr(head.size()) == argv[i] && prev.size() > 1 &&
                                                     prev.back() == ',' &&
                                                     prev.find('=') != std::string_view::npos)
        return (i >= 3 && std::string_view(argv[i - 2]).starts_with("--") ? std::string(argv[i - 2]) + " "
                                                                          : "") +
               std::string(prev) + " " + argv[i] +
               ": a space after a comma split one value list in two; write it without the space (" +
               std::string(prev) + argv[i] + ") or quote it\n";
  // "dirs: Directory does not exist: " (merge '')
  if (rest == "Directory does not exist: " || what.ends_with("Directory does not exist: "))
    return "an empty directory name was given; name each directory\n";
  return std::nullopt;
}

}  // namespace shardflow::cli
