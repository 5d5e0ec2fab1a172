#pragma once
// The on-disk encoding of the store (internal to storage/): big-endian keys, so that bytewise
// order is numeric order, and MessagePack values that carry their schema version in a field "v".
// Decoding never throws: bad bytes come back as Result errors naming the family and the problem.
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

#include "core/fingerprint.hpp"
#include "core/result.hpp"
#include "core/profile_table.hpp"
#include "storage/records.hpp"

namespace gantry::codec {

// The version written into every value's "v" field (and into meta/schema_version). 2: job specs
// are kept apart from job records (an older gantry would read the records and find no spec to
// resume a job from, so it is refused by the version instead).
constexpr int kVersion = 2;

// ---- keys ------------------------------------------------------------------------------------------
constexpr std::size_t kFingerprintKeySize = 16;                     // hi, lo: 8 big-endian bytes each
constexpr std::size_t kScheduleKeySize = 32;                        // graph | cluster
constexpr std::size_t kHistoryKeySize = 32 + 8 + 4;                 // graph | cluster | micros | seq
inline constexpr const char* kSchemaVersionKey = "schema_version";  // in family meta

void append_u64(std::string& out, std::uint64_t value);
void append_u32(std::string& out, std::uint32_t value);
std::uint64_t read_u64(const char* bytes);
std::uint32_t read_u32(const char* bytes);

std::string fingerprint_key(const Fingerprint& fp);  // graphs, clusters
Result<Fingerprint> parse_fingerprint_key(std::string_view key);
std::string schedule_key(const Fingerprint& graph, const Fingerprint& cluster);  // also the history prefix
Result<std::pair<Fingerprint, Fingerprint>> parse_schedule_key(std::string_view key);

struct HistoryKey {
  Fingerprint graph, cluster;
  std::uint64_t micros = 0;    // unix time in microseconds
  std::uint32_t sequence = 0;  // keeps entries of the same microsecond distinct and ordered
};
std::string history_key(const HistoryKey& key);
Result<HistoryKey> parse_history_key(std::string_view key);

std::string episode_prefix(const std::string& job_id);  // job id + '\0'
std::string episode_key(const std::string& job_id, std::uint64_t sequence);
Result<std::pair<std::string, std::uint64_t>> parse_episode_key(std::string_view key);

std::string policy_prefix(const std::string& name);  // name + '\0'
std::string policy_key(const std::string& name, std::uint64_t version);
Result<std::pair<std::string, std::uint64_t>> parse_policy_key(std::string_view key);

// "0123abcd..." (32 hex digits, as Fingerprint::hex() writes it) -> fingerprint.
Result<Fingerprint> parse_fingerprint_hex(const std::string& hex);

// ---- values ----------------------------------------------------------------------------------------
std::string encode(const ScheduleRecord& record);
std::string encode(const HistoryRecord& record);
std::string encode(const EpisodeRecord& record);
std::string encode(const JobRecord& record);  // without its spec, which the store keeps apart
std::string encode(const PolicyRecord& record);
std::string encode(const ProfileEntry& entry);
// profiles keys: "KIND|SIGNATURE" (kinds hold no '|').
std::string profile_key(const ProfileEntry& entry);
std::string encode_text(const std::string& text);  // graphs (JSON text), clusters (YAML or preset name)
std::string encode_schema_version(int version);
std::string encode_checkpoint(const std::string& bytes);  // checkpoints (a job's opaque bytes)

Result<ScheduleRecord> decode_schedule(std::string_view bytes);
Result<HistoryRecord> decode_history(std::string_view bytes);
Result<EpisodeRecord> decode_episode(std::string_view bytes);
Result<JobRecord> decode_job(std::string_view bytes);
Result<PolicyRecord> decode_policy(std::string_view bytes);
Result<ProfileEntry> decode_profile(std::string_view bytes);
Result<std::string> decode_text(std::string_view bytes, const std::string& family);
Result<std::string> decode_checkpoint(std::string_view bytes);
// The database schema version in meta/schema_version; a newer one is NOT an error here (the
// caller words that message), anything unreadable is.
Result<int> decode_schema_version(std::string_view bytes);
// Any value of a family without a record type yet: a MessagePack map whose
// "v" this gantry can read.
Status check_value(std::string_view bytes, const std::string& family);


}  // namespace gantry::codec
