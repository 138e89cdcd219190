// Real git repositories with nested submodules, served over file://.
#include "builder/fetch.hpp"

#include <gtest/gtest.h>

#include "../support/linux_only.hpp"
#include "test_support.hpp"

namespace torchfix {
namespace {

using testing::read_file;
using testing::run_ok;
using testing::TempDir;
using testing::write_file;

void git(const std::filesystem::path& cwd, std::vector<std::string> args) {
  // file:// submodules are blocked by git >= 2.38 unless allowed; libgit2 has no such rule.
  std::vector<std::string> full = {"-c", "protocol.file.allow=always", "-c", "user.name=t", "-c", "user.email=t@t",
                                   "-c", "init.defaultBranch=main"};
  full.insert(full.end(), args.begin(), args.end());
  run_ok("git", full, cwd);
}

void make_repo(const std::filesystem::path& dir, const std::string& file, const std::string& text) {
  std::filesystem::create_directories(dir);
  git(dir, {"init", "-q"});
  write_file(dir / file, text);
  git(dir, {"add", "."});
  git(dir, {"commit", "-q", "-m", "init"});
}

// top (tag v1.0) -> mid (submodule "third_party/mid") -> leaf (submodule "deps/leaf").
struct Upstream {
  std::filesystem::path top;
  std::string url;
  explicit Upstream(const TempDir& tmp) {
    const auto leaf = tmp / "up/leaf";
    const auto mid = tmp / "up/mid";
    top = tmp / "up/top";
    make_repo(leaf, "leaf.txt", "leaf\n");
    make_repo(mid, "mid.txt", "mid\n");
    git(mid, {"submodule", "add", "-q", "file://" + leaf.string(), "deps/leaf"});
    git(mid, {"commit", "-q", "-m", "leaf"});
    make_repo(top, "setup.py", "print('top')\n");
    git(top, {"submodule", "add", "-q", "file://" + mid.string(), "third_party/mid"});
    git(top, {"commit", "-q", "-m", "mid"});
    git(top, {"tag", "v1.0"});
    write_file(top / "later.txt", "after the tag\n");
    git(top, {"add", "."});
    git(top, {"commit", "-q", "-m", "later"});
    url = "file://" + top.string();
  }
};

PlanFetch plan_for(const std::string& url, const std::string& ref) {
  PlanFetch f;
  f.url_with_credentials = url;
  f.url = redact_url(url);
  f.ref = ref;
  f.submodules = true;
  return f;
}

// Returns a progress callback that records each repository as its transfer starts.
FetchProgressFn record_repositories(std::vector<std::string>& seen) {
  return [&seen](const FetchProgress& p) {
    if (seen.empty() || seen.back() != p.repository) seen.push_back(p.repository);
    return true;
  };
}

TEST(Fetch, ClonesTagWithNestedSubmodules) {
  TORCHFIX_LINUX_ONLY("runs a Linux program (nvcc, git, cmake, python3, gcc) as a child");
  TempDir tmp;
  Upstream up(tmp);
  const auto dir = tmp / "src/top";
  std::vector<std::string> seen;
  auto r = fetch_source(plan_for(up.url, "v1.0"), dir, record_repositories(seen));
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(read_file(dir / "third_party/mid/deps/leaf/leaf.txt"), "leaf\n");
  EXPECT_EQ(read_file(dir / "third_party/mid/mid.txt"), "mid\n");
  EXPECT_FALSE(std::filesystem::exists(dir / "later.txt")) << "v1.0 predates later.txt";
  EXPECT_EQ(r->submodules, 2);
  EXPECT_EQ(r->repositories_fetched, 3);
  EXPECT_GT(r->objects_received, 0u);
  EXPECT_EQ(r->commit, run_ok("git", {"rev-parse", "v1.0^{commit}"}, up.top).substr(0, 40));
  EXPECT_NE(std::ranges::find(seen, "third_party/mid/deps/leaf"), seen.end());

  const SourceStatus s = inspect_source(dir);
  EXPECT_EQ(s.state, SourceState::clean) << s.detail;
  EXPECT_EQ(s.head, r->commit);
  EXPECT_NE(std::ranges::find(s.top_files, "setup.py"), s.top_files.end());
}

TEST(Fetch, RerunFetchesNothingAndBranchOrCommitWork) {
  TORCHFIX_LINUX_ONLY("runs a Linux program (nvcc, git, cmake, python3, gcc) as a child");
  TempDir tmp;
  Upstream up(tmp);
  const auto dir = tmp / "src/top";
  ASSERT_TRUE(fetch_source(plan_for(up.url, "v1.0"), dir, {}));
  auto again = fetch_source(plan_for(up.url, "v1.0"), dir, {});
  ASSERT_TRUE(again) << again.error().message;
  EXPECT_EQ(again->repositories_fetched, 0);
  EXPECT_EQ(again->objects_received, 0u);

  const std::string head = run_ok("git", {"rev-parse", "HEAD"}, up.top).substr(0, 40);
  auto by_commit = fetch_source(plan_for(up.url, head), dir, {});
  ASSERT_TRUE(by_commit) << by_commit.error().message;
  EXPECT_EQ(by_commit->commit, head);
  EXPECT_EQ(read_file(dir / "later.txt"), "after the tag\n");

  auto by_branch = fetch_source(plan_for(up.url, "main"), dir, {});
  ASSERT_TRUE(by_branch) << by_branch.error().message;
  EXPECT_EQ(by_branch->commit, head);

  auto missing = fetch_source(plan_for(up.url, "v9.9"), dir, {});
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().message.find("'v9.9'"), std::string::npos) << missing.error().message;
}

TEST(Fetch, ResumesAfterAnInterruptedSubmoduleFetch) {
  TORCHFIX_LINUX_ONLY("runs a Linux program (nvcc, git, cmake, python3, gcc) as a child");
  TempDir tmp;
  Upstream up(tmp);
  const auto dir = tmp / "src/top";
  const std::string top_name = dir.filename().string();
  auto cut = fetch_source(plan_for(up.url, "v1.0"), dir,
                          [](const FetchProgress& p) { return p.repository != "third_party/mid/deps/leaf"; });
  ASSERT_FALSE(cut);
  EXPECT_NE(cut.error().message.find("cancelled"), std::string::npos) << cut.error().message;
  const SourceStatus half = inspect_source(dir);
  EXPECT_EQ(half.state, SourceState::partial) << half.detail;
  EXPECT_NE(half.detail.find("deps/leaf"), std::string::npos) << half.detail;

  std::vector<std::string> fetched;
  auto resumed = fetch_source(plan_for(up.url, "v1.0"), dir, record_repositories(fetched));
  ASSERT_TRUE(resumed) << resumed.error().message;
  EXPECT_EQ(read_file(dir / "third_party/mid/deps/leaf/leaf.txt"), "leaf\n");
  // Only the leaf was missing: the top repository and mid are not fetched again.
  EXPECT_EQ(resumed->repositories_fetched, 1);
  EXPECT_EQ(std::ranges::find(fetched, top_name), fetched.end());
  EXPECT_EQ(std::ranges::find(fetched, "third_party/mid"), fetched.end());
  EXPECT_EQ(inspect_source(dir).state, SourceState::clean);
}

TEST(Fetch, AnInterruptedOrFailedCloneLeavesNothingBehind) {
  TORCHFIX_LINUX_ONLY("runs a Linux program (nvcc, git, cmake, python3, gcc) as a child");
  TempDir tmp;
  Upstream up(tmp);
  const auto dir = tmp / "src/top";
  auto cut = fetch_source(plan_for(up.url, "v1.0"), dir, [](const FetchProgress&) { return false; });
  ASSERT_FALSE(cut);
  EXPECT_EQ(inspect_source(dir).state, SourceState::absent);
  EXPECT_FALSE(std::filesystem::exists(tmp / "src/.top.torchfix-clone"));
  auto missing = fetch_source(plan_for(up.url, "v9.9"), dir, {});
  ASSERT_FALSE(missing);
  EXPECT_FALSE(std::filesystem::exists(dir));

  // A staging folder left by a run that was killed is the next clone's to replace.
  write_file(tmp / "src/.top.torchfix-clone/.git/HEAD", "half\n");
  auto cloned = fetch_source(plan_for(up.url, "v1.0"), dir, {});
  ASSERT_TRUE(cloned) << cloned.error().message;
  EXPECT_EQ(inspect_source(dir).state, SourceState::clean);
  EXPECT_FALSE(std::filesystem::exists(tmp / "src/.top.torchfix-clone"));
}

TEST(Fetch, ARepositoryWithNothingCheckedOutIsCompleted) {
  TORCHFIX_LINUX_ONLY("runs a Linux program (nvcc, git, cmake, python3, gcc) as a child");
  // What torchfix before the staged clone left when a clone stopped: only .git.
  TempDir tmp;
  Upstream up(tmp);
  const auto dir = tmp / "src/top";
  git(tmp.path(), {"init", "-q", dir.string()});
  const SourceStatus half = inspect_source(dir);
  EXPECT_EQ(half.state, SourceState::partial);
  EXPECT_TRUE(half.top_files.empty()) << "the front-end is chosen after the fetch, from the project's files";
  auto resumed = fetch_source(plan_for(up.url, "v1.0"), dir, {});
  ASSERT_TRUE(resumed) << resumed.error().message;
  EXPECT_EQ(inspect_source(dir).state, SourceState::clean);
  EXPECT_EQ(read_file(dir / "setup.py"), "print('top')\n");
}

TEST(Fetch, RefusesADirtyTreeAndLeavesItAlone) {
  TORCHFIX_LINUX_ONLY("runs a Linux program (nvcc, git, cmake, python3, gcc) as a child");
  TempDir tmp;
  Upstream up(tmp);
  const auto dir = tmp / "src/top";
  ASSERT_TRUE(fetch_source(plan_for(up.url, "v1.0"), dir, {}));
  write_file(dir / "setup.py", "my local change\n");
  write_file(dir / "third_party/mid/deps/leaf/leaf.txt", "edited in a nested submodule\n");
  const SourceStatus s = inspect_source(dir);
  EXPECT_EQ(s.state, SourceState::dirty);
  EXPECT_NE(s.detail.find("setup.py"), std::string::npos) << s.detail;
  EXPECT_NE(s.detail.find("third_party/mid/deps/leaf/leaf.txt"), std::string::npos) << s.detail;
  auto r = fetch_source(plan_for(up.url, "main"), dir, {});
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("--force"), std::string::npos) << r.error().message;
  EXPECT_EQ(read_file(dir / "setup.py"), "my local change\n");
  EXPECT_FALSE(std::filesystem::exists(dir / "later.txt"));
}

