#include <algorithm>
#include <cctype>
#include <cstdio>
#include <map>
#include <string>
#include <utility>

#include <shardflow/core/error.hpp>
#include <shardflow/core/placeholders.hpp>
#include <shardflow/core/sampling.hpp>
#include <shardflow/core/text.hpp>
#include <shardflow/k8s/manifests.hpp>

namespace shardflow::k8s {
namespace {

using nlohmann::json;

// The scope of task t as "outer[3]/inner[1]" ("" outside groups).
std::string scope_path(const Plan& plan, TaskId t) {
  std::vector<const std::string*> parts;
  for (std::uint32_t s = plan.scope_of(t); s != kNone && !plan.scopes()[s].name.empty();
       s = plan.scopes()[s].parent)
    parts.push_back(&plan.scopes()[s].name);
  std::string out;
  for (auto it = parts.rbegin(); it != parts.rend(); ++it) out += (out.empty() ? "" : "/") + **it;
  return out;
}

// The step at `path` ("outer/inner") and its field path ("pipeline.steps[1].steps[0]").
std::pair<const Step*, std::string> find_step(const Pipeline& p, const std::string& path) {
  const std::vector<Step>* steps = &p.steps;
  const Step* found = nullptr;
  std::string field = "pipeline";
  std::size_t pos = 0;
  while (pos <= path.size()) {
    const std::size_t slash = std::min(path.find('/', pos), path.size());
    const std::string name = path.substr(pos, slash - pos);
    const auto it = std::find_if(steps->begin(), steps->end(), [&](const Step& s) { return s.name == name; });
    if (it == steps->end()) return {nullptr, field};
    found = &*it;
    field += ".steps[" + std::to_string(it - steps->begin()) + "]";
    steps = &it->steps;
    pos = slash + 1;
  }
  return {found, field};
}

std::string item_text(const PlanStep& step, std::uint32_t i) {
  return !step.items.empty() && i < step.items.size() ? step.items[i] : std::to_string(i);
}

// Whether the command names the environment variable SHARDFLOW_ITEM (not SHARDFLOW_ITEMS), as a
// script's `$SHARDFLOW_ITEM` or `${SHARDFLOW_ITEM}`: an Indexed Job's pods cannot have a per-index value
// from a list, so such a step gets a Job per item (a program that reads it itself is not seen here).
bool reads_item_env(const std::vector<std::string>& args) {
  constexpr std::string_view kName = "SHARDFLOW_ITEM";
  for (const std::string& a : args)
    for (std::size_t at = a.find(kName); at != std::string::npos; at = a.find(kName, at + 1)) {
      const std::size_t end = at + kName.size();
      const auto c = end < a.size() ? static_cast<unsigned char>(a[end]) : 0;
      if (c != '_' && std::isalnum(c) == 0) return true;
    }
  return false;
}

std::string duration_ms(double run_ns) {
  const std::int64_t ns = delay_from_ns(run_ns).ns();
  return std::to_string((ns + 500000) / 1000000);
}

json labels(const ManifestOptions& o, const std::string& step_label) {
  return {{"app.kubernetes.io/managed-by", "shardflow"},
          {"shardflow.io/run", o.run_id},
          {"shardflow.io/step", step_label}};
}

json resources(const Resources& r) {
  json requests = json::object(), limits = json::object();
  if (r.cpu > 0) requests["cpu"] = limits["cpu"] = std::to_string(r.cpu) + "m";
  if (r.memory > 0) requests["memory"] = limits["memory"] = std::to_string(r.memory);
  if (r.gpu > 0) limits["nvidia.com/gpu"] = std::to_string(r.gpu);
  json out = json::object();
  if (!requests.empty()) out["requests"] = requests;
  if (!limits.empty()) out["limits"] = limits;
  return out;
}

json pod_spec(const Component& c, const std::string& image, std::vector<std::string> command, json env) {
  json container = json{{"name", "main"}, {"image", image}};
  if (!command.empty()) container["command"] = std::move(command);
  if (!env.empty()) container["env"] = std::move(env);
  if (json r = resources(c.resources); !r.empty()) container["resources"] = std::move(r);
  json spec = {{"restartPolicy", "Never"}, {"containers", json::array({container})}};
  if (!c.node_selector.empty()) spec["nodeSelector"] = c.node_selector;
  if (!c.tolerations.empty()) {
    json tols = json::array();
    for (const Toleration& t : c.tolerations) {
      json j = {{"operator", t.op}};
      if (!t.key.empty()) j["key"] = t.key;
      if (t.op != "Exists" && !t.value.empty()) j["value"] = t.value;
      if (!t.effect.empty()) j["effect"] = t.effect;
      tols.push_back(std::move(j));
    }
    spec["tolerations"] = std::move(tols);
  }
  if (!c.preferred_node_affinity.empty()) {
    json terms = json::array();
    for (const PreferredSchedulingTerm& p : c.preferred_node_affinity) {
      json exprs = json::array();
      for (const auto& [k, v] : p.match_labels)
        exprs.push_back(json{{"key", k}, {"operator", "In"}, {"values", json::array({v})}});
      terms.push_back(json{{"weight", p.weight}, {"preference", json{{"matchExpressions", exprs}}}});
    }
    spec["affinity"] = {{"nodeAffinity", {{"preferredDuringSchedulingIgnoredDuringExecution", terms}}}};
  }
  return spec;
}

std::string join(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : ",") + s;
  return out;
}

// ---- YAML ----------------------------------------------------------------------------------------------

bool plain_ok(const std::string& s) {
  if (s.empty() || !((s[0] >= 'a' && s[0] <= 'z') || (s[0] >= 'A' && s[0] <= 'Z'))) return false;
  for (const char c : s)
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
          c == '_' || c == '-' || c == '/'))
      return false;
  std::string lower = s;
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](char c) { return static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c); });
  for (const char* word : {"y", "n", "yes", "no", "on", "off", "true", "false", "null"})
    if (lower == word) return false;
  return true;
}

