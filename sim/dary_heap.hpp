#pragma once
// The one heap of the engines: sift-up and sift-down of a d-ary heap kept in a caller's array, the
// element with the smallest key on top. The event queue uses it with four children per node and
// (time, sequence) keys; the simulator's priority ready queues with two children and
// (-priority, readiness) keys, each queue in its own segment of one shared array.
//
// `key(element)` gives a value ordered by <; elements with equal keys come out in no particular
// order, so callers make keys unique (a sequence number) for deterministic runs. The child
// selection in heap_pop is written without branches: at these sizes mispredicted comparisons
// dominate a heap's cost.
#include <cstddef>

namespace gantry {

// Adds `value` to the heap heap[0, size): heap[size] must be writable; the caller counts it.
template <int Arity, class T, class KeyOf>
inline void heap_push(T* heap, std::size_t size, T value, KeyOf key) {
  static_assert(Arity >= 2, "a heap node has at least two children");
  const auto k = key(value);
  std::size_t i = size;
  while (i > 0) {
    const std::size_t parent = (i - 1) / Arity;
    if (!(k < key(heap[parent]))) break;
    heap[i] = heap[parent];
    i = parent;
  }
  heap[i] = value;
}

// Removes and returns the top of the non-empty heap heap[0, size); the caller counts one less.
template <int Arity, class T, class KeyOf>
inline T heap_pop(T* heap, std::size_t size, KeyOf key) {
  static_assert(Arity >= 2, "a heap node has at least two children");
  const T top = heap[0];
  const T last = heap[--size];
  if (size == 0) return top;
  const auto last_key = key(last);
  std::size_t i = 0;
  for (;;) {
    const std::size_t first = Arity * i + 1;
    if (first >= size) break;
    std::size_t best = first;
    auto best_key = key(heap[first]);
    const std::size_t end = first + Arity < size ? first + Arity : size;
    for (std::size_t c = first + 1; c < end; ++c) {
      const auto ck = key(heap[c]);
      const bool smaller = ck < best_key;
      best = smaller ? c : best;
      best_key = smaller ? ck : best_key;
    }
    if (!(best_key < last_key)) break;
    heap[i] = heap[best];
    i = best;
  }
  heap[i] = last;
  return top;
}

}  // namespace gantry
