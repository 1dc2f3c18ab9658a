// `shardflow compare`: a known optimum worked out by hand, the paired intervals recomputed from the
// per-seed numbers in compare.json, the report, the local backend, and the errors bad variants get.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "cli_helpers.hpp"

using namespace shardflow::clitest;

namespace {

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

}  // namespace

TEST_CASE("cli: compare finds the known optimum and the exact differences", "[cli]") {
  // tests/data/compare/known-optimum.yaml: 12 tasks of 600 s, one per 4-CPU node; n nodes at p per hour.
  // makespan = ceil(12 / n) x 600 s; cost = n x p x makespan / 3600.
  //   two            n=2,  p=0.75: 6 waves = 3600 s; 2 x 0.75 x 1    = 1.5
  //   five           n=5,  p=0.75: 3 waves = 1800 s; 5 x 0.75 x 0.5  = 1.875
  //   six            n=6,  p=0.75: 2 waves = 1200 s; 6 x 0.75 / 3    = 1.5
  //   six-premium    n=6,  p=1.5:  2 waves = 1200 s; 6 x 1.5 / 3     = 3
  //   twelve-premium n=12, p=1.5:  1 wave  =  600 s; 12 x 1.5 / 6    = 3
  // Fastest: twelve-premium. Cheapest: two and six tie at 1.5; six is faster, so six. With a 25 min
  // (1500 s) deadline, six, six-premium and twelve-premium meet it; the cheapest of them is six.
  // Differences to two (the same in every replication, so each interval is a point):
  //   makespan: five -1800, six -2400, six-premium -2400, twelve-premium -3000 (all significant)
  //   cost: five +0.375, six 0 (not significant: the interval [0, 0] holds 0), the premiums +1.5
  const fs::path dir = scratch("compare-known");
  const Result r =
      run("compare tests/data/compare/known-optimum.yaml --variants "
          "tests/data/compare/known-optimum.variants.yaml -r 3 --deadline 25m --out '" +
          dir.string() + "'");
  CHECK(r.err == "");
  REQUIRE(r.status == 0);
  CHECK(contains(r.out,
                 "compare on compare-known-optimum: 5 variants x 3 replications (seeds 1..3, the same for "
                 "every variant); baseline two\n"));
  CHECK(contains(r.out, "fastest: twelve-premium (mean makespan 600.0 s)\n"));
  CHECK(contains(r.out, "cheapest: six (mean cost 1.50)\n"));
  CHECK(contains(r.out,
                 "cheapest variant with p95 makespan within the deadline (1500 s): six; mean cost 1.50, "
                 "p95 makespan 1200.0 s, by the deadline in 3 of 3 runs (95% interval 43.9..100.0%)\n"));
  CHECK(contains(
      r.out,
      "  five            -1800.0 (-1800.0..-1800.0)   -50.0%          yes  +0.38 (+0.38..+0.38)   +25.0%  "
      "        yes\n"));  // -1800 of 3600 s, +0.375 of 1.5
  CHECK(contains(
      r.out,
      "  six             -2400.0 (-2400.0..-2400.0)   -66.7%          yes  +0.00 (+0.00..+0.00)    +0.0%  "
      "         no\n"));
  const auto j = nlohmann::json::parse(slurp(dir / "compare.json"));
  const double makespan[] = {3600, 1800, 1200, 1200, 600};
  const double cost[] = {1.5, 1.875, 1.5, 3, 3};
  REQUIRE(j["variants"].size() == 5);
  for (std::size_t i = 0; i < 5; ++i) {
    const auto& v = j["variants"][i];
    CHECK(v["makespan_s"]["mean"] == makespan[i]);
    CHECK(v["makespan_s"]["ci95_low"] == makespan[i]);
    CHECK(v["cost"]["mean"] == cost[i]);
    CHECK(v["diff_makespan_s"]["mean"] == makespan[i] - makespan[0]);
    CHECK(v["diff_cost"]["mean"] == cost[i] - cost[0]);
    CHECK(v["diff_makespan_s"]["significant"] == (i != 0));
    CHECK(v["diff_cost"]["significant"] == (i != 0 && i != 2));
    CHECK(v["meets"] == (makespan[i] <= 1500));
  }
  CHECK(j["fastest"] == 4);
  CHECK(j["cheapest"] == 2);
  CHECK(j["recommended"] == 2);
  CHECK(j["baseline"] == "two");
  const std::string csv = slurp(dir / "compare.csv");
  CHECK(std::count(csv.begin(), csv.end(), '\n') == 6);  // header + 5 variants

  // The same variants given on the command line give the same comparison.
  const fs::path dir2 = scratch("compare-known-flags");
  const Result flags = run(
      "compare tests/data/compare/known-optimum.yaml -r 3 --deadline 25m -q --variant two "
      "--variant five:cluster.node_pools[cpu].count=5 --variant six:cluster.node_pools[cpu].count=6 "
      "--variant six-premium:cluster.node_pools[cpu].count=6,cluster.node_pools[cpu].price_per_hour=1.5 "
      "--variant twelve-premium:cluster.node_pools[cpu].count=12,cluster.node_pools[cpu].price_per_hour=1.5 "
      "--out '" +
      dir2.string() + "'");
  CHECK(flags.out == "");
  REQUIRE(flags.status == 0);
  CHECK(slurp(dir2 / "compare.json") == slurp(dir / "compare.json"));

  // The page: a bar per variant for makespan and for cost, a point per other variant in each difference
  // chart (filled when significant), and `report DIR` rebuilds the same page from compare.json.
  const std::string page = slurp(dir / "report.html");
  CHECK(page.find("<svg class=\"chart bars makespan\"") != std::string::npos);
  auto n = [&](const std::string& s) {
    std::size_t c = 0;
    for (std::size_t p = page.find(s); p != std::string::npos; p = page.find(s, p + 1)) ++c;
    return c;
  };
  CHECK(n("<rect class=\"cbar\"") == 10);
  CHECK(n("<circle class=\"diff") == 8);
  CHECK(n("<circle class=\"diff sig\"") == 7);
  CHECK(n("<rect class=\"mbar") == 0);
  CHECK(n("<tr class=\"rec\"") == 1);
  fs::remove(dir / "report.html");
  const Result rebuilt = run("report '" + dir.string() + "'");
  CHECK(rebuilt.out == "wrote " + (dir / "report.html").string() + " (compare report)\n");
  CHECK(slurp(dir / "report.html") == page);
}

