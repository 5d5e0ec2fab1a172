#pragma once
// A min-heap of events ordered by (time, sequence number): events at the same time come out in the
// order they were pushed, which makes every simulation deterministic.
//
// Four children per node: the heap holds the simulation's frontier (hundreds to thousands of
// events on wide graphs), and a 4-ary heap needs half the levels of a binary one. The order is a
// single 128-bit key (the time's bits, then the sequence number) compared without branches, since
// mispredicted comparisons dominate a binary heap's cost at these sizes. Times are >= 0, whose
// IEEE-754 bit patterns order like the numbers.
#include <cstdint>
#include <cstring>
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
    const Key k = key(e);
    while (i > 0) {
      const std::size_t parent = (i - 1) / 4;
      if (!(k < key(heap_[parent]))) break;
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
    const Key last_key = key(last);
    std::size_t i = 0;
    for (;;) {
      const std::size_t first = 4 * i + 1;
      if (first >= size) break;
      std::size_t best = first;
      Key best_key = key(heap_[first]);
      const std::size_t end = first + 4 < size ? first + 4 : size;
      for (std::size_t c = first + 1; c < end; ++c) {
        const Key ck = key(heap_[c]);
        const bool smaller = ck < best_key;
        best = smaller ? c : best;
        best_key = smaller ? ck : best_key;
      }
      if (!(best_key < last_key)) break;
      heap_[i] = heap_[best];
      i = best;
    }
    heap_[i] = last;
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