// A JSON string is a valid YAML double-quoted scalar.
std::string scalar(const json& v) {
  return v.is_string() && plain_ok(v.get<std::string>()) ? v.get<std::string>() : v.dump();
}

void emit(std::string& out, const json& v, std::size_t indent);

// After "key:" or "-": the rest of the line and what follows.
void emit_after(std::string& out, const json& v, std::size_t indent) {
  if (v.is_object() && !v.empty()) {
    out += '\n';
    emit(out, v, indent + 2);
  } else if (v.is_array() && !v.empty()) {
    out += '\n';
    emit(out, v, indent + 2);
  } else if (v.is_object()) {
    out += " {}\n";
  } else if (v.is_array()) {
    out += " []\n";
  } else {
    out += ' ' + scalar(v) + '\n';
  }
}

void emit(std::string& out, const json& v, std::size_t indent) {
  const std::string pad(indent, ' ');
  if (v.is_object()) {
    for (const auto& [k, x] : v.items()) {
      out += pad + scalar(json(k)) + ':';
      emit_after(out, x, indent);
    }
  } else if (v.is_array()) {
    for (const json& x : v) {
      if (x.is_object() && !x.empty()) {
        std::string body;
        emit(body, x, indent + 2);
        out += pad + "- " + body.substr(indent + 2);  // the first key on the dash's line
      } else {
        out += pad + '-';
        emit_after(out, x, indent);
      }
    }
  } else {
    out += pad + scalar(v) + '\n';
  }
}

// Strategies the Jobs cannot express yet: one clear error naming the field, never a silent flat run.
void refuse_unsupported_strategies(const Scenario& scenario) {
  const auto& steps = scenario.pipeline.steps;
  for (std::size_t i = 0; i < steps.size(); ++i) {
    const std::string field = "pipeline.steps[" + std::to_string(i) + "]";
    if (steps[i].fan_in_arity != 0)
      throw InputError(steps[i].fan_in_where, field + ".fan_in",
                       "the Kubernetes backend does not run a tree fan-in (one Job per level is not "
                       "implemented); remove fan_in, or use --backend sim or local");
    if (steps[i].loop && steps[i].loop->workers != 0)
      throw InputError(steps[i].loop->workers_where, field + ".parallel_for.workers",
                       "the Kubernetes backend does not run a work queue (it makes one pod per item); "
                       "remove workers, or use --backend sim or local");
    if (steps[i].speculation_max != 0)
      throw InputError(steps[i].speculation_where, field + ".speculation",
                       "the Kubernetes backend does not run speculative backups; remove speculation, or use "
                       "--backend sim");
  }
}

}  // namespace

