// `shardflow run --backend k8s` against bad input, with the fake API server (fake_apiserver.py): each
// problem is one line on stderr and a non-zero exit, and the token is never in the output.
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <fstream>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

#include <catch2/catch.hpp>

#include <shardflow/k8s/controller.hpp>

#include "cli/cli_helpers.hpp"
#include "kube_helpers.hpp"

using namespace shardflow;
using namespace shardflow::kubetest;

namespace {

std::string kubeconfig(const std::string& server, const std::string& ca_pem, const std::string& token) {
  return "apiVersion: v1\nkind: Config\ncurrent-context: fake\nclusters:\n- name: fake\n  cluster:\n"
         "    server: " +
         server + "\n    certificate-authority-data: " + base64(ca_pem) +
         "\ncontexts:\n- name: fake\n  context: {cluster: fake, user: u}\nusers:\n- name: u\n  user:\n"
         "    token: " +
         token + "\n";
}

// One line on stderr containing `want`, nothing on stdout, exit `status`, the token nowhere.
void check_error(const clitest::Result& r, int status, const std::string& want) {
  INFO("stdout: " << r.out << "\nstderr: " << r.err);
  CHECK(r.status == status);
  CHECK(r.out.empty());
  CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
  CHECK(r.err.find(want) != std::string::npos);
  CHECK(r.err.find(kToken) == std::string::npos);
  CHECK(r.out.find(kToken) == std::string::npos);
}

const std::string kScenario = std::string(SHARDFLOW_SOURCE_DIR) + "/tests/kube/scenarios/nested.yaml";

// A scratch directory, the fake API server with its certificates, and a kubeconfig (kc) for it.
struct FakeCluster {
  explicit FakeCluster(const std::string& name)
      : dir(scratch(name)), certs(dir), server(certs), kc((dir / "kc.yaml").string()) {
    write(kc, kubeconfig(server.url(), certs.server_pem, kToken));
  }
  // The namespace `default` is there (the run's first check).
  void namespace_exists() {
    server.script(
        "/api/v1/namespaces/default",
        nlohmann::json::array({{{"status", 200}, {"body", {{"metadata", {{"name", "default"}}}}}}}));
  }
  fs::path dir;
  Certs certs;
  FakeServer server;
  std::string kc;
};

}  // namespace

