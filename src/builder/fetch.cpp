#include "builder/fetch.hpp"
#include "builder/source_listing.hpp"

#include <git2.h>

#include <chrono>
#include <memory>
#include <string_view>
#include <vector>

namespace torchfix {
namespace {

// libgit2 keeps global state (TLS, SSL); init once per process, never shut
// down (other threads may still hold objects at exit).
void ensure_libgit2() {
  static const int k_init = git_libgit2_init();
  (void)k_init;
}

template <typename T, void (*Free)(T*)>
struct Deleter {
  void operator()(T* p) const {
    if (p) Free(p);
  }
};
using RepoPtr = std::unique_ptr<git_repository, Deleter<git_repository, git_repository_free>>;
using ObjectPtr = std::unique_ptr<git_object, Deleter<git_object, git_object_free>>;
using RemotePtr = std::unique_ptr<git_remote, Deleter<git_remote, git_remote_free>>;
using SubmodulePtr = std::unique_ptr<git_submodule, Deleter<git_submodule, git_submodule_free>>;
using StatusPtr = std::unique_ptr<git_status_list, Deleter<git_status_list, git_status_list_free>>;

// Replaces the user-info part of every URL in `text` (libgit2 messages quote
// the URL they failed on, tokens included).
std::string redact_text(std::string text) {
  for (std::size_t s = text.find("://"); s != std::string::npos; s = text.find("://", s + 3)) {
    const std::size_t host = s + 3;
    const std::size_t end = text.find_first_of("/ '\"\n", host);
    const std::size_t at = text.rfind('@', end == std::string::npos ? text.size() : end);
    if (at != std::string::npos && at >= host) text.replace(host, at - host, "***");
  }
  return text;
}

std::string git_message(const char* what) {
  const git_error* e = git_error_last();
  return redact_text(std::string(what) + ": " + (e && e->message ? e->message : "unknown libgit2 error"));
}

// Progress state for one repository's transfer; also records cancellation so
// the caller can tell "cancelled" from a network error.
struct Transfer {
  std::string name;
  const FetchProgressFn* callback = nullptr;
  std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now();
  std::size_t received = 0;
  bool cancelled = false;
};

int on_transfer(const git_indexer_progress* stats, void* payload) {
  auto* t = static_cast<Transfer*>(payload);
  t->received = stats->received_objects;
  if (!t->callback || !*t->callback) return 0;
  FetchProgress p;
  p.repository = t->name;
  p.received_objects = stats->received_objects;
  p.total_objects = stats->total_objects;
  p.indexed_objects = stats->indexed_objects;
  p.received_bytes = stats->received_bytes;
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t->start).count();
  p.bytes_per_second = seconds > 0 ? static_cast<double>(stats->received_bytes) / seconds : 0;
  if ((*t->callback)(p)) return 0;
  t->cancelled = true;
  return -1;  // libgit2 stops the transfer on a negative value
}

bool head_unborn(git_repository* repo) {
  return git_repository_head_unborn(repo) == 1;
}

// Tracked changes only: untracked build outputs (build/, *.so) do not make a
// tree dirty, and checkout with GIT_CHECKOUT_SAFE never overwrites them.
std::vector<std::string> tracked_changes(git_repository* repo) {
  git_status_options opts = GIT_STATUS_OPTIONS_INIT;
  opts.show = GIT_STATUS_SHOW_INDEX_AND_WORKDIR;
  opts.flags = GIT_STATUS_OPT_EXCLUDE_SUBMODULES;
  git_status_list* raw = nullptr;
  if (git_status_list_new(&raw, repo, &opts) != 0) return {"(status unreadable: " + git_message("git status") + ")"};
  StatusPtr list(raw);
  std::vector<std::string> out;
  for (std::size_t i = 0; i < git_status_list_entrycount(list.get()); ++i) {
    const git_status_entry* e = git_status_byindex(list.get(), i);
    if (e->status == GIT_STATUS_CURRENT || (e->status & GIT_STATUS_IGNORED)) continue;
    const git_diff_delta* d = e->index_to_workdir ? e->index_to_workdir : e->head_to_index;
    out.push_back(d && d->new_file.path ? d->new_file.path : "?");
  }
  return out;
}

std::vector<std::string> submodule_names(git_repository* repo) {
  std::vector<std::string> names;
  git_submodule_foreach(
      repo,
      [](git_submodule*, const char* name, void* payload) {
        static_cast<std::vector<std::string>*>(payload)->push_back(name);
        return 0;
      },
      &names);
  return names;
}

// Walks submodules recursively, collecting missing ones and dirty ones.
void inspect_submodules(git_repository* repo, const std::string& prefix, std::vector<std::string>& missing,
                        std::vector<std::string>& dirty) {
  for (const std::string& name : submodule_names(repo)) {
    git_submodule* raw = nullptr;
    if (git_submodule_lookup(&raw, repo, name.c_str()) != 0) continue;
    SubmodulePtr sm(raw);
    const std::string path = prefix + git_submodule_path(sm.get());
    unsigned int status = 0;
    git_submodule_status(&status, repo, name.c_str(), GIT_SUBMODULE_IGNORE_NONE);
    if ((status & GIT_SUBMODULE_STATUS_WD_UNINITIALIZED) || !(status & GIT_SUBMODULE_STATUS_IN_WD)) {
      missing.push_back(path);
      continue;
    }
    git_repository* sub_raw = nullptr;
    if (git_submodule_open(&sub_raw, sm.get()) != 0) {
      missing.push_back(path);
      continue;
    }
    RepoPtr sub(sub_raw);
    if (head_unborn(sub.get())) {
      missing.push_back(path);
      continue;
    }
    for (const std::string& f : tracked_changes(sub.get())) dirty.push_back(path + "/" + f);
    if (status & GIT_SUBMODULE_STATUS_WD_MODIFIED) missing.push_back(path + " (not at the recorded commit)");
    inspect_submodules(sub.get(), path + "/", missing, dirty);
  }
}

std::string list_some(const std::vector<std::string>& items) {
  std::string out;
  for (std::size_t i = 0; i < items.size() && i < 3; ++i) out += (i ? ", " : "") + items[i];
  if (items.size() > 3) out += ", ...";
  return out;
}

// Resolves a tag, a remote branch, or a commit id to a commit.
ObjectPtr resolve_ref(git_repository* repo, const std::string& ref, bool& is_branch) {
  is_branch = false;
  // No ref (a --repo without --ref, a recipe without default_ref): the
  // remote's default branch, as `git clone` checks out; a branch, so fetched.
  if (ref.empty()) {
    is_branch = true;
    git_object* obj = nullptr;
    if (git_revparse_single(&obj, repo, "refs/remotes/origin/HEAD^{commit}") == 0) return ObjectPtr(obj);
    return nullptr;
  }
  for (const std::string& spec : {"refs/tags/" + ref, "refs/remotes/origin/" + ref, ref}) {
    git_object* obj = nullptr;
    if (git_revparse_single(&obj, repo, (spec + "^{commit}").c_str()) == 0) {
      is_branch = spec.starts_with("refs/remotes/");
      return ObjectPtr(obj);
    }
  }
  return nullptr;
}

// The static build's libgit2 loads the system's OpenSSL at run time
// (docs/install.md): say what to install when there is none.
std::string with_openssl_hint(std::string message) {
  if (message.find("could not load ssl libraries") != std::string::npos) {
    message +=
        " (libssl.so.3 or libssl.so.1.1): install OpenSSL (Debian/Ubuntu: libssl3, RHEL: openssl-libs), "
        "or clone the project yourself and pass --src";
  }
  return message;
}

// Hands SSL_CERT_FILE / SSL_CERT_DIR to libgit2 for an https:// fetch: its
// OpenSSL backend reads them itself, its mbedTLS one (Debian's shared
// libgit2) does not.
Expected<void> use_ca_locations(const PlanFetch& fetch) {
  if ((fetch.ca_file.empty() && fetch.ca_dir.empty()) || !fetch.url_with_credentials.starts_with("https://")) return {};
  if (git_libgit2_opts(GIT_OPT_SET_SSL_CERT_LOCATIONS, fetch.ca_file.empty() ? nullptr : fetch.ca_file.c_str(),
                       fetch.ca_dir.empty() ? nullptr : fetch.ca_dir.c_str()) != 0) {
    return fail(with_openssl_hint(git_message(("cannot load the certificate authorities of SSL_CERT_FILE='" +
                                               fetch.ca_file + "' / SSL_CERT_DIR='" + fetch.ca_dir + "'")
                                                  .c_str())) +
                "; point them at a PEM bundle or a folder of certificates, or unset them");
  }
  return {};
}

// Points refs/remotes/origin/HEAD at the branch the remote's HEAD names
// (what `git clone` records), from the refs the fetch just listed; libgit2
// 1.5's fetch does not. A remote without a HEAD leaves it unset.
void set_origin_head(git_repository* repo, git_remote* remote) {
  git_buf branch = GIT_BUF_INIT;
  if (git_remote_default_branch(&branch, remote) != 0) return;
  const std::string name(branch.ptr, branch.size);
  git_buf_dispose(&branch);
  if (!name.starts_with("refs/heads/")) return;
  const std::string target = "refs/remotes/origin/" + name.substr(std::string_view("refs/heads/").size());
  git_reference* ref = nullptr;
  if (git_reference_symbolic_create(&ref, repo, "refs/remotes/origin/HEAD", target.c_str(), 1, "torchfix fetch") == 0) {
    git_reference_free(ref);
  }
}

Expected<std::size_t> fetch_remote(git_repository* repo, const std::string& url, const std::string& name,
                                   const FetchProgressFn& progress) {
  git_remote* raw = nullptr;
  if (git_remote_lookup(&raw, repo, "origin") != 0 && git_remote_create(&raw, repo, "origin", url.c_str()) != 0) {
    return fail(git_message("cannot set the remote"));
  }
  RemotePtr remote(raw);
  Transfer transfer{name, &progress};
  git_fetch_options opts = GIT_FETCH_OPTIONS_INIT;
  opts.callbacks.transfer_progress = on_transfer;
  opts.callbacks.payload = &transfer;
  opts.download_tags = GIT_REMOTE_DOWNLOAD_TAGS_ALL;
  // AUTO: git's http.proxy config, then HTTPS_PROXY / https_proxy (NO_PROXY honoured), as git does.
  opts.proxy_opts.type = GIT_PROXY_AUTO;
  if (git_remote_fetch(remote.get(), nullptr, &opts, "torchfix fetch") != 0) {
    if (transfer.cancelled) return fail("fetch of " + name + " cancelled; rerun to resume");
    return fail(with_openssl_hint(git_message(("cannot fetch " + name + " from " + redact_url(url)).c_str())));
  }
  set_origin_head(repo, remote.get());
  return transfer.received;
}

Expected<void> update_submodules(git_repository* repo, const std::string& prefix, const FetchProgressFn& progress,
                                 FetchResult& result) {
  for (const std::string& name : submodule_names(repo)) {
    git_submodule* raw = nullptr;
    if (git_submodule_lookup(&raw, repo, name.c_str()) != 0) return fail(git_message(("submodule " + name).c_str()));
    SubmodulePtr sm(raw);
    const std::string path = prefix + git_submodule_path(sm.get());
    // Sync first: .gitmodules may have moved a URL since the last run (git submodule sync).
    if (git_submodule_init(sm.get(), 1) != 0 || git_submodule_sync(sm.get()) != 0) {
      return fail(git_message(("cannot initialise submodule " + path).c_str()));
    }
    Transfer transfer{path, &progress};
    git_submodule_update_options opts = GIT_SUBMODULE_UPDATE_OPTIONS_INIT;
    opts.fetch_opts.callbacks.transfer_progress = on_transfer;
    opts.fetch_opts.callbacks.payload = &transfer;
    opts.fetch_opts.proxy_opts.type = GIT_PROXY_AUTO;
    opts.checkout_opts.checkout_strategy = GIT_CHECKOUT_SAFE;
    opts.allow_fetch = 1;
    if (git_submodule_update(sm.get(), 1, &opts) != 0) {
      if (transfer.cancelled) return fail("fetch of submodule " + path + " cancelled; rerun to resume");
      return fail(git_message(("cannot update submodule " + path).c_str()));
    }
    if (transfer.received > 0) {
      result.objects_received += transfer.received;
      ++result.repositories_fetched;
    }
    git_repository* sub_raw = nullptr;
    if (git_submodule_open(&sub_raw, sm.get()) != 0)
      return fail(git_message(("cannot open submodule " + path).c_str()));
    RepoPtr sub(sub_raw);
    // A submodule whose clone was interrupted has no commit: fetch and check out its recorded one.
    if (head_unborn(sub.get())) {
      const git_oid* want = git_submodule_index_id(sm.get());
      if (!want) want = git_submodule_head_id(sm.get());
      git_remote* r = nullptr;
      if (git_remote_lookup(&r, sub.get(), "origin") != 0) {
        if (git_remote_create(&r, sub.get(), "origin", git_submodule_url(sm.get())) != 0) {
          return fail(git_message(("cannot set the remote of submodule " + path).c_str()));
        }
      }
      git_remote_free(r);
      TF_TRY(received, fetch_remote(sub.get(), git_submodule_url(sm.get()), path, progress));
      result.objects_received += received;
      ++result.repositories_fetched;
      git_object* obj = nullptr;
      if (!want || git_object_lookup(&obj, sub.get(), want, GIT_OBJECT_COMMIT) != 0) {
        return fail(git_message(("submodule " + path + ": recorded commit not found upstream").c_str()));
      }
      ObjectPtr commit(obj);
      git_checkout_options co = GIT_CHECKOUT_OPTIONS_INIT;
      co.checkout_strategy = GIT_CHECKOUT_SAFE | GIT_CHECKOUT_RECREATE_MISSING;
      if (git_checkout_tree(sub.get(), commit.get(), &co) != 0 ||
          git_repository_set_head_detached(sub.get(), git_object_id(commit.get())) != 0) {
        return fail(git_message(("cannot check out submodule " + path).c_str()));
      }
    }
    ++result.submodules;
    if (auto nested = update_submodules(sub.get(), path + "/", progress, result); !nested) return nested;
  }
  return {};
}

// Makes the repository at `dir` (initialised when it has none) a checkout of
// fetch.ref: fetches when the ref is missing or a branch, then checks it out
// without overwriting changes. Returns the commit (hex); `name` labels
// progress and messages.
Expected<std::string> fetch_and_check_out(const PlanFetch& fetch, const std::filesystem::path& dir,
                                          const std::string& name, const FetchProgressFn& progress,
                                          FetchResult& result) {
  git_repository* raw = nullptr;
  if (git_repository_open_ext(&raw, dir.c_str(), GIT_REPOSITORY_OPEN_NO_SEARCH, nullptr) != 0 &&
      git_repository_init(&raw, dir.c_str(), 0) != 0) {
    return fail(git_message(("cannot create a repository in " + dir.string()).c_str()));
  }
  RepoPtr repo(raw);
  bool is_branch = false;
  ObjectPtr commit = resolve_ref(repo.get(), fetch.ref, is_branch);
  if (!commit || is_branch) {
    TF_TRY(received, fetch_remote(repo.get(), fetch.url_with_credentials, name, progress));
    result.objects_received += received;
    ++result.repositories_fetched;
    commit = resolve_ref(repo.get(), fetch.ref, is_branch);
  }
  if (!commit && fetch.ref.empty()) {
    return fail(redact_url(fetch.url_with_credentials) + " has no default branch; pass --ref BRANCH, TAG or COMMIT");
  }
  if (!commit) {
    return fail("ref '" + fetch.ref + "' is not a tag, branch or commit of " + redact_url(fetch.url_with_credentials));
  }
  git_checkout_options co = GIT_CHECKOUT_OPTIONS_INIT;
  // SAFE never overwrites a modified file; on a fresh repository (unborn HEAD)
  // every file is new and RECREATE_MISSING writes them.
  co.checkout_strategy = GIT_CHECKOUT_SAFE | (head_unborn(repo.get()) ? GIT_CHECKOUT_RECREATE_MISSING : 0);
  if (git_checkout_tree(repo.get(), commit.get(), &co) != 0 ||
      git_repository_set_head_detached(repo.get(), git_object_id(commit.get())) != 0) {
    return fail(git_message(("cannot check out " + fetch.ref + " in " + dir.string()).c_str()));
  }
  char hex[GIT_OID_HEXSZ + 1] = {};
  git_oid_tostr(hex, sizeof hex, git_object_id(commit.get()));
  return std::string(hex);
}

// A clone in progress in ".NAME.torchfix-clone" beside the target folder
// NAME; removed unless moved into place. The name is torchfix's own: a
// leftover of a run that was killed is removed by the next clone.
class StagedClone {
 public:
  explicit StagedClone(const std::filesystem::path& target)
      : m_target(target.has_filename() ? target : target.parent_path()),
        m_path(m_target.parent_path() / ("." + m_target.filename().string() + ".torchfix-clone")) {}
  StagedClone(const StagedClone&) = delete;
  StagedClone& operator=(const StagedClone&) = delete;
  ~StagedClone() {
    std::error_code ec;
    if (!m_moved) std::filesystem::remove_all(m_path, ec);
  }

