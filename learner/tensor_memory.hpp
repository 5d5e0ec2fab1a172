#pragma once
// Keeps the memory of freed tensors in the process for the next update instead of handing it back
// to the kernel, and gives it back when training ends.
//
// A training update allocates and frees the same large tensors every time (per-step device
// logits, padded candidate lists, their gradients: megabytes each). glibc's malloc serves blocks
// over its mmap threshold (128 KiB at first) with fresh mappings, gives a heap's free top back
// above its trim threshold and unmaps a thread arena's emptied heaps, so every update paid page
// faults on memory the kernel had to zero again: on llama-block (192 ops, 4 devices, 2 rollout
// threads) 6.0-6.4 s of a 15 s run in the kernel, 127-149 episodes/s; with the settings below
// 0.75 s and 489-491 episodes/s, and at 32 episodes per update (tensors that outgrow a thread
// arena's 64 MiB heaps) 262 -> 739 episodes/s.
//
// The settings are the process's: a process that trains keeps up to its high-water mark of freed
// memory while it trains (peak RSS 239 -> 254 MB on llama-block), and a process that lives on after
// a learner job (a coordinator) calls release_tensor_memory() when the job ends.
namespace gantry {

// Raises glibc's mmap threshold to 32 MiB (half a thread arena's heap), the trim threshold to
// 256 MiB and the top pad to 64 MiB, once per process (later calls do nothing; nothing on another
// C library). Called while other threads allocate, a free() that raced it could leave glibc's own
// dynamic thresholds in place (mallopt is not thread-safe against free): slower, never wrong.
void keep_tensor_memory();

// Gives the free pages of every arena back to the system (malloc_trim), as a learner job ends.
void release_tensor_memory();

}  // namespace gantry