TEST_CASE("k8s run: each bad input is one clear line and a non-zero exit without the token", "[kube]") {
  const fs::path dir = scratch("controller-bad");
  const Certs certs(dir);
  FakeServer server(certs);
  const std::string run =
      "run '" + kScenario + "' --backend k8s --emulate -q --out '" + (dir / "o").string() + "'";
  const std::string kc = (dir / "kc.yaml").string();

  SECTION("unreachable server") {
    write(kc, kubeconfig("https://127.0.0.1:1", certs.server_pem, kToken));
    check_error(
        clitest::run(run + " --kubeconfig '" + kc + "'"), 1,
        "cannot reach the cluster at https://127.0.0.1:1 (context fake): GET /api/v1/namespaces/default:");
  }
  SECTION("a context the kubeconfig does not have") {
    write(kc, kubeconfig(server.url(), certs.server_pem, kToken));
    check_error(clitest::run(run + " --kubeconfig '" + kc + "' --context prod"), 2, "prod");
  }
  SECTION("a CA that did not sign the server's certificate") {
    write(kc, kubeconfig(server.url(), certs.other_pem, kToken));
    check_error(clitest::run(run + " --kubeconfig '" + kc + "'"), 1,
                "TLS: the server's certificate was not verified");
  }
  SECTION("a wrong token") {
    write(kc, kubeconfig(server.url(), certs.server_pem, "not-the-token"));
    check_error(clitest::run(run + " --kubeconfig '" + kc + "'"), 2,
                "refused the credentials (401 Unauthorized");
    // An --out directory that was there before the run stays, even empty.
    fs::create_directories(dir / "kept");
    check_error(clitest::run("run '" + kScenario + "' --backend k8s --emulate -q --out '" +
                             (dir / "kept").string() + "' --kubeconfig '" + kc + "'"),
                2, "refused the credentials (401 Unauthorized");
    CHECK(fs::is_directory(dir / "kept"));
  }
  SECTION("a namespace that does not exist") {
    write(kc, kubeconfig(server.url(), certs.server_pem, kToken));
    check_error(clitest::run(run + " --kubeconfig '" + kc + "' --namespace ml"), 2,
                "--namespace ml: namespace ml does not exist in the cluster at " + server.url() +
                    " (context fake) (kubectl create namespace ml)");
  }
  SECTION("a namespace of the context that does not exist is named as the context's") {
    std::string text = kubeconfig(server.url(), certs.server_pem, kToken);
    const std::string ctx = "context: {cluster: fake, user: u}";
    text.replace(text.find(ctx), ctx.size(), "context: {cluster: fake, user: u, namespace: ml}");
    write(kc, text);
    check_error(clitest::run(run + " --kubeconfig '" + kc + "'"), 2,
                kc + ": namespace ml (the context's) does not exist in the cluster at " + server.url() +
                    " (context fake) (kubectl create namespace ml)");
  }
  SECTION("a step no node can hold (the fake's nodes have nothing allocatable)") {
    write(kc, kubeconfig(server.url(), certs.server_pem, kToken));
    server.script(
        "/api/v1/namespaces/default",
        nlohmann::json::array(
            {{{"status", 200}, {"body", {{"kind", "Namespace"}, {"metadata", {{"name", "default"}}}}}}}));
    check_error(clitest::run(run + " --kubeconfig '" + kc + "'"), 2,
                "nested.yaml:11:11: pipeline.steps[0].steps[0].resources: step prep asks for 1 CPUs, 1Gi of "
                "memory and 0 GPUs; no node of the cluster can hold it (the largest has 0 CPUs");
  }
  SECTION("a node selector that no node's labels match says so") {
    write(kc, kubeconfig(server.url(), certs.server_pem, kToken));
    server.script(
        "/api/v1/namespaces/default",
        nlohmann::json::array(
            {{{"status", 200}, {"body", {{"kind", "Namespace"}, {"metadata", {{"name", "default"}}}}}}}));
    const std::string sc = (dir / "selector.yaml").string();
    write(sc,
          "name: sel\npipeline:\n  steps:\n    - {name: w, node_selector: {accel: h100}, image: alpine, "
          "resources: {cpu: 1}}\ncluster:\n  node_pools:\n    - {name: g, cpu: 8, memory: 32Gi, count: 1, "
          "labels: {accel: h100}}\n");
    check_error(clitest::run("run '" + sc + "' --backend k8s --emulate -q --out '" + (dir / "o2").string() +
                             "' --kubeconfig '" + kc + "'"),
                2,
                "step w asks for 1 CPUs, 0 of memory and 0 GPUs; no node of the cluster with labels "
                "accel=h100 can hold it (none of its 2 nodes matches the step's node_selector and "
                "tolerations: 2 with no "
                "label accel=h100)");
  }
  // No --out directory was left behind, empty: the run made it and took it away again.
  CHECK_FALSE(fs::exists(dir / "o"));
  CHECK_FALSE(fs::exists(dir / "o2"));
  // Nothing was created on the server (every check comes first).
  const nlohmann::json log = server.control("GET", "/_log");
  for (const auto& r : log["requests"]) CHECK(r["method"] != "POST");
}

