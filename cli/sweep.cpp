#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <limits>
#include <sstream>
#include <stdexcept>
#include <string>
#include <unistd.h>
#include <vector>

#include <nlohmann/json.hpp>

#include <shardflow/core/error.hpp>
#include <shardflow/core/scenario.hpp>
#include <shardflow/core/text.hpp>
#include <shardflow/core/units.hpp>
#include <shardflow/k8s/manifests.hpp>
#include <shardflow/planner/sweep.hpp>

#include "commands.hpp"

namespace shardflow::cli {

namespace {

// 0.9 as the percent it was meant as: "90" (0.975: "97.5").
std::string detail_percent(double fraction) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.10g", fraction * 100);
  return buf;
}

// A YAML double-quoted scalar.
std::string quoted(const std::string& s) {
  std::string q = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') q += '\\';
    if (c == '\n') {
      q += "\\n";
      continue;
    }
    q += c;
  }
  return q + "\"";
}

// `--emit-job N`: a ConfigMap with the scenario and its overlays, a claim for the results and the Indexed
// Job whose pod I runs `shardflow sweep ... --shard I/N` (JOB_COMPLETION_INDEX, which the Job controller
// sets in each pod's environment and the kubelet expands in args as $(JOB_COMPLETION_INDEX)).
int emit_job(const SweepArgs& args, const LoadOptions& load, const planner::SweepSpec& spec) {
  if (args.image.empty())
    throw InputError({}, "--image", "--emit-job needs the image to run (--image IMAGE)");
  if (const std::string problem = k8s::image_reference_problem(args.image); !problem.empty())
    throw InputError(
        {}, "--image",
        quote(args.image) + " is not an image reference ([REGISTRY[:PORT]/]NAME[:TAG][@DIGEST]): " + problem);
  if (spec.search != planner::Search::grid)
    throw InputError({}, "--emit-job", "slices a grid sweep; --search auto cannot be sliced");
  if (!args.shard_text.empty())
    throw InputError({}, "--emit-job", "makes the slices itself; leave out --shard");
  if (args.load.cluster == "local")
    throw InputError({}, "--cluster",
                     "local is the machine shardflow runs on: in the Job each pod would model the node it "
                     "landed on, and the slices would be of different clusters; give the cluster in the "
                     "scenario or an overlay");
  const std::string yaml = read_scenario_file(args.file);  // read once: loaded, checked and shipped
  const Scenario scenario = planner::first_configuration(yaml, args.file, spec, load.warn);
  const int n = args.emit_job;
  // Every configuration is loaded here, as the sweep would: a --vary or --set that the sweep refuses
  // would fail every pod. And each pod runs one slice: more slices than configurations would make pods
  // that all fail.
  const std::size_t configs = planner::check_sweep_text(yaml, args.file, spec);
  if (static_cast<std::size_t>(n) > configs)
    throw InputError({}, "--emit-job",
                     std::to_string(n) + ": the sweep has " + std::to_string(configs) + " configuration" +
                         (configs == 1 ? "" : "s") + ", fewer than " + std::to_string(n) +
                         " slices: give --emit-job " + std::to_string(configs) + " or less");
  // The user's values with each $ doubled: Kubernetes expands $(VAR) in a container's args (a --set
  // 'description=run $(JOB_COMPLETION_INDEX)' was another --set in each slice, which merge refuses).
  // Only the --shard and --out below name the index on purpose.
  std::vector<std::string> argv = {"sweep", "/sweep/input/scenario.yaml"};
  const auto as_given = [](const std::string& v) { return k8s::escape_expansion(v); };
  for (const std::string& v : args.vary) argv.insert(argv.end(), {"--vary", as_given(v)});
  for (std::size_t i = 0; i < load.overlays.size(); ++i)
    argv.insert(argv.end(), {"--overlay", "/sweep/input/overlay-" + std::to_string(i) + ".yaml"});
  for (const std::string& v : args.load.sets) argv.insert(argv.end(), {"--set", as_given(v)});
  // A cluster file (for an imported pipeline) goes in the ConfigMap with the scenario.
  if (!args.load.cluster.empty()) argv.insert(argv.end(), {"--cluster", "/sweep/input/cluster.yaml"});
  if (args.load.max_tasks != LoadOptions::kDefaultMaxTasks)
    argv.insert(argv.end(), {"--max-tasks", std::to_string(args.load.max_tasks)});
  for (const std::string& v : args.load.params) argv.insert(argv.end(), {"--param", as_given(v)});
  argv.insert(argv.end(), {"-r", std::to_string(args.replications)});
  if (!args.deadline_text.empty()) argv.insert(argv.end(), {"--deadline", as_given(args.deadline_text)});
  char q[32];
  std::snprintf(q, sizeof q, "%g", args.quantile);
  argv.insert(argv.end(), {"--quantile", q});
  if (args.confidence) {
    std::snprintf(q, sizeof q, "%.17g", *args.confidence);
    argv.insert(argv.end(), {"--confidence", q});
  }
  if (args.budget) {
    std::snprintf(q, sizeof q, "%.17g", *args.budget);
    argv.insert(argv.end(), {"--budget", q});
  }
  if (args.seed) argv.insert(argv.end(), {"--seed", std::to_string(*args.seed)});
  if (args.no_reuse) argv.emplace_back("--no-reuse");
  argv.insert(argv.end(), {"--shard", "$(JOB_COMPLETION_INDEX)/" + std::to_string(n), "--out",
                           "/sweep/results/shard-$(JOB_COMPLETION_INDEX)", "--quiet"});
  const auto indent = [](const std::string& text, const std::string& pad) {
    std::string out;
    std::size_t start = 0;
    while (start < text.size()) {
      const std::size_t end = text.find('\n', start);
      const std::string line = text.substr(start, end == std::string::npos ? std::string::npos : end - start);
      out += (line.empty() ? "" : pad) + line + "\n";
      if (end == std::string::npos) break;
      start = end + 1;
    }
    return out;
  };
  // The ConfigMap's files. Its data may hold 1 MiB in all (the API server refuses more); past 256 KiB,
  // a client-side `kubectl apply` fails on its last-applied annotation, which copies the whole object.
  std::vector<std::pair<std::string, std::string>> files = {{"scenario.yaml", yaml}};
  for (std::size_t i = 0; i < load.overlays.size(); ++i)
    files.emplace_back("overlay-" + std::to_string(i) + ".yaml", load.overlays[i].text);
  if (!args.load.cluster.empty()) files.emplace_back("cluster.yaml", read_scenario_file(args.load.cluster));
  std::size_t data_bytes = 0, data_keys = 0, json_bytes = 1024;  // the annotation: the object as JSON
  for (const auto& [key, text] : files) {
    data_bytes += key.size() + text.size();
    data_keys += key.size();
    json_bytes += key.size() + nlohmann::json(text).dump().size() + 4;  // "key": "text",
  }
  // The objects' names: the scenario's, then a hash of what the pods get (their arguments, the files, the
  // image, the slice count). Another sweep of the same scenario applied beside this one has its own Job,
  // ConfigMap and claim: with the same names it would take over this one's ConfigMap, be refused the Job
  // (its template changed), or write its slices over this one's in the claim. This sweep emitted again
  // has the same names. 16 + 38 + 1 + 8 characters: a Job's name is at most 63 (its pods' job-name label).
  std::string identity = args.image + '\0' + std::to_string(n);
  for (const std::string& a : argv) (identity += '\0') += a;
  for (const auto& [key, text] : files) ((identity += '\0') += key + '\0') += text;
  char hash[17];
  std::snprintf(hash, sizeof hash, "%016llx", static_cast<unsigned long long>(fnv1a(identity)));
  const std::string name =
      "shardflow-sweep-" + k8s::dns_label(scenario.name, 38) + "-" + std::string(hash, 8);
  constexpr std::size_t kConfigMapBytes = std::size_t{1} << 20, kAnnotationBytes = std::size_t{256} << 10;
  if (data_bytes > kConfigMapBytes)
    throw InputError(
        {}, "--emit-job",
        args.file + (files.size() > 1 ? " and the files that go with it (overlays, cluster) are " : " is ") +
            std::to_string(data_bytes - data_keys) + " bytes (" + std::to_string(data_bytes) +
            " in the ConfigMap, with the keys), more than a ConfigMap holds (1 MiB); run the slices with "
            "--shard I/N "
            "on machines of your own and merge them (docs/planner.md)");
  const std::string apply =
      data_bytes > kAnnotationBytes ? "kubectl apply --server-side -f " : "kubectl apply -f ";
  std::ostringstream y;
  y << "# shardflow sweep of " << one_line(scenario.name) << " in " << n
    << " slices: an Indexed Job, pod I runs slice I/" << n << ".\n# " << apply
    << "sweep-job.yaml; then collect and merge the slices (docs/planner.md).\n";
  y << "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: " << name << "-input\ndata:\n";
  // Each file byte for byte (a slice's inputs hash is of the texts: a pod reading a text that differs by a
  // final newline could not be merged with a slice run locally). As a literal block where one says it
  // exactly: `|2`, its text indented by exactly 2 past its key (a first line that is indented stays so),
  // with the chomping its end needs (`-` no final newline, none: one, `+` more); a text a block cannot
  // hold (a carriage return, another control character, a byte order mark, nothing) as a JSON string,
  // which YAML reads as a double-quoted scalar.
  for (const auto& [key, text] : files) {
    const bool block_safe =
        text.find_first_not_of('\n') != std::string::npos && !text.starts_with("\xEF\xBB\xBF") &&
        std::none_of(text.begin(), text.end(), [](char c) {
          return (static_cast<unsigned char>(c) < 0x20 && c != '\n' && c != '\t') || c == '\x7F';
        });
    if (!block_safe) {
      y << "  " << key << ": " << nlohmann::json(text).dump() << "\n";
      continue;
    }
    const bool newline = text.back() == '\n',
               more = newline && text.size() > 1 && text[text.size() - 2] == '\n';
    y << "  " << key << ": |2" << (!newline ? "-" : more ? "+" : "") << "\n" << indent(text, "    ");
  }
  y << "---\napiVersion: v1\nkind: PersistentVolumeClaim\nmetadata:\n  name: " << name << "-results\n"
    << "spec:\n  accessModes: [ReadWriteMany]\n  resources:\n    requests:\n      storage: 1Gi\n";
  y << "---\napiVersion: batch/v1\nkind: Job\nmetadata:\n  name: " << name << "\n"
    << "  labels:\n    app.kubernetes.io/name: shardflow-sweep\n"
    << "spec:\n  completionMode: Indexed\n  completions: " << n << "\n  parallelism: " << n
    << "\n  backoffLimitPerIndex: 2\n  maxFailedIndexes: 0\n"
    << "  template:\n    metadata:\n      labels:\n        app.kubernetes.io/name: shardflow-sweep\n"
    << "    spec:\n      restartPolicy: Never\n      containers:\n        - name: sweep\n          image: "
    << quoted(args.image) << "\n          command: [\"shardflow\"]\n          args:\n";
  for (const std::string& a : argv) y << "            - " << quoted(a) << "\n";
  y << "          volumeMounts:\n            - {name: input, mountPath: /sweep/input, readOnly: true}\n"
    << "            - {name: results, mountPath: /sweep/results}\n"
    << "      volumes:\n        - name: input\n          configMap: {name: " << name << "-input}\n"
    << "        - name: results\n          persistentVolumeClaim: {claimName: " << name << "-results}\n";
  const std::filesystem::path dir = make_out_dir(args.out_dir, scenario.name, "sweep");
  refuse_outputs_over_inputs(dir, {"sweep-job.yaml"}, load_inputs(args.file, args.load));
  write_file(dir / "sweep-job.yaml", [&](std::ostream& o) { o << y.str(); });
  if (!args.quiet)
    std::cout << "wrote " << (dir / "sweep-job.yaml").string() << ": a ConfigMap " << name
              << "-input, a claim " << name << "-results and the Indexed Job " << name << " of " << n
              << " pods\nthen: " << apply << (dir / "sweep-job.yaml").string()
              << "; collect /sweep/results/shard-* and run shardflow merge on them (docs/planner.md)\n";
  return 0;
}

}  // namespace

