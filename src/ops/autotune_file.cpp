// SPDX-License-Identifier: BSD-3-Clause
#include "autotune_file.hpp"

#include "coda/epilogue/program_launchers.hpp"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string_view>
#include <vector>

#include "coda/gemm/config_names.hpp"
#include "coda/ops/autotune.hpp"
#include "coda/ops/op_key.hpp"

namespace coda::ops::detail {

namespace {

constexpr const char* kFormat = "coda-autotune-1";

// --- a strict JSON reader for the subset a cache file uses ---------------------------------
// Values: objects, arrays, strings (ASCII, the usual escapes), numbers, true/false/null. Every
// error throws Malformed, caught once by parse_tune_file.
struct Malformed {
  std::string what;
};

struct Json {
  enum Kind { kNull, kBool, kNumber, kString, kArray, kObject } kind = kNull;
  double number = 0;
  bool boolean = false;
  std::string string;
  std::vector<Json> items;                            // kArray
  std::vector<std::pair<std::string, Json>> members;  // kObject, in file order

  const Json* member(std::string_view key) const {
    for (const auto& [k, v] : members)
      if (k == key) return &v;
    return nullptr;
  }
};

class Reader {
 public:
  explicit Reader(std::string_view text) : s_(text) {}

  Json document() {
    Json v = value(0);
    skip_space();
    if (i_ != s_.size()) fail("text after the document");
    return v;
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    throw Malformed{what + " at byte " + std::to_string(i_)};
  }
  void skip_space() {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\n' || s_[i_] == '\r' || s_[i_] == '\t'))
      ++i_;
  }
  bool eat(char c) {
    skip_space();
    if (i_ < s_.size() && s_[i_] == c) return ++i_, true;
    return false;
  }
  void expect(char c) {
    if (!eat(c)) fail(std::string("expected '") + c + "'");
  }
  bool word(std::string_view w) {
    if (s_.substr(i_, w.size()) != w) return false;
    i_ += w.size();
    return true;
  }

  Json value(int depth) {
    if (depth > 8) fail("nesting too deep");
    skip_space();
    if (i_ >= s_.size()) fail("unexpected end");
    Json v;
    const char c = s_[i_];
    if (c == '{') {
      ++i_;
      v.kind = Json::kObject;
      if (eat('}')) return v;
      do {
        skip_space();
        std::string key = string();
        expect(':');
        v.members.emplace_back(std::move(key), value(depth + 1));
      } while (eat(','));
      expect('}');
    } else if (c == '[') {
      ++i_;
      v.kind = Json::kArray;
      if (eat(']')) return v;
      do v.items.push_back(value(depth + 1));
      while (eat(','));
      expect(']');
    } else if (c == '"') {
      v.kind = Json::kString;
      v.string = string();
    } else if (word("true")) {
      v.kind = Json::kBool;
      v.boolean = true;
    } else if (word("false")) {
      v.kind = Json::kBool;
    } else if (word("null")) {
      v.kind = Json::kNull;
    } else {
      v.kind = Json::kNumber;
      v.number = number();
    }
    return v;
  }

  std::string string() {
    if (i_ >= s_.size() || s_[i_] != '"') fail("expected a string");
    ++i_;
    std::string out;
    while (true) {
      if (i_ >= s_.size()) fail("unterminated string");
      const char c = s_[i_++];
      if (c == '"') return out;
      if (static_cast<unsigned char>(c) < 0x20) fail("control character in a string");
      if (c != '\\') {
        out += c;
        continue;
      }
      if (i_ >= s_.size()) fail("unterminated escape");
      switch (const char e = s_[i_++]) {
        case '"': case '\\': case '/': out += e; break;
        case 'n': out += '\n'; break;
        case 't': out += '\t'; break;
        case 'r': out += '\r'; break;
        case 'b': out += '\b'; break;
        case 'f': out += '\f'; break;
        default: fail("unsupported escape");  // \u: the writer never emits one
      }
    }
  }

  double number() {
    const std::size_t start = i_;
    while (i_ < s_.size() && std::string_view("+-0123456789.eE").find(s_[i_]) != std::string_view::npos)
      ++i_;
    if (i_ == start) fail("expected a value");
    const std::string digits(s_.substr(start, i_ - start));
    char* end = nullptr;
    const double v = std::strtod(digits.c_str(), &end);
    if (end != digits.c_str() + digits.size() || !std::isfinite(v)) fail("bad number " + digits);
    return v;
  }

