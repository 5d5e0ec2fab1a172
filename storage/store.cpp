#include "storage/store.hpp"

#include "core/host_name.hpp"
#include "core/text.hpp"

#include <fcntl.h>
#include <signal.h>
#include <rocksdb/db.h>
#include <rocksdb/options.h>
#include <rocksdb/utilities/checkpoint.h>
#include <rocksdb/write_batch.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <set>

#include "core/hex.hpp"
#include "core/unix_time.hpp"
#include "storage/codec.hpp"

namespace gantry {

namespace fs = std::filesystem;

static_assert(Store::kSchemaVersion == codec::kVersion, "the store and its codec must agree on the schema");

namespace {

// job_specs: a submitted job's spec (its graph's content within: megabytes), apart from its small
// record, so that listing jobs reads the records only (a listing read every spec: 2.1-2.4 s for 20
// jobs of 20,000 ops, and `submit --wait` lists five times a second).
enum Family { kMeta, kGraphs, kClusters, kProfiles, kEpisodes, kSchedules, kHistory, kPolicies, kJobs, kCheckpoints, kJobSpecs, kFamilyCount };
constexpr std::array<const char*, kFamilyCount> kFamilyNames = {
    "meta", "graphs", "clusters", "profiles", "episodes", "schedules", "history", "policies", "jobs", "checkpoints", "job_specs"};

constexpr const char* kOwnerFile = "OWNER";
constexpr std::size_t kMaxProblems = 1000;

std::uint64_t to_micros(double seconds) {
  if (!(seconds > 0) || !std::isfinite(seconds)) return 0;
  return static_cast<std::uint64_t>(std::llround(seconds * 1e6));
}

Error rocks_error(const std::string& what, const rocksdb::Status& s) { return make_error(what + ": " + s.ToString()); }

std::string_view view(const rocksdb::Slice& s) { return std::string_view(s.data(), s.size()); }

// ---- who holds the database ------------------------------------------------------------------------

// Primary databases this process has open, by canonical path. A second open in the same process is
// answered from here: it must not even open the LOCK file, because closing any descriptor of a file
// drops this process's fcntl lock on it (RocksDB's lock). Entries inherited through fork() belong to
// the parent and are forgotten.
struct OpenRegistry {
  std::mutex mutex;
  pid_t pid = 0;
  std::set<std::string> paths;
};

OpenRegistry& registry() {
  static OpenRegistry r;
  return r;
}

bool registry_claim(const std::string& path) {
  auto& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  if (r.pid != getpid()) {
    r.paths.clear();
    r.pid = getpid();
  }
  return r.paths.insert(path).second;
}

void registry_release(const std::string& path) {
  auto& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  if (r.pid == getpid()) r.paths.erase(path);
}

std::string canonical_path(const std::string& path) {
  std::error_code ec;
  fs::path p = fs::weakly_canonical(fs::absolute(path, ec), ec);
  return ec ? path : p.string();
}

// The process holding RocksDB's LOCK of `dir`, if another process holds it (0: none or unknown).
// Only called once the registry says this process does not hold it: see OpenRegistry.
pid_t lock_holder(const std::string& dir) {
  std::string lock = dir + "/LOCK";
  int fd = ::open(lock.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  struct flock fl {};
  fl.l_type = F_WRLCK;
  fl.l_whence = SEEK_SET;
  pid_t holder = 0;
  if (fcntl(fd, F_GETLK, &fl) == 0 && fl.l_type != F_UNLCK) holder = fl.l_pid > 0 ? fl.l_pid : -1;
  ::close(fd);
  return holder;
}

struct Owner {
  long pid = 0;
  std::string host;
};

std::optional<Owner> read_owner(const std::string& dir) {
  std::ifstream in(dir + "/" + kOwnerFile);
  if (!in) return std::nullopt;
  Owner owner;
  std::string word;
  while (in >> word) {
    if (word == "pid")
      in >> owner.pid;
    else if (word == "host")
      in >> owner.host;
  }
  if (owner.pid <= 0) return std::nullopt;
  if (owner.host.empty()) owner.host = "unknown";
  return owner;
}

bool write_owner(const std::string& dir) {
  std::string tmp = dir + "/" + kOwnerFile + ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << "pid " << getpid() << "\nhost " << host_name() << "\n";
    if (!out.flush()) return false;
  }
  std::error_code ec;
  fs::rename(tmp, dir + "/" + kOwnerFile, ec);
  return !ec;
}

// `holder`: the pid known to hold the lock (from fcntl or this process), 0 if unknown.
Error in_use_error(const std::string& path, long holder) {
  auto owner = read_owner(path);
  std::string host = host_name();
  if (owner && (holder <= 0 || owner->pid == holder || owner->host != host))
    return make_error("database " + path + " in use by PID " + std::to_string(owner->pid) + " on host " + owner->host);
  if (holder > 0)
    return make_error("database " + path + " in use by PID " + std::to_string(holder) + " on host " + host);
  return make_error("database " + path + " in use by another process (it has not written its OWNER file yet)");
}

bool is_lock_error(const rocksdb::Status& s) {
  if (!s.IsIOError()) return false;
  std::string text = s.ToString();
  return text.find("/LOCK") != std::string::npos || text.find("lock hold by current process") != std::string::npos;
}

Error newer_schema_error(const std::string& path, int version) {
  return make_error("database " + path + " was written by schema version " + std::to_string(version) +
                    ", this gantry reads up to " + std::to_string(Store::kSchemaVersion) + "; upgrade gantry");
}

rocksdb::Options make_options() {
  rocksdb::Options o;
  o.OptimizeForSmallDb();
  o.create_if_missing = true;
  o.create_missing_column_families = true;
  o.paranoid_checks = true;
  o.wal_recovery_mode = rocksdb::WALRecoveryMode::kPointInTimeRecovery;
  o.keep_log_file_num = 10;
  return o;
}

// A directory or file gantry may not read gives "permission denied", not "no database".
std::optional<Error> unreadable(const std::string& path) {
  std::error_code ec;
  if (fs::exists(path, ec) && !fs::is_directory(path, ec))  // access() below would say "permission denied" (no x bit)
    return make_error("cannot read database " + path + ": it is a file, not a database folder");
  for (const std::string& p : {path, path + "/CURRENT"}) {
    if (::access(p.c_str(), F_OK) != 0) {
      if (errno == EACCES) return make_error("cannot read database " + path + ": permission denied on " + p);
      continue;
    }
    const int mode = p == path ? R_OK | X_OK : R_OK;
    if (::access(p.c_str(), mode) != 0)
      return make_error("cannot read database " + path + ": " +
                        (errno == EACCES ? std::string("permission denied") : std::strerror(errno)) + " on " + p);
  }
  return std::nullopt;
}

Error damaged_error(const std::string& path, const std::vector<std::string>& problems) {
  std::string text = "database " + path + " is damaged: " + problems.front();
  if (problems.size() > 1) text += " (and " + std::to_string(problems.size() - 1) + " more)";
  return make_error(text + "; `gantry db verify` lists the damage, a backup restores it");
}

// Damage to the table files the MANIFEST lists (missing, truncated), as a read-only open with
// paranoid checks finds it: RocksDB checks every listed file when it opens. A secondary instance
// drops files it cannot find from its own view (the writer may have deleted them), hence this
// separate open. A file the writer deletes after a compaction during that open can fail it once:
// a second open must agree.
std::vector<std::string> manifest_file_problems(const std::string& path) {
  std::vector<std::string> problems;
  for (int attempt = 0; attempt < 2; ++attempt) {
    rocksdb::Options options;
    options.create_if_missing = false;
    options.paranoid_checks = true;
    options.max_open_files = 64;
    std::vector<std::string> names;
    rocksdb::Status s = rocksdb::DB::ListColumnFamilies(options, path, &names);
    std::vector<rocksdb::ColumnFamilyDescriptor> descriptors;
    for (const auto& name : names) descriptors.emplace_back(name, rocksdb::ColumnFamilyOptions(options));
    std::vector<rocksdb::ColumnFamilyHandle*> handles;
    rocksdb::DB* db = nullptr;
    if (s.ok()) s = rocksdb::DB::OpenForReadOnly(options, path, descriptors, &handles, &db);
    problems.clear();
    if (!s.ok()) {
      problems.push_back("the files the MANIFEST lists cannot be opened: " + s.ToString());
    } else {
      for (auto* h : handles) db->DestroyColumnFamilyHandle(h).PermitUncheckedError();
      db->Close().PermitUncheckedError();
      delete db;
    }
    if (problems.empty()) break;
  }
  return problems;
}


// A RUNNING (or QUEUED) job whose owner process is gone (same host, no such pid) was killed: INTERRUPTED.
bool owner_gone(const JobRecord& job) {
  if ((job.state != JobState::running && job.state != JobState::queued) || job.owner_pid <= 0 || job.owner_host != host_name()) return false;
  if (job.owner_pid == static_cast<long>(getpid())) return false;
  return ::kill(static_cast<pid_t>(job.owner_pid), 0) != 0 && errno == ESRCH;
}

void mark_interrupted(JobRecord& job) {
  job.state = JobState::interrupted;
  const std::string owner = job.owner_pid > 0 ? "its process " + std::to_string(job.owner_pid) + " on " + job.owner_host
                                              : "its process";  // records older than the owner fields
  job.message = "interrupted: " + owner + " ended without finishing the job" +
                (job.message.empty() ? "" : " (" + job.message + ")");
}

void remove_orphan_secondaries(const fs::path& temp) {
  std::error_code ec;
  const std::string prefix = "gantry-secondary-";
  for (fs::directory_iterator it(temp, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.rfind(prefix, 0) != 0) continue;
    char* rest = nullptr;
    const long pid = std::strtol(name.c_str() + prefix.size(), &rest, 10);
    if (pid <= 0 || *rest != '-') continue;
    if (::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH) {
      std::error_code ignored;
      fs::remove_all(it->path(), ignored);
    }
  }
}

Error read_only_error(const std::string& path, const char* what) {
  return make_error(std::string(what) + ": database " + path + " is open read-only");
}

}  // namespace

// ---- Impl ------------------------------------------------------------------------------------------

struct Store::Impl {
  std::string path;
  bool read_only = false;
  std::string registered;     // canonical path claimed in the registry (primary only)
  std::string secondary_dir;  // private dir of a secondary instance (removed on close)
  bool owner_written = false;
  rocksdb::DB* db = nullptr;
  std::vector<rocksdb::ColumnFamilyHandle*> all_handles;        // everything opened, default included
  std::array<rocksdb::ColumnFamilyHandle*, kFamilyCount> cf{};  // ours (null: absent in a secondary)
  std::mutex best_mutex;                                        // read-compare-write of put_if_better
  std::mutex policy_mutex;                                      // read-latest-then-write of put_policy
  std::mutex profile_mutex;                                     // read-merge-write of add_profiles
  std::atomic<int> fail_sync{0}, fail_put{0}, fail_job{0};      // injected faults (tests)
  std::function<void(const JobRecord&)> job_stored;                // a test's hook (on_job_stored)
  std::atomic<std::uint64_t> syncs{0};

