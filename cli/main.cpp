// The `shardflow` command: CLI11 wiring only; the work lives in the layers.
#include <array>
#include <cerrno>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <exception>
#include <filesystem>
#include <fstream>
#include <functional>
#include <initializer_list>
#include <iostream>
#include <iterator>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include <shardflow/core/error.hpp>
#include <shardflow/core/machine.hpp>
#include <shardflow/core/plan.hpp>
#include <shardflow/core/plan_summary.hpp>
#include <shardflow/core/scenario.hpp>
#include <shardflow/core/text.hpp>
#include <shardflow/exec/kernels.hpp>

#include "commands.hpp"
#include "suggest.hpp"

namespace shardflow::cli {
namespace {

std::string count(std::uint64_t n, const std::string& noun) {
  return std::to_string(n) + " " + noun + (n == 1 ? "" : "s");
}

int validate(const std::vector<std::string>& files, const LoadArgs& args) {
  const LoadOptions options = load_options(args);
  // Every file is checked: one bad file does not hide what is wrong with the next.
  int status = 0;
  for (const std::string& given : files) {
    std::string f = given;  // "-" is standard input, /dev/stdin, as every command reads it
    if (const std::string why = input_file_check()(f); !why.empty()) {  // missing, or a directory
      std::cerr << printable(why) << "\n";
      status = 2;
      continue;
    }
    ScenarioCheck check = check_scenario_file(f, options);
    std::optional<Plan> plan;
    if (check.scenario) {
      // The kernels `run --backend local` would refuse, with its messages: every one of them.
      plan = Plan::unroll(check.scenario->pipeline);
      check.problems = exec::kernel_problems(*check.scenario, *plan);
      order_problems(check.problems, f);
    } else if (check.partial) {
      // Other problems too: the kernels of the steps that could be read (a step left out for its own
      // problems is not looked at; nor is what a kernel reads from the steps before it).
      for (InputError& e : exec::kernel_spec_problems(check.partial->pipeline.steps))
        check.problems.push_back(std::move(e));
      order_problems(check.problems, f);
    }
    if (!check.problems.empty()) {
      for (const InputError& e : check.problems) std::cerr << printable(e.what()) << "\n";
      // Of several files, one whose problem does not name it (a --set's, an overlay's) is named.
      const bool unnamed =
          files.size() > 1 && std::any_of(check.problems.begin(), check.problems.end(),
                                          [&](const InputError& e) { return e.where().file != f; });
      if (check.problems.size() > 1 || unnamed)
        std::cerr << f << ": " << count(check.problems.size(), "problem") << "\n";
      status = 2;
      continue;
    }
    const Scenario& s = *check.scenario;
    int nodes = 0;
    for (const NodePool& p : s.cluster.node_pools) nodes += p.count;
    std::cout << f << ": ok (" << count(plan->task_count(), "task") << " from "
              << count(plan->steps().size(), "component step") << "; "
              << count(static_cast<std::uint64_t>(nodes), "node") << " in "
              << count(s.cluster.node_pools.size(), "pool") << ")\n";
  }
  return status;
}

int explain(const std::string& file, bool json, const LoadArgs& args) {
  // Loaded without the limit: a pipeline over it is counted from the pipeline model, never unrolled.
  // So is one over what this machine's memory holds.
  LoadOptions options = load_options(args);
  options.max_tasks = std::numeric_limits<std::uint64_t>::max();
  options.check_memory = false;
  const Scenario s = load_scenario_reporting_all(file, options);
  const char* why_not = Plan::count_tasks(s.pipeline) > args.max_tasks ? "over the --max-tasks limit"
                        : !task_memory_fits(s.pipeline, machine_memory())
                            ? "more than this machine's memory holds"
                            : nullptr;
  PlanSummary summary;
  if (why_not == nullptr) {
    summary = summarize(Plan::unroll(s.pipeline), s.pipeline);
  } else {
    summary = summarize_pipeline(s.pipeline);
    summary.not_unrolled_because = why_not;
    // Over this machine's memory, a higher --max-tasks would not unroll it either.
    if (!task_memory_fits(s.pipeline, machine_memory()))
      summary.unroll_advice = "unrolling it takes more memory than this machine has";
  }
  const double cpu_bound = cpu_capacity_bound_s(summary, s.cluster);
  if (json)
    write_summary_json(std::cout, summary, cpu_bound, &s.cluster);
  else
    print_summary(std::cout, summary, cpu_bound, &s.cluster);
  return 0;
}

// Every command's arguments, filled by CLI11.
struct Args {
  std::vector<std::string> validate_files;
  LoadArgs validate_load;
  std::string explain_file;
  bool explain_json = false;
  LoadArgs explain_load;
  SimulateArgs simulate;
  SimulateArgs run;
  SweepArgs sweep;
  MergeArgs merge;
  CompareArgs compare;
  CalibrateArgs calibrate;
  ReportArgs report;
  K8sArgs k8s;
};

// The commands, in the order help lists them: each one's name, how its subcommand and options are
// built, and what runs once CLI11 has parsed it. The one list of them.
struct Command {
  const char* name;
  CLI::App* (*add)(CLI::App& app, Args& args);
  int (*run)(CLI::App& cmd, Args& args);
};

constexpr Command kCommands[] = {
    {"validate",
     [](CLI::App& app, Args& a) {
       CLI::App* cmd = app.add_subcommand(
           "validate",
           "Check scenario files: every problem found, each with file:line:col and field, or "
           "`FILE: ok` and what it unrolls to");
       // No check of the files here: one that is missing is reported with the others' problems.
       cmd->add_option("files", a.validate_files, std::string(kInputFileHelp) + "; several at once")
           ->required();
       add_load_options(cmd, a.validate_load);
       cmd->footer(
           "Examples:\n"
           "  shardflow validate scenarios/*.yaml\n"
           "  shardflow validate scenarios/shard-preprocess-train.yaml --set "
           "cluster.node_pools[cpu].count=40\n"
           "  shardflow validate pipeline.yaml --overlay model.yaml      # a compiled KFP pipeline and its "
           "model\n"
           "Every file is checked, and each scenario file past its problems: a step, node pool or section\n"
           "with a problem is left out and the rest is read, and checks that need what was left out\n"
           "are skipped (so fixing one problem may bring up another: run again). YAML syntax errors,\n"
           "--set/--overlay problems and imported files (compiled KFP, WfCommons) stop at the first.\n"
           "Exit status: 0 every file is valid, 2 some file is not.");
       return cmd;
     },
     [](CLI::App&, Args& a) { return validate(a.validate_files, a.validate_load); }},
    {"explain",
     [](CLI::App& app, Args& a) {
       CLI::App* cmd = app.add_subcommand(
           "explain",
           "Show what a scenario unrolls to: steps, task counts, fan-out widths, critical path, total work");
       cmd->add_option("file", a.explain_file, kInputFileHelp)->required()->transform(input_file_check());
       cmd->add_flag("--json", a.explain_json, "Print JSON instead of a table");
       add_load_options(cmd, a.explain_load);
       cmd->footer(
           "Examples:\n"
           "  shardflow explain scenarios/shard-preprocess-train.yaml\n"
           "  shardflow explain scenarios/regional-evaluation.yaml --json | python3 -m json.tool\n"
           "  shardflow explain pipeline.yaml --param shards=100   # a compiled KFP pipeline\n"
           "--set, --vary and --variant select a step it prints as a/b with pipeline.steps[a].steps[b].");
       return cmd;
     },
     [](CLI::App&, Args& a) { return explain(a.explain_file, a.explain_json, a.explain_load); }},
    {"simulate", [](CLI::App& app, Args& a) { return add_simulate_command(app, a.simulate); },
     [](CLI::App&, Args& a) { return run_simulate(a.simulate); }},
    {"run", [](CLI::App& app, Args& a) { return add_run_command(app, a.run); },
     [](CLI::App&, Args& a) { return run_simulate(a.run); }},
    {"sweep", [](CLI::App& app, Args& a) { return add_sweep_command(app, a.sweep); },
     [](CLI::App&, Args& a) { return run_sweep_command(a.sweep); }},
    {"merge", [](CLI::App& app, Args& a) { return add_merge_command(app, a.merge); },
     [](CLI::App&, Args& a) { return run_merge_command(a.merge); }},
    {"compare", [](CLI::App& app, Args& a) { return add_compare_command(app, a.compare); },
     [](CLI::App&, Args& a) { return run_compare_command(a.compare); }},
    {"calibrate", [](CLI::App& app, Args& a) { return add_calibrate_command(app, a.calibrate); },
     [](CLI::App&, Args& a) { return run_calibrate_command(a.calibrate); }},
    {"report", [](CLI::App& app, Args& a) { return add_report_command(app, a.report); },
     [](CLI::App&, Args& a) { return run_report_command(a.report); }},
    {"k8s", [](CLI::App& app, Args& a) { return add_k8s_command(app, a.k8s); },
     [](CLI::App& cmd, Args& a) { return run_k8s_command(cmd, a.k8s); }},
};
constexpr std::size_t kCommandCount = std::size(kCommands);

}  // namespace
}  // namespace shardflow::cli