TEST_CASE("cli: compare names a variant's overlay wherever it names its sets", "[cli]") {
  // The overlay makes the nodes premium (1.5 an hour): 6 nodes, 2 waves of 600 s, cost 6 x 1.5 / 3 = 3.
  const fs::path dir = scratch("compare-overlay");
  std::ofstream(dir / "premium.yaml") << "cluster:\n  node_pools:\n    - {name: cpu, price_per_hour: 1.5}\n";
  std::ofstream(dir / "v.yaml") << "variants:\n  - name: two\n  - name: prem\n    overlay: premium.yaml\n"
                                   "    set:\n      cluster.node_pools[cpu].count: 6\n";
  // Named as the variants file names it (relative to that file), whatever directory compare runs in: the
  // outputs were the path compare opened, which changed with the working directory.
  const std::string overlay = "premium.yaml";
  const Result r = run("compare tests/data/compare/known-optimum.yaml --variants '" +
                       (dir / "v.yaml").string() + "' -r 1 --out '" + dir.string() + "'");
  CHECK(r.err == "");
  REQUIRE(r.status == 0);
  CHECK(contains(r.out,
                 "  two: no changes of its own (the scenario as loaded, with any common --set and "
                 "--overlay)\n  prem: overlay " +
                     overlay + ", cluster.node_pools[cpu].count=6\n"));
  const auto j = nlohmann::json::parse(slurp(dir / "compare.json"));
  CHECK(j["variants"][1]["overlay"] == nlohmann::json::array({overlay}));
  CHECK(j["variants"][1]["set"] == nlohmann::json::array({"cluster.node_pools[cpu].count=6"}));
  CHECK(j["variants"][0].count("overlay") == 0);
  CHECK(j["variants"][1]["cost"]["mean"] == 3.0);
  CHECK(contains(slurp(dir / "compare.csv"),
                 "\nprem,overlay " + overlay + "; cluster.node_pools[cpu].count=6,"));
  // Read back (report): the same.
  const Result rep = run("report '" + dir.string() + "' --out '" + (dir / "again.html").string() + "'");
  CHECK(rep.status == 0);
  CHECK(contains(slurp(dir / "again.html"), "overlay " + overlay + ", cluster.node_pools[cpu].count=6"));
}

