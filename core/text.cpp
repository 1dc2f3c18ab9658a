#include <algorithm>
#include <cassert>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <limits>
#include <string>
#include <vector>

#include <shardflow/core/text.hpp>

namespace shardflow {

namespace {
constexpr char kHexLower[] = "0123456789abcdef";
void append_u(std::string& out, unsigned code) {
  out += "\\u";
  for (int shift = 12; shift >= 0; shift -= 4) out += kHexLower[(code >> shift) & 15];
}
}  // namespace

std::size_t invisible_length(std::string_view s, std::size_t i, unsigned& code) {
  const auto b = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
  if (b(i) == 0xC2 && i + 1 < s.size() && b(i + 1) == 0xA0) {
    code = 0xA0;  // no-break space
    return 2;
  }
  if (b(i) != 0xE2 && b(i) != 0xEF) return 0;
  if (i + 2 >= s.size() || (b(i + 1) & 0xC0) != 0x80 || (b(i + 2) & 0xC0) != 0x80) return 0;
  code = (b(i) & 0x0Fu) << 12 | (b(i + 1) & 0x3Fu) << 6 | (b(i + 2) & 0x3Fu);
  const bool invisible = (code >= 0x200B && code <= 0x200F) || (code >= 0x2028 && code <= 0x202F) ||
                         (code >= 0x2060 && code <= 0x2064) || code == 0xFEFF;
  return invisible ? 3 : 0;
}

std::string quote(std::string_view s) {
  std::string out = "\"";
  std::size_t n = 0;
  for (std::size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (++n > 60) {
      out += "...";
      break;
    }
    const auto u = static_cast<unsigned char>(c);
    unsigned code = 0;
    if (const std::size_t len = invisible_length(s, i, code); len != 0) {
      append_u(out, code);
      i += len - 1;
    } else if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (u < 0x20 || u == 0x7f) {
      out += "\\x";
      out += kHexLower[u >> 4];
      out += kHexLower[u & 15];
    } else {
      out += c;
    }
  }
  return out + "\"";
}

std::size_t edit_distance(std::string_view a, std::string_view b) {
  // Three rows: the transposition looks two back.
  std::vector<std::size_t> before(b.size() + 1), last(b.size() + 1), row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) last[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      row[j] = std::min({last[j] + 1, row[j - 1] + 1, last[j - 1] + (a[i - 1] == b[j - 1] ? 0U : 1U)});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        row[j] = std::min(row[j], before[j - 2] + 1);
    }
    std::swap(before, last);
    std::swap(last, row);
  }
  return last[b.size()];
}

std::optional<std::string_view> closest_name(std::string_view given,
                                             std::span<const std::string_view> known) {
  // A zero-width space pasted into a key is no edit the user can see: compared without it.
  std::string clean;
  for (std::size_t i = 0; i < given.size(); ++i) {
    unsigned code = 0;
    if (const std::size_t n = invisible_length(given, i, code); n != 0 && code != 0xA0)
      i += n - 1;
    else
      clean += given[i];
  }
  const std::string_view name = clean;
  // A name given without its domain prefix ("gpu" for "nvidia.com/gpu"): that one, before any a few edits
  // away ("cpu").
  for (const std::string_view k : known)
    if (const auto slash = k.rfind('/'); slash != std::string_view::npos && k.substr(slash + 1) == name)
      return k;
  std::string_view best;
  std::size_t best_d = std::numeric_limits<std::size_t>::max();
  for (const std::string_view k : known) {
    const std::size_t d = edit_distance(name, k);
    if (d < best_d) {
      best_d = d;
      best = k;
    }
  }
  // Fewer edits than the name has characters: "p2" is 2 from "cpu", which is another name, not a typo.
  if (best_d <= std::max<std::size_t>(2, name.size() / 3) && best_d < name.size()) return best;
  return std::nullopt;
}

