#pragma once
// MessagePack (https://github.com/msgpack/msgpack/blob/master/spec.md) written and read in place,
// without building a document tree: the wire protocol sends tens of thousands of small maps a
// second, and a tree costs an allocation per key and per value. The writer uses the smallest
// encoding of each integer and always 64-bit floats; the reader takes every encoding of a value
// (any integer width, 32- or 64-bit floats) and never reads past its input nor throws: a value of
// another kind, or one cut short, makes the call return false and consumes nothing.
#include <cstdint>
#include <string>
#include <string_view>

namespace gantry {

class MsgpackWriter {
 public:
  void map(std::uint32_t entries);
  void array(std::uint32_t items);
  void str(std::string_view text);
  void bin(std::string_view bytes);  // opaque bytes (MessagePack's bin family)
  void uint(std::uint64_t value);
  void sint(std::int64_t value);
  void real(double value);
  void boolean(bool value);
  void nil();

  const std::string& bytes() const { return out_; }
  std::string take() { return std::move(out_); }

 private:
  void head(std::uint8_t marker, std::uint64_t value, int bytes);  // a marker, then `bytes` big-endian
  std::string out_;
};

class MsgpackReader {
 public:
  enum class Kind { nil, boolean, integer, real, str, bin, array, map, ext, invalid, end };

  explicit MsgpackReader(std::string_view bytes) : in_(bytes) {}

  Kind peek() const;  // the kind of the next value (`end` when there is none, `invalid` for 0xc1)
  bool at_end() const { return at_ >= in_.size(); }
  std::size_t offset() const { return at_; }

  bool map(std::uint32_t& entries);
  bool array(std::uint32_t& items);
  bool str(std::string_view& text);  // a view into the input
  bool bin(std::string_view& bytes); // a view into the input
  bool uint(std::uint64_t& value);   // any integer encoding of a value >= 0
  bool sint(std::int64_t& value);    // any integer encoding of a value that fits
  bool real(double& value);          // a float or an integer
  bool boolean(bool& value);
  bool nil();
  // Steps over one value, containers with everything in them; nesting deeper than 64 fails.
  bool skip();

 private:
  bool skip(int depth);
  bool need(std::size_t n) const { return in_.size() - at_ >= n; }
  std::uint64_t big_endian(std::size_t at, int bytes) const;
  // A container header at the cursor: its size and the header's length (0 = not this container).
  // A string or bin at the cursor (markers fix_lo..fix_hi with the length in the low bits, or
  // m8 / m8+1 / m8+2 with a 1-, 2- or 4-byte length): its bytes.
  bool sized(std::uint8_t fix_lo, std::uint8_t fix_hi, std::uint8_t m8, std::string_view& out);
  std::size_t container(std::uint8_t fix_base, std::uint8_t fix_mask, std::uint8_t m16, std::uint8_t m32,
                        std::uint32_t& size) const;
  std::string_view in_;
  std::size_t at_ = 0;
};

}  // namespace gantry