TEST_CASE("k8s run: a run stopped by an error records it in run.json as failed", "[kube]") {
  // The checks pass (the namespace, a node that holds every step), then the run's first list of its pods
  // is refused (403, as RBAC refuses it): run.json said "running" for ever, which k8s status reads as a
  // run still going or killed.
  FakeCluster f("controller-failed");
  const fs::path& dir = f.dir;
  FakeServer& server = f.server;
  const std::string& kc = f.kc;
  f.namespace_exists();
  const nlohmann::json node = {
      {"metadata", {{"name", "node-0"}, {"labels", {{"accel", "a100"}}}}},
      {"status", {{"allocatable", {{"cpu", "16"}, {"memory", "64Gi"}, {"pods", "110"}}}}}};
  server.script(
      "/api/v1/nodes",
      nlohmann::json::array({{{"status", 200}, {"body", {{"items", nlohmann::json::array({node})}}}}}));
  server.script("/api/v1/namespaces/default/pods", nlohmann::json::array({{{"status", 403},
                                                                           {"body",
                                                                            {{"kind", "Status"},
                                                                             {"status", "Failure"},
                                                                             {"reason", "Forbidden"},
                                                                             {"message", "pods is forbidden"},
                                                                             {"code", 403}}}}}));
  const fs::path out = dir / "o";
  const clitest::Result r = clitest::run("run '" + kScenario + "' --backend k8s --emulate -q --out '" +
                                         out.string() + "' --kubeconfig '" + kc + "' --run-id abc");
  INFO(r.err);
  CHECK(r.status != 0);
  REQUIRE(fs::exists(out / "run.json"));
  const auto run = nlohmann::json::parse(clitest::slurp(out / "run.json"));
  CHECK(run["state"] == "failed");
  CHECK(run["error"].get<std::string>().find("pods is forbidden") != std::string::npos);
  CHECK("shardflow: " + run["error"].get<std::string>() + "\n" == r.err);
  CHECK(run["objects_deleted"] == false);
  CHECK(run["kubeconfig"] == kc);
  CHECK(run.contains("finished_unix_ns"));

  // A resume that finds no owner (nothing of the run is on the cluster) is refused and leaves run.json as
  // it was (it wrote the refusal over the run's own error).
  const std::string before = clitest::slurp(out / "run.json");
  f.namespace_exists();
  server.script(
      "/api/v1/nodes",
      nlohmann::json::array({{{"status", 200}, {"body", {{"items", nlohmann::json::array({node})}}}}}));
  const nlohmann::json empty = {{"metadata", {{"resourceVersion", "1"}}}, {"items", nlohmann::json::array()}};
  server.script("/api/v1/namespaces/default/pods",
                nlohmann::json::array({{{"status", 200}, {"body", empty}}}));
  server.script("/apis/batch/v1/namespaces/default/jobs",
                nlohmann::json::array({{{"status", 200}, {"body", empty}}}));
  const clitest::Result resumed = clitest::run("run --resume '" + out.string() + "' -q");
  INFO(resumed.err);
  CHECK(resumed.status == 2);
  CHECK(resumed.err.find("has no owner ConfigMap sf-abc in namespace default") != std::string::npos);
  CHECK(clitest::slurp(out / "run.json") == before);
}