std::string escape_expansion(std::string_view text) {
  std::string out;
  for (const char ch : text) {
    if (ch == '$') out += '$';
    out += ch;
  }
  return out;
}

std::string image_reference_problem(std::string_view image) {
  if (image.empty()) return "it is empty";
  for (const char ch : image) {
    const auto u = static_cast<unsigned char>(ch);
    if (ch == '\n' || ch == '\r') return "it has a line break";
    if (ch == ' ' || ch == '\t') return "it has a space";
    if (u < 0x20 || u == 0x7F) return "it has a control character";
    if (u >= 0x80) return "it has a character outside ASCII";
  }
  const auto upper = [](char c) { return c >= 'A' && c <= 'Z'; };
  const auto lower_alnum = [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); };
  const auto alnum = [&](char c) { return lower_alnum(c) || upper(c); };
  constexpr std::string_view kDigestSeparators = "+._-";
  std::string_view rest = image;
  // @ALGORITHM:HEX, the algorithm's components [A-Za-z][A-Za-z0-9]* joined by + . _ -, 32 hex digits or more.
  if (const std::size_t at = rest.find('@'); at != std::string_view::npos) {
    const std::string_view digest = rest.substr(at + 1);
    rest = rest.substr(0, at);
    const std::size_t colon = digest.find(':');
    bool ok = colon != std::string_view::npos && colon > 0 && digest.size() - colon - 1 >= 32;
    for (std::size_t i = 0; ok && i < colon; ++i) {
      const char c = digest[i];
      const bool first = i == 0 || kDigestSeparators.find(digest[i - 1]) != std::string_view::npos;
      ok = first ? (alnum(c) && !(c >= '0' && c <= '9'))
                 : (alnum(c) || kDigestSeparators.find(c) != std::string_view::npos);
    }
    ok = ok && kDigestSeparators.find(digest[colon - 1]) == std::string_view::npos;
    for (std::size_t i = colon + 1; ok && i < digest.size(); ++i)
      ok = std::isxdigit(static_cast<unsigned char>(digest[i])) != 0;
    if (!ok)
      return "its digest after '@' is not ALGORITHM:HEX with 32 hex digits or more (e.g. sha256: and 64 hex "
             "digits)";
  }
  // :TAG after the last '/': [A-Za-z0-9_][A-Za-z0-9_.-]{0,127}.
  const std::size_t slash = rest.rfind('/');
  if (const std::size_t colon = rest.rfind(':');
      colon != std::string_view::npos && (slash == std::string_view::npos || colon > slash)) {
    const std::string_view tag = rest.substr(colon + 1);
    rest = rest.substr(0, colon);
    bool ok = !tag.empty() && tag.size() <= 128 && (alnum(tag[0]) || tag[0] == '_');
    for (const char c : tag) ok = ok && (alnum(c) || c == '_' || c == '.' || c == '-');
    if (!ok)
      return "its tag after ':' is not 1 to 128 letters, digits, '_', '.' or '-' (not starting with '.' or "
             "'-')";
  }
  if (rest.empty()) return "it has no name before its tag or digest";
  if (rest.size() > 255) return "its name is longer than 255 characters";
  // A registry first when the first of several components has a '.' or ':', is localhost, or has capitals.
  std::size_t from = 0;
  if (const std::size_t first = rest.find('/'); first != std::string_view::npos) {
    const std::string_view domain = rest.substr(0, first);
    const bool is_domain = domain.find_first_of(".:") != std::string_view::npos || domain == "localhost" ||
                           std::any_of(domain.begin(), domain.end(), upper);
    if (is_domain) {
      std::string_view host = domain;
      if (const std::size_t port = domain.rfind(':'); port != std::string_view::npos && domain[0] != '[') {
        const std::string_view digits = domain.substr(port + 1);
        if (digits.empty() || digits.find_first_not_of("0123456789") != std::string_view::npos)
          return "its registry's port after ':' is not a number";
        host = domain.substr(0, port);
      }
      // An IPv6 address in brackets is left to the runtime; a host name is dot-separated labels.
      const bool ipv6 = host.size() >= 2 && host.front() == '[' && host.find(']') != std::string_view::npos;
      bool ok = ipv6 || !host.empty();
      if (!ipv6)
        for (std::size_t i = 0, start = 0; ok && i <= host.size(); ++i)
          if (i == host.size() || host[i] == '.') {
            const std::string_view label = host.substr(start, i - start);
            ok = !label.empty() && alnum(label.front()) && alnum(label.back()) &&
                 std::all_of(label.begin(), label.end(), [&](char c) { return alnum(c) || c == '-'; });
            start = i + 1;
          }
      if (!ok) return "its registry " + std::string(domain) + " is not a host name with an optional :PORT";
      from = first + 1;
    }
  }
  // The repository: components [a-z0-9]+ joined by '.', '_', '__' or runs of '-', separated by '/'.
  for (std::size_t i = from, start = from; i <= rest.size(); ++i) {
    if (i < rest.size() && rest[i] != '/') continue;
    const std::string_view part = rest.substr(start, i - start);
    if (part.empty()) return "its name has an empty path component (two '/' together, or one at an end)";
    if (std::any_of(part.begin(), part.end(), upper))
      return "its repository name " + std::string(rest.substr(from)) +
             " has capitals: repository names are lower case";
    bool ok = lower_alnum(part.front()) && lower_alnum(part.back());
    for (std::size_t k = 0; ok && k < part.size();) {
      if (lower_alnum(part[k])) {
        ++k;
        continue;
      }
      std::size_t run = k;
      while (run < part.size() && !lower_alnum(part[run])) ++run;
      const std::string_view sep = part.substr(k, run - k);
      ok = sep == "." || sep == "_" || sep == "__" || sep.find_first_not_of('-') == std::string_view::npos;
      k = run;
    }
    if (!ok)
      return "its name's component " + std::string(part) +
             " is not lower-case letters and digits joined by '.', '_', '__' or '-'";
    start = i + 1;
  }
  return "";
}

