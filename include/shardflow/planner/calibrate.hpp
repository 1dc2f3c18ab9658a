// Calibration: fit the scenario's duration models to measured runs, so that the simulator predicts what
// the machine or cluster really does.
//
// For each component step, every attempt that ran and succeeded (evicted and cancelled attempts are left
// out: their run was cut short; so are failed ones, whose run may have ended early, unless none of the
// step's attempts succeeded: then they are fitted, with a warning) gives one point: its run time
// (finished - started - output_write), times the speed of its node's pool when the scenario has a pool
// of that name (the model's run time is on a node of speed 1), against its input in GiB
// (sample_input_bytes with the trace's seed: the size every backend used). Least squares then gives
//   run = base + per_gib * input_GiB
// (only `base`, the mean, when every input had the same size; a coefficient that comes out negative is
// set to 0 and the other one refitted), and the noise sigma is the standard deviation of
// log(run / fitted) (0 with fewer than 3 points or below 0.001; at most 4, a scenario's limit, with a
// warning), as in the model
// run = (base + per_gib * GiB) * exp(sigma Z - sigma^2/2). A step whose scenario model has stragglers is
// fitted as a mixture (StepFit::straggler_reset): its stragglers' p and factor, the rest as above.
//
// A trace of a run at a time scale other than 1 (the local backend's --time-scale, Trace::time_scale) has
// the run times of its time-scaled steps (sleep, and spin without `seconds`) divided by the scale, back
// into model time; its other steps' kernels ran at their own speed, and their run times are fitted as
// measured, as are the dispatch times (the backend's own, not scaled).
//
// The dispatch overhead, from placement to the main container's start, is the 10th percentile (nearest
// rank) over all those attempts of started - scheduled - image_pull - input_read (started - submitted -
// ... for an attempt without `scheduled`): queue waits, scheduler decisions, driver pods, pulls and
// reads are modelled on their own, and what is left is what the simulator calls
// `overheads.sandbox_start` (exactly, for a simulated trace).
//
//   std::vector<Trace> traces = {read_trace_json(in, "run1/trace.json")};
//   CalibrationResult r = calibrate(scenario, plan, traces, {"run1/trace.json"});
//   write_overlay_yaml(out, r);  // pipeline: {steps: [{name: ..., duration: {...}}]}, overheads: {...}
#pragma once

#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <shardflow/core/error.hpp>
#include <shardflow/core/plan.hpp>
#include <shardflow/core/scenario.hpp>
#include <shardflow/core/trace.hpp>
#include <shardflow/core/units.hpp>

namespace shardflow::planner {

/// The fit of one component step.
struct StepFit {
  std::string path;            // the step's path in the plan ("train", "grp/inner")
  std::uint64_t attempts = 0;  // points used; 0: nothing to fit (the step is left out of the overlay)
  Duration base;               // fitted, rounded to the nanosecond
  Duration per_gib;
  double lognormal_sigma = 0;
  double r_squared = 0;        // of the linear fit (1 when every point is fitted exactly)
  bool sizes_vary = false;     // input sizes differed, so per_gib was fitted
  double mean_measured_s = 0;  // mean run time of the points
  double mean_fitted_s = 0;    // mean of base + per_gib * GiB over the same points
  /// The scenario's step has stragglers: the measured runs are a mixture, so the runs far above the rest
  /// (log(run / fitted) more than max(3 robust sigmas, log 1.25) above the median) are taken as
  /// stragglers, base, per_gib and sigma are fitted to the others (until the split stops changing), and
  /// the overlay writes the fitted `straggler: {p, factor}` (`{p: 0}` when none stood out).
  bool straggler_reset = false;
  double straggler_p = 0;       // the fraction of points taken as stragglers
  double straggler_factor = 1;  // their mean ratio to the fit, over the others' (at least 1)
};

/// A trace of a run at a time scale other than 1, and how its run times were converted.
struct ScaledTrace {
  std::string trace;  // its name
  double time_scale = 1;
  std::vector<std::string> scaled_steps;  // steps of its attempts whose run times were divided by the scale
  std::vector<std::string> real_steps;    // steps of its attempts that ran in real time (fitted as measured)
  double shortest_scaled_s = 0;           // the shortest real run time of those divided, in seconds
};

struct CalibrationResult {
  std::string scenario;             // the scenario's name
  std::vector<std::string> traces;  // where the traces came from, for the overlay's header
  std::string command;              // the command that made it, for the header ("" to leave out)
  std::vector<StepFit> steps;  // one per Plan step, in plan order (a tree fan-in's levels: in their root's)
  /// Fitted overheads.sandbox_start; none when no attempt ran.
  std::optional<Duration> sandbox_start;
  /// The scenario's overheads are `none` but for sandbox_start: the overlay writes
  /// `overheads: {preset: none, sandbox_start: ...}`, as a mapping alone would replace `none` and bring
  /// back every default overhead.
  bool overheads_none = false;
  std::uint64_t dispatch_samples = 0;
  /// The traces of runs at a time scale other than 1, in the order given.
  std::vector<ScaledTrace> scaled_traces;
  /// What could not be converted exactly, one line each, for people (no "warning: " prefix).
  std::vector<std::string> warnings;
};

/// What calibrate throws for a trace that is not a run of the scenario's plan (other steps, or attempts
/// of tasks that the plan does not have): a run of another scenario, or of this one with other settings.
/// `trace()` is its index in the traces given, for a caller that can say which settings that run had.
class TraceMismatchError : public InputError {
 public:
  TraceMismatchError(std::size_t trace, SourceLocation where, std::string field, std::string message)
      : InputError(std::move(where), std::move(field), std::move(message)), trace_(trace) {}
  [[nodiscard]] std::size_t trace() const { return trace_; }

 private:
  std::size_t trace_;
};

/// Fits every component step of `plan` (unrolled from `scenario`) to the traces, which must come from
/// runs of that scenario. `trace_names` (optional, one per trace) name the traces in errors and in the
/// result. Throws TraceMismatchError ("NAME: steps: ...") for a trace whose steps are not the plan's, or
/// whose attempts name tasks that are not the plan's.
CalibrationResult calibrate(const Scenario& scenario, const Plan& plan, const std::vector<Trace>& traces,
                            const std::vector<std::string>& trace_names = {});

/// The fit as a partial scenario, to lay over the scenario file (steps matched by name, groups nested as
/// in the scenario):
///   pipeline:
///     steps:
///       - name: train
///         duration: {base: 1.234567891s, per_gib: 2.5s, noise: {lognormal_sigma: 0.05}}
///   overheads: {sandbox_start: 120us}          # {preset: none, sandbox_start: 120us} over `none`
/// with a comment header naming the traces, how the times of runs at another time scale than 1 were
/// converted, and the command. Steps without attempts are left out; a step
/// whose scenario model has stragglers also gets its fitted `straggler: {p: P, factor: F}`, or
/// `straggler: {p: 0}` when no run stood out (see StepFit::straggler_reset).
void write_overlay_yaml(std::ostream& out, const CalibrationResult& result);

/// A per-step table for people (step, attempts, base, per_gib, sigma, R^2, mean measured and fitted), then
/// a line for each trace of a run at another time scale than 1 saying how its times were converted.
void print_calibration(std::ostream& out, const CalibrationResult& result);

}  // namespace shardflow::planner