TEST_CASE("k8s run: a run stopped by an error after it made its owner says what stays on the cluster",
          "[kube]") {
  // Credentials that may make the owner ConfigMap but not Jobs (RBAC): the run stops at its first Job.
  // What it made stays (a run fixed may be resumed): the warning names the cleanup command.
  FakeCluster f("controller-no-jobs");
  f.namespace_exists();
  const nlohmann::json node = {{"metadata", {{"name", "node-0"}}},
                               {"status", {{"allocatable", {{"cpu", "16"}, {"memory", "64Gi"}}}}}};
  f.server.script(
      "/api/v1/nodes",
      nlohmann::json::array({{{"status", 200}, {"body", {{"items", nlohmann::json::array({node})}}}}}));
  const nlohmann::json empty = {{"metadata", {{"resourceVersion", "1"}}}, {"items", nlohmann::json::array()}};
  f.server.script("/api/v1/namespaces/default/pods",
                  nlohmann::json::array({{{"status", 200}, {"body", empty}}}));
  f.server.script("/apis/batch/v1/namespaces/default/jobs",
                  nlohmann::json::array({{{"status", 200}, {"body", empty}},
                                         {{"status", 403},
                                          {"body",
                                           {{"kind", "Status"},
                                            {"status", "Failure"},
                                            {"reason", "Forbidden"},
                                            {"message", "jobs.batch is forbidden"},
                                            {"code", 403}}}}}));
  f.server.script("/api/v1/namespaces/default/configmaps",
                  nlohmann::json::array({{{"status", 201},
                                          {"body",
                                           {{"kind", "ConfigMap"},
                                            {"apiVersion", "v1"},
                                            {"metadata", {{"name", "sf-nojobs"}, {"uid", "u-1"}}}}}}}));
  const fs::path out = f.dir / "o";
  // The kubeconfig from $KUBECONFIG, not --kubeconfig: the cleanup command and run.json name it, and the
  // context used, so that they find this cluster whatever the environment is later.
  ::setenv("KUBECONFIG", f.kc.c_str(), 1);
  const clitest::Result r = clitest::run("run '" + kScenario + "' --backend k8s --emulate --out '" +
                                         out.string() + "' --run-id nojobs");
  ::unsetenv("KUBECONFIG");
  INFO(r.err);
  CHECK(r.status == 1);
  CHECK(r.err.find("k8s: the run stopped on an error; its objects stay on the cluster (shardflow k8s cleanup "
                   "nojobs --kubeconfig " +
                   f.kc +
                   " --context fake --namespace default deletes them, run --resume continues the run)\n"
                   "shardflow: ") != std::string::npos);
  CHECK(r.err.find("jobs.batch is forbidden") != std::string::npos);
  CHECK(r.err.find(kToken) == std::string::npos);
  const auto run = nlohmann::json::parse(clitest::slurp(out / "run.json"));
  CHECK(run["state"] == "failed");
  CHECK(run["objects_deleted"] == false);
  CHECK(run["kubeconfig"] == f.kc);
  CHECK(run["context"] == "fake");
}

TEST_CASE("k8s run: an answer of the wrong shape is said to be the API server's", "[kube]") {
  // A node whose status is a string: the JSON library's own message was all the run said.
  FakeCluster f("controller-bad-answer");
  const fs::path& dir = f.dir;
  FakeServer& server = f.server;
  const std::string& kc = f.kc;
  f.namespace_exists();
  server.script(
      "/api/v1/nodes",
      nlohmann::json::array(
          {{{"status", 200}, {"body", {{"items", {{{"metadata", {{"name", "n"}}}, {"status", "x"}}}}}}}}));
  const clitest::Result r = clitest::run("run '" + kScenario + "' --backend k8s --emulate -q --out '" +
                                         (dir / "o").string() + "' --kubeconfig '" + kc + "'");
  INFO(r.err);
  CHECK(r.status == 1);
  CHECK(r.err.starts_with("shardflow: unexpected answer from the API server: [json.exception."));
}

TEST_CASE("k8s: cleanup refuses answers that are not lists, and items without a name", "[kube]") {
  // A server that answers {"status": "ok"} to everything was told "nothing with its label is left" (exit
  // 0); an item without a name made DELETE .../configmaps/, which deletes the whole collection.
  FakeCluster f("controller-not-a-list");
  FakeServer& server = f.server;
  const std::string& kc = f.kc;
  const std::string configmaps = "/api/v1/namespaces/default/configmaps";
  server.script(configmaps, nlohmann::json::array({{{"status", 200}, {"body", {{"status", "ok"}}}}}));
  clitest::Result c = clitest::run("k8s cleanup abc --kubeconfig '" + kc + "' --timeout 5");
  CHECK(c.status == 1);
  CHECK(c.err ==
        "shardflow: unexpected answer from the API server: not a list (no `items`): {\"status\":\"ok\"}\n");
  server.script(configmaps, nlohmann::json::array(
                                {{{"status", 200}, {"body", {{"items", {{{"metadata", {{"name", 5}}}}}}}}}}));
  c = clitest::run("k8s cleanup abc --kubeconfig '" + kc + "' --timeout 5");
  CHECK(c.status == 1);
  CHECK(c.err == "shardflow: unexpected answer from the API server: an item of " + configmaps +
                     " without a name: {\"metadata\":{\"name\":5}}\n");
  const nlohmann::json log = server.control("GET", "/_log");
  for (const auto& r : log["requests"]) CHECK(r["method"] != "DELETE");
}