std::string dns_label(std::string_view text, std::size_t max) {
  std::string out;
  for (const char raw : text) {
    const char c = static_cast<char>(raw >= 'A' && raw <= 'Z' ? raw - 'A' + 'a' : raw);
    if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'))
      out += c;
    else if (!out.empty() && out.back() != '-')
      out += '-';
  }
  while (!out.empty() && out.back() == '-') out.pop_back();
  if (out.empty()) out = "x";
  if (out.size() <= max) return out;
  char hash[17];
  std::snprintf(hash, sizeof hash, "%016llx", static_cast<unsigned long long>(fnv1a(text)));
  out.resize(max - 9);
  while (!out.empty() && out.back() == '-') out.pop_back();
  return out + "-" + std::string(hash, 8);
}

bool is_label(std::string_view s, std::size_t max) {
  if (s.empty() || s.size() > max) return false;
  auto alnum = [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); };
  if (!alnum(s.front()) || !alnum(s.back())) return false;
  return std::all_of(s.begin(), s.end(), [&](char c) { return alnum(c) || c == '-'; });
}

void check_run_id(const std::string& id, const SourceLocation& where, const std::string& field) {
  if (!is_label(id, 20))
    throw InputError(where, field,
                     "a run id is 1 to 20 characters a-z, 0-9 and '-', starting and ending with a letter "
                     "or digit");
}

void check_namespace(const std::string& ns, const SourceLocation& where) {
  if (!is_label(ns, 63))
    throw InputError(where, "",
                     "a namespace is 1 to 63 characters a-z, 0-9 and '-', starting and ending with a letter "
                     "or digit");
}