int main(int argc, char** argv) {
  using namespace shardflow;
  CLI::App app{
      "shardflow: plan capacity for, benchmark and run fan-out/fan-in ML pipelines (Kubeflow ParallelFor, "
      "sweeps) on Kubernetes.\n\nA scenario file (YAML, see docs/scenario-format.md) describes the pipeline "
      "and "
      "the cluster.\nStart with:  shardflow explain scenarios/shard-preprocess-train.yaml\n"};
  app.set_version_flag("--version", "shardflow " SHARDFLOW_VERSION);
  app.require_subcommand(1);
  app.footer(
      "Exit status: 0 success, 1 the run failed (or its results could not be written), 2 bad input (the "
      "message names file:line:column and field), 128 + N stopped by signal N (130 Ctrl-C, 143 SIGTERM).");

  // Building every subcommand's options is most of what `main` costs before the work starts, so only
  // the named subcommand is built when that cannot change what CLI11 does: argv[1] names it, no later
  // word names another (CLI11 would read it as that subcommand) and no help is asked for. Otherwise
  // (no argument, an option first, an unknown command, --help) all of them are, as before.
  const auto is_command = [](const char* word) {
    for (const cli::Command& c : cli::kCommands)
      if (std::strcmp(word, c.name) == 0) return true;
    return false;
  };
  const char* only = nullptr;
  if (argc >= 2 && is_command(argv[1])) {
    only = argv[1];
    for (int i = 2; i < argc && only != nullptr; ++i)
      if (is_command(argv[i]) || std::strcmp(argv[i], "-h") == 0 || std::strcmp(argv[i], "--help") == 0)
        only = nullptr;
  }
  cli::Args args;
  std::array<CLI::App*, cli::kCommandCount> built{};  // null: not built
  for (std::size_t i = 0; i < cli::kCommandCount; ++i)
    if (only == nullptr || std::strcmp(only, cli::kCommands[i].name) == 0)
      built[i] = cli::kCommands[i].add(app, args);

  // CLI11 reads an unknown first word as a stray argument ("A subcommand is required"); name it instead.
  if (argc >= 2 && argv[1][0] != '-')
    if (const auto message = cli::unknown_command_message(app, argv[1])) {
      std::cerr << *message;
      return 2;
    }
  // What a command printed and could not write (a full disk, /dev/full) is a failed run, not a success.
  const auto output_written = [](int code) {
    std::cout.flush();
    errno = 0;
    if (std::fflush(stdout) == 0 && std::ferror(stdout) == 0 && std::cout.good()) return code;
    const int err = errno;  // set if the last flush failed; an earlier failed write left only ferror
    std::cerr << "shardflow: could not write all of the output to standard output"
              << (err != 0 ? std::string(" (") + std::strerror(err) + ")" : std::string()) << "\n";
    return code == 0 ? 1 : code;
  };
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // A mistyped option is the likeliest cause of any refusal, and CLI11 names it poorly (as an extra
    // argument after its value, or not at all behind a required option's absence): name it, and what
    // the user probably meant.
    // Then CLI11's own words for the other refusals, in a user's terms (cli::parse_error_message).
    if (e.get_exit_code() != static_cast<int>(CLI::ExitCodes::Success)) {
      // Every command, for an option that belongs to another one (simulate --backend is run's).
      for (std::size_t i = 0; i < cli::kCommandCount; ++i)
        if (built[i] == nullptr) built[i] = cli::kCommands[i].add(app, args);
      std::optional<std::string> message = cli::unknown_option_message(app, argc, argv);
      if (!message) message = cli::parse_error_message(e, argc, argv);
      if (message) {
        std::cerr << *message;
        return 2;
      }
    }
    // --help and --version print to standard output: help that could not be written is lost, as a
    // command's output would be.
    const int code = app.exit(e);
    return code == 0 ? output_written(0) : 2;
  }
  // The first message `check(option, value)` gives for a value given to an option of the command line
  // (the command's and its subcommands'), or "".
  using ValueCheck = std::function<std::string(const CLI::App&, const CLI::Option&, const std::string&)>;
  const std::function<std::string(const CLI::App&, const ValueCheck&)> first_problem =
      [&](const CLI::App& a, const ValueCheck& check) -> std::string {
    for (const CLI::Option* o : a.get_options())
      if (o->count() > 0 && o->get_items_expected_max() > 0)
        for (const std::string& v : o->results())
          if (std::string why = check(a, *o, v); !why.empty()) return why;
    for (const CLI::App* sub : a.get_subcommands())
      if (std::string why = first_problem(*sub, check); !why.empty()) return why;
    return "";
  };
  // An option given an empty value ('--out ""', '--deadline ""' from an unset shell variable) would read
  // as the option left out and quietly take its default: refuse it, naming the option.
  // An option whose value was left out takes the next argument as it, a flag included ('--kubeconfig
  // --emulate' from an unset shell variable): the run then failed on something else (a step without an
  // image, --emulate never seen). A value that is one of the command's own flags is refused, naming both.
  for (const ValueCheck& check : std::initializer_list<ValueCheck>{
           [](const CLI::App&, const CLI::Option&o, const std::string&v) {
             return v.empty() ? o.get_name() +
                                    ": the value is empty; give one (an empty value is not taken for the "
                                    "option left out)"
                              : std::string();
           },
           [](const CLI::App&a, const CLI::Option&o, const std::string&v) {
             if (v.size() > 1 && v[0] == '-')
               for (const CLI::Option* other : a.get_options())
                 if (other != &o && other->check_name(v))
                   return o.get_name() + ": got " + v +
                          ", which is a flag of this command: give the option its value (it took the next "
                          "argument)";
             return std::string();
           }})
    if (const std::string why = first_problem(app, check); !why.empty()) {
      std::cerr << why << "\n";
      return 2;
    }
  try {
    for (std::size_t i = 0; i < cli::kCommandCount; ++i)
      if (built[i] != nullptr && built[i]->parsed())
        return output_written(cli::kCommands[i].run(*built[i], args));
  } catch (const cli::ScenarioProblems& e) {
    for (const InputError& p : e.problems()) std::cerr << printable(p.what()) << "\n";
    std::cerr << printable(e.file()) << ": " << e.problems().size() << " problems\n";
    return 2;
  } catch (const InputError& e) {
    std::cerr << printable(e.what()) << "\n";  // a name from a Latin-1 kubeconfig, say
    return 2;
  } catch (const std::bad_alloc&) {
    std::cerr << "shardflow: out of memory: the run needs more than this machine (or the process's limit, "
                 "ulimit -v) gives: try a smaller pipeline or cluster\n";
    return 1;
  } catch (const std::exception& e) {
    std::cerr << "shardflow: " << printable(e.what()) << "\n";
    return 1;
  }
  return 0;
}