CLI::App* add_sweep_command(CLI::App& app, SweepArgs& args) {
  auto* cmd = app.add_subcommand(
      "sweep",
      "Plan capacity: simulate every combination of some scenario fields, each several times, and find the "
      "cheapest configuration that meets a deadline (or the fastest within a --budget)");
  cmd->add_option("file", args.file, kInputFileHelp)->required()->transform(input_file_check());
  cmd->add_option("--vary", args.vary,
                  "A field to vary and its values, as PATH=V1,V2,... (repeatable; every combination is run). "
                  "PATH as for --set; a field may be varied once, in any spelling ([cpu] or [0]), and not "
                  "also given by --set")
      ->allow_extra_args(false)
      ->type_name("PATH=V1,V2,...")
      ->required();
  add_load_options(cmd, args.load);
  cmd->add_option("-r,--replications", args.replications,
                  "Runs per configuration, with seeds seed, seed+1, ... (the same for every configuration; "
                  "default 10)")
      ->check(whole_number(1, 100000));
  cmd->add_option("--deadline", args.deadline_text, "Makespan to meet, as a duration (90m, 2h30m)");
  cmd->add_option(
         "--quantile", args.quantile,
         "The makespan percentile that must meet the deadline, 1 to 100 (default 95: 19 runs in 20 by the "
         "deadline, a run whose tasks failed counting as late)")
      ->check(finite_number(1, 100));
  cmd->add_option(
         "--confidence", args.confidence,
         "How sure to be, in percent (e.g. 90), that a recommended configuration finishes by the deadline "
         "in at least --quantile of runs: it must do so in enough of its runs that the share's exact "
         "(Clopper-Pearson) lower bound at this level is the quantile or more. It needs more runs: 90 for "
         "p95 needs -r 45 or more (all by the deadline; more runs allow a few misses). Default: the "
         "runs' own share must reach the quantile, which a lucky configuration can")
      ->check(finite_number(0, 100, true, true))
      // A fraction for a percent (0.9 meant as 90%) was taken as 0.9% sure, quietly: below 1 is refused.
      ->check(CLI::Validator(
          [](const std::string& text) -> std::string {
            const double v = std::strtod(text.c_str(), nullptr);
            if (v > 0 && v < 1)
              return "is a percent, 1 to below 100: \"" + text + "\" would be " + text + "% sure; for " +
                     detail_percent(v) + "% give " + detail_percent(v);
            return "";
          },
          "PERCENT"))
      ->type_name("PERCENT");
  cmd->add_option("--budget", args.budget,
                  "Instead of a deadline: a mean cost per run (in the pools' price_per_hour currency); the "
                  "sweep recommends the fastest configuration (lowest --quantile makespan) whose mean cost "
                  "is within it")
      ->check(finite_number(0, std::numeric_limits<double>::infinity()))
      ->type_name("COST");
  cmd->add_option("--seed", args.seed, "First seed, 0 to 2^64-1 (default: the scenario's `seed`)")
      ->check(whole_number(0))
      ->type_name("SEED");
  cmd->add_option("--out", args.out_dir,
                  "Directory for sweep.json, sweep.csv and report.html (default: out/<scenario name>/sweep)");
  cmd->add_flag("-q,--quiet", args.quiet, "Print nothing but errors");
  cmd->add_option("--shard", args.shard_text,
                  "Run only slice I of N: configurations I, I+N, I+2N, ... (0 <= I < N); `shardflow merge` "
                  "combines the slices' directories into what one machine gives")
      ->type_name("I/N");
  cmd->add_option(
         "--search", args.search_text,
         "grid: every configuration, every replication (default). auto: assumes the makespan does not "
         "grow with a node pool's count or a parallelism, bisects along them and halves the rest on "
         "cost (needs --deadline; docs/planner.md says when it is valid)")
      ->type_name("grid|auto");
  cmd->add_option(
         "--emit-job", args.emit_job,
         "Write sweep-job.yaml, a Kubernetes Indexed Job of N pods, each running one --shard of this "
         "sweep, instead of sweeping (docs/planner.md: collecting and merging the results)")
      ->check(whole_number(1, 100000))
      ->type_name("N");
  cmd->add_option("--image", args.image,
                  "With --emit-job: the container image that has shardflow on its PATH");
  cmd->add_flag("--no-reuse", args.no_reuse,
                "Simulate every configuration, even those that differ only in fields the simulator does not "
                "read (prices, spot discounts, descriptions): by default they share one simulation per "
                "replication, each priced with its own prices, which gives the same results to the bit");
  cmd->footer(
      "Example:\n"
      "  shardflow sweep scenarios/shard-preprocess-train.yaml --vary cluster.node_pools[cpu].count=10,20,40 "
      "\\\n"
      "      --vary pipeline.steps[preprocess].parallel_for.parallelism=25,50,100 -r 20 --deadline 2h\n"
      "Runs go in parallel on every core. Replication k of every configuration uses the same seed, so\n"
      "configurations are compared on the same random durations (common random numbers).\n"
      "Configurations that differ only in prices (or other fields the simulator does not read) are\n"
      "simulated once per replication and priced each with its own prices (--no-reuse: each simulated).\n"
      "report.html plots each configuration's cost against its makespan quantile, with the Pareto front,\n"
      "the deadline and the recommendation, above a sortable table of the configurations.\n"
      "It also prints the Pareto front of cost against the makespan quantile, and, when no configuration\n"
      "meets the deadline, the nearest one and which way each field would have to go.\n"
      "Across machines:\n"
      "  shardflow sweep S.yaml --vary ... -r 20 --shard 0/3 --out out/s0    # and 1/3, 2/3 elsewhere\n"
      "  shardflow merge out/s0 out/s1 out/s2 --out out/all                 # = the sweep on one machine\n"
      "  shardflow sweep S.yaml --vary ... -r 20 --emit-job 3 --image registry/shardflow:1   # on "
      "Kubernetes");
  return cmd;
}