  std::string_view s_;
  std::size_t i_ = 0;
};

// --- typed access with the member's name in every error ----------------------------------
const Json& field(const Json& object, const char* key) {
  const Json* v = object.member(key);
  if (v == nullptr) throw Malformed{std::string("missing \"") + key + "\""};
  return *v;
}
const std::string& text_field(const Json& object, const char* key) {
  const Json& v = field(object, key);
  if (v.kind != Json::kString) throw Malformed{std::string("\"") + key + "\" is not a string"};
  return v.string;
}
std::int64_t int_field(const Json& object, const char* key, std::int64_t lo, std::int64_t hi) {
  const Json& v = field(object, key);
  if (v.kind != Json::kNumber || v.number != std::floor(v.number) || v.number < double(lo) ||
      v.number > double(hi))
    throw Malformed{std::string("\"") + key + "\" is not an integer in [" + std::to_string(lo) +
                    ", " + std::to_string(hi) + "]"};
  return static_cast<std::int64_t>(v.number);
}

template <class Enum, std::size_t N>
Enum enum_field(const Json& object, const char* key, const Enum (&allowed)[N]) {
  const std::string& name = text_field(object, key);
  if (const std::optional<Enum> e = gemm::named(name, allowed)) return *e;
  throw Malformed{std::string("unknown ") + key + " \"" + name + "\""};
}

std::string quoted(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    if (static_cast<unsigned char>(c) >= 0x20) out += c;  // the writer drops control characters
  }
  return out + "\"";
}

std::string describe(const TuneIdentity& id) {
  return id.device + " (" + std::to_string(id.sm_count) + " SMs), driver " +
         std::to_string(id.driver) + ", library " + id.library;
}

}  // namespace

std::string format_tune_file(const TuneFile& file) {
  std::string out = "{\n  \"format\": " + quoted(kFormat) + ",\n";
  out += "  \"device\": " + quoted(file.identity.device) + ",\n";
  out += "  \"sm_count\": " + std::to_string(file.identity.sm_count) + ",\n";
  out += "  \"driver\": " + std::to_string(file.identity.driver) + ",\n";
  out += "  \"library\": " + quoted(file.identity.library) + ",\n";
  out += "  \"winners\": [";
  const char* sep = "\n";
  for (const auto& [key, w] : file.winners) {
    char ms[32];
    std::snprintf(ms, sizeof ms, "%.4f", w.ms);
    out += sep;
    out += "    {\"op\": " + quoted(key.op) + ", \"n\": " + std::to_string(key.n) +
           ", \"k\": " + std::to_string(key.k) + ", \"m_bucket\": " + std::to_string(key.m_bucket) +
           ", \"config\": " + quoted(gemm::to_string(w.choice.config)) +
           ", \"raster\": " + quoted(gemm::to_string(w.choice.raster)) +
           ", \"swizzle\": " + std::to_string(w.choice.swizzle) + ", \"ms\": " + ms + "}";
    sep = ",\n";
  }
  out += file.winners.empty() ? "]\n}\n" : "\n  ]\n}\n";
  return out;
}

std::optional<TuneFile> parse_tune_file(const std::string& text, const TuneIdentity& expect,
                                        std::string* why) {
  try {
    const Json doc = Reader(text).document();
    if (doc.kind != Json::kObject) throw Malformed{"not a JSON object"};
    if (text_field(doc, "format") != kFormat)
      throw Malformed{"format \"" + text_field(doc, "format") + "\", expected " + kFormat};
    TuneFile file;
    file.identity.device = text_field(doc, "device");
    file.identity.sm_count = int(int_field(doc, "sm_count", 1, 1 << 20));
    file.identity.driver = int(int_field(doc, "driver", 0, 1 << 30));
    file.identity.library = text_field(doc, "library");
    if (!(file.identity == expect))
      throw Malformed{"written for " + describe(file.identity) + ", not " + describe(expect)};
    const Json& winners = field(doc, "winners");
    if (winners.kind != Json::kArray) throw Malformed{"\"winners\" is not an array"};
    constexpr std::int64_t kMaxDim = std::int64_t(1) << 31;
    for (std::size_t i = 0; i < winners.items.size(); ++i) {
      const Json& w = winners.items[i];
      try {
        if (w.kind != Json::kObject) throw Malformed{"not an object"};
        TuneKey key{text_field(w, "op"), int_field(w, "n", 1, kMaxDim), int_field(w, "k", 1, kMaxDim),
                    int_field(w, "m_bucket", 1, kMaxDim)};
        if (!op_key_from_name(key.op)) throw Malformed{"unknown op \"" + key.op + "\""};
        if (key.m_bucket != autotune_m_bucket(key.m_bucket))
          throw Malformed{"m_bucket " + std::to_string(key.m_bucket) + " is not a bucket"};
        TuneWinner winner;
        winner.choice.config = enum_field(w, "config", epilogue::kProgramConfigs);
        if (!epilogue::has_program_instance(*op_key_from_name(key.op), winner.choice.config))
          throw Malformed{key.op + " is not compiled for " + gemm::to_string(winner.choice.config)};
        winner.choice.raster = enum_field(w, "raster", gemm::kRasterOrders);
        winner.choice.swizzle = int(int_field(w, "swizzle", 1, 8));
        if (winner.choice.swizzle & (winner.choice.swizzle - 1))
          throw Malformed{"swizzle " + std::to_string(winner.choice.swizzle) + " is not 1, 2, 4 or 8"};
        winner.choice.decomposition = gemm::Decomposition::kHeuristic;
        const Json& ms = field(w, "ms");
        if (ms.kind != Json::kNumber || !(ms.number >= 0)) throw Malformed{"\"ms\" is not a time"};
        winner.ms = ms.number;
        if (!file.winners.emplace(key, winner).second) throw Malformed{"a second entry for its key"};
      } catch (const Malformed& e) {
        throw Malformed{"winners[" + std::to_string(i) + "]: " + e.what};
      }
    }
    return file;
  } catch (const Malformed& e) {
    if (why != nullptr) *why = e.what;
    return std::nullopt;
  }
}

}  // namespace coda::ops::detail