std::vector<RunJob> run_jobs(const Scenario& scenario, const Plan& plan, const ManifestOptions& o) {
  refuse_unsupported_strategies(scenario);
  check_run_id(o.run_id, {"--run-id " + o.run_id, 0, 0});
  check_namespace(o.namespace_name, {"--namespace " + o.namespace_name, 0, 0});

  // The step instances, in the order of their first task; each one's tasks by item index.
  struct Instance {
    std::uint32_t step;
    TaskId first;
    std::vector<TaskId> tasks;
  };
  std::vector<Instance> instances;
  std::map<std::pair<std::uint32_t, std::uint32_t>, std::size_t> index;
  for (TaskId t = 0; t < plan.size(); ++t) {
    if (plan.is_join(t)) continue;
    const auto [it, fresh] = index.try_emplace({plan.step_of(t), plan.scope_of(t)}, instances.size());
    if (fresh) instances.push_back({plan.step_of(t), t, {}});
    Instance& in = instances[it->second];
    const PlanStep& ps = plan.steps()[in.step];
    if (in.tasks.empty()) in.tasks.assign(ps.has_loop ? ps.loop_count : 1, kNone);
    in.tasks[ps.has_loop ? plan.item(t) : 0] = t;
  }

  const json disruption = json{{"type", "DisruptionTarget"}};
  const json rule = json{{"action", "Ignore"}, {"onPodConditions", json::array({disruption})}};
  const json failure_policy = json{{"rules", json::array({rule})}};
  std::vector<RunJob> jobs;
  std::map<std::string, std::string> names;  // Job name -> the instance it names
  for (const Instance& in : instances) {
    const PlanStep& ps = plan.steps()[in.step];
    const Component& c = ps.component;
    std::string image = c.image;
    if (image.empty()) {
      if (!o.emulate) {
        const auto [step, field] = find_step(scenario.pipeline, ps.path);
        throw InputError(step ? step->where : SourceLocation{}, field + ".image",
                         "step " + ps.path +
                             " has no image; the Kubernetes backend runs every step in a container (or "
                             "use --emulate for a test cluster without a kubelet)");
      }
      image = kEmulationImage;
    } else if (const std::string problem = image_reference_problem(image); !problem.empty()) {
      const auto [step, field] = find_step(scenario.pipeline, ps.path);
      throw InputError(step ? step->where : SourceLocation{}, field + ".image",
                       "step " + ps.path + "'s image " + quote(image) +
                           " is not an image reference ([REGISTRY[:PORT]/]NAME[:TAG][@DIGEST]): " + problem);
    }
    const std::string scope = scope_path(plan, in.first);
    const std::string base = "sf-" + o.run_id + "-" + ps.path + (scope.empty() ? "" : "-" + scope);
    const std::string step_label = dns_label(ps.path);

    auto make_job = [&](const std::string& name, json spec, json pod_annotations, const std::string& what) {
      if (const auto [it, fresh] = names.try_emplace(name, what); !fresh) {
        // At the second step's name (the file's line and column), as the other problems of a step.
        const auto [step, field] = find_step(scenario.pipeline, ps.path);
        throw InputError(step ? step->where : SourceLocation{}, step ? field + ".name" : std::string(),
                         "the Jobs of " + it->second + " and " + what + " would both be named " + name +
                             "; rename one of the steps");
      }
      json meta_annotations = {{"shardflow.io/step-path", ps.path}};
      if (!scope.empty()) meta_annotations["shardflow.io/scope"] = scope;
      json tmeta = {{"labels", labels(o, step_label)}};
      if (!pod_annotations.empty()) tmeta["annotations"] = std::move(pod_annotations);
      spec["podFailurePolicy"] = failure_policy;
      spec["template"]["metadata"] = std::move(tmeta);
      return json{{"apiVersion", "batch/v1"},
                  {"kind", "Job"},
                  {"metadata",
                   {{"name", name},
                    {"namespace", o.namespace_name},
                    {"labels", labels(o, step_label)},
                    {"annotations", std::move(meta_annotations)}}},
                  {"spec", std::move(spec)}};
    };
    auto fill = [&](const std::string& item, const std::string& index_text) {
      std::vector<std::string> args;
      try {
        for (const auto& a : c.command) args.push_back(fill_placeholders_k8s(a, item, index_text));
      } catch (const std::runtime_error& e) {
        const auto [step, field] = find_step(scenario.pipeline, ps.path);
        throw InputError(step ? step->where : SourceLocation{}, field + ".command", e.what());
      }
      return args;
    };
    // A plain Job for one task.
    auto single = [&](TaskId t, const std::string& name) {
      const std::string item = item_text(ps, plan.item(t));
      json env = json::array({json{{"name", "SHARDFLOW_ITEM"}, {"value", escape_expansion(item)}}});
      json spec = {
          {"backoffLimit", c.retries.max},
          {"template", json{{"spec", pod_spec(c, image, fill(item, std::to_string(plan.item(t))), env)}}}};
      json ann = json::object();
      if (o.emulate) {
        const AttemptSample s = sample_attempt(c, plan, t, 0, o.seed);
        ann["shardflow.io/duration-ms"] = duration_ms(s.run_ns);
        if (s.fails) ann["shardflow.io/fail"] = "true";
      }
      jobs.push_back({make_job(name, std::move(spec), std::move(ann), plan.task_name(t)), {t}, false});
    };

    if (!ps.has_loop) {
      single(in.first, dns_label(base));
    } else if (uses_item_value(c.command) || (!ps.items.empty() && reads_item_env(c.command))) {
      for (std::uint32_t i = 0; i < in.tasks.size(); ++i)
        single(in.tasks[i], dns_label(base + "-" + std::to_string(i)));
    } else {
      const std::uint32_t n = static_cast<std::uint32_t>(in.tasks.size());
      const Step* step = find_step(scenario.pipeline, ps.path).first;
      const std::uint32_t par =
          step && step->loop && step->loop->parallelism != 0 ? step->loop->parallelism : n;
      json env = json::array();
      if (ps.items.empty()) {
        // A count: loop's item is its index: SHARDFLOW_ITEM as the local backend sets it, from the
        // annotation the Job controller gives each pod (JOB_COMPLETION_INDEX comes from it too).
        env.push_back(
            json{{"name", "SHARDFLOW_ITEM"},
                 {"valueFrom",
                  {{"fieldRef",
                    {{"fieldPath", "metadata.annotations['batch.kubernetes.io/job-completion-index']"}}}}}});
      } else {
        json items = json::array();
        for (const auto& text : ps.items) items.push_back(json::parse(text));
        env.push_back(json{{"name", "SHARDFLOW_ITEMS"}, {"value", escape_expansion(items.dump())}});
      }
      json spec = {
          {"completionMode", "Indexed"},
          {"completions", n},
          {"parallelism", std::min(par, n)},
          {"backoffLimitPerIndex", c.retries.max},
          {"template", json{{"spec", pod_spec(c, image, fill("", "$(JOB_COMPLETION_INDEX)"), env)}}}};
      json ann = json::object();
      if (o.emulate) {
        std::vector<std::string> ms, fails;
        for (std::uint32_t i = 0; i < n; ++i) {
          const AttemptSample s = sample_attempt(c, plan, in.tasks[i], 0, o.seed);
          ms.push_back(duration_ms(s.run_ns));
          if (s.fails) fails.push_back(std::to_string(i));
        }
        ann["shardflow.io/duration-ms"] = ms.front();
        ann["shardflow.io/duration-ms-by-index"] = join(ms);
        if (!fails.empty()) ann["shardflow.io/fail-indexes"] = join(fails);
      }
      std::string what = ps.path;
      if (!scope.empty()) what = scope + "/" + what;
      jobs.push_back({make_job(dns_label(base), std::move(spec), std::move(ann), what), in.tasks, true});
    }
  }
  return jobs;
}