TEST_CASE("k8s: a server that never answers: cleanup ends at --timeout, Ctrl-C ends the checks", "[kube]") {
  // A server that accepts and does not answer held each request 30 s, six times over: cleanup took
  // 223 s with --timeout 10, and the first Ctrl-C during a run's checks was lost.
  FakeCluster f("controller-silent");
  const fs::path& dir = f.dir;
  FakeServer& server = f.server;
  const std::string& kc = f.kc;
  const nlohmann::json slow =
      nlohmann::json::array({{{"status", 200}, {"delay", 60}, {"body", nlohmann::json::object()}}});

  server.script("/api/v1/namespaces/default/configmaps", slow);
  const auto t0 = std::chrono::steady_clock::now();
  const clitest::Result c = clitest::run("k8s cleanup abc --kubeconfig '" + kc + "' --timeout 1");
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  CHECK(c.status == 1);
  CHECK_THAT(c.err,
             Catch::StartsWith("shardflow: no answer from the API server (" + kc +
                               "): gave up after --timeout 1 s (GET /api/v1/namespaces/default/configmaps?"));
  CHECK(took < 20);

  server.script("/api/v1/namespaces/default", slow);
  const fs::path out = dir / "o";
  const std::string cmd =
      std::string("cd '") + SHARDFLOW_SOURCE_DIR + "' && (timeout --preserve-status -s INT 1 '" +
      SHARDFLOW_EXE + "' run '" + kScenario + "' --backend k8s --emulate --kubeconfig '" + kc + "' --out '" +
      out.string() + "' 2>'" + (dir / "err").string() + "'; echo $? >'" + (dir / "rc").string() + "')";
  const auto t1 = std::chrono::steady_clock::now();
  REQUIRE(std::system(cmd.c_str()) == 0);
  CHECK(std::chrono::duration<double>(std::chrono::steady_clock::now() - t1).count() < 20);
  CHECK(clitest::slurp(dir / "rc") == "130\n");
  CHECK(clitest::slurp(dir / "err") ==
        "run: interrupted while checking the cluster, before anything of the run was made\n");
  CHECK_FALSE(fs::exists(out / "run.json"));
}

TEST_CASE("k8s: a node's pool in the trace is read from its pool labels, the first that it has", "[kube]") {
  const auto node = [](nlohmann::json labels) {
    return nlohmann::json{{"metadata", {{"name", "n1"}, {"labels", std::move(labels)}}}};
  };
  CHECK(k8s::node_pool_label(node({{"shardflow.io/pool", "gpu"}, {"cloud.google.com/gke-nodepool", "g"}})) ==
        "gpu");
  CHECK(k8s::node_pool_label(node({{"node.kubernetes.io/instance-type", "n2-standard-16"},
                                   {"cloud.google.com/gke-nodepool", "cpu-pool"}})) == "cpu-pool");
  CHECK(k8s::node_pool_label(node({{"eks.amazonaws.com/nodegroup", "ng-1"}})) == "ng-1");
  CHECK(k8s::node_pool_label(node({{"agentpool", "np"}, {"karpenter.sh/nodepool", "k"}})) == "np");
  CHECK(k8s::node_pool_label(node({{"karpenter.sh/nodepool", "default"}, {"kubernetes.io/os", "linux"}})) ==
        "default");
  CHECK(k8s::node_pool_label(node({{"node.kubernetes.io/instance-type", "m5.xlarge"}})) == "m5.xlarge");
  // An empty value is passed over; no pool label, no labels or no metadata: "".
  CHECK(k8s::node_pool_label(node({{"shardflow.io/pool", ""}, {"agentpool", "np"}})) == "np");
  CHECK(k8s::node_pool_label(node({{"kubernetes.io/os", "linux"}})).empty());
  CHECK(k8s::node_pool_label(nlohmann::json{{"metadata", {{"name", "n1"}}}}).empty());
  CHECK(k8s::node_pool_label(nlohmann::json::object()).empty());
}

