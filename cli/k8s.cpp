// `shardflow k8s cleanup` and `shardflow k8s status`: what a Kubernetes run left on the cluster.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include <shardflow/core/error.hpp>
#include <shardflow/core/text.hpp>
#include <shardflow/core/trace.hpp>
#include <shardflow/k8s/client.hpp>
#include <shardflow/k8s/controller.hpp>
#include <shardflow/k8s/manifests.hpp>

#include "commands.hpp"
#include "run_file.hpp"

namespace shardflow::cli {
namespace {

using nlohmann::json;

void add_cluster_options(CLI::App* cmd, K8sArgs& args) {
  cmd->add_option("--kubeconfig", args.kubeconfig,
                  "The kubeconfig file (default: $KUBECONFIG or ~/.kube/config; for status: the run's)")
      ->type_name("FILE");
  cmd->add_option("--context", args.context,
                  "The kubeconfig context (default: current-context; for status: the run's)");
  cmd->add_option("--namespace", args.namespace_name,
                  "The run's namespace (default: the context's; for status: the run's)");
}

std::string local_time(std::int64_t unix_ns) {
  const std::time_t t = static_cast<std::time_t>(unix_ns / 1'000'000'000);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S UTC", &tm);
  return buf;
}

int cleanup(const K8sArgs& args) {
  if (args.all == !args.run_id.empty())
    throw InputError({"k8s cleanup", 0, 0}, "", "give a RUN_ID or --all (not both)");
  if (!args.all) k8s::check_run_id(args.run_id, {"k8s cleanup " + args.run_id, 0, 0});
  const k8s::Credentials creds = k8s::credentials_for(args.kubeconfig, args.context);
  const std::string ns = args.namespace_name.empty() ? creds.namespace_name : args.namespace_name;
  k8s::check_namespace(ns, {"--namespace " + ns, 0, 0});
  // --timeout bounds the requests too (a server that accepts and never answers would hold each for 30 s,
  // six times over), with a moment more for the last count of what is left.
  k8s::ClientOptions co;
  co.deadline = std::chrono::steady_clock::now() +
                std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                    std::chrono::duration<double>(args.timeout_s) + std::chrono::seconds(10));
  // Ctrl-C ends the requests at once, and is said (it ended the process with nothing said).
  const Interruptible guard;
  co.stop = guard.flag();
  k8s::Client api(creds, co);
  const std::string what = args.all ? "every shardflow run" : "run " + args.run_id;
  k8s::CleanupResult r;
  try {
    r = k8s::delete_run(api, ns, args.run_id, args.foreground ? "Foreground" : "Background", !args.no_wait,
                        Duration::from_ms(static_cast<std::int64_t>(args.timeout_s * 1000)));
  } catch (const k8s::Interrupted& e) {
    if (guard.interrupted()) {
      std::cerr << "k8s cleanup: interrupted: what it deleted before stays deleted; run it again to delete "
                   "the rest of "
                << what << "\n";
      return guard.exit_status();
    }
    char secs[32];
    std::snprintf(secs, sizeof secs, "%g", args.timeout_s);
    throw k8s::TransportError(std::string("gave up after --timeout ") + secs + " s (" + e.what() + ")");
  }
  std::printf("%s in namespace %s: deleted %zu object%s (%s propagation)", what.c_str(), ns.c_str(),
              r.deleted, r.deleted == 1 ? "" : "s", args.foreground ? "foreground" : "background");
  if (args.no_wait) {
    std::printf("; the garbage collector removes their Jobs and pods\n");
    return 0;
  }
  if (r.left == 0) {
    std::printf("; nothing with its label is left\n");
    return 0;
  }
  std::printf("; %zu objects with its label are still there after %.0f s\n", r.left, args.timeout_s);
  return 1;
}

int show_status(const K8sArgs& args, const std::filesystem::path& dir, const RunFile& run);

int status(const K8sArgs& args) {
  const std::filesystem::path dir(args.dir);
  const RunFile run = read_run_file(dir);
  try {
    return show_status(args, dir, run);
  } catch (const json::exception& e) {
    // An answer of the API server that is not what Kubernetes sends (run.json was read above).
    throw InputError({args.dir, 0, 0}, "", k8s::UnexpectedAnswer(e.what()).what());
  } catch (const k8s::UnexpectedAnswer& e) {
    throw InputError({args.dir, 0, 0}, "", e.what());
  }
}

int show_status(const K8sArgs& args, const std::filesystem::path& dir, const RunFile& run) {
  const std::string& id = run.run_id;
  const std::string& ns0 = run.namespace_name;
  const std::string seed = run.seed ? std::to_string(*run.seed) : "unknown";
  std::printf("run %s (scenario %s, seed %s%s) in namespace %s of %s\n", id.c_str(), run.scenario.c_str(),
              seed.c_str(), run.emulate ? ", emulated" : "", ns0.c_str(), run.server.c_str());
  std::printf("  controller   %s; started %s",
              run.state == "running"  ? "running (or killed: no end recorded)"
              : run.state == "failed" ? ("failed (" + printable(run.error) + ")").c_str()
                                      : run.state.c_str(),
              local_time(run.started_unix_ns).c_str());
  if (run.finished_unix_ns)
    std::printf(", ended %s (%.1f s), %llu API requests", local_time(*run.finished_unix_ns).c_str(),
                (static_cast<double>(*run.finished_unix_ns) - static_cast<double>(run.started_unix_ns)) / 1e9,
                static_cast<unsigned long long>(run.api_requests));
  std::printf("\n");
  if (std::error_code ec; std::filesystem::exists(dir / "trace.json", ec)) {
    std::ifstream t = open_input(dir / "trace.json", "no trace.json");
    const Trace trace = read_trace_json(t, (dir / "trace.json").string());
    std::map<std::string, int> outcomes;
    for (const AttemptRecord& a : trace.attempts) ++outcomes[to_string(a.outcome)];
    std::string o;
    for (const auto& [k, n] : outcomes) o += (o.empty() ? "" : ", ") + std::to_string(n) + " " + k;
    std::printf("  trace        %zu attempts (%s); %llu tasks failed\n", trace.attempts.size(), o.c_str(),
                static_cast<unsigned long long>(trace.tasks_failed));
  }

  const std::string kubeconfig = args.kubeconfig.empty() ? run.kubeconfig : args.kubeconfig;
  const std::string context = args.context.empty() ? run.context : args.context;
  const std::string ns = args.namespace_name.empty() ? ns0 : args.namespace_name;
  if (args.namespace_name.empty())  // run.json's, named as such (not a --namespace never given)
    k8s::check_namespace(ns, {(dir / "run.json").string() + ": namespace", 0, 0});
  else
    k8s::check_namespace(ns, {"--namespace " + ns, 0, 0});
  k8s::check_run_id(id, {(dir / "run.json").string(), 0, 0}, "run_id");
  k8s::Client api(k8s::credentials_for(kubeconfig, context));
  const std::string sel = "?labelSelector=shardflow.io%2Frun%3D" + id;
  const json jobs = api.get("/apis/batch/v1/namespaces/" + ns + "/jobs" + sel);
  const json pods = api.get("/api/v1/namespaces/" + ns + "/pods" + sel);
  // An object's status, {} when it has none yet (a Job or pod just made): operator[] of a const json on a
  // missing key is an assertion, not an exception.
  const auto status_of = [](const json& o) {
    const auto it = o.find("status");
    return it != o.end() && it->is_object() ? *it : json::object();
  };
  const json job_items = k8s::list_items(jobs), pod_items = k8s::list_items(pods);
  int complete = 0, failed = 0, other = 0;
  for (const json& j : job_items) {
    std::string cond;
    for (const json& c : status_of(j).value("conditions", json::array()))
      if (c.value("status", "") == "True" &&
          (c.value("type", "") == "Complete" || c.value("type", "") == "Failed"))
        cond = c.value("type", "");
    (cond == "Complete" ? complete : cond == "Failed" ? failed : other)++;
  }
  std::map<std::string, int> phases;
  for (const json& p : pod_items) ++phases[status_of(p).value("phase", "Unknown")];
  std::string ph;
  for (const auto& [k, n] : phases) ph += (ph.empty() ? "" : ", ") + std::to_string(n) + " " + k;
  const std::size_t njobs = job_items.size();
  if (njobs == 0 && phases.empty()) {
    std::printf("  cluster      nothing with the label shardflow.io/run=%s is left\n", id.c_str());
    return 0;
  }
  std::printf("  cluster      %zu Jobs (%d complete, %d failed, %d running); pods: %s\n", njobs, complete,
              failed, other, ph.empty() ? "none" : ph.c_str());
  if (run.objects_deleted) {
    std::printf(
        "               the run deleted its owner when it ended: the garbage collector is removing "
        "these\n");
    return 0;
  }
  std::printf("               delete them with: %s\n",
              k8s::cleanup_command(id, kubeconfig, context, ns).c_str());
  return 0;
}

}  // namespace

CLI::App* add_k8s_command(CLI::App& app, K8sArgs& args) {
  auto* cmd = app.add_subcommand("k8s",
                                 "What Kubernetes runs left on a cluster: delete them (cleanup), or "
                                 "show a run's state (status)");
  cmd->require_subcommand(1);
  auto* cl = cmd->add_subcommand(
      "cleanup",
      "Delete a run's objects: its owner ConfigMap sf-RUN_ID (the garbage collector then deletes its Jobs "
      "and their pods) and any Job of the run without an owner; then wait until nothing with the run's "
      "label shardflow.io/run=RUN_ID is left");
  cl->add_option("run_id", args.run_id,
                 "The run's id (printed by `shardflow run --backend k8s`, in run.json)");
  cl->add_flag("--all", args.all,
               "Every shardflow run of the namespace (label app.kubernetes.io/managed-by=shardflow)");
  cl->add_flag("--foreground", args.foreground,
               "Foreground propagation: each owner goes only after its Jobs and pods are gone (default: "
               "Background, the owner goes at once and the garbage collector follows)");
  cl->add_flag("--no-wait", args.no_wait, "Return once the deletes are sent");
  cl->add_option("--timeout", args.timeout_s,
                 "Seconds to wait for the objects to go (default 120); the API requests, retries included, "
                 "are given up 10 s after it")
      ->check(finite_number(0, 31536000, true));
  add_cluster_options(cl, args);
  cl->footer(
      "Examples:\n  shardflow k8s cleanup 3f2a9c1e --namespace ml\n  shardflow k8s cleanup --all\n"
      "Exit status: 0 nothing of the run is left (or --no-wait), 1 objects remain after --timeout or the API "
      "server did not answer or refused, 2 bad input.");
  auto* st = cmd->add_subcommand(
      "status",
      "A run's state: from its output directory (run.json, trace.json) and from the API server (its "
      "Jobs and pods now)");
  st->add_option("dir", args.dir, "The run's output directory (--out of `shardflow run --backend k8s`)")
      ->required()
      ->check(CLI::ExistingDirectory);
  add_cluster_options(st, args);
  st->footer("Example:\n  shardflow k8s status out/shard-preprocess-train");
  return cmd;
}

int run_k8s_command(CLI::App& cmd, const K8sArgs& args) {
  try {
    if (cmd.get_subcommand("cleanup")->parsed()) return cleanup(args);
    return status(args);
  } catch (const k8s::TransportError& e) {
    // No answer at all: say which server and where it came from (the kubeconfig, its context), so that a
    // wrong context or a cluster that is down is seen for what it is. Exit 1, as for any failed request.
    const bool cleaning = cmd.get_subcommand("cleanup")->parsed();
    std::string from = !args.kubeconfig.empty() ? args.kubeconfig
                       : cleaning               ? std::string("the default kubeconfig")
                                                : std::string("the kubeconfig its run.json names");
    if (!args.context.empty()) from += ", context " + args.context;
    throw std::runtime_error("no answer from the API server (" + from + "): " + e.what());
  }
}

}  // namespace shardflow::cli
