// Naming what a user mistyped on the command line, and what they probably meant.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace shardflow::cli {

/// The candidates closest to `word` (without leading dashes), best first, at most two: a candidate that
/// contains the word or is contained in it (3 characters or more), else one within a small edit distance
/// (transpositions count as one edit). Empty when nothing is close.
std::vector<std::string> closest(const std::string& word, const std::vector<std::string>& candidates);

/// " (did you mean X?)" or " (did you mean X or Y?)" for closest(word, candidates), or "".
std::string did_you_mean(const std::string& word, const std::vector<std::string>& candidates,
                         const std::string& prefix = "");

/// If `word` names none of app's commands: "shardflow: unknown command "simulat" (did you mean simulate?);
/// the commands are ... (shardflow --help)", with a newline.
std::optional<std::string> unknown_command_message(CLI::App& app, const std::string& word);

/// After CLI11 refused the command line: the first word of argv that looks like an option (-x, --name,
/// --name=value) and that no option of the command it is given to knows, as the message to print
/// instead of CLI11's ("A is required" or "The following arguments were not expected: VALUE --typo" name
/// the mistake less well). The command is found by walking argv's subcommand names from `app`.
std::optional<std::string> unknown_option_message(CLI::App& app, int argc, const char* const* argv);

/// CLI11's message for a refused option value, said in the words the other messages use: an option
/// given twice ("At Most 1 required but received 2"), a value left out or empty ("1 required TEXT
/// missing", "--backend:  not in {...}"), a value given to a switch ("Could not convert: --no-files =
/// banana"), a short option with '=' ("-q=1"), an empty directory name. With a newline; nullopt for the
/// others (CLI11's own is printed).
std::optional<std::string> parse_error_message(const CLI::ParseError& e, int argc, const char* const* argv);

}  // namespace shardflow::cli
