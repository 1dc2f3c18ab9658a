// Errors for bad input. Every message a user sees for a bad scenario, IR file, kubeconfig or flag names
// the place and the field:
//
//   scenarios/x.yaml:12:20: pipeline.steps[0].parallel_for.parallelism: must be >= 0, got -2
#pragma once

#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace shardflow {

/// Where something was written: file, 1-based line and column (0 when unknown). A command-line flag's
/// place has line 0 and its text as `file` (`--set cluster.node_pools[0].count=8`); its column is 0, or,
/// when the fault is in the flag's value rather than its path, the 1-based column in the flag's argument
/// where the value begins (a --set's text after '='), so that a caller can tell the two apart. str()
/// shows neither (the flag's text says it all).
struct SourceLocation {
  std::string file;
  int line = 0;
  int column = 0;
  [[nodiscard]] std::string str() const;  // "file:line:col", "file" or ""
  friend bool operator==(const SourceLocation&, const SourceLocation&) = default;
};

/// Bad input from a user. what() is "file:line:col: field: message" (parts that are empty are left out).
class InputError : public std::runtime_error {
 public:
  InputError(SourceLocation where, std::string field, std::string message);
  [[nodiscard]] const SourceLocation& where() const { return where_; }
  [[nodiscard]] const std::string& field() const { return field_; }
  [[nodiscard]] const std::string& message() const { return message_; }
  /// Thrown as an InfeasibleError (kept by copies of it as an InputError, as `validate` collects them).
  [[nodiscard]] bool infeasible() const { return infeasible_; }

 protected:
  bool infeasible_ = false;

 private:
  SourceLocation where_;
  std::string field_;
  std::string message_;
};

/// Several problems found at once (a backend's check of every step): what() is each one's, a line apiece,
/// and the InputError itself is the first's (where(), field(), message()).
class InputErrors : public InputError {
 public:
  explicit InputErrors(const std::vector<InputError>& problems);  // at least one
  [[nodiscard]] const char* what() const noexcept override { return all_.c_str(); }
  [[nodiscard]] const std::vector<InputError>& problems() const { return problems_; }

 private:
  std::vector<InputError> problems_;
  std::string all_;
};

/// Input that is well formed but describes a cluster that cannot run the pipeline: no nodes, a pod that
/// fits no node it may use, nodes too small for their DaemonSets. A sweep reports such a configuration as
/// one that cannot run, rather than stop (a --vary of a pool's count down to 0, say), when it has no other
/// problem; everything else treats it as any InputError.
class InfeasibleError : public InputError {
 public:
  InfeasibleError(SourceLocation where, std::string field, std::string message)
      : InputError(std::move(where), std::move(field), std::move(message)) {
    infeasible_ = true;
  }
};

}  // namespace shardflow