int run_sweep_command(const SweepArgs& args) {
  planner::SweepSpec spec;
  for (const std::string& v : args.vary) spec.dimensions.push_back(planner::parse_dimension(v));
  const LoadOptions load = load_options(args.load);
  spec.overlays = load.overlays;
  spec.sets = load.sets;
  spec.cluster = load.cluster;
  spec.params = load.params;
  spec.max_tasks = load.max_tasks;
  spec.replications = args.replications;
  spec.quantile = args.quantile;
  spec.confidence = args.confidence;
  spec.budget = args.budget;
  if (spec.budget && *spec.budget == 0) spec.budget = 0.0;  // -0 is 0 (it was printed "(-0)")
  if (args.seed) spec.base_seed = *args.seed;
  spec.search = planner::parse_search(args.search_text);
  spec.reuse = !args.no_reuse;
  if (!args.shard_text.empty()) spec.shard = planner::parse_shard(args.shard_text);
  if (!args.deadline_text.empty()) spec.deadline_s = deadline_flag_seconds(args.deadline_text);
  if (args.emit_job > 0) return emit_job(args, load, spec);
  if (!args.image.empty()) throw InputError({}, "--image", "goes with --emit-job N");
  const bool show_progress = !args.quiet && isatty(STDERR_FILENO) != 0;
  double done = 0;  // the share of runs finished, for an interrupted sweep's message
  const std::function<void(double)> progress = runs_progress("sweeping", show_progress, done);
  // The output directory first (it needs the scenario's name, the first configuration's): a bad --out is
  // found before the sweep.
  const std::string yaml = read_scenario_file(args.file);
  const Scenario first = planner::first_configuration(yaml, args.file, spec, load.warn);
  const std::string name = first.name;
  // A pool without a price costs nothing, so "cheapest" fills it first: said, as a forgotten
  // price_per_hour (it defaults to 0) looks like every other recommendation.
  if ((spec.deadline_s || spec.budget) && !args.quiet) {
    const auto& pools = first.cluster.node_pools;
    if (std::all_of(pools.begin(), pools.end(), [](const NodePool& p) { return p.price_per_hour == 0; }))
      std::cerr << "sweep: warning: no node pool has a price_per_hour: every configuration costs 0, and "
                << (spec.budget ? "every one is within the budget"
                                : "the cheapest that meets the deadline is the fastest")
                << "\n";
    else
      for (const NodePool& p : pools)
        if (p.price_per_hour == 0)
          std::cerr << "sweep: warning: node pool " << printable(p.name)
                    << " costs nothing (price_per_hour 0, which is also what a pool without one gets): its "
                       "nodes add nothing to any configuration's cost\n";
  }
  const std::string sub = spec.shard ? "sweep-shard-" + std::to_string(spec.shard->index) + "-of-" +
                                           std::to_string(spec.shard->count)
                                     : std::string("sweep");
  std::error_code ec;
  const bool made_dir = !std::filesystem::exists(out_dir_path(args.out_dir, name, sub), ec);
  const std::filesystem::path dir = make_out_dir(args.out_dir, name, sub);
  refuse_outputs_over_inputs(dir, {"sweep.json", "sweep.csv", "report.html"},
                             load_inputs(args.file, args.load));
  // Ctrl-C or SIGTERM: the runs stop, and the sweep says so (a signal ended it with nothing said).
  const Interruptible guard;
  spec.stop = guard.flag();
  planner::SweepResult r;
  try {
    r = planner::run_sweep_text(yaml, args.file, spec, progress);
  } catch (const planner::Interrupted&) {
    if (show_progress) std::fprintf(stderr, "\r%*s\r", 20, "");
    return interrupted_runs("sweep", dir, made_dir, "sweep.json", done, guard);
  }
  if (show_progress) std::fprintf(stderr, "\r%*s\r", 20, "");

  const std::string write_error = write_results([&] {
    write_file(dir / "sweep.json", [&](std::ostream& o) { planner::write_sweep_json(o, r); });
    write_file(dir / "sweep.csv", [&](std::ostream& o) { planner::write_sweep_csv(o, r); });
    write_sweep_report_file(dir, r);
  });
  if (!args.quiet) {
    planner::print_sweep(std::cout, r);
    // What was simulated: with reuse, configurations that differ only in prices share a simulation.
    std::cout << "\n";
    const std::size_t unable = planner::configurations_that_cannot_run(r);
    if (r.search == planner::Search::grid)
      std::cout << r.configs.size() - unable << " configuration"
                << (r.configs.size() - unable == 1 ? "" : "s") << (unable > 0 ? " that can run" : "") << " x "
                << r.replications << " replication" << (r.replications == 1 ? "" : "s") << ", ";
    std::cout << r.simulations << " run" << (r.simulations == 1 ? "" : "s") << ", " << r.distinct_simulations
              << " distinct simulation" << (r.distinct_simulations == 1 ? "" : "s")
              << (args.no_reuse ? " (--no-reuse)" : " (configurations that differ only in prices share them)")
              << "\n";
    if (write_error.empty()) std::cout << "wrote " << dir.string() << "/{sweep.json,sweep.csv,report.html}\n";
  }
  return write_error.empty() ? 0 : results_not_written("sweep", write_error, dir, !args.quiet, made_dir);
}

}  // namespace shardflow::cli

