#pragma once
// Keeps the memory of freed tensors in the process for the next update instead of handing it back
// to the kernel.
//
// A training update allocates and frees the same large tensors every time (per-step device
// logits, padded candidate lists, their gradients: megabytes each). glibc's malloc serves blocks
// over its mmap threshold (128 KiB at first) with fresh mappings and gives a heap's free top back
// above its trim threshold, so every update paid page faults on memory the kernel had to zero
// again: on llama-block (192 ops, 4 devices) a third of the learner's time was in the kernel and
// a training run made 174 episodes/s; with the thresholds below, 385-481 episodes/s.
namespace gantry {

// Raises glibc's mmap threshold to its largest value (32 MiB on 64-bit) and the trim threshold to
// 256 MiB, once per process (later calls do nothing). Returns false where the C library refused
// (another allocator, or a glibc without these settings).
bool keep_tensor_memory();

}  // namespace gantry
