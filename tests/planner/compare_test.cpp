#include <sstream>
#include <string>

#include <catch2/catch.hpp>
#include <tbb/global_control.h>

#include <shardflow/core/error.hpp>
#include <shardflow/planner/compare.hpp>

using namespace shardflow;
using namespace shardflow::planner;

namespace {

// Eight noisy 10 s tasks, four at a time, on one node billed 3.6 an hour.
const std::string kNoisy =
    "name: noisy\n"
    "seed: 5\n"
    "overheads: none\n"
    "pipeline:\n"
    "  steps:\n"
    "    - name: w\n"
    "      parallel_for: {count: 8, parallelism: 4}\n"
    "      duration: {base: 10s, noise: {lognormal_sigma: 0.3}}\n"
    "cluster:\n"
    "  node_pools:\n"
    "    - {name: n, cpu: 16, memory: 64Gi, count: 1, price_per_hour: 3.6}\n";

std::string compare_json(int threads) {
  const tbb::global_control limit(tbb::global_control::max_allowed_parallelism,
                                  static_cast<std::size_t>(threads));
  CompareSpec spec;
  spec.variants = {parse_variant("four"), parse_variant("two:pipeline.steps[w].parallel_for.parallelism=2"),
                   parse_variant("eight:pipeline.steps[w].parallel_for.parallelism=8")};
  spec.replications = 25;
  std::ostringstream out;
  write_compare_json(out, run_compare_text(kNoisy, "noisy.yaml", spec));
  return out.str();
}

}  // namespace

TEST_CASE("compare: the same output on 1 and on 2 threads", "[planner]") {
  const std::string one = compare_json(1), two = compare_json(2);
  CHECK(one == two);
  CHECK(one.find("\"seed\": 29") != std::string::npos);  // seeds 5..29
}

TEST_CASE("compare: parse_variant splits NAME:PATH=V,... outside brackets and quotes", "[planner]") {
  const Variant v = parse_variant("x: a.b[c]=[1, 2], d='e,f' ,g={h: 1, i: 2}");
  CHECK(v.name == "x");
  CHECK(v.sets == std::vector<std::string>{"a.b[c]=[1, 2]", "d='e,f'", "g={h: 1, i: 2}"});
  CHECK(parse_variant("base").sets.empty());
  CHECK(parse_variant("base:").sets.empty());
}

TEST_CASE("compare: a variants file's sets keep their YAML values and places", "[planner]") {
  const std::vector<Variant> vs = read_variants_text(
      "variants:\n  - name: a\n  - name: b\n    set:\n      x.y: [1, 2]\n      z: hello\n", "v.yaml");
  REQUIRE(vs.size() == 2);
  CHECK(vs[1].sets == std::vector<std::string>{"x.y=[1, 2]", "z=hello"});
  CHECK(vs[1].set_where[0].str() == "v.yaml:5:7");
  CHECK(vs[1].set_where[1].str() == "v.yaml:6:7");
  CHECK(vs[1].where.str() == "v.yaml:3:5");  // the mapping after "  - "
}