TEST_CASE("cli: compare's paired intervals are Hall's corrected t intervals of the per-seed differences",
          "[cli]") {
  const fs::path dir = scratch("compare-paired");
  const Result r = run(
      "compare tests/data/compare/noisy.yaml -r 12 --seed 40 -q --variant base "
      "--variant 'wide:pipeline.steps[shard].parallel_for.parallelism=16,cluster.node_pools[cpu].count=8' "
      "--variant 'more:cluster.node_pools[cpu].count=6' --out '" +
      dir.string() + "'");
  CHECK(r.err == "");
  REQUIRE(r.status == 0);
  const auto j = nlohmann::json::parse(slurp(dir / "compare.json"));
  REQUIRE(j["variants"].size() == 3);
  const auto& base = j["variants"][0]["runs"];
  const double t11 = 2.200985;  // t_{0.975} with 11 degrees of freedom (tables)
  for (std::size_t v = 0; v < 3; ++v) {
    const auto& runs = j["variants"][v]["runs"];
    REQUIRE(runs.size() == 12);
    for (const char* q : {"makespan_s", "cost"}) {
      std::vector<double> d;
      for (std::size_t k = 0; k < 12; ++k) {
        CHECK(runs[k]["seed"] == 40 + k);  // common random numbers: the same seeds in every variant
        d.push_back(runs[k][q].get<double>() - base[k][q].get<double>());
      }
      double sum = 0;
      for (double x : d) sum += x;
      const double mean = sum / 12;
      double ss = 0;
      double s3 = 0;
      for (double x : d) {
        ss += (x - mean) * (x - mean);
        s3 += (x - mean) * (x - mean) * (x - mean);
      }
      const double sd = std::sqrt(ss / 11);
      // Hall (1992): sample skewness G1, then mean - s f^-1(+-t/sqrt(12) - g/72) with
      // f^-1(y) = (3/g)(cbrt(1 + g y) - 1); the baseline's differences are all 0 (no interval to correct).
      double low = mean, high = mean;
      if (sd > 0) {
        const double g = 12.0 / (11 * 10) * s3 / (sd * sd * sd);
        const auto f_inverse = [&](double y) { return g == 0 ? y : 3 / g * (std::cbrt(1 + g * y) - 1); };
        low = mean - sd * f_inverse(t11 / std::sqrt(12.0) - g / 72);
        high = mean - sd * f_inverse(-t11 / std::sqrt(12.0) - g / 72);
        CHECK(low < high);
      }
      const auto& diff = j["variants"][v][std::string("diff_") + q];
      CHECK(diff["mean"].get<double>() == Approx(mean).margin(1e-9));
      CHECK(diff["ci95_low"].get<double>() == Approx(low).margin(1e-9));
      CHECK(diff["ci95_high"].get<double>() == Approx(high).margin(1e-9));
      CHECK(diff["significant"] == (low > 0 || high < 0));
    }
  }
  // The noise is real: makespans differ between seeds.
  CHECK(base[0]["makespan_s"] != base[1]["makespan_s"]);
  // Pairing pays: the two variants share their draws, so the interval of `wide`'s paired difference is
  // narrower than the two unpaired intervals of the means together.
  const auto width = [](const nlohmann::json& s) {
    return s["ci95_high"].get<double>() - s["ci95_low"].get<double>();
  };
  const auto& wide = j["variants"][1];
  CHECK(width(wide["diff_makespan_s"]) < width(wide["makespan_s"]) + width(j["variants"][0]["makespan_s"]));
}

