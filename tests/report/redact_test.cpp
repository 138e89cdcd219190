// Redaction of secrets in what torchfix writes for others to read.

#include "report/redact.hpp"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace torchfix {
namespace {

TEST(Redact, TokenShapedNamesAreSecret) {
  for (const char* name :
       {"GH_PAT", "CI_JOB_JWT", "HF_TOKEN", "GITHUB_TOKEN", "AWS_SECRET_ACCESS_KEY", "OPENAI_API_KEY", "DB_PASSWORD",
        "MYSQL_PWD_PASSWD", "PGPASSWORD", "NPM_AUTH", "ssh_key", "TWINE_PASS", "GOOGLE_APPLICATION_CREDENTIALS",
        "SESSION", "CI_JOB_TOKEN", "WANDB_API_KEY"}) {
    EXPECT_TRUE(is_secret_name(name)) << name;
  }
  for (const char* name : {"PATH", "CUDA_HOME", "PWD", "GIT_AUTHOR_NAME", "KEYBOARD_LAYOUT", "TORCH_CUDA_ARCH_LIST",
                           "PIP_INDEX_URL", "HOME", "MONKEY"}) {
    EXPECT_FALSE(is_secret_name(name)) << name;
  }
}

TEST(Redact, CredentialsInsideUrlsAreRemovedAndTheRestKept) {
  EXPECT_EQ(redact_credentials("https://u:pw@host/simple/"), "https://<redacted>@host/simple/");
  EXPECT_EQ(redact_credentials("postgres://admin:s3cr3t@db:5432/app?x=1"), "postgres://<redacted>@db:5432/app?x=1");
  EXPECT_EQ(redact_credentials("https://a:b@one/x https://two/y git+https://tok@three/z"),
            "https://<redacted>@one/x https://two/y git+https://<redacted>@three/z");
  EXPECT_EQ(redact_credentials("/opt/cuda:https://u:p%40ss@mirror/cuda"), "/opt/cuda:https://<redacted>@mirror/cuda");
  EXPECT_EQ(redact_credentials("https://host/path@not-a-user"), "https://host/path@not-a-user");
  EXPECT_EQ(redact_credentials("/usr/local/cuda-12.8"), "/usr/local/cuda-12.8");
}

TEST(Redact, TokenShapedWordsAreRemoved) {
  EXPECT_EQ(redact_credentials("token ghp_0123456789abcdefghijABCDEFGHIJ0123 end"), "token <redacted> end");
  EXPECT_EQ(redact_credentials("--header=Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.abcdefghij"),
            "--header=Bearer <redacted>");
  EXPECT_EQ(redact_credentials("/home/u/hf_cache/bin"), "/home/u/hf_cache/bin");
  EXPECT_EQ(redact_credentials("AKIAIOSFODNN7EXAMPLE"), "<redacted>");
  EXPECT_EQ(redact_credentials("/opt/sk-learn-experiments-2024"), "/opt/sk-learn-experiments-2024");
}

TEST(Redact, ProxyWithoutSchemeAndSecretNames) {
  EXPECT_EQ(redact_variable("http_proxy", "user:pw@proxy.corp:3128"), "<redacted>@proxy.corp:3128");
  EXPECT_EQ(redact_variable("HTTPS_PROXY", "http://user:pw@proxy:3128/"), "http://<redacted>@proxy:3128/");
  EXPECT_EQ(redact_variable("NO_PROXY", "localhost,.corp"), "localhost,.corp");
  EXPECT_EQ(redact_variable("GH_PAT", "anything"), "<redacted>");
}

TEST(Redact, JsonEnvironmentsAndEveryOtherString) {
  nlohmann::json log = {
      {"environment", {{"PIP_INDEX_URL", "https://u:pw@host/"}, {"CI_JOB_JWT", "x"}, {"PATH", "/usr/bin"}}},
      {"argv", {"torchfix", "build", "--repo", "https://oauth2:glpat-abcdefghijklmnopqrstuv@gitlab.com/x.git"}},
      {"snapshot", {{"environment", {{"DATABASE_URL", "mysql://root:hunter2@db/x"}}}}},
      {"n", 3}};
  redact_json(log);
  EXPECT_EQ(log["environment"]["PIP_INDEX_URL"], "https://<redacted>@host/");
  EXPECT_EQ(log["environment"]["CI_JOB_JWT"], "<redacted>");
  EXPECT_EQ(log["environment"]["PATH"], "/usr/bin");
  EXPECT_EQ(log["argv"][3], "https://<redacted>@gitlab.com/x.git");
  EXPECT_EQ(log["snapshot"]["environment"]["DATABASE_URL"], "mysql://<redacted>@db/x");
  EXPECT_EQ(log["n"], 3);
  EXPECT_EQ(log.dump().find("hunter2"), std::string::npos);
}

}  // namespace
}  // namespace torchfix
