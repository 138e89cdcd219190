#include "report/redact.hpp"

#include <algorithm>
#include <array>
#include <nlohmann/json.hpp>

namespace torchfix {
namespace {

std::string upper(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

bool is_token_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.';
}

// Prefixes of access tokens issued by services torchfix users meet (GitHub,
// GitLab, Slack, Hugging Face, PyPI, npm, OpenAI, AWS access key ids), and a
// JWT's base64 of '{"', each with the fewest characters that follow it.
// Sources: each service's token format documentation (AWS: "AKIA" + 16).
struct TokenPrefix {
  std::string_view prefix;
  std::size_t rest;
};
constexpr std::array<TokenPrefix, 18> k_token_prefixes = {{{"github_pat_", 20},
                                                           {"ghp_", 20},
                                                           {"gho_", 20},
                                                           {"ghu_", 20},
                                                           {"ghs_", 20},
                                                           {"ghr_", 20},
                                                           {"glpat-", 20},
                                                           {"xoxb-", 20},
                                                           {"xoxp-", 20},
                                                           {"xoxa-", 20},
                                                           {"xoxr-", 20},
                                                           {"hf_", 20},
                                                           {"pypi-", 20},
                                                           {"npm_", 20},
                                                           {"sk-", 32},
                                                           {"AKIA", 16},
                                                           {"ASIA", 16},
                                                           {"eyJ", 20}}};

// Replaces the userinfo of every "scheme://userinfo@host" in `text`.
std::string redact_urls(std::string_view text) {
  std::string out;
  std::size_t copied = 0;
  for (std::size_t at = text.find("://"); at != std::string_view::npos; at = text.find("://", at + 3)) {
    const std::size_t start = at + 3;
    std::size_t end = start;
    while (end < text.size() && std::string_view("/?#\"' \t\n,;").find(text[end]) == std::string_view::npos) ++end;
    const std::size_t user_end = text.substr(start, end - start).rfind('@');
    if (user_end == std::string_view::npos || user_end == 0) continue;
    out.append(text.substr(copied, start - copied));
    out.append(k_redacted);
    copied = start + user_end;
  }
  out.append(text.substr(copied));
  return out;
}

std::string redact_tokens(std::string_view text) {
  std::string out;
  std::size_t at = 0;
  while (at < text.size()) {
    if (!is_token_char(text[at]) || (at > 0 && is_token_char(text[at - 1]))) {
      out += text[at++];
      continue;
    }
    std::size_t end = at;
    while (end < text.size() && is_token_char(text[end])) ++end;
    const std::string_view word = text.substr(at, end - at);
    const bool token = std::ranges::any_of(k_token_prefixes, [&](const TokenPrefix& t) {
      return word.starts_with(t.prefix) && word.size() >= t.prefix.size() + t.rest;
    });
    if (token) {
      out.append(k_redacted);
    } else {
      out.append(word);
    }
    at = end;
  }
  return out;
}

}  // namespace

bool is_secret_name(std::string_view name) {
  const std::string n = upper(name);
  for (std::string_view part :
       {"TOKEN", "SECRET", "PASSWORD", "PASSWD", "PASSPHRASE", "CREDENTIAL", "APIKEY", "COOKIE"}) {
    if (n.find(part) != std::string::npos) return true;
  }
  std::size_t start = 0;
  while (start <= n.size()) {
    std::size_t end = n.find_first_of("_-.", start);
    if (end == std::string::npos) end = n.size();
    const std::string_view word = std::string_view(n).substr(start, end - start);
    for (std::string_view secret : {"KEY", "PAT", "JWT", "AUTH", "PASS", "PW", "SESSION"}) {
      if (word == secret) return true;
    }
    start = end + 1;
  }
  return false;
}

std::string redact_credentials(std::string_view text) {
  return redact_tokens(redact_urls(text));
}

std::string redact_variable(std::string_view name, std::string_view value) {
  if (is_secret_name(name)) return std::string(k_redacted);
  // http_proxy=user:pw@proxy:3128 works without a scheme in curl and pip.
  if (upper(name).find("PROXY") != std::string::npos && value.find("://") == std::string_view::npos) {
    const std::size_t end = std::min(value.find_first_of("/,; "), value.size());
    const std::size_t at = value.substr(0, end).rfind('@');
    if (at != std::string_view::npos && at > 0) {
      return std::string(k_redacted) + redact_credentials(value.substr(at));
    }
  }
  return redact_credentials(value);
}

void redact_json(nlohmann::json& json) {
  if (json.is_string()) {
    json = redact_credentials(json.get_ref<const std::string&>());
  } else if (json.is_array()) {
    for (auto& item : json) redact_json(item);
  } else if (json.is_object()) {
    for (auto& [key, value] : json.items()) {
      if (key == "environment" && value.is_object()) {
        for (auto& [name, v] : value.items()) {
          if (v.is_string()) v = redact_variable(name, v.get_ref<const std::string&>());
        }
      } else {
        redact_json(value);
      }
    }
  }
}

}  // namespace torchfix
