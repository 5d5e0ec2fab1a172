#pragma once
// Hexadecimal text, read and written in one place: fingerprints, store keys in messages and the
// fingerprint prefixes `query` accepts.
#include <string>
#include <string_view>

namespace gantry {

// The value of a hex digit of either case; -1 for any other character.
constexpr int hex_digit(char c) {
  return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

// True when `text` is not empty and every character is a hex digit.
inline bool all_hex_digits(std::string_view text) {
  if (text.empty()) return false;
  for (char c : text)
    if (hex_digit(c) < 0) return false;
  return true;
}

// Two lower-case digits per byte, the high nibble first.
inline std::string hex_encode(std::string_view bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  out.reserve(bytes.size() * 2);
  for (char c : bytes) {
    const auto b = static_cast<unsigned char>(c);
    out.push_back(kDigits[b >> 4]);
    out.push_back(kDigits[b & 15]);
  }
  return out;
}

// The inverse of hex_encode (either case); false for an odd length or a non-hex character.
inline bool hex_decode(std::string_view hex, std::string& out) {
  if (hex.size() % 2 != 0) return false;
  out.clear();
  out.reserve(hex.size() / 2);
  for (std::size_t i = 0; i < hex.size(); i += 2) {
    const int hi = hex_digit(hex[i]), lo = hex_digit(hex[i + 1]);
    if (hi < 0 || lo < 0) return false;
    out.push_back(static_cast<char>(hi * 16 + lo));
  }
  return true;
}

}  // namespace gantry
