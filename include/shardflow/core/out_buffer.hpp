// Text built in memory and handed to a stream in large pieces, for the writers of large files (traces,
// timelines, reports). `<<` takes what a std::ostream takes for text and integers and writes the same
// characters, without the stream's per-insert sentry, locale and virtual calls, which cost more than the
// text itself when a trace of a million attempts is written field by field.
//
//   OutBuffer w(out);
//   w << "{\"task\": " << a.task << ", \"pod\": ";
//   append_json_string(w.text(), pod);
//   w.flush();  // also done when `w` goes out of scope
#pragma once

#include <charconv>
#include <concepts>
#include <cstddef>
#include <ostream>
#include <string>
#include <string_view>

namespace shardflow {

class OutBuffer {
 public:
  explicit OutBuffer(std::ostream& out) : out_(out) { buf_.reserve(kFlushAt + 1024); }
  OutBuffer(const OutBuffer&) = delete;
  OutBuffer& operator=(const OutBuffer&) = delete;
  ~OutBuffer() { flush(); }

  OutBuffer& operator<<(std::string_view s) {
    buf_.append(s);
    if (buf_.size() >= kFlushAt) flush();
    return *this;
  }
  OutBuffer& operator<<(const char* s) { return *this << std::string_view(s); }
  OutBuffer& operator<<(const std::string& s) { return *this << std::string_view(s); }
  OutBuffer& operator<<(char c) {
    buf_.push_back(c);
    return *this;
  }
  /// Integers in decimal, as a stream writes them. Character types and bool are left out on purpose: a
  /// stream writes those as characters or 0/1, which is never what a writer here means.
  template <std::integral T>
  requires(!std::same_as<T, bool> && !std::same_as<T, char> && !std::same_as<T, signed char> &&
           !std::same_as<T, unsigned char> && !std::same_as<T, char8_t>) OutBuffer&
  operator<<(T v) {
    char b[24];
    const auto r = std::to_chars(b, b + sizeof b, v);
    buf_.append(b, r.ptr);
    if (buf_.size() >= kFlushAt) flush();
    return *this;
  }

  /// The text not yet handed on, to append to directly (append_json_string and the like).
  std::string& text() { return buf_; }
  /// Hands the text on to the stream.
  void flush() {
    if (!buf_.empty()) out_.write(buf_.data(), static_cast<std::streamsize>(buf_.size()));
    buf_.clear();
  }

 private:
  static constexpr std::size_t kFlushAt = std::size_t{64} << 10;
  std::ostream& out_;
  std::string buf_;
};

}  // namespace shardflow
