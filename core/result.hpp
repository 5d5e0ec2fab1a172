#pragma once
// Errors are values at module edges: a Result<T> holds either a value or an Error whose message
// names the input and what is wrong with it ("graph.json:12: op 7 depends on unknown op 99").
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>

namespace gantry {

struct Error {
  std::string message;
};

template <class T>
class Result {
 public:
  Result(T value) : value_(std::move(value)) {}
  Result(Error error) : error_(std::move(error)) {}

  bool ok() const { return value_.has_value(); }
  explicit operator bool() const { return ok(); }

  const T& value() const& { check(); return *value_; }
  T& value() & { check(); return *value_; }
  T&& value() && { check(); return std::move(*value_); }
  const Error& error() const { return error_; }

 private:
  void check() const {
    if (!value_) throw std::logic_error("Result::value() on an error: " + error_.message);
  }
  std::optional<T> value_;
  Error error_;
};

// For functions that produce nothing but may fail.
struct Ok {};
using Status = Result<Ok>;

inline Error make_error(std::string message) { return Error{std::move(message)}; }

}  // namespace gantry