std::string with_commas(std::uint64_t n) {
  const std::string digits = std::to_string(n);
  std::string out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

std::string shortened(std::string_view text) {
  constexpr std::size_t kShown = 100;
  if (text.size() <= kShown) return std::string(text);  // bytes: at most as many characters (every path)
  const auto continuation = [](char c) { return (static_cast<unsigned char>(c) & 0xC0) == 0x80; };
  std::size_t end = 0, shown = 0;  // the byte after the first kShown characters (UTF-8)
  while (end < text.size() && shown < kShown) {
    ++end;
    while (end < text.size() && continuation(text[end])) ++end;
    ++shown;
  }
  std::string out(text.substr(0, end));
  if (end == text.size()) return out;
  const auto more = static_cast<std::uint64_t>(std::count_if(
      text.begin() + static_cast<std::ptrdiff_t>(end), text.end(), [&](char c) { return !continuation(c); }));
  return out + "... (" + with_commas(more) + " more characters)";
}

std::string flag_place(std::string_view flag, std::string_view argument) {
  return std::string(flag) + " " + shortened(argument);
}

std::string listed(std::size_t count, const std::function<std::string(std::size_t)>& name,
                   std::size_t shown) {
  std::string out;
  for (std::size_t i = 0; i < count && i < shown; ++i) out += (i ? ", " : "") + shortened(name(i));
  if (count > shown) out += ", and " + with_commas(count - shown) + " more";
  return out;
}

std::string listed(const std::vector<std::string>& names, std::size_t shown) {
  return listed(
      names.size(), [&](std::size_t i) { return names[i]; }, shown);
}

namespace {

// 10^0 .. 10^18, for fixed_point's scale and fixed_decimals' (as doubles, exact to 10^9).
constexpr std::uint64_t kPow10[] = {1,
                                    10,
                                    100,
                                    1'000,
                                    10'000,
                                    100'000,
                                    1'000'000,
                                    10'000'000,
                                    100'000'000,
                                    1'000'000'000,
                                    10'000'000'000,
                                    100'000'000'000,
                                    1'000'000'000'000,
                                    10'000'000'000'000,
                                    100'000'000'000'000,
                                    1'000'000'000'000'000,
                                    10'000'000'000'000'000,
                                    100'000'000'000'000'000,
                                    1'000'000'000'000'000'000};

}  // namespace

std::string fixed_point(std::int64_t units, int decimals) {
  std::string out;
  append_fixed_point(out, units, decimals);
  return out;
}

void append_fixed_point(std::string& out, std::int64_t units, int decimals) {
  // The magnitude as unsigned, so that INT64_MIN has one too.
  const std::uint64_t mag =
      units < 0 ? std::uint64_t{0} - static_cast<std::uint64_t>(units) : static_cast<std::uint64_t>(units);
  assert(decimals >= 0 && decimals <= 18);
  const std::uint64_t scale = kPow10[decimals];
  char buf[48];
  char* p = buf;
  if (units < 0) *p++ = '-';
  p = std::to_chars(p, buf + sizeof buf, mag / scale).ptr;
  if (decimals > 0) {
    *p++ = '.';
    std::uint64_t frac = mag % scale;
    for (int i = decimals - 1; i >= 0; --i) {
      p[i] = static_cast<char>('0' + frac % 10);
      frac /= 10;
    }
    p += decimals;
  }
  out.append(buf, p);
}

std::string shortest_text(double v) {
  char buf[32];
  return std::string(buf, std::to_chars(buf, buf + sizeof buf, v).ptr);
}

std::string fixed_decimals(double v, int decimals) {
  // The common case without to_chars's exact decimal expansion: v x 10^decimals is one rounding away from
  // the exact product, so where that product is not within its rounding error of a half, rounding it to
  // the nearest integer gives the integer printf rounds the exact value to.
  if (decimals >= 0 && decimals <= 9 && std::isfinite(v)) {
    const double scaled = v * static_cast<double>(kPow10[decimals]);
    if (std::fabs(scaled) < 1e15) {
      const double whole = std::floor(scaled);
      const double frac = scaled - whole;
      if (std::fabs(frac - 0.5) > std::fabs(scaled) * 0x1p-50 + 0x1p-60) {
        // A negative value that rounds to 0 has units 0, written without a sign as below.
        return fixed_point(static_cast<std::int64_t>(frac < 0.5 ? whole : whole + 1), decimals);
      }
    }
  }
  char buf[400];  // 1e308 in fixed notation is 309 digits
  const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::fixed, decimals);
  std::string s = ec == std::errc() ? std::string(buf, end) : std::string("nan");
  // "-0", "-0.0", "-0.00"...: a negative value that rounds to zero reads as zero.
  if (s.size() >= 2 && s[0] == '-' && s.find_first_not_of("0.", 1) == std::string::npos) s.erase(0, 1);
  return s;
}

int character_column(std::string_view text, std::size_t line_start, std::size_t at) {
  at = std::min(at, text.size());
  if (line_start == 0 && at >= 3 && text.starts_with("\xEF\xBB\xBF")) line_start = 3;
  int column = 1;
  for (std::size_t i = line_start; i < at; ++i)
    column += (static_cast<unsigned char>(text[i]) & 0xC0) != 0x80 ? 1 : 0;
  return column;
}

namespace {
constexpr std::size_t kColumnBlock = 4096;
std::size_t chars_in(std::string_view text, std::size_t from, std::size_t to) {
  std::size_t n = 0;
  for (std::size_t i = from; i < to; ++i) n += (static_cast<unsigned char>(text[i]) & 0xC0) != 0x80 ? 1 : 0;
  return n;
}
}  // namespace

