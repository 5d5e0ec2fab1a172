#pragma once
// A binary min-heap of events ordered by (time, sequence number): events at the same time come out
// in the order they were pushed, which makes every simulation deterministic.
#include <cstdint>
#include <vector>

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
    std::size_t i = heap_.size();
    heap_.push_back(Event{time, seq, what});
    const Event e = heap_[i];
    while (i > 0) {
      std::size_t parent = (i - 1) / 2;
      if (!earlier(e, heap_[parent])) break;
      heap_[i] = heap_[parent];
      i = parent;
    }
    heap_[i] = e;
  }

  void pop() {
    const Event last = heap_.back();
    heap_.pop_back();
    const std::size_t size = heap_.size();
    if (size == 0) return;
    std::size_t i = 0;
    for (;;) {
      std::size_t child = 2 * i + 1;
      if (child >= size) break;
      if (child + 1 < size && earlier(heap_[child + 1], heap_[child])) ++child;
      if (!earlier(heap_[child], last)) break;
      heap_[i] = heap_[child];
      i = child;
    }
    heap_[i] = last;
  }

 private:
  static bool earlier(const Event& a, const Event& b) {
    return a.time < b.time || (a.time == b.time && a.seq < b.seq);
  }
  std::vector<Event> heap_;
};

}  // namespace gantry