  const std::filesystem::path& path() const { return m_path; }

  // Removes a leftover staging folder and creates an empty one.
  Expected<void> prepare() {
    std::error_code ec;
    std::filesystem::remove_all(m_path, ec);
    if (ec || !std::filesystem::create_directories(m_path, ec)) {
      return fail("cannot create " + m_path.string() + ": " + (ec ? ec.message() : "it exists") +
                  "; check the folder's permissions and free space");
    }
    return {};
  }

  // Renames the finished clone to the target (an empty target folder is replaced).
  Expected<void> move_into_place() {
    std::error_code ec;
    std::filesystem::rename(m_path, m_target, ec);
    if (ec) return fail("cannot move the clone " + m_path.string() + " to " + m_target.string() + ": " + ec.message());
    m_moved = true;
    return {};
  }

 private:
  std::filesystem::path m_target;
  std::filesystem::path m_path;
  bool m_moved = false;
};

}  // namespace

SourceStatus inspect_source(const std::filesystem::path& dir) {
  ensure_libgit2();
  SourceStatus s;
  if (!list_source_folder(dir, s)) return s;
  git_repository* raw = nullptr;
  if (git_repository_open_ext(&raw, dir.c_str(), GIT_REPOSITORY_OPEN_NO_SEARCH, nullptr) != 0) {
    s.state = SourceState::not_git;
    s.detail = dir.string() + " is not a git checkout";
    return s;
  }
  RepoPtr repo(raw);
  if (head_unborn(repo.get())) {
    // Only .git is there (a clone by an older torchfix that stopped): the
    // project's files are not known yet, so the plan picks its front-end
    // after the fetch, as for a fresh clone.
    s.state = SourceState::partial;
    s.detail = "repository initialised, nothing checked out yet";
    s.top_files.clear();
    return s;
  }
  git_oid head{};
  if (git_reference_name_to_id(&head, repo.get(), "HEAD") == 0) {
    char hex[GIT_OID_HEXSZ + 1] = {};
    git_oid_tostr(hex, sizeof hex, &head);
    s.head = hex;
  }
  std::vector<std::string> dirty = tracked_changes(repo.get());
  std::vector<std::string> missing;
  inspect_submodules(repo.get(), "", missing, dirty);
  if (!dirty.empty()) {
    s.state = SourceState::dirty;
    s.detail =
        std::to_string(dirty.size()) + " changed file" + (dirty.size() == 1 ? "" : "s") + ": " + list_some(dirty);
  } else if (!missing.empty()) {
    s.state = SourceState::partial;
    s.detail = "submodules not checked out: " + list_some(missing);
  } else {
    s.state = SourceState::clean;
    s.detail = "clean";
  }
  return s;
}