std::size_t ColumnIndex::chars_before(std::string_view text, std::size_t at) const {
  if (blocks_.empty()) {
    blocks_.reserve(text.size() / kColumnBlock + 1);
    std::size_t n = 0;
    for (std::size_t b = 0; b <= text.size() / kColumnBlock; ++b) {
      blocks_.push_back(n);
      n += chars_in(text, b * kColumnBlock, std::min(text.size(), (b + 1) * kColumnBlock));
    }
  }
  const std::size_t b = at / kColumnBlock;
  return blocks_[b] + chars_in(text, b * kColumnBlock, at);
}

int ColumnIndex::column(std::string_view text, std::size_t line_start, std::size_t at) const {
  at = std::min(at, text.size());
  line_start = std::min(line_start, at);
  if (at - line_start <= 2 * kColumnBlock) return character_column(text, line_start, at);
  if (line_start == 0 && text.starts_with("\xEF\xBB\xBF")) line_start = 3;  // as character_column
  return static_cast<int>(1 + chars_before(text, at) - chars_before(text, line_start));
}

std::uint64_t fnv1a(std::string_view s, std::uint64_t h) {
  for (const char c : s) {
    h ^= static_cast<unsigned char>(c);
    h *= 1099511628211ULL;
  }
  return h;
}

std::string shell_word(std::string_view s) {
  if (!s.empty() && s.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
                                        "_-+=./:,@%[]") == std::string_view::npos)
    return std::string(s);
  std::string out = "'";
  for (const char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

std::size_t utf8_length(std::string_view text, std::size_t i) {
  const auto* b = reinterpret_cast<const unsigned char*>(text.data());
  const std::size_t n = text.size();
  const unsigned char c = b[i];
  if (c < 0x80) return 1;
  const auto cont = [&](std::size_t k, unsigned char lo = 0x80, unsigned char hi = 0xBF) {
    return i + k < n && b[i + k] >= lo && b[i + k] <= hi;
  };
  if (c >= 0xC2 && c <= 0xDF) return cont(1) ? 2 : 0;
  if (c == 0xE0) return cont(1, 0xA0) && cont(2) ? 3 : 0;
  if ((c >= 0xE1 && c <= 0xEC) || c == 0xEE || c == 0xEF) return cont(1) && cont(2) ? 3 : 0;
  if (c == 0xED) return cont(1, 0x80, 0x9F) && cont(2) ? 3 : 0;
  if (c == 0xF0) return cont(1, 0x90) && cont(2) && cont(3) ? 4 : 0;
  if (c >= 0xF1 && c <= 0xF3) return cont(1) && cont(2) && cont(3) ? 4 : 0;
  if (c == 0xF4) return cont(1, 0x80, 0x8F) && cont(2) && cont(3) ? 4 : 0;
  return 0;
}

std::string valid_utf8(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    const std::size_t len = utf8_length(text, i);
    if (len == 0) {
      out += "\xEF\xBF\xBD";  // U+FFFD
      ++i;
    } else {
      out.append(text, i, len);
      i += len;
    }
  }
  return out;
}

std::string one_line(std::string_view text) {
  std::string out(text);
  for (std::size_t i = 0; i < out.size(); ++i) {
    const auto c = static_cast<unsigned char>(out[i]);
    if (c < 0x20 || c == 0x7F) {
      out[i] = ' ';
    } else if (c == 0xC2 && i + 1 < out.size() && static_cast<unsigned char>(out[i + 1]) == 0x85) {
      out.replace(i, 2, " ");
    } else if (c == 0xE2 && i + 2 < out.size() && static_cast<unsigned char>(out[i + 1]) == 0x80 &&
               (static_cast<unsigned char>(out[i + 2]) == 0xA8 ||
                static_cast<unsigned char>(out[i + 2]) == 0xA9)) {
      out.replace(i, 3, " ");
    }
  }
  return out;
}

std::string printable(std::string_view message) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(message.size());
  for (std::size_t i = 0; i < message.size();) {
    const auto c = static_cast<unsigned char>(message[i]);
    const std::size_t len = utf8_length(message, i);
    if (unsigned code = 0; len != 0 && invisible_length(message, i, code) == len) {
      append_u(out, code);
      i += len;
      continue;
    }
    if (len == 0 || (c < 0x20 && c != '\n' && c != '\t') || c == 0x7F) {
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 15];
      ++i;
      continue;
    }
    out.append(message.substr(i, len));
    i += len;
  }
  return out;
}

}  // namespace shardflow
