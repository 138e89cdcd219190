#include "probe/index_probe.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "probe/installer_probe.hpp"
#include "util/file.hpp"

namespace torchfix {
namespace {

namespace fs = std::filesystem;

// A stable name for a URL's cache file (FNV-1a, 64 bits): std::hash may
// differ between builds.
std::string cache_name(const std::string& url) {
  std::uint64_t h = 14695981039346656037ull;
  for (unsigned char ch : url) h = (h ^ ch) * 1099511628211ull;
  char text[17];
  std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(h));
  return std::string(text) + ".json";
}

long long now_s() {
  return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

std::string page_url(const IndexPage& page) {
  return page.url + "/torch/";
}

// Returns true when every field of a cache entry has its type: a
// hand-edited or truncated file is a miss, never an exception.
bool cache_fields_ok(const nlohmann::json& j) {
  if (!j.is_object()) return false;
  const auto text = [&](const char* key, bool required) { return j.contains(key) ? j.at(key).is_string() : !required; };
  if (!text("url", true) || !text("answer", true) || !text("format", false) || !text("error", false)) return false;
  if (!j.contains("fetched") || !j.at("fetched").is_number_integer()) return false;
  if (!j.contains("files")) return true;
  const auto& files = j.at("files");
  return files.is_array() && std::ranges::all_of(files, [](const nlohmann::json& f) { return f.is_string(); });
}

bool read_cache(const IndexProbeOptions& o, IndexPage& page) {
  if (o.cache_dir.empty()) return false;
  auto bytes = util::read_file_bytes(o.cache_dir / cache_name(page_url(page)));
  if (!bytes) return false;
  const auto j = nlohmann::json::parse(*bytes, nullptr, false);
  if (!cache_fields_ok(j)) return false;
  if (j.value("url", std::string()) != page_url(page)) return false;
  if (now_s() - j.value("fetched", 0LL) > o.max_age.count()) return false;
  const std::string answer = j.value("answer", std::string());
  if (answer != "listed" && answer != "absent") return false;
  page.answer = answer == "listed" ? IndexAnswer::listed : IndexAnswer::absent;
  page.format = j.value("format", std::string());
  page.error = j.value("error", std::string());
  page.files = j.value("files", std::vector<std::string>{});
  page.cached = true;
  return true;
}

// Only an answer is kept: a network that failed is asked again next time.
void write_cache(const IndexProbeOptions& o, const IndexPage& page) {
  if (o.cache_dir.empty() || page.answer == IndexAnswer::unreachable) return;
  std::error_code ec;
  fs::create_directories(o.cache_dir, ec);
  const nlohmann::json j = {{"url", page_url(page)}, {"fetched", now_s()},  {"answer", to_string(page.answer)},
                            {"format", page.format}, {"error", page.error}, {"files", page.files}};
  (void)util::write_file_atomically(o.cache_dir / cache_name(page_url(page)), j.dump() + "\n",
                                    fs::perms::owner_read | fs::perms::owner_write);
}

// Reads one line of the script into `page`; false when it is no answer line.
bool read_reply(const nlohmann::json& j, IndexPage& page) {
  if (!j.is_object() || !j.contains("status") || !j["status"].is_number_integer()) return false;
  if (j.value("url", std::string()) != page_url(page)) return false;  // answers come in order; a stray line is not one
  const int status = j["status"].get<int>();
  page.error = j.value("error", std::string());
  if (status == 404 || status == 410) {
    page.answer = IndexAnswer::absent;
  } else if (status == 200) {
    auto listing = parse_index_page(j.value("content_type", std::string()), j.value("body", std::string()));
    if (listing && listing->files.empty()) {
      // A login, proxy or error page served with 200 is no answer: with it
      // every candidate on this index would look missing.
      page.error = "the page lists no files: not the index's torch page (a login or proxy page?)";
    } else if (listing) {
      page.answer = IndexAnswer::listed;
      page.format = std::move(listing->format);
      page.files = std::move(listing->files);
    } else {
      page.error = listing.error().message;
    }
  } else if (page.error.empty()) {
    page.error = "HTTP " + std::to_string(status);
  }
  return true;
}

// Asks for `pages` with one run of the script; fills the pages it answered.
void ask(const std::string& python, const std::vector<IndexPage*>& pages, const IndexProbeOptions& o,
         const Environment& env, ProcessRunner& runner) {
  Command c;
  c.program = python;
  // -c: the text itself, from a data folder or the binary alike; -I: the
  // working folder and PYTHON* variables do not choose its imports.
  c.args = {"-I", "-c", o.script, std::to_string(static_cast<double>(o.timeout.count()) / 1000.0)};
  for (const IndexPage* p : pages) c.args.push_back(page_url(*p));
  c.env = env;
  // One attempt per page, each bounded by the script's socket timeout; this
  // bounds the whole run (a Python that hangs before asking included).
  c.timeout = o.timeout * static_cast<long>(pages.size()) + std::chrono::seconds(2);
  c.output_limit = 64u << 20;
  auto r = runner.run(c);
  std::size_t done = 0;
  for (std::size_t start = 0; r && done < pages.size() && start < r->out.size();) {
    const auto end = std::min(r->out.find('\n', start), r->out.size());
    const auto j = nlohmann::json::parse(r->out.substr(start, end - start), nullptr, false);
    start = end + 1;
    if (!read_reply(j, *pages[done])) continue;
    write_cache(o, *pages[done]);
    ++done;
  }
  const std::string why = !r               ? r.error().message
                          : r->timed_out   ? "no answer within " + std::to_string(c.timeout.count() / 1000) + " s"
                          : r->err.empty() ? "no answer from " + python
                                           : r->err.substr(0, r->err.find('\n'));
  for (; done < pages.size(); ++done) {
    pages[done]->answer = IndexAnswer::unreachable;
    pages[done]->error = why;
  }
}

// The Python that asks: the environment's own (its proxies, its
// certificates), else python3 on PATH.
std::optional<std::string> asking_python(const PythonEnv& py, const Environment& env) {
  if (py.status != PythonStatus::not_runnable && !py.interpreter.empty()) return py.interpreter;
  return find_program("python3", env);
}

}  // namespace

fs::path index_cache_dir(const Environment& env) {
  const auto xdg = env.find("XDG_CACHE_HOME");
  if (xdg != env.end() && !xdg->second.empty()) return fs::path(xdg->second) / "torchfix" / "index";
  const auto home = env.find("HOME");
  if (home != env.end() && !home->second.empty()) return fs::path(home->second) / ".cache" / "torchfix" / "index";
  return {};
}

void probe_index_pages(Snapshot& snapshot, const std::vector<IndexQuery>& queries, const IndexProbeOptions& o,
                       const Environment& env, ProcessRunner& runner) {
  for (std::size_t python = 0; python < snapshot.pythons.size(); ++python) {
    if (std::ranges::none_of(queries, [&](const IndexQuery& q) { return q.python == python; })) continue;
    PythonEnv& py = snapshot.pythons[python];
    const std::size_t first = py.index_pages.size();
    const IndexConfig config = probe_env_installer(py.interpreter, env).config;
    for (const IndexQuery& q : queries) {
      if (q.python != python || find_index_page(py.index_pages, q.upstream)) continue;
      IndexPage page;
      page.upstream = q.upstream;
      page.url = choose_index(q.upstream, q.variant, config).url;
      py.index_pages.push_back(std::move(page));
    }
    std::vector<IndexPage*> asked;
    for (std::size_t i = first; i < py.index_pages.size(); ++i) {
      if (!read_cache(o, py.index_pages[i])) asked.push_back(&py.index_pages[i]);
    }
    if (asked.empty()) continue;
    if (const auto python3 = asking_python(py, env)) {
      ask(*python3, asked, o, env, runner);
      continue;
    }
    for (IndexPage* p : asked) p->error = "no Python to ask with";
  }
}

}  // namespace torchfix
