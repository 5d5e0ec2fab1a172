#pragma once
// Keeps the memory of freed tensors in the process for the next update instead of handing it back
// to the kernel.
//
// A training update allocates and frees the same large tensors every time (per-step device
// logits, padded candidate lists, their gradients: megabytes each). glibc's malloc serves blocks
// over its mmap threshold (128 KiB at first) with fresh mappings and gives a heap's free top back
// above its trim threshold, so every update paid page faults on memory the kernel had to zero
// again: on llama-block (192 ops, 4 devices) a third of the learner's time was in the kernel and
// a training run made 127-174 episodes/s; with the thresholds below, 385-491 episodes/s. Larger
// batches outgrow a thread arena's 64 MiB heaps, which glibc unmaps when they empty: at 32
// episodes per update, 262 episodes/s (5 s of 10 in the kernel), 739-971 with the top pad below.
namespace gantry {

// Raises glibc's mmap threshold to 32 MiB (half a thread arena's heap), the trim threshold to
// 256 MiB and the top pad to 64 MiB, once per process (later calls do nothing). Returns false
// on another C library (the settings are glibc's) or where glibc refused one.
bool keep_tensor_memory();

}  // namespace gantry