namespace shardflow::cli {

CLI::App* add_merge_command(CLI::App& app, MergeArgs& args) {
  auto* cmd = app.add_subcommand(
      "merge",
      "Combine the slices of one sweep (sweep --shard I/N, one directory each) into the whole sweep");
  cmd->add_option("dirs", args.dirs, "The slices' output directories (each holds a sweep.json)")
      ->required()
      ->check(CLI::ExistingDirectory);
  cmd->add_option(
      "--out", args.out_dir,
      "Directory for the merged sweep.json, sweep.csv and report.html (default: out/<scenario name>/sweep)");
  cmd->add_flag("-q,--quiet", args.quiet, "Print nothing but errors");
  cmd->footer(
      "Example:\n"
      "  shardflow sweep S.yaml --vary cluster.node_pools[cpu].count=10,20,40 -r 20 --shard 0/2 --out "
      "out/s0\n"
      "  shardflow sweep S.yaml --vary cluster.node_pools[cpu].count=10,20,40 -r 20 --shard 1/2 --out "
      "out/s1\n"
      "  shardflow merge out/s0 out/s1 --out out/sweep\n"
      "The slices must come from one sweep: the same scenario text, overlays and --set, the same --vary,\n"
      "replications, seed, quantile and deadline, and every slice once. The merged files are byte for byte\n"
      "what `shardflow sweep` writes on one machine.");
  return cmd;
}

int run_merge_command(const MergeArgs& args) {
  std::vector<planner::SweepResult> slices;
  std::vector<std::string> files;
  for (const std::string& d : args.dirs) {
    const std::filesystem::path f = std::filesystem::path(d) / "sweep.json";
    std::ifstream in = open_input(f, "cannot open the file (not a sweep's output directory?)");
    slices.push_back(planner::read_sweep_json(in, f.string()));
    files.push_back(f.string());
  }
  const planner::SweepResult r = planner::merge_sweeps(slices, files);
  // The merged sweep.json over a slice's would lose that slice.
  if (const std::string* d = args.out_dir.empty() ? nullptr : same_path_in(args.out_dir, args.dirs))
    throw InputError({}, "--out",
                     args.out_dir + " is one of the slices (" + *d +
                         "): its sweep.json would be replaced; name a new directory");
  std::error_code ec;
  const bool made_dir = !std::filesystem::exists(out_dir_path(args.out_dir, r.scenario, "sweep"), ec);
  const std::filesystem::path dir = make_out_dir(args.out_dir, r.scenario, "sweep");
  const std::string write_error = write_results([&] {
    write_file(dir / "sweep.json", [&](std::ostream& o) { planner::write_sweep_json(o, r); });
    write_file(dir / "sweep.csv", [&](std::ostream& o) { planner::write_sweep_csv(o, r); });
    write_sweep_report_file(dir, r);
  });
  if (!args.quiet) {
    planner::print_sweep(std::cout, r);
    std::cout << "merged " << slices.size() << " slices";
    if (write_error.empty()) std::cout << "; wrote " << dir.string() << "/{sweep.json,sweep.csv,report.html}";
    std::cout << "\n";
  }
  return write_error.empty() ? 0 : results_not_written("merge", write_error, dir, !args.quiet, made_dir);
}

}  // namespace shardflow::cli