Expected<FetchResult> fetch_source(const PlanFetch& fetch, const std::filesystem::path& dir,
                                   const FetchProgressFn& progress) {
  ensure_libgit2();
  const SourceStatus before = inspect_source(dir);
  if (before.state == SourceState::dirty || before.state == SourceState::not_git) {
    return fail("refusing to touch " + dir.string() + ": " + before.detail +
                ". torchfix never resets or overwrites a tree; commit or move the changes, or build it as it is "
                "with --force");
  }
  if (auto ok = use_ca_locations(fetch); !ok) return std::unexpected(ok.error());
  FetchResult result;
  if (before.state == SourceState::absent) {
    // A new clone is made beside `dir` and moved into place once its ref is
    // checked out: a clone that fails or is killed part way leaves no
    // half repository at `dir` for the next run to trip over.
    StagedClone staged(dir);
    if (auto ok = staged.prepare(); !ok) return std::unexpected(ok.error());
    TF_TRY(commit, fetch_and_check_out(fetch, staged.path(), dir.filename().string(), progress, result));
    result.commit = commit;
    if (auto ok = staged.move_into_place(); !ok) return std::unexpected(ok.error());
  } else {
    TF_TRY(commit, fetch_and_check_out(fetch, dir, dir.filename().string(), progress, result));
    result.commit = commit;
  }
  if (fetch.submodules) {
    git_repository* raw = nullptr;
    if (git_repository_open_ext(&raw, dir.c_str(), GIT_REPOSITORY_OPEN_NO_SEARCH, nullptr) != 0) {
      return fail(git_message(("cannot open " + dir.string()).c_str()));
    }
    RepoPtr repo(raw);
    if (auto ok = update_submodules(repo.get(), "", progress, result); !ok) return std::unexpected(ok.error());
  }
  return result;
}

}  // namespace torchfix
