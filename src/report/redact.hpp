#pragma once
// Removes secrets from what torchfix writes for others to read (--log files
// meant for bug reports, saved snapshots, --json reports): values of
// variables whose names say they hold a secret, credentials inside URLs, and
// words shaped like well-known access tokens.

#include <nlohmann/json_fwd.hpp>
#include <string>
#include <string_view>

#include "probe/process.hpp"

namespace torchfix {

/// Replaces a secret; what a reader sees instead of the value.
inline constexpr std::string_view k_redacted = "<redacted>";

/// Returns true when the name of an environment variable says its value is a
/// secret: it contains TOKEN, SECRET, PASSWORD, PASSWD, PASSPHRASE,
/// CREDENTIAL, APIKEY, COOKIE, WEBHOOK or CONNECTION_STRING, or one of its
/// '_'-separated words is KEY, PAT, JWT, AUTH, PASS, PW, SESSION, DSN or
/// CONNSTR or ends in PWD or PASS (GH_PAT, CI_JOB_JWT, OPENAI_API_KEY,
/// AWS_SECRET_ACCESS_KEY, MYSQL_PWD, SSHPASS). Case-insensitive.
bool is_secret_name(std::string_view name);

/// Returns `text` with credentials replaced by k_redacted: the user:password
/// (or token) part of every URL ("https://u:pw@host/" becomes
/// "https://<redacted>@host/"; also inside lists and longer text), and words
/// that start like a known access token (ghp_, github_pat_, glpat-, xoxb-,
/// hf_, AKIA..., a JWT "eyJ...") followed by as many token characters as
/// such a token has (16 to 32); the value of secret "key=value" pairs (URL
/// query ?token= &sig= X-Amz-Signature=, connection strings Password=,
/// Pwd=, AccountKey=, SharedAccessKey=); the secret path of Slack, Discord
/// and Teams webhook URLs; the word after "password" or "passwd".
std::string redact_credentials(std::string_view text);

/// Returns the redacted value of variable `name`: k_redacted for a secret
/// name, else redact_credentials(value); for *PROXY* names also a
/// "user:pw@host:port" value without a scheme.
std::string redact_variable(std::string_view name, std::string_view value);

/// Redacts a JSON document in place: every object under a key named
/// "environment" is treated as variables (redact_variable), every other
/// string goes through redact_credentials (argv's --repo URL, paths, tool
/// output). Object keys are kept.
void redact_json(nlohmann::json& json);

}  // namespace torchfix
