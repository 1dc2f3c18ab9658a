#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <shardflow/core/error.hpp>
#include <shardflow/core/metrics.hpp>
#include <shardflow/core/trace.hpp>
#include <shardflow/planner/compare.hpp>
#include <shardflow/planner/sweep.hpp>
#include <shardflow/report/html_report.hpp>

#include "commands.hpp"

namespace shardflow::cli {

namespace fs = std::filesystem;

namespace {

report::ReportOptions options() {
  report::ReportOptions o;
  o.version = SHARDFLOW_VERSION;
  return o;
}

template <class Read>
auto read_file(const fs::path& path, Read read) {
  std::ifstream in = open_input(path, "cannot open it (is this a shardflow output directory?)");
  return read(in, path.string());
}

struct RunFiles {
  Trace trace;
  Metrics metrics;
};

// The step names of the metrics, in order.
std::vector<std::string> step_names(const Metrics& m) {
  std::vector<std::string> steps;
  for (const StepMetrics& s : m.per_step) steps.push_back(s.step);
  return steps;
}

// Names for a message: "a, b, c", or "none".
std::string names_text(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& x : names) out += (out.empty() ? "" : ", ") + x;
  return out.empty() ? std::string("none") : out;
}

RunFiles read_run(const fs::path& dir) {
  RunFiles r{read_file(dir / "trace.json", read_trace_json),
             read_file(dir / "metrics.json", read_metrics_json)};
  // The two files of one run: the same attempts and steps (a metrics.json copied from another run beside
  // a trace would put its figures on this run's page).
  const std::vector<std::string> steps = step_names(r.metrics);
  if (r.metrics.attempts != r.trace.attempts.size() || steps != r.trace.steps)
    throw InputError({(dir / "metrics.json").string(), 0, 0}, "",
                     "is not of the run in " + (dir / "trace.json").string() + ": it counts " +
                         std::to_string(r.metrics.attempts) + " attempts of steps " + names_text(steps) +
                         ", the trace has " + std::to_string(r.trace.attempts.size()) + " of steps " +
                         names_text(r.trace.steps) + " (keep a run's trace.json and metrics.json together)");
  // Runs of one scenario with other seeds have the same attempts and steps: their makespans and costs
  // differ. metrics.json's are the trace's, as compute_metrics makes them (within rounding).
  const auto differs = [](double a, double b) { return std::abs(a - b) > 1e-9 * std::max(1.0, std::abs(b)); };
  const double makespan = makespan_s(r.trace), price = cost(r.trace);
  if (differs(r.metrics.makespan_s, makespan) || differs(r.metrics.cost, price)) {
    char text[256];
    std::snprintf(text, sizeof text, "its makespan is %.9g s and cost %.9g, the trace's %.9g s and %.9g",
                  r.metrics.makespan_s, r.metrics.cost, makespan, price);
    throw InputError({(dir / "metrics.json").string(), 0, 0}, "",
                     "is not of the run in " + (dir / "trace.json").string() + ": " + text +
                         " (keep a run's trace.json and metrics.json together)");
  }
  return r;
}

}  // namespace

fs::path write_run_report_file(const fs::path& dir, const Trace& trace, const Metrics& metrics) {
  write_file(dir / "report.html",
             [&](std::ostream& o) { report::write_run_report(o, trace, metrics, options()); });
  return dir / "report.html";
}

fs::path write_sweep_report_file(const fs::path& dir, const planner::SweepResult& sweep) {
  write_file(dir / "report.html", [&](std::ostream& o) { report::write_sweep_report(o, sweep, options()); });
  return dir / "report.html";
}

fs::path write_compare_report_file(const fs::path& dir, const planner::CompareResult& compare) {
  write_file(dir / "report.html",
             [&](std::ostream& o) { report::write_compare_report(o, compare, options()); });
  return dir / "report.html";
}

