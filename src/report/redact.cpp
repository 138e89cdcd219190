#include "report/redact.hpp"

#include <algorithm>
#include <array>
#include <nlohmann/json.hpp>
#include <vector>

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

std::string lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

bool is_value_end(char c) {
  return std::string_view("&;#\"' \t\n,").find(c) != std::string_view::npos;
}

// Keys of "key=value" pairs whose value is a secret: URL query parameters
// (?token=, &sig=, X-Amz-Signature=, Azure SAS sig=), and connection strings
// (ODBC Password=/Pwd=, Azure AccountKey=/SharedAccessKey=). Lower case.
bool is_secret_key(std::string_view key) {
  const std::string k = lower(key);
  for (std::string_view exact : {"password",
                                 "passwd",
                                 "pwd",
                                 "pass",
                                 "token",
                                 "access_token",
                                 "refresh_token",
                                 "id_token",
                                 "auth",
                                 "sig",
                                 "signature",
                                 "secret",
                                 "client_secret",
                                 "key",
                                 "apikey",
                                 "api_key",
                                 "api-key",
                                 "accountkey",
                                 "sharedaccesskey",
                                 "sharedaccesssignature",
                                 "x-amz-signature",
                                 "x-amz-credential",
                                 "x-amz-security-token",
                                 "x-goog-signature",
                                 "private_token",
                                 "private-token"}) {
    if (k == exact) return true;
  }
  return false;
}

// Replaces the value of every secret "key=value" pair (is_secret_key).
std::string redact_pairs(std::string_view text) {
  std::string out;
  std::size_t copied = 0;
  for (std::size_t eq = text.find('='); eq != std::string_view::npos; eq = text.find('=', eq + 1)) {
    std::size_t key = eq;
    while (key > 0 && (is_token_char(text[key - 1]))) --key;
    if (key == eq || !is_secret_key(text.substr(key, eq - key))) continue;
    std::size_t end = eq + 1;
    while (end < text.size() && !is_value_end(text[end])) ++end;
    if (end == eq + 1) continue;
    out.append(text.substr(copied, eq + 1 - copied));
    out.append(k_redacted);
    copied = end;
    eq = end - 1;
  }
  out.append(text.substr(copied));
  return out;
}

// Replaces the secret path of webhook URLs (Slack, Discord, Microsoft Teams)
// and the word after "password" / "passwd" (netrc, "login x password y").
std::string redact_paths_and_words(std::string_view text) {
  std::string out(text);
  const std::string low = lower(text);
  struct Cut {
    std::size_t from, to;
  };
  std::vector<Cut> cuts;
  for (std::string_view marker :
       {"hooks.slack.com/services/", "discord.com/api/webhooks/", "discordapp.com/api/webhooks/",
        ".webhook.office.com/", "outlook.office.com/webhook/", "password ", "passwd "}) {
    for (std::size_t at = low.find(marker); at != std::string::npos; at = low.find(marker, at + 1)) {
      std::size_t from = at + marker.size();
      while (marker.ends_with(' ') && from < low.size() && low[from] == ' ') ++from;
      std::size_t to = from;
      while (to < low.size() && !is_value_end(low[to])) ++to;
      if (to > from) cuts.push_back({from, to});
    }
  }
  std::ranges::sort(cuts, [](const Cut& a, const Cut& b) { return a.from > b.from; });
  std::size_t limit = std::string::npos;
  for (const Cut& c : cuts) {
    if (c.to > limit) continue;  // overlaps one already cut
    out.replace(c.from, c.to - c.from, k_redacted);
    limit = c.from;
  }
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
  for (std::string_view part : {"TOKEN", "SECRET", "PASSWORD", "PASSWD", "PASSPHRASE", "CREDENTIAL", "APIKEY", "COOKIE",
                                "WEBHOOK", "CONNECTION_STRING"}) {
    if (n.find(part) != std::string::npos) return true;
  }
  // MYSQL_PWD, SSHPASS, PGPASS (not PWD, OLDPWD: the working folder).
  if (n.ends_with("_PWD") || n.ends_with("PASS")) return true;
  std::size_t start = 0;
  while (start <= n.size()) {
    std::size_t end = n.find_first_of("_-.", start);
    if (end == std::string::npos) end = n.size();
    const std::string_view word = std::string_view(n).substr(start, end - start);
    for (std::string_view secret : {"KEY", "PAT", "JWT", "AUTH", "PASS", "PW", "SESSION", "DSN"}) {
      if (word == secret) return true;
    }
    if (word == "CONNSTR") return true;
    start = end + 1;
  }
  return false;
}

std::string redact_credentials(std::string_view text) {
  return redact_tokens(redact_paths_and_words(redact_pairs(redact_urls(text))));
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
