// The discrete-event engine: a clock of integer nanoseconds and an event queue. One Engine per run,
// no globals, so many simulations run side by side in one process.
//
// Models schedule events and read now(); only the engine touches the queue. Events fire in (time,
// sequence) order, so events scheduled for the same instant fire in the order they were scheduled.
// Cancelling is done by the model with a generation number (a tombstone): bump the target's
// generation and ignore fired events whose `gen` is stale.
//
//   Engine engine;
//   engine.schedule(Duration::from_s(10), kTaskDone, task_id);
//   engine.run([&](const Event& e) { model.handle(e); });  // until the queue is empty or stop()
#pragma once

#include <cassert>
#include <cstdint>

#include <shardflow/core/units.hpp>

#include "event_queue.hpp"

namespace shardflow::sim {

template <class Queue>
class BasicEngine {
 public:
  [[nodiscard]] SimTime now() const { return now_; }

  /// Schedules an event `delay` from now. A negative delay is a bug in the model (asserted).
  [[gnu::always_inline]] void schedule(Duration delay, std::uint8_t kind, std::uint32_t target,
                                       std::uint32_t gen = 0) {
    assert(delay >= Duration::zero() && "negative delay");
    queue_.push(Event::make(now_ + delay, seq_++, kind, target, gen));
  }
  /// Schedules an event at an absolute time, which must not be in the past (asserted).
  [[gnu::always_inline]] void schedule_at(SimTime t, std::uint8_t kind, std::uint32_t target,
                                          std::uint32_t gen = 0) {
    assert(t >= now_ && "event in the past");
    queue_.push(Event::make(t, seq_++, kind, target, gen));
  }

  /// Fires events in order, calling `handle(const Event&)` for each, until the queue is empty or
  /// stop() is called from a handler. The clock reads the event's time while it is handled.
  template <class Handler>
  void run(Handler&& handle) {
    stopped_ = false;
    while (!stopped_ && !queue_.empty()) {
      const Event e = queue_.pop();
      now_ = e.at();
      ++processed_;
      handle(e);
    }
  }
  /// Fires one event (if any); returns false when the queue is empty.
  template <class Handler>
  bool step(Handler&& handle) {
    if (queue_.empty()) return false;
    const Event e = queue_.pop();
    now_ = e.at();
    ++processed_;
    handle(e);
    return true;
  }
  void stop() { stopped_ = true; }

  /// Whether another event is due at the current time (one fires at this instant after the current one).
  [[nodiscard]] bool more_now() const { return !queue_.empty() && queue_.top().at() == now_; }
  [[nodiscard]] std::uint64_t events_processed() const { return processed_; }
  [[nodiscard]] std::size_t pending() const { return queue_.size(); }
  void reserve(std::size_t events) { queue_.reserve(events); }

 private:
  Queue queue_;
  SimTime now_ = SimTime::zero();
  std::uint64_t seq_ = 0;
  std::uint64_t processed_ = 0;
  bool stopped_ = false;
};

using Engine = BasicEngine<EventQueue>;

}  // namespace shardflow::sim