  ~Impl() { close(); }

  void close() {
    if (db) {
      if (!read_only) db->SyncWAL().PermitUncheckedError();
      if (owner_written) {
        std::error_code ec;
        fs::remove(path + "/" + kOwnerFile, ec);  // still under the lock: nobody else wrote it
        owner_written = false;
      }
      for (auto* h : all_handles) db->DestroyColumnFamilyHandle(h).PermitUncheckedError();
      all_handles.clear();
      cf.fill(nullptr);
      db->Close().PermitUncheckedError();
      delete db;
      db = nullptr;
    }
    if (!secondary_dir.empty()) {
      std::error_code ec;
      fs::remove_all(secondary_dir, ec);
      secondary_dir.clear();
    }
    if (!registered.empty()) {
      registry_release(registered);
      registered.clear();
    }
  }

  void adopt(const std::vector<rocksdb::ColumnFamilyHandle*>& handles) {
    all_handles = handles;
    for (auto* h : handles)
      for (int f = 0; f < kFamilyCount; ++f)
        if (h->GetName() == kFamilyNames[f]) cf[f] = h;
  }

  Result<std::optional<std::string>> get(Family f, const std::string& key) const {
    if (!cf[f]) return std::optional<std::string>();
    std::string value;
    rocksdb::Status s = db->Get(rocksdb::ReadOptions(), cf[f], key, &value);
    if (s.IsNotFound()) return std::optional<std::string>();
    if (!s.ok()) return rocks_error(std::string("reading ") + kFamilyNames[f] + " in " + path, s);
    return std::optional<std::string>(std::move(value));
  }