// Printed after an interrupted or kept run, by `k8s status` and while the API server is away: typed as
// printed, it must reach the same cluster (it named the run alone, so it went to ~/.kube/config).
TEST_CASE("k8s: the cleanup command printed names the kubeconfig, context and namespace, quoted", "[kube]") {
  CHECK(k8s::cleanup_command("ev1", "", "", "") == "shardflow k8s cleanup ev1");
  CHECK(k8s::cleanup_command("ev1", "kc/test.kubeconfig", "", "default") ==
        "shardflow k8s cleanup ev1 --kubeconfig kc/test.kubeconfig --namespace default");
  CHECK(k8s::cleanup_command("ev1", "/home/a b/it's.yaml", "kind-x", "ml") ==
        "shardflow k8s cleanup ev1 --kubeconfig '/home/a b/it'\\''s.yaml' --context kind-x --namespace ml");
  CHECK(k8s::cleanup_command("ev1", "", "arn:aws:eks:eu-west-1:1:cluster/x", "") ==
        "shardflow k8s cleanup ev1 --context arn:aws:eks:eu-west-1:1:cluster/x");
}

TEST_CASE("k8s run: credentials that may not list nodes are said to, before the run", "[kube]") {
  // A ServiceAccount with a Role on jobs, pods and configmaps only: the run went on without a word, and
  // its summary read "utilization CPU mean 0.0%" (its nodes had no capacity).
  FakeCluster f("controller-no-nodes");
  f.namespace_exists();
  const nlohmann::json forbidden = {{"kind", "Status"},
                                    {"status", "Failure"},
                                    {"reason", "Forbidden"},
                                    {"message", "nodes is forbidden"},
                                    {"code", 403}};
  f.server.script("/api/v1/nodes", nlohmann::json::array({{{"status", 403}, {"body", forbidden}}}));
  // The run then stops at its first list of pods (as in the test above), which is all this test needs.
  f.server.script("/api/v1/namespaces/default/pods",
                  nlohmann::json::array({{{"status", 403}, {"body", forbidden}}}));
  const clitest::Result r =
      clitest::run("run '" + kScenario + "' --backend k8s --emulate --out '" + (f.dir / "o").string() +
                   "' --kubeconfig '" + f.kc + "' --run-id abc");
  CHECK(r.err.find(
            "k8s: the credentials may not list the cluster's nodes (403 on GET /api/v1/nodes): whether "
            "each step fits a node is not checked before the run, and the trace's nodes have no capacity "
            "or pool, so the run's CPU utilization is not known (grant list on nodes, a ClusterRole, to "
            "have them)\n") != std::string::npos);
}