TEST(Fetch, UntrackedBuildOutputsDoNotMakeATreeDirty) {
  TORCHFIX_LINUX_ONLY("runs a Linux program (nvcc, git, cmake, python3, gcc) as a child");
  TempDir tmp;
  Upstream up(tmp);
  const auto dir = tmp / "src/top";
  ASSERT_TRUE(fetch_source(plan_for(up.url, "v1.0"), dir, {}));
  write_file(dir / "build/CMakeCache.txt", "cache\n");
  EXPECT_EQ(inspect_source(dir).state, SourceState::clean);
  ASSERT_TRUE(fetch_source(plan_for(up.url, "main"), dir, {}));
  EXPECT_EQ(read_file(dir / "build/CMakeCache.txt"), "cache\n");
}

TEST(Fetch, NotAGitFolderIsRefused) {
  TempDir tmp;
  write_file(tmp / "mine/notes.txt", "mine\n");
  EXPECT_EQ(inspect_source(tmp / "mine").state, SourceState::not_git);
  EXPECT_EQ(inspect_source(tmp / "nothing").state, SourceState::absent);
  auto r = fetch_source(plan_for("file:///nonexistent", "main"), tmp / "mine", {});
  ASSERT_FALSE(r);
  EXPECT_EQ(read_file(tmp / "mine/notes.txt"), "mine\n");
}

TEST(Fetch, CredentialsNeverAppearInErrors) {
  TempDir tmp;
  // Port 1 refuses at once: the error names the URL, which must come redacted.
  auto r = fetch_source(plan_for("http://alice:s3cr3t-token@127.0.0.1:1/repo.git", "main"), tmp / "x", {});
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message.find("s3cr3t"), std::string::npos) << r.error().message;
  EXPECT_EQ(r.error().message.find("alice"), std::string::npos) << r.error().message;
  EXPECT_EQ(redact_url("https://ghp_abc@github.com/o/r.git"), "https://***@github.com/o/r.git");
  EXPECT_EQ(redact_url("https://github.com/o/r.git"), "https://github.com/o/r.git");
  EXPECT_EQ(redact_url("https://github.com/o/r@v1"), "https://github.com/o/r@v1");
}

}  // namespace
}  // namespace torchfix