  // Calls visit(key, value) for every entry whose key starts with `prefix`, in key order; stops at
  // the first error visit returns.
  template <class Visit>
  Status scan(Family f, const std::string& prefix, Visit&& visit) const {
    if (!cf[f]) return Ok{};
    std::unique_ptr<rocksdb::Iterator> it(db->NewIterator(rocksdb::ReadOptions(), cf[f]));
    if (prefix.empty())
      it->SeekToFirst();
    else
      it->Seek(prefix);
    for (; it->Valid(); it->Next()) {
      if (!it->key().starts_with(prefix)) break;
      Status st = visit(view(it->key()), view(it->value()));
      if (!st) return st;
    }
    if (!it->status().ok()) return rocks_error(std::string("reading ") + kFamilyNames[f] + " in " + path, it->status());
    return Ok{};
  }

  Status put(Family f, const std::string& key, const std::string& value, bool sync, const char* what) {
    if (read_only) return read_only_error(path, what);
    rocksdb::WriteOptions wo;
    wo.sync = sync;
    rocksdb::Status s = db->Put(wo, cf[f], key, value);
    if (!s.ok()) return rocks_error(std::string(what) + " in " + path, s);
    return Ok{};
  }

  // A batch of puts, all or none; `what` names it in the error.
  Status write(rocksdb::WriteBatch& batch, bool sync, const std::string& what) {
    rocksdb::WriteOptions wo;
    wo.sync = sync;
    rocksdb::Status s = db->Write(wo, &batch);
    if (!s.ok()) return rocks_error(what + " in " + path, s);
    return Ok{};
  }

  Status erase(Family f, const std::string& key, bool sync, const char* what) {
    if (read_only) return read_only_error(path, what);
    rocksdb::WriteOptions wo;
    wo.sync = sync;
    rocksdb::Status s = db->Delete(wo, cf[f], key);
    if (!s.ok()) return rocks_error(std::string(what) + " in " + path, s);
    return Ok{};
  }

