// Taints and tolerations in the Kubernetes sense: a node pool's taints keep off the pods that do not
// tolerate them (NoSchedule, NoExecute) or only steer kube-scheduler's scoring away (PreferNoSchedule).
// A step's pods and a DaemonSet's carry tolerations; core's pool_admits matches the two.
//
//   taints: [{key: nvidia.com/gpu, value: present, effect: NoSchedule}]
//   tolerations: [{key: nvidia.com/gpu, operator: Exists}]
#pragma once

#include <string>

namespace shardflow {

struct Taint {
  std::string key;
  std::string value;
  std::string effect = "NoSchedule";  // NoSchedule, PreferNoSchedule or NoExecute
  friend bool operator==(const Taint&, const Taint&) = default;
};

/// A key=value toleration in the Kubernetes sense.
struct Toleration {
  std::string key;
  std::string op = "Equal";  // Equal or Exists
  std::string value;
  std::string effect;  // empty = any effect
  friend bool operator==(const Toleration&, const Toleration&) = default;
};

/// Whether `t` tolerates `taint`, as v1.Toleration.ToleratesTaint decides it: the effects agree (an
/// empty effect matches every effect), the keys agree (an empty key, which the loader allows only with
/// Exists, matches every key), and Exists matches any value where Equal needs the same value.
inline bool tolerates(const Toleration& t, const Taint& taint) {
  if (!t.effect.empty() && t.effect != taint.effect) return false;
  if (!t.key.empty() && t.key != taint.key) return false;
  if (t.op == "Exists") return true;
  return t.value == taint.value;
}

/// A taint as kubectl writes it: key=value:Effect, or key:Effect without a value.
inline std::string taint_text(const Taint& t) {
  return t.key + (t.value.empty() ? "" : "=" + t.value) + ":" + t.effect;
}

}  // namespace shardflow