TEST_CASE("cli: compare rejects bad variants with one clear line", "[cli]") {
  const std::string scenario =
      "compare tests/data/compare/known-optimum.yaml -q --out '" + scratch("compare-bad").string() + "' ";
  const auto err = [&](const std::string& args) {
    const Result r = run(scenario + args);
    CHECK(r.status == 2);
    CHECK(r.out == "");
    return r.err;
  };
  CHECK(err("--variant ':cluster.node_pools[cpu].count=4' --variant b") ==
        "--variant :cluster.node_pools[cpu].count=4: expected NAME:PATH=VALUE[,PATH=VALUE...], the variant's "
        "name, a colon, then the fields it changes, as in "
        "wide:pipeline.steps[shard].parallel_for.parallelism=20\n");
  // The colon forgotten: the name would hold the assignment.
  CHECK(err("--variant 'wide=cluster.node_pools[cpu].count=4' --variant b") ==
        "--variant wide=cluster.node_pools[cpu].count=4: expected NAME:PATH=VALUE[,PATH=VALUE...], the "
        "variant's name, a colon, then the fields it changes, as in "
        "wide:pipeline.steps[shard].parallel_for.parallelism=20\n");
  CHECK(err("--variant 'a b:cluster.node_pools[cpu].count=4' --variant b") ==
        "--variant a b:cluster.node_pools[cpu].count=4: name: \"a b\": a variant's name is letters, digits, "
        "'-', '_' and '.' only\n");
  // It names a directory of compare --backend local's command logs.
  CHECK(err("--variant a --variant '..:cluster.node_pools[cpu].count=4'") ==
        "--variant ..:cluster.node_pools[cpu].count=4: name: \"..\": a variant's name is not dots alone\n");
  CHECK(err("--variant a --variant 'b:cluster.node_pools[cpu].count'") ==
        "--variant b:cluster.node_pools[cpu].count: \"cluster.node_pools[cpu].count\" is not PATH=VALUE (a "
        "comma inside a value needs [...], {...} or quotes)\n");
  // A long one is named by its first 100 characters, and quoted by its first 60.
  CHECK(err("--variant a --variant 'b:" + std::string(300, 'x') + "'") ==
        "--variant b:" + std::string(98, 'x') + "... (202 more characters): \"" + std::string(60, 'x') +
            "...\" is not PATH=VALUE (a comma inside a value needs [...], {...} or quotes)\n");
  CHECK(err("--variant a --variant 'b:cluster.node_pools[cpu].count=4,,seed=2'") ==
        "--variant b:cluster.node_pools[cpu].count=4,,seed=2: assignment 2 of 3 is empty\n");
  CHECK(err("--variant a") ==
        "--variant: give at least two variants (the first is the baseline the others are compared with); got "
        "1\n");
  CHECK(err("--variant a --variant a:seed=2") ==
        "--variant a:seed=2: name: variant name \"a\" is given twice\n");
  // One field twice in a variant, by name and by index (cpu is pool 0), or in one spelling: refused,
  // naming both; the common --set of a field a variant also sets is overridden, as documented.
  CHECK(err("--variant a --variant 'b:cluster.node_pools[cpu].count=2,cluster.node_pools[0].count=3'") ==
        "--variant b:cluster.node_pools[cpu].count=2,cluster.node_pools[0].count=3: "
        "cluster.node_pools[0].count: "
        "variant b: this field is set twice, by cluster.node_pools[cpu].count=2 and by "
        "cluster.node_pools[0].count=3; give it once\n");
  CHECK(err("--variant a --variant 'b:seed=2,seed=3'") ==
        "--variant b:seed=2,seed=3: seed: variant b: the seed is not a strategy to compare: every variant "
        "runs the "
        "same seeds (--seed, then one more per -r run); leave it out of the variant\n");
  // A PATH that does not exist: the message names the variant as it was typed, and the field.
  CHECK(
      err("--variant a --variant 'gpu:cluster.node_pools[gpu].count=4'") ==
      "--variant gpu:cluster.node_pools[gpu].count=4: cluster.node_pools[gpu]: variant gpu: no element named "
      "\"gpu\" in cluster.node_pools (names: cpu)\n");
  CHECK(err("--variant a --variant 'typo:cluster.node_pools[cpu].cont=4'") ==
        "--variant typo:cluster.node_pools[cpu].cont=4: cluster.node_pools[0].cont: variant typo: unknown "
        "key \"cont\" (did you mean \"count\"?)\n");
  CHECK(err("--variant a --variant b --measure-runs 2") ==
        "--measure-runs: applies to --backend local only\n");

  // In a variants file: file:line:col of the key or value at fault.
  const fs::path dir = scratch("compare-bad-file");
  const auto file_err = [&](const std::string& yaml) {
    { std::ofstream(dir / "v.yaml") << yaml; }
    return err("--variants '" + (dir / "v.yaml").string() + "'");
  };
  const std::string v = (dir / "v.yaml").string();
  CHECK(err("--variants '" + dir.string() + "'") ==
        "--variants " + dir.string() +
            ": is a directory; name a variants file in it (YAML with "
            "a `variants:` list)\n");
  CHECK(err("--variants /dev/zero") == "--variants /dev/zero: is a device, not a variants file\n");
  CHECK(file_err("variants:\n  - name: a\n  - name: b\n    sett: {seed: 2}\n") ==
        v + ":4:5: variants[1].sett: unknown key; a variant has name, set and overlay\n");
  CHECK(
      file_err("variants:\n  - name: a\n  - name: b\n    set:\n      cluster.node_pools[gpu].count: 4\n") ==
      v + ":5:7: cluster.node_pools[gpu]: variant b: no element named \"gpu\" in cluster.node_pools (names: "
          "cpu)\n");
  CHECK(file_err("variants:\n  - name: a\n  - name: b\n    set:\n      cluster.node_pools[cpu].count: 2\n"
                 "      cluster.node_pools[0].count: 3\n") ==
        v + ":6:7: cluster.node_pools[0].count: variant b: this field is set twice, by "
            "cluster.node_pools[cpu].count=2 and by cluster.node_pools[0].count=3; give it once\n");
  // A value the scenario refuses: at the value; a key that does not exist: at the key.
  CHECK(file_err(
            "variants:\n  - name: a\n  - name: b\n    set:\n      cluster.node_pools[cpu].count: five\n") ==
        v + ":5:38: cluster.node_pools[0].count: variant b: expected an integer, got \"five\"\n");
  CHECK(file_err("variants:\n  - name: a\n  - name: b\n    set:\n      cluster.node_pools[cpu].cont: 5\n") ==
        v + ":5:7: cluster.node_pools[0].cont: variant b: unknown key \"cont\" (did you mean \"count\"?)\n");
  // An unknown key inside the value is the value's fault; a misspelled key on the way is the path's.
  CHECK(
      file_err("variants:\n  - name: a\n  - name: b\n    set:\n      cluster.scheduler: {polcy: spread}\n") ==
      v + ":5:26: cluster.scheduler.polcy: variant b: unknown key \"polcy\" (did you mean \"policy\"?)\n");
  CHECK(file_err("variants:\n  - name: a\n  - name: b\n    set:\n      cluster.schedler.policy: spread\n") ==
        v + ":5:7: cluster.schedler: variant b: unknown key \"schedler\" (did you mean \"scheduler\"?)\n");
  CHECK(file_err("variants:\n  - name: a\n  - set: {seed: 2}\n") ==
        v + ":3:5: variants[1].name: every variant "
            "needs a name\n");
  CHECK(file_err("variant:\n  - name: a\n") ==
        v + ":1:1: variant: unknown key; a variants file has `variants:` only\n");
  CHECK(file_err("variants:\n  - name: a\n  - name: b\n    overlay: nope.yaml\n") ==
        v + ":4:14: variants[1].overlay: " + (dir / "nope.yaml").string() +
            ": cannot open the file (it does not exist or is not readable)\n");
  // A directory or a device is said as --overlay says it (both were read as an empty overlay).
  CHECK(file_err("variants:\n  - name: a\n  - name: b\n    overlay: .\n") ==
        v + ":4:14: variants[1].overlay: " + (dir / ".").string() +
            ": is a directory, not a scenario file\n");
  CHECK(file_err("variants:\n  - name: a\n  - name: b\n    overlay: /dev/null\n") ==
        v + ":4:14: variants[1].overlay: /dev/null: is a device, not a scenario file\n");
}