TEST_CASE("k8s: run --resume is refused while the run's controller still runs on this machine", "[kube]") {
  // Two controllers drove one run for 80 s (both wrote its trace and run.json). run.json names its
  // controller (host, pid); a live shardflow process of that id on this host refuses the resume.
  const fs::path dir = scratch("resume-live");
  std::ofstream(dir / "long.yaml") << "name: long\npipeline:\n  steps:\n"
                                      "    - {name: spin, kernel: {name: spin, seconds: 600s}}\n"
                                      "cluster:\n  node_pools: [{name: n, cpu: 1, memory: 1Gi, count: 1}]\n";
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    ::execl(SHARDFLOW_EXE, SHARDFLOW_EXE, "run", (dir / "long.yaml").c_str(), "--backend", "local",
            "--no-files", "-q", static_cast<char*>(nullptr));
    ::_exit(127);
  }
  const auto comm = [&] {
    std::ifstream in("/proc/" + std::to_string(child) + "/comm");
    std::string name;
    std::getline(in, name);
    return name;
  };
  for (int i = 0; i < 200 && comm() != "shardflow"; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  char host[256] = {};
  REQUIRE(::gethostname(host, sizeof host - 1) == 0);
  const fs::path run_dir = dir / "run";
  fs::create_directories(run_dir);
  const auto write_run = [&](const std::string& state, std::int64_t start = -2) {
    nlohmann::json controller = {{"host", host}, {"pid", child}};
    if (start != -2) controller["start"] = start;
    std::ofstream(run_dir / "run.json")
        << nlohmann::json{{"run_id", "live"},
                          {"namespace", "default"},
                          {"server", "https://127.0.0.1:1"},
                          {"context", "x"},
                          {"kubeconfig", (dir / "none.yaml").string()},
                          {"scenario", "long"},
                          {"seed", 1},
                          {"state", state},
                          {"started_unix_ns", 1},
                          {"controller", controller},
                          {"invocation", {{"file", (dir / "long.yaml").string()}}}}
               .dump(2);
  };
  write_run("running");
  const clitest::Result live = clitest::run("run --resume '" + run_dir.string() + "'");
  CHECK(live.status == 2);
  CHECK(live.err ==
        "--resume " + run_dir.string() +
            ": run live's controller is still running on this machine (process " + std::to_string(child) +
            "): stop it (Ctrl-C) or let it finish; --resume continues a run whose controller was stopped "
            "or killed\n");
  // With its start time (run.json's since 2026-12-05): the same process, found by its start, not its name;
  // a process of that id that started at another time is not the controller (the id was reused).
  const std::int64_t start = k8s::process_start_ticks(child);
  REQUIRE(start > 0);
  write_run("running", start);
  const clitest::Result same = clitest::run("run --resume '" + run_dir.string() + "'");
  CHECK(same.status == 2);
  CHECK(same.err == live.err);
  write_run("running", start + 1);
  const clitest::Result reused = clitest::run("run --resume '" + run_dir.string() + "'");
  CHECK(reused.status == 2);
  CHECK(reused.err.find("still running") == std::string::npos);
  CHECK(reused.err.find("step spin has no image") != std::string::npos);
  write_run("running");
  ::kill(child, SIGKILL);
  // Killed but not yet reaped (a zombie, its id and start time still in /proc): not a controller.
  const auto state = [&] {
    std::ifstream in("/proc/" + std::to_string(child) + "/stat");
    std::string stat;
    std::getline(in, stat);
    const std::size_t close = stat.rfind(')');
    return close == std::string::npos || close + 2 >= stat.size() ? '?' : stat[close + 2];
  };
  for (int i = 0; i < 200 && state() != 'Z'; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  REQUIRE(state() == 'Z');
  write_run("running", start);
  const clitest::Result zombie = clitest::run("run --resume '" + run_dir.string() + "'");
  CHECK(zombie.err.find("still running") == std::string::npos);
  write_run("running");
  int status = 0;
  ::waitpid(child, &status, 0);
  // Gone (killed: run.json still says running): the resume goes on, here to the scenario's own problem.
  const clitest::Result gone = clitest::run("run --resume '" + run_dir.string() + "'");
  CHECK(gone.status == 2);
  CHECK(gone.err.find("still running") == std::string::npos);
  CHECK(gone.err.find("step spin has no image") != std::string::npos);
}