  // The schema version in meta (0: none written yet).
  Result<int> schema_version() const {
    auto bytes = get(kMeta, codec::kSchemaVersionKey);
    if (!bytes) return bytes.error();
    if (!bytes.value()) return 0;
    auto version = codec::decode_schema_version(*bytes.value());
    if (!version) return make_error("database " + path + ": " + version.error().message);
    return version.value();
  }
};

Store::Store(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Store::~Store() = default;

Result<std::unique_ptr<Store>> Store::open(const std::string& path) {
  if (path.empty()) return make_error("database path is empty");
  auto impl = std::make_unique<Impl>();
  impl->path = path;
  std::error_code ec;
  fs::create_directories(path, ec);
  if (ec) return make_error("cannot create database directory " + path + ": " + ec.message());
  // Canonical only once the directory exists, so that every spelling of it gives the same name.
  std::string canonical = canonical_path(path);
  if (!registry_claim(canonical)) return in_use_error(path, getpid());
  impl->registered = canonical;
  if (pid_t holder = lock_holder(path)) return in_use_error(path, holder);

  rocksdb::Options options = make_options();
  std::vector<std::string> existing;
  if (fs::exists(fs::path(path) / "CURRENT", ec)) {
    rocksdb::Status s = rocksdb::DB::ListColumnFamilies(options, path, &existing);
    if (!s.ok()) return rocks_error("cannot list the column families of database " + path, s);
  } else {
    existing.push_back(rocksdb::kDefaultColumnFamilyName);
  }
  // Open what is there first and check the schema before creating anything in a newer database.
  std::vector<rocksdb::ColumnFamilyDescriptor> descriptors;
  for (const auto& name : existing) descriptors.emplace_back(name, rocksdb::ColumnFamilyOptions(options));
  std::vector<rocksdb::ColumnFamilyHandle*> handles;
  rocksdb::Status s = rocksdb::DB::Open(options, path, descriptors, &handles, &impl->db);
  if (!s.ok()) {
    if (is_lock_error(s)) return in_use_error(path, 0);
    if (s.IsCorruption()) return damaged_error(path, {s.ToString()});
    return rocks_error("cannot open database " + path, s);
  }
  impl->adopt(handles);

  auto version = impl->schema_version();
  if (!version) return version.error();
  if (version.value() > kSchemaVersion) return newer_schema_error(path, version.value());

  for (int f = 0; f < kFamilyCount; ++f) {
    if (impl->cf[f]) continue;
    rocksdb::ColumnFamilyHandle* h = nullptr;
    s = impl->db->CreateColumnFamily(rocksdb::ColumnFamilyOptions(options), kFamilyNames[f], &h);
    if (!s.ok()) return rocks_error(std::string("cannot create column family ") + kFamilyNames[f] + " in " + path, s);
    impl->all_handles.push_back(h);
    impl->cf[f] = h;
  }
  if (version.value() < kSchemaVersion) {  // a new database, or one of an older schema (moved on below)
    auto st = impl->put(kMeta, codec::kSchemaVersionKey, codec::encode_schema_version(kSchemaVersion), true,
                        "writing the schema version");
    if (!st) return st.error();
  }
  if (!write_owner(path)) return make_error("cannot write " + path + "/" + kOwnerFile);
  impl->owner_written = true;
  std::unique_ptr<Store> store(new Store(std::move(impl)));
  // Jobs killed while RUNNING are recorded as INTERRUPTED once and for all (this process holds the
  // lock, so no job is writing; a later process with a reused pid cannot make them look alive).
  // Holding the lock proves that no earlier process is still running a job here, whatever its pid
  // (a container's pid 1 is reused by every run): every job stored as RUNNING was interrupted, and
  // only those are written.
  // Records written before specs were kept apart move theirs to job_specs (put_job does) here.
  std::vector<JobRecord> rewritten;
  Status scanned = store->impl_->scan(kJobs, "", [&](std::string_view key, std::string_view value) -> Status {
    auto record = codec::decode_job(value);
    if (!record) return make_error("job " + std::string(key) + ": " + record.error().message);
    const bool interrupted = record.value().state == JobState::running || record.value().state == JobState::queued;
    if (interrupted) mark_interrupted(record.value());
    if (interrupted || !record.value().spec.empty()) rewritten.push_back(std::move(record).value());
    return Ok{};
  });
  if (!scanned) return scanned.error();
  bool moved = false;
  for (const JobRecord& job : rewritten) {
    moved = moved || !job.spec.empty();
    auto st = store->put_job(job);
    if (!st) return st.error();
  }
  if (moved) {  // the records' old versions (specs inside) would be read past by every listing until compacted
    Impl& m = *store->impl_;
    rocksdb::CompactRangeOptions everything;
    everything.bottommost_level_compaction = rocksdb::BottommostLevelCompaction::kForce;
    rocksdb::Status s = m.db->CompactRange(everything, m.cf[kJobs], nullptr, nullptr);
    if (!s.ok()) return rocks_error("compacting the jobs of database " + path, s);
  }
  if (Status dropped = store->drop_ended_checkpoints(); !dropped) return dropped.error();
  return store;
}

// A checkpoint whose job has ended (complete, failed, cancelled) or is not recorded is never read
// again: its process died between the job's end and the drop, or the job failed and is not rerun.
Status Store::drop_ended_checkpoints() {
  std::vector<std::string> ended;
  Status scanned = impl_->scan(kCheckpoints, "", [&](std::string_view key, std::string_view) -> Status {
    auto bytes = impl_->get(kJobs, std::string(key));  // the record only: its spec is not needed here
    if (!bytes) return bytes.error();
    if (!bytes.value()) {
      ended.emplace_back(key);
      return Ok{};
    }
    auto record = read_job(key, *bytes.value(), /*with_spec=*/false);
    if (!record) return record.error();
    if (is_final(record.value().state)) ended.emplace_back(key);
    return Ok{};
  });
  if (!scanned) return scanned.error();
  for (const std::string& job : ended)
    if (Status st = drop_checkpoint(job); !st) return st.error();
  return Ok{};
}

Result<std::unique_ptr<Store>> Store::open_read_only(const std::string& path, bool allow_damaged) {
  if (path.empty()) return make_error("database path is empty");
  if (auto e = unreadable(path)) return *e;
  std::error_code ec;
  if (!fs::exists(fs::path(path) / "CURRENT", ec))
    return make_error("no gantry database at " + path + " (no CURRENT file there)");
  auto impl = std::make_unique<Impl>();
  impl->path = path;
  impl->read_only = true;

  rocksdb::Options options = make_options();
  options.create_if_missing = false;
  options.create_missing_column_families = false;
  options.max_open_files = -1;  // required by secondary instances
  std::vector<std::string> existing;
  rocksdb::Status s = rocksdb::DB::ListColumnFamilies(options, path, &existing);
  if (!s.ok()) return rocks_error("cannot list the column families of database " + path, s);

  // The secondary's private directory is removed on close; one left by a process that was killed
  // (its pid is in the name) is removed here.
  fs::path temp = fs::temp_directory_path(ec);
  if (ec) temp = "/tmp";
  remove_orphan_secondaries(temp);
  std::string pattern = (temp / ("gantry-secondary-" + std::to_string(getpid()) + "-XXXXXX")).string();
  std::vector<char> buffer(pattern.begin(), pattern.end());
  buffer.push_back('\0');
  if (!mkdtemp(buffer.data()))
    return make_error("cannot create a secondary directory " + pattern + ": " + std::strerror(errno));
  impl->secondary_dir = buffer.data();

  std::vector<rocksdb::ColumnFamilyDescriptor> descriptors;
  for (const auto& name : existing) descriptors.emplace_back(name, rocksdb::ColumnFamilyOptions(options));
  std::vector<rocksdb::ColumnFamilyHandle*> handles;
  s = rocksdb::DB::OpenAsSecondary(options, path, impl->secondary_dir, descriptors, &handles, &impl->db);
  if (!s.ok()) return rocks_error("cannot open database " + path + " read-only", s);
  impl->adopt(handles);

  std::unique_ptr<Store> store(new Store(std::move(impl)));
  if (!allow_damaged) {
    auto damage = manifest_file_problems(path);
    if (!damage.empty()) return damaged_error(path, damage);
  }
  auto version = store->impl_->schema_version();
  if (!version) return version.error();
  if (version.value() > kSchemaVersion) return newer_schema_error(path, version.value());
  return store;
}

std::vector<std::string> Store::file_problems() const { return manifest_file_problems(impl_->path); }

void Store::inject_faults(const Faults& faults) {
  impl_->fail_sync = faults.sync_wal;
  impl_->fail_put = faults.put_if_better;
  impl_->fail_job = faults.put_job;
}

std::uint64_t Store::wal_syncs() const { return impl_->syncs.load(); }

const std::string& Store::path() const { return impl_->path; }
bool Store::read_only() const { return impl_->read_only; }

Status Store::catch_up() {
  if (!impl_->read_only) return Ok{};
  rocksdb::Status s = impl_->db->TryCatchUpWithPrimary();
  if (!s.ok()) return rocks_error("catching up with database " + impl_->path, s);
  return Ok{};
}

// ---- schedules and history -------------------------------------------------------------------------

Result<bool> Store::put_if_better(const ScheduleRecord& record) {
  Impl& m = *impl_;
  if (m.read_only) return read_only_error(m.path, "storing a best schedule");
  if (m.fail_put > 0) {
    --m.fail_put;
    return make_error("storing a best schedule in " + m.path + ": injected fault");
  }
  if (!std::isfinite(record.makespan))
    return make_error("storing a best schedule: makespan " + std::to_string(record.makespan) + " is not finite");

  std::lock_guard<std::mutex> lock(m.best_mutex);
  const std::string key = codec::schedule_key(record.graph, record.cluster);
  auto current = m.get(kSchedules, key);
  if (!current) return current.error();
  if (current.value()) {
    auto old = codec::decode_schedule(*current.value());
    if (!old)
      return make_error("the stored best of graph " + record.graph.hex() + " on cluster " + record.cluster.hex() +
                        " cannot be read (" + old.error().message + "); run verify");
    if (!(record.makespan < old.value().makespan)) return false;
  }

  // The history key orders entries by commit: its time never goes below the last entry's (found_at
  // of concurrent callers may arrive out of order), and equal microseconds get the next sequence.
  ScheduleRecord best = record;
  if (!(best.found_at > 0)) best.found_at = unix_now();
  codec::HistoryKey hk{record.graph, record.cluster, to_micros(best.found_at), 0};
  {
    std::string last_possible = key + std::string(12, '\xff');
    std::unique_ptr<rocksdb::Iterator> it(m.db->NewIterator(rocksdb::ReadOptions(), m.cf[kHistory]));
    it->SeekForPrev(last_possible);
    if (it->Valid() && it->key().starts_with(key)) {
      auto last = codec::parse_history_key(view(it->key()));
      if (last) {
        if (hk.micros <= last.value().micros) {
          hk.micros = last.value().micros;
          hk.sequence = last.value().sequence + 1;
        }
      }
    }
    if (!it->status().ok()) return rocks_error("reading history in " + m.path, it->status());
  }
  HistoryRecord entry;
  entry.time = best.found_at;
  entry.makespan = best.makespan;
  entry.method = best.method;
  entry.job_id = best.job_id;
  entry.evaluations = best.evaluations;

  rocksdb::WriteBatch batch;
  rocksdb::Status s = batch.Put(m.cf[kSchedules], key, codec::encode(best));
  if (s.ok()) s = batch.Put(m.cf[kHistory], codec::history_key(hk), codec::encode(entry));
  if (!s.ok()) return rocks_error("storing a best schedule in " + m.path, s);
  if (Status written = m.write(batch, /*sync=*/true, "storing a best schedule"); !written) return written.error();
  return true;
}

Result<bool> Store::record_measurement(const Fingerprint& graph, const Fingerprint& cluster, const Placement& placement,
                                       double median_seconds, int runs, const std::string& backend) {
  Impl& m = *impl_;
  if (m.read_only) return read_only_error(m.path, "recording a measurement");
  if (!(median_seconds > 0) || !std::isfinite(median_seconds) || runs < 1)
    return make_error("recording a measurement: it needs a positive median and at least one run");
  std::lock_guard<std::mutex> lock(m.best_mutex);  // the best must not change between read and write
  const std::string key = codec::schedule_key(graph, cluster);
  auto current = m.get(kSchedules, key);
  if (!current) return current.error();
  if (!current.value()) return false;
  auto record = codec::decode_schedule(*current.value());
  if (!record) return make_error("the stored best of graph " + graph.hex() + " cannot be read (" + record.error().message + ")");
  ScheduleRecord r = std::move(record).value();
  if (r.placement.device != placement.device || r.placement.priority != placement.priority) return false;
  r.measured = median_seconds;
  r.measured_runs = runs;
  r.measured_backend = backend;
  r.measured_at = unix_now();
  if (auto st = m.put(kSchedules, key, codec::encode(r), /*sync=*/true, "recording a measurement"); !st) return st.error();
  return true;
}

Result<std::optional<ScheduleRecord>> Store::best(const Fingerprint& graph, const Fingerprint& cluster) const {
  auto bytes = impl_->get(kSchedules, codec::schedule_key(graph, cluster));
  if (!bytes) return bytes.error();
  if (!bytes.value()) return std::optional<ScheduleRecord>();
  auto record = codec::decode_schedule(*bytes.value());
  if (!record)
    return make_error("best of graph " + graph.hex() + " on cluster " + cluster.hex() + ": " + record.error().message);
  return std::optional<ScheduleRecord>(std::move(record).value());
}

Result<std::vector<ScheduleRecord>> Store::list_best(const std::string& graph_prefix) const {
  std::string hex;  // the prefix in lower case, as hex_encode writes the keys
  for (char c : graph_prefix) {
    const int digit = hex_digit(c);
    if (digit < 0) return make_error("graph prefix '" + graph_prefix + "' is not hexadecimal");
    hex.push_back("0123456789abcdef"[digit]);
  }
  std::vector<ScheduleRecord> out;
  if (hex.size() > 32) return out;
  std::string seek;  // the whole bytes of the prefix
  for (std::size_t i = 0; i + 1 < hex.size(); i += 2)
    seek.push_back(static_cast<char>(hex_digit(hex[i]) << 4 | hex_digit(hex[i + 1])));
  Status st = impl_->scan(kSchedules, seek, [&](std::string_view key, std::string_view value) -> Status {
    if (key.size() < 16 || hex_encode(key.substr(0, 16)).compare(0, hex.size(), hex) != 0) return Ok{};
    auto record = codec::decode_schedule(value);
    if (!record) return make_error("schedules key " + hex_encode(key) + ": " + record.error().message);
    out.push_back(std::move(record).value());
    return Ok{};
  });
  if (!st) return st.error();
  return out;
}

Result<std::vector<HistoryRecord>> Store::history(const Fingerprint& graph, const Fingerprint& cluster) const {
  std::vector<HistoryRecord> out;
  Status st = impl_->scan(kHistory, codec::schedule_key(graph, cluster),
                          [&](std::string_view key, std::string_view value) -> Status {
                            auto record = codec::decode_history(value);
                            if (!record)
                              return make_error("history key " + hex_encode(key) + ": " + record.error().message);
                            out.push_back(std::move(record).value());
                            return Ok{};
                          });
  if (!st) return st.error();
  return out;
}

// ---- episodes ----------------------------------------------------------------------------------------

namespace {
Status check_episode(const EpisodeRecord& episode) {
  if (episode.job_id.empty()) return make_error("storing an episode: the job id is empty");
  if (episode.job_id.find('\0') != std::string::npos)
    return make_error("storing an episode: the job id contains a NUL byte");
  return Ok{};
}
}  // namespace

Status Store::put_episode(const EpisodeRecord& episode) { return put_episodes({episode}); }

Status Store::put_episodes(const std::vector<EpisodeRecord>& episodes) {
  if (impl_->read_only) return read_only_error(impl_->path, "storing episodes");
  rocksdb::WriteBatch batch;
  for (const EpisodeRecord& episode : episodes) {
    if (Status ok = check_episode(episode); !ok) return ok;
    batch.Put(impl_->cf[kEpisodes], codec::episode_key(episode.job_id, episode.sequence), codec::encode(episode));
  }
  return impl_->write(batch, /*sync=*/false, "storing episodes");  // bulk data: sync_wal() makes them durable
}

Result<std::vector<EpisodeRecord>> Store::episodes(const std::string& job_id) const {
  std::vector<EpisodeRecord> out;
  Status st = impl_->scan(
      kEpisodes, codec::episode_prefix(job_id), [&](std::string_view key, std::string_view value) -> Status {
        auto record = codec::decode_episode(value);
        if (!record) return make_error("episodes key " + hex_encode(key) + ": " + record.error().message);
        out.push_back(std::move(record).value());
        return Ok{};
      });
  if (!st) return st.error();
  return out;
}

Status Store::sync_wal() {
  if (impl_->read_only) return Ok{};
  if (impl_->fail_sync > 0) {
    --impl_->fail_sync;
    return make_error("syncing the write-ahead log of " + impl_->path + ": injected fault");
  }
  rocksdb::Status s = impl_->db->SyncWAL();
  if (!s.ok()) return rocks_error("syncing the write-ahead log of " + impl_->path, s);
  ++impl_->syncs;
  return Ok{};
}

// ---- policies ------------------------------------------------------------------------------------------

Status valid_policy_name(const std::string& n) {
  // Names that read as a file or the built-in policy where policies are named are refused.
  if (n.empty() || n == "builtin" || n.find_first_of(std::string(":/\0", 3)) != std::string::npos || ends_with(n, ".policy"))
    return make_error("the policy name '" + n + "' must be non-empty, not builtin, without ':', '/' or NUL, and not end in .policy");
  return Ok{};
}

Result<PolicyRef> parse_policy_ref(const std::string& text) {
  PolicyRef ref{text, 0};
  if (auto colon = text.find(':'); colon != std::string::npos) {
    ref.name = text.substr(0, colon);
    const std::string v = text.substr(colon + 1);
    char* end = nullptr;
    ref.version = std::strtoull(v.c_str(), &end, 10);
    if (v.empty() || *end != '\0' || ref.version == 0 || v[0] == '-' || v[0] == '+')
      return make_error("policy '" + text + "': the version after ':' must be a positive integer");
  }
  if (ref.name.empty()) return make_error("policy '" + text + "': the name before the version is empty");
  return ref;
}

Result<PolicyRecord> Store::put_policy(PolicyRecord policy) {
  if (impl_->read_only) return read_only_error(impl_->path, "storing a policy");
  if (Status ok = valid_policy_name(policy.name); !ok) return make_error("storing a policy: " + ok.error().message);
  std::lock_guard<std::mutex> lock(impl_->policy_mutex);  // one version number per put
  if (policy.version == 0) {
    auto latest = this->policy(policy.name);
    if (!latest) return latest.error();
    policy.version = latest.value() ? latest.value()->version + 1 : 1;
  }
  Status st = impl_->put(kPolicies, codec::policy_key(policy.name, policy.version), codec::encode(policy),
                         /*sync=*/true, "storing a policy");
  if (!st) return st.error();
  return policy;
}

Result<std::optional<PolicyRecord>> Store::policy(const std::string& name, std::uint64_t version) const {
  std::optional<PolicyRecord> found;
  Status st = impl_->scan(kPolicies, codec::policy_prefix(name), [&](std::string_view key, std::string_view value) -> Status {
    auto k = codec::parse_policy_key(key);
    if (!k) return k.error();
    if (version != 0 && k.value().second != version) return Ok{};
    auto record = codec::decode_policy(value);
    if (!record) return make_error("policy " + name + ":" + std::to_string(k.value().second) + ": " + record.error().message);
    found = std::move(record).value();  // keys ascend: the last one seen is the newest
    return Ok{};
  });
  if (!st) return st.error();
  return found;
}

Result<std::vector<PolicyRecord>> Store::policies() const {
  std::vector<PolicyRecord> out;
  Status st = impl_->scan(kPolicies, "", [&](std::string_view key, std::string_view value) -> Status {
    auto record = codec::decode_policy(value);
    if (!record) return make_error("policies key " + hex_encode(key) + ": " + record.error().message);
    record.value().weights.clear();
    record.value().curve.clear();
    out.push_back(std::move(record).value());
    return Ok{};
  });
  if (!st) return st.error();
  return out;
}

Result<std::optional<PolicyRecord>> Store::policy_of_job(const std::string& job) const {
  std::optional<PolicyRecord> found;
  if (job.empty()) return found;
  Status st = impl_->scan(kPolicies, "", [&](std::string_view key, std::string_view value) -> Status {
    auto record = codec::decode_policy(value);
    if (!record) return make_error("policies key " + hex_encode(key) + ": " + record.error().message);
    if (record.value().job == job && (!found || record.value().created >= found->created)) found = std::move(record).value();
    return Ok{};
  });
  if (!st) return st.error();
  return found;
}

// ---- jobs, graphs, clusters ----------------------------------------------------------------------------

Status Store::add_profiles(const ProfileTable& samples) {
  Impl& m = *impl_;
  if (m.read_only) return read_only_error(m.path, "storing profiles");
  std::lock_guard<std::mutex> lock(m.profile_mutex);
  rocksdb::WriteBatch batch;
  for (ProfileEntry entry : samples.entries()) {
    const std::string key = codec::profile_key(entry);
    auto stored = m.get(kProfiles, key);
    if (!stored) return stored.error();
    if (stored.value()) {
      auto old = codec::decode_profile(*stored.value());
      if (!old) return make_error("profile " + key + ": " + old.error().message + "; run verify");
      ProfileEntry merged = old.value();
      merged.seconds.merge(entry.seconds);
      entry = merged;
    }
    rocksdb::Status s = batch.Put(m.cf[kProfiles], key, codec::encode(entry));
    if (!s.ok()) return rocks_error("storing profiles in " + m.path, s);
  }
  return m.write(batch, /*sync=*/true, "storing profiles");
}

Result<ProfileTable> Store::profiles() const {
  ProfileTable table;
  Status st = impl_->scan(kProfiles, "", [&](std::string_view key, std::string_view value) -> Status {
    auto entry = codec::decode_profile(value);
    if (!entry) return make_error("profile " + std::string(key) + ": " + entry.error().message);
    table.merge(entry.value());
    return Ok{};
  });
  if (!st) return st.error();
  return table;
}

Status Store::put_job(const JobRecord& job) {
  Status stored = write_job(job);
  if (stored && impl_->job_stored) impl_->job_stored(job);
  return stored;
}

void Store::on_job_stored(std::function<void(const JobRecord&)> hook) { impl_->job_stored = std::move(hook); }

Status Store::write_job(const JobRecord& job) {
  Impl& m = *impl_;
  if (job.id.empty()) return make_error("storing a job: the job id is empty");
  if (m.fail_job > 0) {
    --m.fail_job;
    return make_error("storing a job in " + m.path + ": injected fault");
  }
  if (job.spec.empty()) return m.put(kJobs, job.id, codec::encode(job), /*sync=*/true, "storing a job");  // a spec stored before stays
  if (m.read_only) return read_only_error(m.path, "storing a job");
  rocksdb::WriteBatch batch;  // the record and its spec together
  rocksdb::Status s = batch.Put(m.cf[kJobs], job.id, codec::encode(job));
  if (s.ok()) s = batch.Put(m.cf[kJobSpecs], job.id, codec::encode_text(job.spec));
  if (!s.ok()) return rocks_error("storing job " + job.id + " in " + m.path, s);
  return m.write(batch, /*sync=*/true, "storing job " + job.id);
}

// A record as stored; its spec, when `with_spec`, from job_specs (or, in a record written before
// specs were kept apart, from the record itself).
Result<JobRecord> Store::read_job(std::string_view id, std::string_view bytes, bool with_spec) const {
  auto record = codec::decode_job(bytes);
  if (!record) return make_error("job " + std::string(id) + ": " + record.error().message);
  JobRecord& r = record.value();
  if (owner_gone(r)) mark_interrupted(r);
  if (!with_spec) {
    r.spec.clear();
    return record;
  }
  if (!r.spec.empty()) return record;
  auto spec = impl_->get(kJobSpecs, std::string(id));
  if (!spec) return spec.error();
  if (spec.value()) {
    auto text = codec::decode_text(*spec.value(), "job_specs");
    if (!text) return make_error("the spec of job " + std::string(id) + ": " + text.error().message);
    r.spec = std::move(text).value();
  }
  return record;
}

Result<std::optional<JobRecord>> Store::job(const std::string& id) const {
  auto bytes = impl_->get(kJobs, id);
  if (!bytes) return bytes.error();
  if (!bytes.value()) return std::optional<JobRecord>();
  auto record = read_job(id, *bytes.value(), /*with_spec=*/true);
  if (!record) return record.error();
  return std::optional<JobRecord>(std::move(record).value());
}

Status Store::put_checkpoint(const std::string& job_id, const std::string& bytes) {
  if (job_id.empty()) return make_error("storing a checkpoint: the job id is empty");
  const std::string what = "storing the checkpoint of job " + job_id;
  return impl_->put(kCheckpoints, job_id, codec::encode_checkpoint(bytes), /*sync=*/true, what.c_str());
}

Result<std::optional<std::string>> Store::checkpoint(const std::string& job_id) const {
  auto bytes = impl_->get(kCheckpoints, job_id);
  if (!bytes) return bytes.error();
  if (!bytes.value()) return std::optional<std::string>();
  auto data = codec::decode_checkpoint(*bytes.value());
  if (!data) return make_error("checkpoint of job " + job_id + ": " + data.error().message);
  return std::optional<std::string>(std::move(data).value());
}

Status Store::drop_checkpoint(const std::string& job_id) {
  const std::string what = "dropping the checkpoint of job " + job_id;
  return impl_->erase(kCheckpoints, job_id, /*sync=*/true, what.c_str());
}

Status Store::drop_job(const std::string& id) {
  Impl& m = *impl_;
  const std::string what = "dropping job " + id;
  if (id.empty()) return make_error(what + ": the job id is empty");
  if (m.read_only) return read_only_error(m.path, what.c_str());
  rocksdb::WriteBatch batch;
  rocksdb::Status s = batch.Delete(m.cf[kJobs], id);
  if (s.ok()) s = batch.Delete(m.cf[kJobSpecs], id);
  if (s.ok()) s = batch.Delete(m.cf[kCheckpoints], id);
  Status listed = m.scan(kEpisodes, codec::episode_prefix(id), [&](std::string_view key, std::string_view) -> Status {
    if (s.ok()) s = batch.Delete(m.cf[kEpisodes], rocksdb::Slice(key.data(), key.size()));
    return Ok{};
  });
  if (!listed) return listed.error();
  if (!s.ok()) return rocks_error(what + " in " + m.path, s);
  return m.write(batch, /*sync=*/true, what);
}

Result<std::vector<JobRecord>> Store::jobs(bool with_specs) const {
  std::vector<JobRecord> out;
  Status st = impl_->scan(kJobs, "", [&](std::string_view key, std::string_view value) -> Status {
    auto record = read_job(key, value, with_specs);
    if (!record) return record.error();
    out.push_back(std::move(record).value());
    return Ok{};
  });
  if (!st) return st.error();
  return out;
}

Status Store::put_graph(const Fingerprint& fp, const std::string& json_text) {
  return impl_->put(kGraphs, codec::fingerprint_key(fp), codec::encode_text(json_text), /*sync=*/true,
                    "storing a graph");
}

Result<std::optional<std::string>> Store::graph(const Fingerprint& fp) const {
  auto bytes = impl_->get(kGraphs, codec::fingerprint_key(fp));
  if (!bytes) return bytes.error();
  if (!bytes.value()) return std::optional<std::string>();
  auto text = codec::decode_text(*bytes.value(), "graphs");
  if (!text) return make_error("graph " + fp.hex() + ": " + text.error().message);
  return std::optional<std::string>(std::move(text).value());
}

Status Store::put_cluster(const Fingerprint& fp, const std::string& yaml_or_name) {
  return impl_->put(kClusters, codec::fingerprint_key(fp), codec::encode_text(yaml_or_name), /*sync=*/true,
                    "storing a cluster");
}

Result<std::optional<std::string>> Store::cluster(const Fingerprint& fp) const {
  auto bytes = impl_->get(kClusters, codec::fingerprint_key(fp));
  if (!bytes) return bytes.error();
  if (!bytes.value()) return std::optional<std::string>();
  auto text = codec::decode_text(*bytes.value(), "clusters");
  if (!text) return make_error("cluster " + fp.hex() + ": " + text.error().message);
  return std::optional<std::string>(std::move(text).value());
}

// ---- maintenance -----------------------------------------------------------------------------------

Status Store::backup(const std::string& dir) const {
  if (dir.empty()) return make_error("backup: the target directory is empty");
  std::error_code ec;
  if (fs::exists(dir, ec)) {
    if (!fs::is_directory(dir, ec) || !fs::is_empty(dir, ec))
      return make_error("backup: " + dir + " already exists; give a new directory");
    fs::remove(dir, ec);  // a checkpoint creates its directory itself
  }
  if (impl_->read_only) return copy_records(dir);
  rocksdb::Checkpoint* raw = nullptr;
  rocksdb::Status s = rocksdb::Checkpoint::Create(impl_->db, &raw);
  std::unique_ptr<rocksdb::Checkpoint> checkpoint(raw);
  if (s.ok()) s = checkpoint->CreateCheckpoint(dir);
  if (!s.ok()) return rocks_error("backup of " + impl_->path + " to " + dir, s);
  return Ok{};
}

// A backup without the writer's lock: a new database at `dir` with every record of every family,
// read from this secondary instance after catching up with the writer.
Status Store::copy_records(const std::string& dir) const {
  const Impl& m = *impl_;
  auto fail = [&](const std::string& what, const rocksdb::Status& s) -> Status {
    std::error_code ec;
    fs::remove_all(dir, ec);
    return rocks_error("backup of " + m.path + " to " + dir + ": " + what, s);
  };
  rocksdb::Status s = m.db->TryCatchUpWithPrimary();
  if (!s.ok()) return fail("catching up with the writer", s);
  if (auto damage = file_problems(); !damage.empty()) return damaged_error(m.path, damage);
  rocksdb::Options options = make_options();
  options.error_if_exists = true;
  std::vector<rocksdb::ColumnFamilyDescriptor> descriptors{
      {rocksdb::kDefaultColumnFamilyName, rocksdb::ColumnFamilyOptions(options)}};
  for (const char* name : kFamilyNames) descriptors.emplace_back(name, rocksdb::ColumnFamilyOptions(options));
  std::vector<rocksdb::ColumnFamilyHandle*> handles;
  rocksdb::DB* raw = nullptr;
  s = rocksdb::DB::Open(options, dir, descriptors, &handles, &raw);
  if (!s.ok()) return fail("creating the copy", s);
  std::unique_ptr<rocksdb::DB> target(raw);
  auto close = [&] {
    for (auto* h : handles) target->DestroyColumnFamilyHandle(h).PermitUncheckedError();
    handles.clear();
    rocksdb::Status c = target->Close();
    target.reset();
    return c;
  };
  for (int f = 0; f < kFamilyCount && s.ok(); ++f) {
    if (!m.cf[f]) continue;
    std::unique_ptr<rocksdb::Iterator> it(m.db->NewIterator(rocksdb::ReadOptions(), m.cf[f]));
    rocksdb::WriteBatch batch;
    for (it->SeekToFirst(); it->Valid() && s.ok(); it->Next()) {
      s = batch.Put(handles[f + 1], it->key(), it->value());
      if (s.ok() && batch.Count() >= 1024) {
        s = target->Write(rocksdb::WriteOptions(), &batch);
        batch.Clear();
      }
    }
    if (s.ok() && !it->status().ok()) s = it->status();
    if (s.ok() && batch.Count() > 0) s = target->Write(rocksdb::WriteOptions(), &batch);
  }
  if (s.ok()) s = target->Flush(rocksdb::FlushOptions(), handles);
  if (s.ok()) s = target->SyncWAL();
  rocksdb::Status closed = close();
  if (!s.ok()) return fail("copying the records", s);
  if (!closed.ok()) return fail("closing the copy", closed);
  return Ok{};
}

Result<VerifyReport> Store::verify() const {
  const Impl& m = *impl_;
  VerifyReport report;
  std::size_t dropped = 0;
  auto problem = [&](std::string text) {
    if (report.problems.size() < kMaxProblems)
      report.problems.push_back(std::move(text));
    else
      ++dropped;
  };
  for (auto& p : file_problems()) problem(std::move(p));
  rocksdb::Status s = m.db->VerifyChecksum();
  if (!s.ok()) problem("checksums: " + s.ToString());

  for (int f = 0; f < kFamilyCount; ++f) {
    const std::string family = kFamilyNames[f];
    Status st = m.scan(static_cast<Family>(f), "", [&](std::string_view key, std::string_view value) -> Status {
      ++report.records;
      std::string key_text = f == kJobs || f == kMeta || f == kCheckpoints || f == kJobSpecs ? "'" + std::string(key) + "'" : hex_encode(key);
      auto fail = [&](const std::string& message) { problem(family + " key " + key_text + ": " + message); };
      switch (f) {
        case kMeta:
          if (key == codec::kSchemaVersionKey) {
            auto v = codec::decode_schema_version(value);
            if (!v) fail(v.error().message);
          } else if (auto c = codec::check_value(value, family); !c) {
            fail(c.error().message);
          }
          break;
        case kGraphs:
        case kClusters: {
          auto k = codec::parse_fingerprint_key(key);
          if (!k) fail(k.error().message);
          auto t = codec::decode_text(value, family);
          if (!t) fail(t.error().message);
          break;
        }
        case kSchedules: {
          auto k = codec::parse_schedule_key(key);
          if (!k) fail(k.error().message);
          auto r = codec::decode_schedule(value);
          if (!r)
            fail(r.error().message);
          else if (k && (r.value().graph != k.value().first || r.value().cluster != k.value().second))
            fail("the record's graph/cluster fingerprints do not match its key");
          break;
        }
        case kHistory: {
          auto k = codec::parse_history_key(key);
          if (!k) fail(k.error().message);
          auto r = codec::decode_history(value);
          if (!r) fail(r.error().message);
          break;
        }
        case kEpisodes: {
          auto k = codec::parse_episode_key(key);
          if (!k) fail(k.error().message);
          auto r = codec::decode_episode(value);
          if (!r)
            fail(r.error().message);
          else if (k && (r.value().job_id != k.value().first || r.value().sequence != k.value().second))
            fail("the record's job id/sequence do not match its key");
          break;
        }
        case kProfiles: {
          auto r = codec::decode_profile(value);
          if (!r)
            fail(r.error().message);
          else if (codec::profile_key(r.value()) != key)
            fail("the key does not match the profile's kind and signature");
          break;
        }
        case kPolicies: {
          auto k = codec::parse_policy_key(key);
          if (!k) fail(k.error().message);
          auto r = codec::decode_policy(value);
          if (!r)
            fail(r.error().message);
          else if (k && (r.value().name != k.value().first || r.value().version != k.value().second))
            fail("the record's name and version do not match its key");
          break;
        }
        case kCheckpoints: {
          auto r = codec::decode_checkpoint(value);
          if (!r) fail(r.error().message);
          break;
        }
        case kJobs: {
          auto r = codec::decode_job(value);
          if (!r)
            fail(r.error().message);
          else if (r.value().id != key)
            fail("the record's id does not match its key");
          break;
        }
        default: {
          auto c = codec::check_value(value, family);
          if (!c) fail(c.error().message);
        }
      }
      return Ok{};
    });
    if (!st) problem(st.error().message);
  }
  if (dropped > 0) report.problems.push_back("... and " + std::to_string(dropped) + " more problems");
  return report;
}

Result<StoreStats> Store::stats() const {
  const Impl& m = *impl_;
  StoreStats stats;
  stats.path = m.path;
  auto version = m.schema_version();
  if (!version) return version.error();
  stats.schema_version = version.value();
  for (int f = 0; f < kFamilyCount; ++f) {
    StoreStats::Family family;
    family.name = kFamilyNames[f];
    if (auto* h = m.cf[f]) {
      std::uint64_t keys = 0, sst = 0, mem = 0;
      if (m.db->GetIntProperty(h, rocksdb::DB::Properties::kEstimateNumKeys, &keys)) family.keys = keys;
      if (m.db->GetIntProperty(h, rocksdb::DB::Properties::kLiveSstFilesSize, &sst)) family.bytes += sst;
      if (m.db->GetIntProperty(h, rocksdb::DB::Properties::kCurSizeAllMemTables, &mem)) family.bytes += mem;
    }
    stats.families.push_back(std::move(family));
  }
  return stats;
}

std::string default_data_dir() {
  const char* env = std::getenv("GANTRY_DATA");
  if (env && *env) return env;
  return "./gantry-data";
}

}  // namespace gantry