CLI::App* add_report_command(CLI::App& app, ReportArgs& args) {
  auto* cmd = app.add_subcommand(
      "report",
      "Make report.html, one self-contained page to open in a browser, from a run's or a sweep's saved files "
      "(simulate, run and sweep write it already; this rebuilds it, e.g. for a trace from another machine)");
  cmd->add_option("dir", args.dir,
                  "An output directory of `simulate`/`run` (trace.json and metrics.json: a run report), of "
                  "`sweep` (sweep.json: a sweep report) or of `compare` (compare.json: a comparison); if it "
                  "holds several, the newest is reported")
      ->check(CLI::ExistingDirectory);
  cmd->add_option(
         "--predicted", args.predicted,
         "With --measured: a run's directory holding the prediction (e.g. `simulate --cluster local`)")
      ->check(CLI::ExistingDirectory);
  cmd->add_option("--measured", args.measured,
                  "With --predicted: a run's directory holding the measurement (e.g. `run --backend local`)")
      ->check(CLI::ExistingDirectory);
  cmd->add_option("--out", args.out,
                  "The page to write (default: DIR/report.html; with --predicted, MEASURED/prediction.html)")
      ->type_name("FILE");
  cmd->add_flag("-q,--quiet", args.quiet, "Print nothing but errors and warnings");
  cmd->footer(
      "Examples:\n"
      "  shardflow report out/shard-preprocess-train        # rebuilds "
      "out/shard-preprocess-train/report.html\n"
      "  shardflow simulate scenarios/local-ridge.yaml --cluster local --out out/sim     # the prediction\n"
      "  shardflow run scenarios/local-ridge.yaml --backend local --out out/local       # the measurement\n"
      "  shardflow report --predicted out/sim --measured out/local   # writes out/local/prediction.html\n"
      "A run report has the headline figures, a Gantt chart of the pods by node (coloured by step; retries,\n"
      "failures and the critical path marked), utilization and pending pods over time, run-time histograms,\n"
      "queue waits and the slowest attempts. A sweep report plots cost against the makespan quantile with "
      "the\n"
      "Pareto front, the deadline and the recommendation. --predicted/--measured draws both Gantt charts on "
      "one\n"
      "time axis and the error of each step's run times. The page needs no network; hover a bar or a point\n"
      "for details, click a table's header to sort it.");
  return cmd;
}

