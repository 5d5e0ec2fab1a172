#pragma once
// A min-heap of events ordered by (time, sequence number): events at the same time come out in the
// order they were pushed, which makes every simulation deterministic.
//
// Four children per node (sim/dary_heap.hpp): the heap holds the simulation's frontier (hundreds
// to thousands of events on wide graphs), and a 4-ary heap needs half the levels of a binary one.
// The order is a single 128-bit key (the time's bits, then the sequence number), compared without
// branches. Times are >= 0, whose IEEE-754 bit patterns order like the numbers.
#include <cstdint>
#include <cstring>
#include <vector>

#include "sim/dary_heap.hpp"

namespace gantry {

struct Event {
  double time;
  std::uint32_t seq;
  std::int32_t what;  // meaning chosen by the engine (op id, ~op id, encoded kinds)
};

class EventQueue {
 public:
  void reserve(std::size_t n) { heap_.reserve(n); }
  void clear() { heap_.clear(); }
  bool empty() const { return heap_.empty(); }
  std::size_t size() const { return heap_.size(); }
  const Event& top() const { return heap_.front(); }

  void push(double time, std::uint32_t seq, std::int32_t what) {
    heap_.push_back(Event{time, seq, what});  // the slot the heap grows into
    heap_push<4>(heap_.data(), heap_.size() - 1, heap_.back(), [](const Event& e) { return key(e); });
  }

  void pop() {
    heap_pop<4>(heap_.data(), heap_.size(), [](const Event& e) { return key(e); });
    heap_.pop_back();
  }

 private:
  using Key = unsigned __int128;
  static Key key(const Event& e) {
    std::uint64_t bits;
    std::memcpy(&bits, &e.time, sizeof bits);
    return static_cast<Key>(bits) << 32 | e.seq;
  }
  std::vector<Event> heap_;
};

}  // namespace gantry
