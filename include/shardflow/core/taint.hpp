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

}  // namespace shardflow