TEST_CASE("cli: compare --backend local names the variant whose set the machine cannot run", "[cli]") {
  // Refused before anything runs, at the variant (the flag or its place in the file), not at a --set the
  // user never gave.
  // (The message ends with this machine's memory, then the advice.)
  const std::string why =
      "pipeline.steps[0].resources.cpu: variant big: step shard asks for 4 CPUs, more than this machine "
      "(--cores 2, --memory ";
  const std::string advice = ") has; lower it with --set or run with a larger --cores\n";
  const std::string common =
      "compare tests/data/compare/tiny-local.yaml -r 1 --backend local --cores 2 --out '" +
      scratch("compare-local-big").string() + "' ";
  const Result f = run(common + "--variant base --variant 'big:pipeline.steps[shard].resources.cpu=4'");
  CHECK(f.status == 2);
  CHECK(f.err.starts_with("--variant big:pipeline.steps[shard].resources.cpu=4: " + why));
  CHECK(f.err.ends_with(advice));
  const fs::path v = scratch("compare-local-big") / "v.yaml";
  std::ofstream(v)
      << "variants:\n  - name: base\n  - name: big\n    set:\n      pipeline.steps[shard].resources.cpu: 4\n";
  const Result g = run(common + "--variants '" + v.string() + "'");
  CHECK(g.status == 2);
  CHECK(g.err.starts_with(v.string() + ":5:44: " + why));
  CHECK(g.err.ends_with(advice));
}

