#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <stdexcept>
#include <string>
#include <system_error>
#include <vector>

#include <shardflow/core/error.hpp>
#include <shardflow/core/pipeline.hpp>
#include <shardflow/core/plan.hpp>
#include <shardflow/core/scenario.hpp>
#include <shardflow/core/text.hpp>
#include <shardflow/core/trace.hpp>
#include <shardflow/planner/calibrate.hpp>

#include "commands.hpp"
#include "run_file.hpp"

namespace shardflow::cli {
namespace {

// The load options as shell words, each with a leading space (" --overlay f.yaml --set a=1").
std::string load_words(const LoadArgs& load) {
  std::string out;
  for (const std::string& o : load.overlays) out += " --overlay " + shell_word(o);
  for (const std::string& s : load.sets) out += " --set " + shell_word(s);
  if (!load.cluster.empty()) out += " --cluster " + shell_word(load.cluster);
  for (const std::string& p : load.params) out += " --param " + shell_word(p);
  if (load.max_tasks != LoadOptions::kDefaultMaxTasks)
    out += " --max-tasks " + std::to_string(load.max_tasks);
  return out;
}

// The options a run was loaded with, as it recorded them (a local run's trace; a k8s run's run.json,
// which records no --param), beside the ones calibrate was given, in the same form (overlays by absolute
// path). nullopt: the run recorded none.
struct RecordedOptions {
  LoadArgs ran, given;
  std::string ran_file;  // the scenario file the run loaded
  std::string where;     // " (DIR/run.json)" when that is where they were read, else ""
};
std::optional<RecordedOptions> recorded_options(const Trace& t, const std::filesystem::path& trace,
                                                const LoadArgs& load) {
  RecordedOptions o;
  if (t.load) {
    o.ran.overlays = t.load->overlays;
    o.ran.sets = t.load->sets;
    o.ran.params = t.load->params;
    o.ran.cluster = t.load->cluster;
    o.given.params = load.params;
    o.ran_file = t.load->file;  // `where` stays empty: the message starts with the trace's name
  } else {
    const std::filesystem::path dir = trace.parent_path().empty() ? "." : trace.parent_path();
    std::error_code ec;
    if (!std::filesystem::exists(dir / "run.json", ec)) return std::nullopt;
    std::optional<RunFile::Invocation> inv;
    try {
      inv = read_run_file(dir).invocation;
    } catch (const InputError&) {
      return std::nullopt;  // the trace's own error is the one to show
    }
    if (!inv) return std::nullopt;
    o.ran.overlays = inv->overlays;
    o.ran.sets = inv->sets;
    o.ran.cluster = inv->cluster;
    o.ran_file = inv->file;
    o.where = " (" + (dir / "run.json").string() + ")";
  }
  for (const std::string& f : load.overlays)
    o.given.overlays.push_back(std::filesystem::absolute(f).string());
  o.given.sets = load.sets;
  o.given.cluster = load.cluster;
  return o;
}

// What to add to the error for a trace that is not a run of the scenario as loaded: the options its run
// had, when the trace records them (a local run's) or its directory does (a k8s run's run.json), or
// which options to look at.
std::string settings_hint(const Trace& t, const std::filesystem::path& trace, const LoadArgs& load,
                          const std::string& file) {
  const auto o = recorded_options(t, trace, load);
  if (!o) return ": give calibrate the same --set/--overlay options the run had";
  const std::string words = load_words(o->ran);
  // Another scenario file first: the same options would not make this one that run. (A file recorded on
  // another machine, which is not here, by its name.)
  std::error_code ec;
  const std::filesystem::path ran(o->ran_file);
  const bool other_file =
      !o->ran_file.empty() &&
      (std::filesystem::exists(ran, ec) ? !std::filesystem::equivalent(ran, file, ec)
                                        : ran.filename() != std::filesystem::path(file).filename());
  if (other_file)
    return ": it ran the scenario file " + o->ran_file + (words.empty() ? std::string() : " with" + words) +
           o->where + ", not " + file;
  if (words == load_words(o->given))  // then another scenario file, or one changed since
    return ": the run had " +
           std::string(words.empty() ? "no --set, --overlay or --cluster either" : "these same options") +
           o->where + "; it ran the scenario file " + o->ran_file;
  if (words.empty())
    return ": the run had no --set, --overlay or --cluster" + o->where + ": give calibrate none";
  return ": the run had" + words + o->where + ": give calibrate the same";
}

// Whether `file` loaded with the options the run had gives calibrate's scenario but for where its values
// were written: `--set pipeline.steps[sleep].x=1` and `--set pipeline.steps[0].x=1`, or an overlay of the
// same content at another path, are the same run. A place field this leaves in gives "differ", as before.
bool same_scenario(const std::string& file, const LoadArgs& ran, std::uint64_t max_tasks, Scenario given) {
  LoadArgs as_run = ran;
  as_run.max_tasks = max_tasks;
  Scenario loaded;
  try {
    loaded = load_scenario_file(file, load_options(as_run));
  } catch (const InputError&) {
    return false;  // an overlay of the run's that is gone, say: the options' text is all there is
  }
  clear_places(loaded);
  clear_places(given);
  return loaded == given;
}

// When the options the run recorded differ from calibrate's: the same plan shape with other --set values
// (an input size, say) fits a wrong model without any other sign, so that is refused. nullopt: they
// agree (as text, or in the scenario they load), or the run recorded none.
std::optional<std::string> options_differ(const Trace& t, const std::filesystem::path& trace,
                                          const LoadArgs& load, const std::string& file,
                                          const Scenario& scenario) {
  const auto o = recorded_options(t, trace, load);
  if (!o) return std::nullopt;
  // --set of different fields may come in any order; overlays apply in theirs.
  const auto same_sets = [](std::vector<std::string> a, std::vector<std::string> b) {
    std::sort(a.begin(), a.end());
    std::sort(b.begin(), b.end());
    return a == b;
  };
  if (o->ran.overlays == o->given.overlays && same_sets(o->ran.sets, o->given.sets) &&
      o->ran.cluster == o->given.cluster && same_sets(o->ran.params, o->given.params))
    return std::nullopt;
  // A k8s run's run.json records no --param: calibrate's are taken as the run's.
  LoadArgs ran = o->ran;
  if (!t.load) ran.params = load.params;
  if (same_scenario(file, ran, load.max_tasks, scenario)) return std::nullopt;
  const std::string ran_words = load_words(o->ran), given_words = load_words(o->given);
  return "the run had " +
         (ran_words.empty() ? std::string("no --set, --overlay or --cluster") : ran_words.substr(1)) +
         o->where + ", calibrate " + (given_words.empty() ? std::string("none") : given_words.substr(1)) +
         ": give calibrate the options the run had (with others, the same tasks are fitted to another model)";
}

}  // namespace

CLI::App* add_calibrate_command(CLI::App& app, CalibrateArgs& args) {
  auto* cmd = app.add_subcommand(
      "calibrate",
      "Fit the scenario's step durations (base, per_gib, noise) and dispatch overhead to measured runs; "
      "write them as a partial scenario to lay over the scenario file");
  cmd->add_option("file", args.file, "Scenario file (YAML) the runs were made from")
      ->required()
      ->transform(input_file_check());
  cmd->add_option("traces", args.traces, "Traces: trace.json files, or directories holding one")->required();
  cmd->add_option("--out", args.out, "The overlay to write (YAML)")->required();
  add_load_options(cmd, args.load);
  cmd->add_flag("-q,--quiet", args.quiet, "Print nothing but errors and warnings");
  cmd->footer(
      "Example:\n"
      "  shardflow calibrate scenarios/shard-preprocess-train.yaml out/run1 out/run2 --out calibrated.yaml\n"
      "Each step's run time (finished - started - output_write) is fitted by least squares against its\n"
      "input size in GiB; the noise sigma is the spread of log(measured / fitted). Evicted and cancelled\n"
      "attempts are left out. The traces must be runs of this scenario, loaded with the same --set,\n"
      "--overlay, --cluster and --param options as the runs were. A run at a --time-scale (its trace\n"
      "records it) has the run times of its sleep and spin steps divided by it, back into model time;\n"
      "other kernels ran at their own speed and are fitted as measured.");
  return cmd;
}

int run_calibrate_command(const CalibrateArgs& args) {
  {  // an --out that names an input would overwrite what is measured (or the scenario)
    std::vector<std::string> inputs = {args.file};
    for (const std::string& t : args.traces) {
      std::error_code ec;
      inputs.push_back(
          std::filesystem::is_directory(t, ec) ? (std::filesystem::path(t) / "trace.json").string() : t);
    }
    if (const std::string* in = same_path_in(args.out, inputs))
      throw InputError({}, "--out", args.out + " is one of the inputs (" + *in + "): name a new file");
  }
  const Scenario scenario = load_scenario_reporting_all(args.file, load_options(args.load));
  const Plan plan = Plan::unroll(scenario.pipeline);
  std::vector<Trace> traces;
  std::vector<std::string> names;
  for (const std::string& arg : args.traces) {
    std::filesystem::path p(arg);
    std::error_code ec;
    if (std::filesystem::is_directory(p, ec)) p /= "trace.json";
    const std::string name = p.string();
    std::ifstream in(p, std::ios::binary);
    if (!in || std::filesystem::is_directory(p, ec))
      throw InputError({name, 0, 0}, "",
                       std::filesystem::exists(p, ec) ? "cannot read the file" : "no such file");
    // The same run given twice (a directory and its trace.json, say) would count its attempts twice.
    if (const std::string* before = same_path_in(name, names))
      throw InputError({name, 0, 0}, "", "given twice (as " + *before + " too): each run counts once");
    traces.push_back(read_trace_json(in, name));
    names.push_back(name);
  }
  planner::CalibrationResult result;
  try {
    result = planner::calibrate(scenario, plan, traces, names);
  } catch (const planner::TraceMismatchError& e) {
    // The trace's places are gone once read: its line and column from the file again.
    SourceLocation where = e.where();
    if (where.line == 0 && !e.field().empty() && where.file == names.at(e.trace())) {
      std::ifstream again(where.file, std::ios::binary);
      where = trace_field_location(again, where.file, e.field());
    }
    throw InputError(
        where, e.field(),
        e.message() + settings_hint(traces.at(e.trace()), names.at(e.trace()), args.load, args.file));
  }
  // The tasks matched: a run of this plan, but maybe with other values (a --set input size).
  for (std::size_t i = 0; i < traces.size(); ++i)
    if (const auto differ = options_differ(traces[i], names[i], args.load, args.file, scenario))
      throw InputError({names[i], 0, 0}, "", *differ);
  for (const std::string& w : result.warnings) std::cerr << "warning: " << w << "\n";
  // The steps and tasks matched (calibrate checks them); a renamed scenario is worth a word only.
  for (std::size_t i = 0; i < traces.size(); ++i)
    if (!args.quiet && traces[i].scenario != scenario.name)
      std::cerr << "note: " << names[i] << " is a run of scenario \"" << traces[i].scenario << "\", not \""
                << scenario.name << "\"\n";
  result.command = "shardflow calibrate " + shell_word(args.file);
  for (const std::string& t : args.traces) result.command += " " + shell_word(t);
  result.command += " --out " + shell_word(args.out) + load_words(args.load);
  // --out is one file: a directory (or a name ending in '/') is the user's mistake, found before anything
  // is made (it made the directory, then could not write a file of that name).
  {
    std::error_code ec;
    if (args.out.back() == '/' || std::filesystem::is_directory(args.out, ec))
      throw InputError({}, "--out",
                       args.out + " names a directory: calibrate writes one file, the overlay (e.g. " +
                           (std::filesystem::path(args.out) / "calibrated.yaml").lexically_normal().string() +
                           ")");
  }
  if (const std::filesystem::path parent = std::filesystem::path(args.out).parent_path(); !parent.empty()) {
    refuse_file_in_the_way(parent, args.out, "--out names the file the overlay is written to");
    // Its directory is made, as run's --out is.
    std::error_code ec;
    std::filesystem::create_directories(parent, ec);
    if (ec)
      throw InputError({}, "--out", "cannot make directory " + parent.string() + " (" + ec.message() + ")");
  }
  // A write that fails after the fit (a full disk) loses no work: the fit is printed, then what failed (exit
  // 1, as any command whose results could not be written).
  std::string write_error;
  try {
    write_file(args.out, [&](std::ostream& o) { planner::write_overlay_yaml(o, result); });
  } catch (const std::runtime_error& e) {
    write_error = e.what();
  }
  if (!args.quiet) {
    planner::print_calibration(std::cout, result);
    if (write_error.empty()) std::cout << "wrote " << args.out << "\n";
  }
  if (!write_error.empty()) {
    std::fflush(stdout);
    std::cerr << "calibrate: " << printable(write_error) << ": the overlay is not written"
              << (args.quiet ? "" : " (the fit is above)") << "\n";
    return 1;
  }
  return 0;
}

}  // namespace shardflow::cli
