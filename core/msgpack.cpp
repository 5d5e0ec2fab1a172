#include "core/msgpack.hpp"

#include <cstring>
#include <limits>

namespace gantry {

// ---- writer -----------------------------------------------------------------------------------

void MsgpackWriter::head(std::uint8_t marker, std::uint64_t value, int bytes) {
  out_.push_back(static_cast<char>(marker));
  for (int i = bytes - 1; i >= 0; --i) out_.push_back(static_cast<char>((value >> (8 * i)) & 0xff));
}

void MsgpackWriter::map(std::uint32_t entries) {
  if (entries < 16) out_.push_back(static_cast<char>(0x80 | entries));
  else if (entries <= 0xffff) head(0xde, entries, 2);
  else head(0xdf, entries, 4);
}

void MsgpackWriter::array(std::uint32_t items) {
  if (items < 16) out_.push_back(static_cast<char>(0x90 | items));
  else if (items <= 0xffff) head(0xdc, items, 2);
  else head(0xdd, items, 4);
}

void MsgpackWriter::str(std::string_view text) {
  const std::uint64_t n = text.size();
  if (n < 32) out_.push_back(static_cast<char>(0xa0 | n));
  else if (n <= 0xff) head(0xd9, n, 1);
  else if (n <= 0xffff) head(0xda, n, 2);
  else head(0xdb, n, 4);
  out_.append(text.data(), text.size());
}

void MsgpackWriter::bin(std::string_view bytes) {
  const std::uint64_t n = bytes.size();
  if (n <= 0xff) head(0xc4, n, 1);
  else if (n <= 0xffff) head(0xc5, n, 2);
  else head(0xc6, n, 4);
  out_.append(bytes.data(), bytes.size());
}

void MsgpackWriter::uint(std::uint64_t value) {
  if (value < 128) out_.push_back(static_cast<char>(value));
  else if (value <= 0xff) head(0xcc, value, 1);
  else if (value <= 0xffff) head(0xcd, value, 2);
  else if (value <= 0xffffffffull) head(0xce, value, 4);
  else head(0xcf, value, 8);
}

void MsgpackWriter::sint(std::int64_t value) {
  if (value >= 0) return uint(static_cast<std::uint64_t>(value));
  const auto bits = static_cast<std::uint64_t>(value);  // two's complement: the low bytes are the value
  if (value >= -32) out_.push_back(static_cast<char>(bits & 0xff));
  else if (value >= -128) head(0xd0, bits & 0xff, 1);
  else if (value >= -32768) head(0xd1, bits & 0xffff, 2);
  else if (value >= std::numeric_limits<std::int32_t>::min()) head(0xd2, bits & 0xffffffffull, 4);
  else head(0xd3, bits, 8);
}

void MsgpackWriter::real(double value) {
  std::uint64_t bits = 0;
  std::memcpy(&bits, &value, sizeof bits);
  head(0xcb, bits, 8);
}

void MsgpackWriter::boolean(bool value) { out_.push_back(static_cast<char>(value ? 0xc3 : 0xc2)); }

void MsgpackWriter::nil() { out_.push_back(static_cast<char>(0xc0)); }

// ---- reader -----------------------------------------------------------------------------------

namespace {

std::uint8_t byte_at(std::string_view in, std::size_t at) { return static_cast<std::uint8_t>(in[at]); }

// An integer as encoded at some offset: its value, and the encoding's length (0 = not an integer
// or cut short).
struct Integer {
  bool negative = false;
  std::uint64_t magnitude = 0;  // the value when not negative
  std::int64_t value = 0;       // the value when negative
  std::size_t length = 0;
};

}  // namespace

std::uint64_t MsgpackReader::big_endian(std::size_t at, int bytes) const {
  std::uint64_t v = 0;
  for (int i = 0; i < bytes; ++i) v = (v << 8) | byte_at(in_, at + i);
  return v;
}

MsgpackReader::Kind MsgpackReader::peek() const {
  if (at_end()) return Kind::end;
  const std::uint8_t b = byte_at(in_, at_);
  if (b <= 0x7f || b >= 0xe0 || (b >= 0xcc && b <= 0xd3)) return Kind::integer;
  if (b <= 0x8f || b == 0xde || b == 0xdf) return Kind::map;
  if (b <= 0x9f || b == 0xdc || b == 0xdd) return Kind::array;
  if (b <= 0xbf || (b >= 0xd9 && b <= 0xdb)) return Kind::str;
  switch (b) {
    case 0xc0: return Kind::nil;
    case 0xc2: case 0xc3: return Kind::boolean;
    case 0xc4: case 0xc5: case 0xc6: return Kind::bin;
    case 0xca: case 0xcb: return Kind::real;
    case 0xc1: return Kind::invalid;
    default: return Kind::ext;  // 0xc7-0xc9, 0xd4-0xd8
  }
}

namespace {

Integer read_integer(std::string_view in, std::size_t at) {
  Integer n;
  if (at >= in.size()) return n;
  const std::uint8_t b = byte_at(in, at);
  const auto fits = [&](std::size_t len) { return in.size() - at >= len; };
  const auto be = [&](int bytes) {
    std::uint64_t v = 0;
    for (int i = 1; i <= bytes; ++i) v = (v << 8) | byte_at(in, at + i);
    return v;
  };
  const auto set_signed = [&](std::int64_t v, std::size_t len) {
    n.negative = v < 0;
    if (n.negative) n.value = v;
    else n.magnitude = static_cast<std::uint64_t>(v);
    n.length = len;
  };
  if (b <= 0x7f) {
    n.magnitude = b;
    n.length = 1;
  } else if (b >= 0xe0) {
    set_signed(static_cast<std::int8_t>(b), 1);
  } else if (b >= 0xcc && b <= 0xcf) {
    const int bytes = 1 << (b - 0xcc);
    if (!fits(1 + bytes)) return n;
    n.magnitude = be(bytes);
    n.length = 1 + bytes;
  } else if (b >= 0xd0 && b <= 0xd3) {
    const int bytes = 1 << (b - 0xd0);
    if (!fits(1 + bytes)) return n;
    const std::uint64_t raw = be(bytes);
    std::int64_t v = 0;
    switch (bytes) {
      case 1: v = static_cast<std::int8_t>(raw); break;
      case 2: v = static_cast<std::int16_t>(raw); break;
      case 4: v = static_cast<std::int32_t>(raw); break;
      default: v = static_cast<std::int64_t>(raw); break;
    }
    set_signed(v, 1 + bytes);
  }
  return n;
}

}  // namespace

std::size_t MsgpackReader::container(std::uint8_t fix_base, std::uint8_t fix_mask, std::uint8_t m16, std::uint8_t m32,
                                      std::uint32_t& size) const {
  if (at_end()) return 0;
  const std::uint8_t b = byte_at(in_, at_);
  if ((b & fix_mask) == fix_base) {
    size = b & static_cast<std::uint8_t>(~fix_mask);
    return 1;
  }
  if (b == m16 && need(3)) {
    size = static_cast<std::uint32_t>(big_endian(at_ + 1, 2));
    return 3;
  }
  if (b == m32 && need(5)) {
    size = static_cast<std::uint32_t>(big_endian(at_ + 1, 4));
    return 5;
  }
  return 0;
}

bool MsgpackReader::map(std::uint32_t& entries) {
  std::uint32_t n = 0;
  const std::size_t header = container(0x80, 0xf0, 0xde, 0xdf, n);
  // Every entry takes at least two bytes: a larger count is a lie, refused before anyone trusts it.
  if (header == 0 || (in_.size() - at_ - header) / 2 < n) return false;
  at_ += header;
  entries = n;
  return true;
}

bool MsgpackReader::array(std::uint32_t& items) {
  std::uint32_t n = 0;
  const std::size_t header = container(0x90, 0xf0, 0xdc, 0xdd, n);
  if (header == 0 || in_.size() - at_ - header < n) return false;
  at_ += header;
  items = n;
  return true;
}

bool MsgpackReader::sized(std::uint8_t fix_lo, std::uint8_t fix_hi, std::uint8_t m8, std::string_view& out) {
  if (at_end()) return false;
  const std::uint8_t b = byte_at(in_, at_);
  std::size_t header = 0, length = 0;
  if (fix_lo <= b && b <= fix_hi) {
    header = 1;
    length = b - fix_lo;
  } else if (b >= m8 && b <= m8 + 2) {
    const int bytes = 1 << (b - m8);
    if (!need(1 + bytes)) return false;
    header = 1 + bytes;
    length = big_endian(at_ + 1, bytes);
  } else {
    return false;
  }
  if (in_.size() - at_ - header < length) return false;
  out = in_.substr(at_ + header, length);
  at_ += header + length;
  return true;
}

bool MsgpackReader::str(std::string_view& text) { return sized(0xa0, 0xbf, 0xd9, text); }

// bin has no short form: an empty fix range.
bool MsgpackReader::bin(std::string_view& bytes) { return sized(1, 0, 0xc4, bytes); }

bool MsgpackReader::uint(std::uint64_t& value) {
  const Integer n = read_integer(in_, at_);
  if (n.length == 0 || n.negative) return false;
  value = n.magnitude;
  at_ += n.length;
  return true;
}

bool MsgpackReader::sint(std::int64_t& value) {
  const Integer n = read_integer(in_, at_);
  if (n.length == 0) return false;
  if (!n.negative && n.magnitude > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) return false;
  value = n.negative ? n.value : static_cast<std::int64_t>(n.magnitude);
  at_ += n.length;
  return true;
}

bool MsgpackReader::real(double& value) {
  if (at_end()) return false;
  const std::uint8_t b = byte_at(in_, at_);
  if (b == 0xca && need(5)) {
    const auto bits = static_cast<std::uint32_t>(big_endian(at_ + 1, 4));
    float f = 0;
    std::memcpy(&f, &bits, sizeof f);
    value = f;
    at_ += 5;
    return true;
  }
  if (b == 0xcb && need(9)) {
    const std::uint64_t bits = big_endian(at_ + 1, 8);
    std::memcpy(&value, &bits, sizeof value);
    at_ += 9;
    return true;
  }
  const Integer n = read_integer(in_, at_);
  if (n.length == 0) return false;
  value = n.negative ? static_cast<double>(n.value) : static_cast<double>(n.magnitude);
  at_ += n.length;
  return true;
}

bool MsgpackReader::boolean(bool& value) {
  if (at_end()) return false;
  const std::uint8_t b = byte_at(in_, at_);
  if (b != 0xc2 && b != 0xc3) return false;
  value = b == 0xc3;
  ++at_;
  return true;
}

bool MsgpackReader::nil() {
  if (at_end() || byte_at(in_, at_) != 0xc0) return false;
  ++at_;
  return true;
}

bool MsgpackReader::skip() { return skip(0); }

bool MsgpackReader::skip(int depth) {
  if (depth > 64) return false;
  const std::size_t start = at_;
  const auto fail = [&] {
    at_ = start;
    return false;
  };
  const auto take = [&](std::size_t n) {
    if (!need(n)) return false;
    at_ += n;
    return true;
  };
  std::string_view text;
  std::uint32_t n = 0;
  double real_value = 0;
  bool flag = false;
  switch (peek()) {
    case Kind::end:
    case Kind::invalid: return false;
    case Kind::nil: return nil();
    case Kind::boolean: return boolean(flag);
    case Kind::integer: {
      const Integer i = read_integer(in_, at_);
      return i.length != 0 && take(i.length);
    }
    case Kind::real: return real(real_value);
    case Kind::str: return str(text);
    case Kind::bin: return bin(text);
    case Kind::ext: {
      const std::uint8_t b = byte_at(in_, at_);
      if (b >= 0xd4 && b <= 0xd8) return take(2 + (std::size_t{1} << (b - 0xd4)));
      const int bytes = 1 << (b - 0xc7);
      if (!need(1 + bytes)) return false;
      return take(2 + bytes + big_endian(at_ + 1, bytes)) || fail();
    }
    case Kind::array:
      if (!array(n)) return false;
      for (std::uint32_t i = 0; i < n; ++i)
        if (!skip(depth + 1)) return fail();
      return true;
    case Kind::map:
      if (!map(n)) return false;
      for (std::uint64_t i = 0; i < 2ull * n; ++i)
        if (!skip(depth + 1)) return fail();
      return true;
  }
  return false;
}

}  // namespace gantry