std::vector<json> job_manifests(const Scenario& scenario, const Plan& plan, const ManifestOptions& o) {
  std::vector<json> out;
  for (RunJob& j : run_jobs(scenario, plan, o)) out.push_back(std::move(j.manifest));
  return out;
}

json run_owner_manifest(const ManifestOptions& o, const std::string& scenario_name) {
  return json{{"apiVersion", "v1"},
              {"kind", "ConfigMap"},
              {"metadata",
               {{"name", "sf-" + o.run_id}, {"namespace", o.namespace_name}, {"labels", labels(o, "run")}}},
              {"data", {{"run-id", o.run_id}, {"scenario", scenario_name}}}};
}

void set_owner(json& object, const json& owner) {
  const json& m = owner.at("metadata");
  object["metadata"]["ownerReferences"] = json::array({json{{"apiVersion", owner.at("apiVersion")},
                                                            {"kind", owner.at("kind")},
                                                            {"name", m.at("name")},
                                                            {"uid", m.at("uid")}}});
}

std::string to_yaml(const json& value) {
  std::string out;
  emit(out, value, 0);
  return out;
}

std::string to_yaml_stream(const std::vector<json>& documents) {
  std::string out;
  for (std::size_t i = 0; i < documents.size(); ++i) out += (i ? "---\n" : "") + to_yaml(documents[i]);
  return out;
}

}  // namespace shardflow::k8s
