#pragma once
// Test helpers that reach under the store: flush every column family of a closed database into
// table files, and find the table files of one family (to delete, truncate or corrupt them).
#include <rocksdb/db.h>
#include <rocksdb/metadata.h>

#include <algorithm>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

namespace gantry::testing {

inline void with_raw_db(const std::string& path, const std::function<void(rocksdb::DB&, std::vector<rocksdb::ColumnFamilyHandle*>&)>& f) {
  rocksdb::Options options;
  std::vector<std::string> names;
  if (!rocksdb::DB::ListColumnFamilies(options, path, &names).ok()) throw std::runtime_error("no database at " + path);
  std::vector<rocksdb::ColumnFamilyDescriptor> descriptors;
  for (const auto& name : names) descriptors.emplace_back(name, rocksdb::ColumnFamilyOptions());
  std::vector<rocksdb::ColumnFamilyHandle*> handles;
  rocksdb::DB* db = nullptr;
  if (!rocksdb::DB::Open(options, path, descriptors, &handles, &db).ok()) throw std::runtime_error("cannot open " + path);
  f(*db, handles);
  for (auto* h : handles) db->DestroyColumnFamilyHandle(h).PermitUncheckedError();
  db->Close().PermitUncheckedError();
  delete db;
}

// Every column family's memtable into a new table file (the database must be closed).
inline void flush_all(const std::string& path) {
  with_raw_db(path, [](rocksdb::DB& db, std::vector<rocksdb::ColumnFamilyHandle*>& handles) {
    if (!db.Flush(rocksdb::FlushOptions(), handles).ok()) throw std::runtime_error("flush failed");
  });
}

// The table files of `family`, newest (highest file number) first, as full paths.
inline std::vector<std::string> table_files(const std::string& path, const std::string& family) {
  std::vector<rocksdb::LiveFileMetaData> files;
  with_raw_db(path, [&](rocksdb::DB& db, std::vector<rocksdb::ColumnFamilyHandle*>&) { db.GetLiveFilesMetaData(&files); });
  std::sort(files.begin(), files.end(), [](const auto& a, const auto& b) { return a.file_number > b.file_number; });
  std::vector<std::string> out;
  for (const auto& f : files)
    if (f.column_family_name == family) out.push_back(f.db_path + "/" + f.name);
  return out;
}

}  // namespace gantry::testing