TEST_CASE("cli: compare --backend local at --time-scale predicts sampled-time kernels scaled, commands not",
          "[cli]") {
  // tests/data/compare/mixed-local.yaml at --time-scale 0.1: the command sleeps its 300 ms for real, the
  // sleep kernel's 1 s becomes 100 ms: 0.4 s predicted (the whole makespan times 0.1 was 0.13 s). The
  // variant `broken` fails its sleep (fail_attempts 1, no retries): its run is flagged.
  const fs::path dir = scratch("compare-local-scaled");
  const Result r =
      run("compare tests/data/compare/mixed-local.yaml -r 1 --backend local --cores 2 --time-scale 0.1 "
          "--variant base --variant 'broken:pipeline.steps[nap].kernel.fail_attempts=1' --out '" +
          dir.string() + "'");
  CHECK(r.status == 0);
  const auto j = nlohmann::json::parse(slurp(dir / "compare.json"));
  const auto& m = j["variants"][0]["measured"];
  CHECK(m["predicted_makespan_s"][0].get<double>() == Approx(0.4).margin(1e-9));
  CHECK(m["measured_makespan_s"][0].get<double>() >= 0.39);
  CHECK(m["measured_makespan_s"][0].get<double>() < 2.4);
  CHECK(m["measured_tasks_failed"] == nlohmann::json::array({0}));
  CHECK(j["variants"][1]["measured"]["measured_tasks_failed"] == nlohmann::json::array({1}));
  CHECK(contains(r.out, "runs with failed tasks"));
  CHECK(contains(r.out, "  (a real run with failed tasks ended early or did less work"));
  const std::string csv = slurp(dir / "compare.csv");
  CHECK(contains(csv, ",measured_runs_with_failed_tasks,finished_cost_mean,"));
  const std::string last = csv.substr(csv.rfind('\n', csv.size() - 2) + 1);  // `broken`: its one run
  CHECK(contains(last, ",1.3,1,"));  // p95 1.3 s predicted; its one measured run failed
  // One pair with the baseline; no deadline (its three columns empty); its simulated p95 no failed run's.
  CHECK(last.ends_with(",1,,,,false\n"));
  CHECK(contains(slurp(dir / "report.html"), "Real runs with failed tasks: broken (1 of 1 runs)."));
}

TEST_CASE("cli: compare --backend local runs each variant for real next to the prediction", "[cli]") {
  // tests/data/compare/tiny-local.yaml on 2 cores: four 200 ms shards of one core each, two at a time,
  // then a 100 ms merge: 2 x 200 + 100 = 500 ms predicted. `serial` runs the shards one at a time:
  // 4 x 200 + 100 = 900 ms.
  const fs::path dir = scratch("compare-local");
  const Result r =
      run("compare tests/data/compare/tiny-local.yaml -r 2 --backend local --cores 2 --variant base "
          "--variant 'serial:pipeline.steps[shard].parallel_for.parallelism=1' --out '" +
          dir.string() + "'");
  CHECK(r.status == 0);
  CHECK(contains(r.err, "running serial on local (seed 1, run 1 of 1)\n"));
  CHECK(contains(r.out, "measured next to predicted"));
  const auto j = nlohmann::json::parse(slurp(dir / "compare.json"));
  const double predicted[] = {0.5, 0.9};
  for (std::size_t v = 0; v < 2; ++v) {
    const auto& m = j["variants"][v]["measured"];
    CHECK(m["backend"] == "local");
    CHECK(m["seeds"] == nlohmann::json::array({1}));
    CHECK(m["predicted_makespan_s"][0].get<double>() == Approx(predicted[v]).margin(1e-9));
    // Real sleeps on a shared machine: not shorter than the model, and not wildly longer.
    CHECK(m["measured_makespan_s"][0].get<double>() >= predicted[v] - 0.01);
    CHECK(m["measured_makespan_s"][0].get<double>() < predicted[v] + 2.0);
  }
  const std::string page = slurp(dir / "report.html");
  std::size_t bars = 0;
  for (std::size_t p = page.find("<rect class=\"mbar"); p != std::string::npos;
       p = page.find("<rect class=\"mbar", p + 1))
    ++bars;
  CHECK(bars == 4);  // measured and predicted, per variant
}