int run_report_command(const ReportArgs& args) {
  // Ctrl-C ends a report at once (nothing partial is worth keeping), without its half-written page.
  const EndsAtOnce guard;
  // A file the user named that cannot be written is their input's problem (exit 2, naming --out), found
  // before any report is made.
  if (!args.out.empty()) {
    // An --out that names a file the report reads would replace it with the page.
    std::vector<std::string> inputs;
    for (const std::string* d : {&args.dir, &args.predicted, &args.measured})
      if (!d->empty())
        for (const char* f : {"trace.json", "metrics.json", "sweep.json", "compare.json"})
          inputs.push_back((fs::path(*d) / f).string());
    if (const std::string* in = same_path_in(args.out, inputs))
      throw InputError({}, "--out", args.out + " is one of the inputs (" + *in + "): name a new file");
    errno = 0;
    const bool existed = fs::exists(args.out);
    std::ofstream probe(args.out, std::ios::app);
    if (!probe)
      throw InputError({}, "--out",
                       "cannot write " + args.out + " (" +
                           (errno != 0 ? std::string(std::strerror(errno)) : std::string("cannot open it")) +
                           ")");
    probe.close();
    if (!existed) fs::remove(args.out);
  }
  if (args.predicted.empty() != args.measured.empty())
    throw InputError({args.predicted.empty() ? "--measured" : "--predicted", 0, 0}, "",
                     "--predicted and --measured go together");
  if (!args.predicted.empty()) {
    if (!args.dir.empty())
      throw InputError({args.dir, 0, 0}, "",
                       "give either a directory or --predicted and --measured, not both");
    const RunFiles p = read_run(args.predicted), m = read_run(args.measured);
    // Runs of different pipelines have nothing to compare step by step; runs of differently named
    // scenarios with the same steps may be a renamed copy: said, and compared.
    const auto common =
        std::any_of(m.metrics.per_step.begin(), m.metrics.per_step.end(), [&](const StepMetrics& ms) {
          return std::any_of(p.metrics.per_step.begin(), p.metrics.per_step.end(),
                             [&](const StepMetrics& ps) { return ps.step == ms.step; });
        });
    const auto steps_of = [](const Metrics& x) { return names_text(step_names(x)); };
    if (!common)
      throw InputError({args.measured, 0, 0}, "--measured",
                       "no step of this run (scenario '" + m.trace.scenario + "', steps " +
                           steps_of(m.metrics) + ") is in --predicted " + args.predicted + " (scenario '" +
                           p.trace.scenario + "', steps " + steps_of(p.metrics) +
                           "): they are runs of different pipelines, with nothing to compare");
    if (p.trace.scenario != m.trace.scenario)
      std::cerr << "warning: --predicted " << args.predicted << " is a run of scenario '" << p.trace.scenario
                << "' and --measured " << args.measured << " of '" << m.trace.scenario
                << "': compared step by step by name all the same\n";
    // Runs of one pipeline with other loop widths (a --set in one of them) compare step by step all the
    // same, but each step's run-time error then mixes tasks of different sizes: said, per step.
    {
      // A task is of one step: its first attempt counts it (a byte per task id), by step index; then by name.
      const auto tasks_per_step = [](const Trace& t) {
        TaskId most = 0;
        for (const AttemptRecord& a : t.attempts) most = std::max(most, a.task);
        std::vector<char> seen(t.attempts.empty() ? 0 : std::size_t{most} + 1, 0);
        std::vector<std::uint64_t> count(t.steps.size(), 0);
        for (const AttemptRecord& a : t.attempts)
          if (a.step < t.steps.size() && !std::exchange(seen[a.task], 1)) ++count[a.step];
        std::map<std::string, std::uint64_t> tasks;
        for (std::size_t i = 0; i < count.size(); ++i)
          if (count[i] != 0) tasks[t.steps[i]] += count[i];
        return tasks;
      };
      const auto pt = tasks_per_step(p.trace), mt = tasks_per_step(m.trace);
      std::string differ;
      for (const auto& [step, tasks] : mt)
        if (const auto it = pt.find(step); it != pt.end() && it->second != tasks)
          differ += (differ.empty() ? "" : ", ") + step + " " + std::to_string(it->second) + " predicted, " +
                    std::to_string(tasks) + " measured";
      if (!differ.empty())
        std::cerr << "warning: the runs have different numbers of tasks (" << differ
                  << "): were they run with the same --set and overlays?\n";
    }
    for (const auto& [flag, dir, run, other] :
         {std::tuple{"--predicted", &args.predicted, &p, &m}, {"--measured", &args.measured, &m, &p}})
      if (const std::string caveat = report::time_scale_caveat(run->trace, other->trace); !caveat.empty())
        std::cerr << "warning: " << flag << " " << *dir << " " << caveat
                  << " (compare --backend local predicts at the run's scale; calibrate turns it back into "
                     "model time)\n";
    const fs::path out = args.out.empty() ? fs::path(args.measured) / "prediction.html" : fs::path(args.out);
    write_file(out, [&](std::ostream& o) {
      report::write_prediction_report(o, {p.trace, p.metrics, "predicted"}, {m.trace, m.metrics, "measured"},
                                      options());
    });
    if (!args.quiet) std::cout << "wrote " << out.string() << "\n";
    return 0;
  }
  if (args.dir.empty())
    throw InputError({"report", 0, 0}, "", "name a directory, or --predicted and --measured");
  const fs::path dir = args.dir;
  std::error_code ec;
  // The newest of the files each kind of report reads: a directory reused by several commands is
  // reported for the last one.
  struct Kind {
    const char* name;
    const char* file;
    const char* what;
  };
  const Kind kinds[] = {{"run", "trace.json", "a run"},
                        {"sweep", "sweep.json", "a sweep"},
                        {"compare", "compare.json", "a comparison"}};
  const Kind* newest = nullptr;
  fs::file_time_type newest_time{};
  std::vector<const Kind*> present;
  bool tie = false;
  for (const Kind& k : kinds) {
    if (!fs::exists(dir / k.file, ec)) continue;
    present.push_back(&k);
    const fs::file_time_type t = fs::last_write_time(dir / k.file, ec);
    if (newest != nullptr && t == newest_time) tie = true;
    if (newest == nullptr || t > newest_time) {
      newest = &k;
      newest_time = t;
      tie = false;
    }
  }
  if (newest == nullptr)
    throw InputError(
        {args.dir, 0, 0}, "",
        "holds neither trace.json (a run) nor sweep.json (a sweep) nor compare.json (a comparison)");
  const std::string kind = newest->name;
  // Results of several commands in one directory: which one is reported is said, and why (a copy without
  // its times, `cp -r` or a CI artifact, gives them all one time: the first kind of those is taken).
  if (present.size() > 1) {
    std::string others;
    for (const Kind* k : present)
      if (k != newest) others += std::string(others.empty() ? "" : " and ") + k->file + " (" + k->what + ")";
    std::cerr
        << "warning: " << args.dir << " also holds " << others << "; reporting " << newest->what << " ("
        << newest->file
        << (tie ? ", written at the same time as another: the first of trace.json, sweep.json, compare.json"
                : ", the newest")
        << "): give each command its own --out\n";
  }
  const fs::path out = args.out.empty() ? dir / "report.html" : fs::path(args.out);
  write_file(out, [&](std::ostream& o) {
    if (kind == "sweep") {
      report::write_sweep_report(o, read_file(dir / "sweep.json", planner::read_sweep_json), options());
    } else if (kind == "compare") {
      report::write_compare_report(o, read_file(dir / "compare.json", planner::read_compare_json), options());
    } else {
      const RunFiles r = read_run(dir);
      report::write_run_report(o, r.trace, r.metrics, options());
    }
  });
  if (!args.quiet) std::cout << "wrote " << out.string() << " (" << kind << " report)\n";
  return 0;
}

}  // namespace shardflow::cli
